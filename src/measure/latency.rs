//! `latency`'s probe: two threads pinned to two CPUs pass one cache line
//! back and forth by compare-and-swap, and the round trips are timed.
//!
//! The line holds a counter. The initiator turns an even value odd, the
//! responder turns the odd value into the next even one; each CAS can only
//! succeed once the line has come over from the other CPU, so a round trip
//! is two transfers of the line. A sample is [`ROUND_TRIPS_PER_SAMPLE`]
//! round trips timed together on the project's clock ([`Stamp`]), so the
//! clock's own cost and resolution vanish in the sum.
//!
//! Neither thread ever yields: two vCPUs stacked on one host CPU (or the
//! same-CPU control, both threads on one CPU) then make progress only when
//! the spinning one is preempted, once a time slice, which is exactly what
//! shows them. So that this never hangs, every sample is bounded by wall
//! time: the initiator checks the clock while it waits, ends the sample at
//! the bound with the round trips done so far (none: "no progress within
//! the bound"), and at the end writes a value the responder takes as its
//! signal to return. A stop request (SIGINT, SIGTERM) ends the pair after
//! the sample in flight.

use super::clock::Stamp;
use super::stop;
use crate::affinity::{current_cpu, pin_current_thread};
use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Round trips one sample times together: enough that a sample of
/// cross-core transfers (tens to hundreds of nanoseconds each) lasts tens of
/// microseconds, far above the clock's resolution.
pub const ROUND_TRIPS_PER_SAMPLE: u64 = 1000;

/// Samples in a row of a pair that end at the wall-time bound before the
/// pair is settled as time-sliced: further samples would each cost the
/// whole bound and say the same. In a row, so that a loaded host that
/// preempts a thread now and then does not end a pair early.
pub const BOUNDED_SAMPLES_TO_SETTLE: usize = 3;

/// The counter value that tells the responder the initiator is done.
const DONE: u64 = u64::MAX;

/// How often (in spins) a waiting initiator reads the clock.
const SPINS_PER_CLOCK_CHECK: u32 = 256;

/// The shared cache line: aligned to 128 bytes so that no other data (and,
/// on x86, not the adjacent-line prefetcher's partner) shares it.
#[repr(align(128))]
struct Line(AtomicU64);

/// How one pair is sampled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PingPongOptions {
    /// Samples kept (a warm-up sample before them is discarded).
    pub samples: usize,
    /// The wall-time bound of one sample.
    pub sample_bound: Duration,
}

/// One timed sample: the round trips done within it, and how long they
/// took (the whole bound when it ended there).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PingPongSample {
    pub round_trips: u64,
    pub nanos: u64,
    /// The sample ended at the wall-time bound, not after its round trips.
    pub bounded: bool,
}

impl PingPongSample {
    /// Half a round trip in nanoseconds: one transfer of the line; `None`
    /// without a completed round trip.
    pub fn one_way_ns(&self) -> Option<f64> {
        (self.round_trips > 0).then(|| self.nanos as f64 / self.round_trips as f64 / 2.0)
    }
}

/// What one pair's threads measured, and where they ran.
#[derive(Clone, Debug, PartialEq)]
pub struct PingPongRun {
    pub samples: Vec<PingPongSample>,
    /// Both threads were on their CPUs before and after sampling.
    pub pinned: bool,
    /// A stop request ended it early.
    pub stopped: bool,
}

/// Says, from the samples kept so far, that a pair needs no more: the
/// study's early stop (see `judge::latency::settled`).
pub type Settled = dyn Fn(&[PingPongSample]) -> bool + Sync;

/// Never settled: every sample asked for.
pub fn all_samples(_: &[PingPongSample]) -> bool {
    false
}

/// Ping-pongs one line between a thread on `initiator` and one on
/// `responder` (the same CPU for the control), until `options.samples` are
/// kept or `settled` says the pair needs no more. Errors only when a thread
/// cannot be pinned or started.
pub fn ping_pong(
    initiator: u32,
    responder: u32,
    options: PingPongOptions,
    settled: &Settled,
) -> Result<PingPongRun> {
    let line = Line(AtomicU64::new(0));
    std::thread::scope(|scope| {
        let responder_thread = scope.spawn(|| respond(&line.0, responder));
        let initiated = initiate(&line.0, initiator, options, settled);
        // Whatever happened to the initiator, release the responder.
        line.0.store(DONE, Ordering::Release);
        let responder_pinned = responder_thread
            .join()
            .map_err(|_| anyhow!("the responder thread on CPU {responder} panicked"))??;
        let mut run = initiated?;
        run.pinned &= responder_pinned;
        Ok(run)
    })
}

