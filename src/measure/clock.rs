//! The fallback clocks: the architecture's constant-rate tick counter, and
//! CLOCK_MONOTONIC.
//!
//! Where no hardware PMU counts core cycles, a cost is ticks per byte of the
//! counter every core carries for timekeeping: the TSC on x86_64 (rdtsc), the
//! Arm generic timer's virtual count on aarch64 (`cntvct_el0`, at the
//! frequency `cntfrq_el0` states). Both tick at a constant rate whatever the
//! core's frequency, and count time the thread spent descheduled too, so every
//! such cost names its clock ([`TICK_CLOCK`]).

use std::time::{Duration, Instant};

use super::model::ClockKind;

/// The tick counter this build reads: what `tsc_ticks` in a sample counts.
#[cfg(target_arch = "x86_64")]
pub const TICK_CLOCK: ClockKind = ClockKind::Tsc;
/// The tick counter this build reads: what `tsc_ticks` in a sample counts.
#[cfg(target_arch = "aarch64")]
pub const TICK_CLOCK: ClockKind = ClockKind::GenericTimer;

/// A point in time on both clocks, taken together.
///
/// CLOCK_MONOTONIC comes from [`Instant`], which is `clock_gettime(
/// CLOCK_MONOTONIC)` on Linux.
#[derive(Clone, Copy, Debug)]
pub struct Stamp {
    ticks: u64,
    monotonic: Instant,
}

/// The distance between two [`Stamp`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Ticks of [`TICK_CLOCK`].
    pub ticks: u64,
    pub nanos: u64,
}

impl Stamp {
    pub fn now() -> Stamp {
        Stamp {
            ticks: read_ticks(),
            monotonic: Instant::now(),
        }
    }

    /// The span from `earlier` to `self` (zero if `earlier` is later).
    pub fn since(&self, earlier: Stamp) -> Span {
        Span {
            ticks: self.ticks.saturating_sub(earlier.ticks),
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
fn read_ticks() -> u64 {
    use std::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: lfence (SSE2) and rdtsc are part of the x86_64 baseline.
    unsafe {
        _mm_lfence();
        let ticks = _rdtsc();
        _mm_lfence();
        ticks
    }
}

/// Reads the generic timer's virtual count. `cntvct_el0` may be read
/// speculatively, so an `isb` on each side plays the part of x86's lfences.
/// Linux lets user space read it (CNTKCTL_EL1.EL0VCTEN), as the vDSO does.
#[cfg(target_arch = "aarch64")]
fn read_ticks() -> u64 {
    let ticks: u64;
    // SAFETY: reads a system register EL0 may read; touches no memory.
    unsafe {
        std::arch::asm!(
            "isb",
            "mrs {ticks}, cntvct_el0",
            "isb",
            ticks = out(reg) ticks,
            options(nostack, nomem, preserves_flags),
        );
    }
    ticks
}

/// The generic timer's frequency as the firmware set it in `cntfrq_el0`,
/// with that name as its source: exact by definition, so it needs no
/// calibration.
#[cfg(target_arch = "aarch64")]
pub fn stated_tick_hz() -> Option<(f64, &'static str)> {
    let hz: u64;
    // SAFETY: reads a system register EL0 may read; touches no memory.
    unsafe {
        std::arch::asm!(
            "mrs {hz}, cntfrq_el0",
            hz = out(reg) hz,
            options(nostack, nomem, preserves_flags),
        );
    }
    (hz > 0).then_some((hz as f64, "cntfrq_el0"))
}

/// The TSC's frequency is not stated anywhere a thread can read cheaply
/// (CPUID leaf 0x15, where present, comes in through the topology).
#[cfg(target_arch = "x86_64")]
pub fn stated_tick_hz() -> Option<(f64, &'static str)> {
    None
}

/// How long [`calibrate_tick_hz`] compares the ticks against CLOCK_MONOTONIC.
const TICK_CALIBRATION: Duration = Duration::from_millis(20);

/// Estimates the tick frequency by counting ticks over `TICK_CALIBRATION` of
/// CLOCK_MONOTONIC (sleeping: the counter ticks on regardless). Good to well
/// under 0.1 %; a stated frequency (CPUID leaf 0x15, `cntfrq_el0`) is better.
pub fn calibrate_tick_hz() -> f64 {
    let start = Stamp::now();
    std::thread::sleep(TICK_CALIBRATION);
    let span = Stamp::now().since(start);
    span.ticks as f64 / span.nanos.max(1) as f64 * 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_monotonic_advance_together() {
        let start = Stamp::now();
        std::thread::sleep(Duration::from_millis(2));
        let span = Stamp::now().since(start);
        assert!(span.nanos >= 2_000_000, "{span:?}");
        assert!(span.ticks > 0, "{span:?}");
        assert_eq!(start.since(Stamp::now()).nanos, 0);
    }

    #[test]
    fn tick_frequency_is_plausible() {
        let hz = calibrate_tick_hz();
        assert!((1e6..1e11).contains(&hz), "{hz} Hz");
    }
}
