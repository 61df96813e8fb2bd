//! Derived quantities of one worker or one repetition: cost per byte and the
//! rates that explain it. Every one is `None` when an ingredient was not
//! counted (no PMU, no L1i event) or its denominator is zero, so a missing
//! counter shows as a dash, never as a made-up zero.

use crate::measure::{ClockKind, RepSample, WorkerSample};

/// `count` per byte of `bytes`; `None` for a worker that processed nothing.
fn per_byte(count: u64, bytes: u64) -> Option<f64> {
    (bytes > 0).then(|| count as f64 / bytes as f64)
}

/// What one byte cost this worker, on `clock`: its own `cycles` counter
/// (core cycles: the work, at whatever frequency the core ran) or its ticks
/// of the tick clock, TSC or generic timer (wall time at a constant rate,
/// including any time it was descheduled). Per byte, so repetitions of
/// different lengths compare.
pub fn worker_cost_per_byte(w: &WorkerSample, clock: ClockKind) -> Option<f64> {
    let count = match clock {
        ClockKind::CoreCycles => w.counters.cycles?,
        ClockKind::Tsc | ClockKind::GenericTimer => w.tsc_ticks,
    };
    per_byte(count, w.bytes)
}

/// The cost of a repetition: the mean of its workers' costs per byte. Every
/// worker processes the same bytes, so this equals total count / total
/// bytes, and a worker slowed by its neighbour raises it in proportion.
/// `None` when any worker's cost is missing: a mean over some workers would
/// silently describe a different placement.
pub fn rep_cost(rep: &RepSample, clock: ClockKind) -> Option<f64> {
    if rep.workers.is_empty() {
        return None;
    }
    let total: Option<f64> = rep
        .workers
        .iter()
        .map(|w| worker_cost_per_byte(w, clock))
        .sum();
    Some(total? / rep.workers.len() as f64)
}

/// Instructions retired per byte. The kernel's instruction count is fixed per
/// byte, so this must be the same for every worker, repetition and arm: the
/// invariance check's proof that each counter counted its own worker.
pub fn instructions_per_byte(w: &WorkerSample) -> Option<f64> {
    per_byte(w.counters.instructions?, w.bytes)
}

/// L1 instruction-cache read misses per 1000 instructions: near zero for a
/// small kernel on its own core, higher when a sibling thread's code shares
/// the L1i.
pub fn l1i_per_kilo_instruction(w: &WorkerSample) -> Option<f64> {
    let instructions = w.counters.instructions.filter(|&i| i > 0)?;
    Some(w.counters.l1i_misses? as f64 * 1000.0 / instructions as f64)
}

/// The core's average frequency while this worker ran, in GHz:
/// cycles / ref-cycles × the TSC frequency. ref-cycles tick at the constant
/// nominal (TSC) rate while the thread runs, so the ratio is how far turbo
/// or throttling moved the core; it says why core-cycle and TSC costs differ.
/// `None` unless both counters were counted and `tsc_hz` is a frequency.
pub fn effective_ghz(w: &WorkerSample, tsc_hz: f64) -> Option<f64> {
    let cycles = w.counters.cycles?;
    let reference = w.counters.ref_cycles.filter(|&r| r > 0)?;
    (tsc_hz.is_finite() && tsc_hz > 0.0).then(|| cycles as f64 / reference as f64 * tsc_hz / 1e9)
}