/// Ping-pongs every pair of `pairs` at once, each on its own line and
/// threads (the pairs must not share a CPU: the study hands out disjoint
/// ones); the runs in the order of `pairs`.
pub fn ping_pong_together(
    pairs: &[[u32; 2]],
    options: PingPongOptions,
    settled: &Settled,
) -> Result<Vec<PingPongRun>> {
    if let [[a, b]] = pairs {
        return Ok(vec![ping_pong(*a, *b, options, settled)?]);
    }
    std::thread::scope(|scope| {
        let threads: Vec<_> = pairs
            .iter()
            .map(|&[a, b]| scope.spawn(move || ping_pong(a, b, options, settled)))
            .collect();
        threads
            .into_iter()
            .zip(pairs)
            .map(|(thread, [a, b])| {
                thread
                    .join()
                    .map_err(|_| anyhow!("the threads of pair {a}-{b} panicked"))?
            })
            .collect()
    })
}

/// On the thread it is called on, pinned to `cpu`: `Ok(true)` when the
/// thread was there now.
fn pin_and_check(cpu: u32) -> Result<bool> {
    pin_current_thread(cpu)?;
    Ok(current_cpu()? == cpu)
}

/// The responder: turns each odd value into the next even one until the
/// initiator writes [`DONE`]; whether it stayed on `cpu` throughout.
fn respond(line: &AtomicU64, cpu: u32) -> Result<bool> {
    let pinned_before = pin_and_check(cpu);
    loop {
        let value = line.load(Ordering::Acquire);
        if value == DONE {
            break;
        }
        if value % 2 == 1 {
            // Fails only when DONE was written in between: the next load
            // sees it.
            let _ = line.compare_exchange(value, value + 1, Ordering::AcqRel, Ordering::Acquire);
        } else {
            std::hint::spin_loop();
        }
    }
    Ok(pinned_before? && current_cpu()? == cpu)
}

/// The initiator: a warm-up sample, then `options.samples` timed ones, each
/// ended by its round trips or the wall-time bound; stops early once
/// [`BOUNDED_SAMPLES_TO_SETTLE`] samples in a row hit the bound, or on a stop
/// request, or once `settled` says so.
fn initiate(
    line: &AtomicU64,
    cpu: u32,
    options: PingPongOptions,
    settled: &Settled,
) -> Result<PingPongRun> {
    let pinned_before = pin_and_check(cpu)?;
    let mut next = 0u64;
    let mut samples = Vec::with_capacity(options.samples);
    let mut stopped = false;
    for sample in 0..=options.samples {
        if stop::stop_requested() {
            stopped = true;
            break;
        }
        let measured = one_sample(line, &mut next, options.sample_bound);
        if sample > 0 {
            samples.push(measured);
        }
        let trailing_bounded = samples.iter().rev().take_while(|s| s.bounded).count();
        if trailing_bounded >= BOUNDED_SAMPLES_TO_SETTLE || (sample > 0 && settled(&samples)) {
            break;
        }
    }
    Ok(PingPongRun {
        samples,
        pinned: pinned_before && current_cpu()? == cpu,
        stopped,
    })
}

/// One sample: up to [`ROUND_TRIPS_PER_SAMPLE`] round trips from counter
/// value `next` (even: the initiator's turn), bounded by `bound`.
fn one_sample(line: &AtomicU64, next: &mut u64, bound: Duration) -> PingPongSample {
    let deadline = Instant::now() + bound;
    let start = Stamp::now();
    let mut round_trips = 0;
    let mut bounded = false;
    'trips: while round_trips < ROUND_TRIPS_PER_SAMPLE {
        let mut spins = 0u32;
        while line
            .compare_exchange_weak(*next, *next + 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
            spins += 1;
            if spins == SPINS_PER_CLOCK_CHECK {
                spins = 0;
                if Instant::now() >= deadline {
                    bounded = true;
                    break 'trips;
                }
            }
        }
        // The responder's reply is what counts: wait for it next time round.
        *next += 2;
        round_trips += 1;
    }
    // Each CAS waits for the reply to the one before, so a sample's span
    // holds as many round trips as it counts (the first wait belongs to the
    // round trip the sample before started).
    let span = Stamp::now().since(start);
    PingPongSample {
        round_trips,
        nanos: span.nanos,
        bounded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::affinity::allowed_cpus;

    #[test]
    fn a_pair_of_allowed_cpus_completes_its_samples_pinned() {
        let allowed = allowed_cpus().unwrap();
        let cpus = allowed.cpus();
        let (a, b) = (cpus[0], *cpus.last().unwrap());
        let run = ping_pong(
            a,
            b,
            PingPongOptions {
                samples: 5,
                sample_bound: Duration::from_millis(200),
            },
            &all_samples,
        )
        .unwrap();
        assert!(run.pinned);
        assert!(!run.stopped);
        assert!(!run.samples.is_empty() && run.samples.len() <= 5, "{run:?}");
        assert!(run.samples.iter().all(|s| s.round_trips > 0 || s.bounded));
    }

    #[test]
    fn the_same_cpu_control_ends_at_its_bound_without_hanging() {
        let cpu = allowed_cpus().unwrap().cpus()[0];
        let run = ping_pong(
            cpu,
            cpu,
            PingPongOptions {
                samples: 50,
                sample_bound: Duration::from_millis(5),
            },
            &all_samples,
        )
        .unwrap();
        assert!(run.pinned);
        assert!(run.samples.len() <= 50);
    }
}
