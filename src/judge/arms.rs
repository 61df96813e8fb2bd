//! Per-arm statistics: every quantity the tables show, each as a median with
//! its spread and repetition count.

use crate::judge::checks::{Check, CheckName, CheckStatus, ExcludedRep, cv_bar, nothing_kept};
use crate::judge::cost;
use crate::judge::stats::{Spread, spread};
use crate::measure::{ClockKind, MeasurementSetup, RepSample};
use crate::plan::{Arm, Placement};
use serde::{Deserialize, Serialize};

/// Statistics of one arm over its measured repetitions. Every median comes
/// with its spread and repetition count (`Spread`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArmStats {
    pub name: Arm,
    /// Per worker: the CPU it was pinned to, or null (unpinned).
    pub cpus: Vec<Option<u32>>,
    /// The clock `cost` is in.
    pub clock: ClockKind,
    /// Cost per byte in `clock` units (per repetition: the mean over workers).
    pub cost: Option<Spread>,
    /// Ticks per byte of the setup's `tick_clock` (TSC or generic timer),
    /// always recorded (wall time at the clock's constant rate).
    pub tsc_per_byte: Option<Spread>,
    pub instructions_per_byte: Option<Spread>,
    pub l1i_misses_per_kilo_instruction: Option<Spread>,
    /// cycles / ref-cycles × TSC frequency, when both are counted.
    pub effective_ghz: Option<Spread>,
    /// All workers' bytes per second of wall time.
    pub throughput_bytes_per_s: Option<Spread>,
    /// Mean worker task-clock per repetition, milliseconds.
    pub task_clock_ms: Option<Spread>,
    /// CV under the bar (run only; the gate does not quote arms).
    pub quotable: bool,
    /// median(cost) / median(one-per-core cost) − 1 (run only).
    pub change_vs_one_per_core: Option<f64>,
}

/// The measured (non-warm-up) repetitions of one arm, minus the excluded ones.
pub fn measured<'a>(
    samples: &'a [RepSample],
    arm: Arm,
    excluded: &[ExcludedRep],
) -> Vec<&'a RepSample> {
    samples
        .iter()
        .filter(|r| r.arm == arm && !r.warmup && !excluded.iter().any(|e| e.covers(arm, r.rep)))
        .collect()
}

/// Per repetition, the mean over its workers of `per_worker`: the values an
/// arm's median of that quantity (and a figure's interval of it) is taken
/// over. A repetition where some worker lacks the value gives none.
pub fn per_rep_means(
    reps: &[&RepSample],
    per_worker: impl Fn(&crate::measure::WorkerSample) -> Option<f64>,
) -> Vec<f64> {
    reps.iter()
        .filter_map(|rep| {
            let v: Vec<f64> = rep.workers.iter().filter_map(&per_worker).collect();
            (v.len() == rep.workers.len() && !v.is_empty())
                .then(|| v.iter().sum::<f64>() / v.len() as f64)
        })
        .collect()
}

/// Median over a per-repetition quantity that is the mean over workers.
fn per_rep_mean(
    reps: &[&RepSample],
    per_worker: impl Fn(&crate::measure::WorkerSample) -> Option<f64>,
) -> Option<Spread> {
    spread(&per_rep_means(reps, per_worker))
}

/// Computes an arm's statistics over `reps` (already filtered to measured
/// ones), on the clocks `setup` measured with.
pub fn arm_stats(placement: &Placement, reps: &[&RepSample], setup: &MeasurementSetup) -> ArmStats {
    let clock = setup.clock;
    let costs: Vec<f64> = reps
        .iter()
        .filter_map(|r| cost::rep_cost(r, clock))
        .collect();
    let throughput: Vec<f64> = reps
        .iter()
        .filter_map(|r| cost::throughput_bytes_per_s(r))
        .collect();
    ArmStats {
        name: placement.arm,
        cpus: placement.cpus.clone(),
        clock,
        cost: spread(&costs),
        tsc_per_byte: per_rep_mean(reps, |w| cost::worker_cost_per_byte(w, setup.tick_clock)),
        instructions_per_byte: per_rep_mean(reps, cost::instructions_per_byte),
        l1i_misses_per_kilo_instruction: per_rep_mean(reps, cost::l1i_per_kilo_instruction),
        effective_ghz: per_rep_mean(reps, |w| cost::effective_ghz(w, setup.tsc_hz)),
        throughput_bytes_per_s: spread(&throughput),
        task_clock_ms: per_rep_mean(reps, |w| Some(w.counters.task_clock_ns as f64 / 1e6)),
        quotable: true,
        change_vs_one_per_core: None,
    }
}

/// Each run arm's checks, with its quotable mark and its change against
/// one-per-core set: the CV bar (unavailable under 2 measured
/// repetitions), and, for an arm that kept no measured repetition, a failed
/// `repetitions ARM` check ([`nothing_kept`]). `kept` is each arm's count
/// of measured repetitions left after `excluded`.
pub fn run_arm_checks(
    arms: &mut [ArmStats],
    kept: &[usize],
    excluded: &[ExcludedRep],
    bar: f64,
) -> Vec<Check> {
    let baseline = arms
        .iter()
        .find(|a| a.name == Arm::OnePerCore)
        .and_then(|a| a.cost.as_ref().map(|c| c.median));
    let mut checks = Vec::new();
    for (arm, &kept) in arms.iter_mut().zip(kept) {
        if let (Some(base), Some(cost)) = (baseline, arm.cost.as_ref()) {
            arm.change_vs_one_per_core = Some(cost.median / base - 1.0);
        }
        let check = match &arm.cost {
            Some(spread) => cv_bar(CheckName::CvBar(arm.name), spread, bar),
            None => Check::unavailable(
                CheckName::CvBar(arm.name),
                "fewer than 2 measured repetitions",
            ),
        };
        arm.quotable = check.status == CheckStatus::Passed;
        checks.push(check);
        if kept == 0 {
            let dropped = excluded.iter().filter(|e| e.arm == arm.name).count();
            checks.push(nothing_kept(CheckName::Repetitions(arm.name), dropped, 0));
        }
    }
    checks
}
