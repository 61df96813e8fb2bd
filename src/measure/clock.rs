//! The fallback clocks: the TSC (rdtsc) and CLOCK_MONOTONIC.
//!
//! Where no hardware PMU counts core cycles, a cost is TSC ticks per byte: the
//! TSC ticks at a constant rate whatever the core's frequency, and counts
//! time the thread spent descheduled too, so every such cost says `tsc`.

use std::time::{Duration, Instant};

/// A point in time on both clocks, taken together.
///
/// CLOCK_MONOTONIC comes from [`Instant`], which is `clock_gettime(
/// CLOCK_MONOTONIC)` on Linux.
#[derive(Clone, Copy, Debug)]
pub struct Stamp {
    tsc: u64,
    monotonic: Instant,
}

/// The distance between two [`Stamp`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub tsc_ticks: u64,
    pub nanos: u64,
}

impl Stamp {
    pub fn now() -> Stamp {
        Stamp {
            tsc: read_tsc(),
            monotonic: Instant::now(),
        }
    }

    /// The span from `earlier` to `self` (zero if `earlier` is later).
    pub fn since(&self, earlier: Stamp) -> Span {
        Span {
            tsc_ticks: self.tsc.saturating_sub(earlier.tsc),
            nanos: duration_nanos(self.monotonic.saturating_duration_since(earlier.monotonic)),
        }
    }
}

/// Nanoseconds in `duration`, saturating (u64 nanoseconds last 584 years).
pub(crate) fn duration_nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// Reads the TSC, fenced on both sides: the first `lfence` keeps earlier
/// instructions from finishing after the read, the second keeps later ones
/// (the kernel) from starting before it.
#[cfg(target_arch = "x86_64")]
fn read_tsc() -> u64 {
    use std::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: lfence (SSE2) and rdtsc are part of the x86_64 baseline.
    unsafe {
        _mm_lfence();
        let ticks = _rdtsc();
        _mm_lfence();
        ticks
    }
}

/// No TSC outside x86_64: the engine refuses to start there (see
/// `Engine::new`), so nothing reaches this.
#[cfg(not(target_arch = "x86_64"))]
fn read_tsc() -> u64 {
    unreachable!("the measurement engine only runs on x86_64")
}

/// How long [`calibrate_tsc_hz`] compares the TSC against CLOCK_MONOTONIC.
const TSC_CALIBRATION: Duration = Duration::from_millis(20);

/// Estimates the TSC frequency by counting ticks over `TSC_CALIBRATION` of
/// CLOCK_MONOTONIC (sleeping: the TSC ticks on regardless). Good to well under
/// 0.1 %; prefer CPUID leaf 0x15's value where the CPU reports one.
pub fn calibrate_tsc_hz() -> f64 {
    let start = Stamp::now();
    std::thread::sleep(TSC_CALIBRATION);
    let span = Stamp::now().since(start);
    span.tsc_ticks as f64 / span.nanos.max(1) as f64 * 1e9
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn tsc_and_monotonic_advance_together() {
        let start = Stamp::now();
        std::thread::sleep(Duration::from_millis(2));
        let span = Stamp::now().since(start);
        assert!(span.nanos >= 2_000_000, "{span:?}");
        assert!(span.tsc_ticks > 0, "{span:?}");
        assert_eq!(start.since(Stamp::now()).nanos, 0);
    }

    #[test]
    fn tsc_frequency_is_plausible() {
        let hz = calibrate_tsc_hz();
        assert!((1e8..1e11).contains(&hz), "{hz} Hz");
    }
}