/// Bytes per second of the whole repetition: every worker's bytes over the
/// wall time from release to the last worker's return.
pub fn throughput_bytes_per_s(rep: &RepSample) -> Option<f64> {
    let bytes: u64 = rep.workers.iter().map(|w| w.bytes).sum();
    (rep.wall_ns > 0 && bytes > 0).then(|| bytes as f64 * 1e9 / rep.wall_ns as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::CounterValues;

    fn worker(bytes: u64, tsc_ticks: u64, counters: CounterValues) -> WorkerSample {
        WorkerSample {
            worker: 0,
            pinned_cpu: Some(0),
            cpu_start: 0,
            cpu_end: 0,
            bytes,
            busy_ns: 1_000_000,
            tsc_ticks,
            barrier_wait_ns: 0,
            finish_ns: None,
            counters,
            checksum: 0,
            items: None,
            pages: None,
        }
    }

    fn pmu(cycles: u64, instructions: u64, ref_cycles: u64, l1i: Option<u64>) -> CounterValues {
        CounterValues {
            cycles: Some(cycles),
            instructions: Some(instructions),
            ref_cycles: Some(ref_cycles),
            l1i_misses: l1i,
            ..CounterValues::default()
        }
    }

    fn rep(workers: Vec<WorkerSample>, wall_ns: u64) -> RepSample {
        RepSample {
            arm: crate::plan::Arm::OnePerCore,
            rep: 0,
            warmup: false,
            workers,
            wall_ns,
            dispatcher_task_clock_ns: 0,
        }
    }

    #[test]
    fn cost_per_byte_on_each_clock() {
        let w = worker(1000, 800, pmu(600, 500, 500, None));
        assert_eq!(worker_cost_per_byte(&w, ClockKind::CoreCycles), Some(0.6));
        assert_eq!(worker_cost_per_byte(&w, ClockKind::Tsc), Some(0.8));
    }

    #[test]
    fn no_core_cycle_cost_without_a_pmu() {
        let w = worker(1000, 800, CounterValues::default());
        assert_eq!(worker_cost_per_byte(&w, ClockKind::CoreCycles), None);
        assert_eq!(worker_cost_per_byte(&w, ClockKind::Tsc), Some(0.8));
        assert_eq!(instructions_per_byte(&w), None);
        assert_eq!(l1i_per_kilo_instruction(&w), None);
        assert_eq!(effective_ghz(&w, 2.5e9), None);
    }

    #[test]
    fn zero_bytes_has_no_cost() {
        let w = worker(0, 800, pmu(600, 500, 500, Some(1)));
        assert_eq!(worker_cost_per_byte(&w, ClockKind::Tsc), None);
        assert_eq!(instructions_per_byte(&w), None);
    }

    #[test]
    fn rep_cost_is_the_mean_over_workers() {
        let r = rep(
            vec![
                worker(1000, 800, pmu(600, 0, 0, None)),
                worker(1000, 1200, pmu(800, 0, 0, None)),
            ],
            1,
        );
        assert_eq!(rep_cost(&r, ClockKind::Tsc), Some(1.0));
        assert_eq!(rep_cost(&r, ClockKind::CoreCycles), Some(0.7));
        assert_eq!(rep_cost(&rep(Vec::new(), 1), ClockKind::Tsc), None);
    }

    #[test]
    fn rep_cost_refuses_a_partial_mean() {
        let r = rep(
            vec![
                worker(1000, 800, pmu(600, 0, 0, None)),
                worker(1000, 800, CounterValues::default()),
            ],
            1,
        );
        assert_eq!(rep_cost(&r, ClockKind::CoreCycles), None);
    }

    #[test]
    fn rates_from_counters() {
        let w = worker(1000, 800, pmu(3000, 2000, 2500, Some(4)));
        assert_eq!(instructions_per_byte(&w), Some(2.0));
        assert_eq!(l1i_per_kilo_instruction(&w), Some(2.0));
        assert!((effective_ghz(&w, 2.5e9).unwrap() - 3.0).abs() < 1e-12);
        assert_eq!(effective_ghz(&w, 0.0), None);
    }

    #[test]
    fn throughput_over_wall_time() {
        let r = rep(
            vec![
                worker(1000, 1, CounterValues::default()),
                worker(1000, 1, CounterValues::default()),
            ],
            1_000,
        );
        assert_eq!(throughput_bytes_per_s(&r), Some(2e9));
        assert_eq!(throughput_bytes_per_s(&rep(Vec::new(), 1_000)), None);
    }
}
