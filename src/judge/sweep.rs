//! `run --sweep`'s judgement: each step's wall time and speedup, what the
//! CPUs it added are worth, the ceiling their single-worker speeds allow,
//! and the knees where the curve bends.
//!
//! Every round measured every step and every CPU's pinned baseline back to
//! back, so ratios pair by round (`Ratio::paired`, `hybrid`'s) and the
//! host's drift cancels inside each pair. Step 1 is the first CPU's
//! baseline: the unit of every speedup, gain and ceiling ("fastest-class
//! CPUs" when the order starts with the fastest class, as by default).

use crate::judge::checks::{self, Check, CheckName, ExcludedRep, excluded_reps};
use crate::judge::command::ArmResidency;
use crate::judge::command_checks;
use crate::judge::hybrid::{Ratio, WorkerRow, wall_ms, worker_row};
use crate::judge::stats::{Spread, median, median_interval, spread};
use crate::judge::validity::judge_run;
use crate::measure::command::CommandRep;
use crate::measure::{HardwareEvent, MeasurementSetup, RepSample};
use crate::plan::Arm;
use crate::plan::command::CommandArm;
use crate::plan::sweep::{Added, SweepPlan};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A step whose CPUs added less than this, per CPU, in first-CPU units, is
/// a knee: the added CPU is worth less than half of the first. An SMT
/// sibling sharing its core's ports typically adds 0.1-0.3, a second
/// idle core close to 1, an E core about its speed (0.4-0.6).
pub const KNEE_FRACTION: f64 = 0.5;

/// One step of the sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepStats {
    /// Workers, one per CPU.
    #[schemars(range(min = 1))]
    pub workers: usize,
    /// The CPUs: the first `workers` of the order.
    pub cpus: Vec<u32>,
    /// What the CPUs this step added (beyond the previous step's) are.
    pub added: Vec<Added>,
    /// Wall time of all the work, milliseconds.
    pub wall_ms: Option<Spread>,
    /// Step 1's time / this step's, paired by round.
    pub speedup: Option<Ratio>,
    /// The same for the step's workers left to the scheduler (step 1: the
    /// pinned baseline itself), as the reference study measured its curve.
    #[serde(default)]
    pub unpinned_speedup: Option<Ratio>,
    /// What each CPU this step added is worth, in first-CPU units: the
    /// speedup's rise since the previous step per added CPU, the median of
    /// the per-round rises with its distribution-free 95 % interval.
    pub marginal_gain: Option<Gain>,
    /// The sum of the step's CPUs' single-worker speeds, first-CPU units.
    pub ceiling: Option<f64>,
    /// speedup / ceiling.
    pub efficiency: Option<f64>,
    /// Median over rounds of the workers' mean busy clock (core cycles per
    /// busy microsecond); `None` where cycles were not counted.
    pub busy_mhz: Option<f64>,
    /// Under the CV bar.
    pub quotable: bool,
    /// Each worker of the step (pinned, work stealing), as `hybrid`'s
    /// rows: items, busy time (first item to last) and idle time (the
    /// step's wall time minus busy: waking up, and waiting at the end),
    /// medians over rounds. Empty for step 1, a COMMAND sweep and files
    /// before they were recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worker_rows: Vec<WorkerRow>,
    /// The finish gap: per round, the time from the first worker's last
    /// item done to the last worker's, ms. The step's clock runs on
    /// through it while the first to finish has nothing left to steal, so
    /// a gap beyond an item's length is a worker holding its last item
    /// while it did not run, not a slower CPU. From each worker's
    /// `finish_ns`; in files before it, its busy time (the start a few
    /// microseconds after the release, the same for every worker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_gap_ms: Option<Spread>,
}

/// A marginal gain with its interval (absent under six paired rounds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Gain {
    pub value: f64,
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
}

/// One CPU's pinned single-worker baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuSpeed {
    pub cpu: u32,
    pub wall_ms: Option<Spread>,
    /// Its speed in first-CPU units: first CPU's time / its own, paired.
    pub speed: Option<Ratio>,
}

/// Where the curve bends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Knee {
    /// The step at which the marginal gain fell below [`KNEE_FRACTION`].
    #[schemars(range(min = 2))]
    pub workers: usize,
    pub marginal_gain: f64,
    /// What was added there.
    pub added: Vec<Added>,
    /// Whether the gain's 95 % interval lies wholly below the fraction, so
    /// that the host's noise cannot have made the knee. False where the
    /// interval reaches the fraction, or where there is none (under six
    /// rounds): the text says the knee is unclear, never that it is there.
    /// Files saved before this field judged by the point alone.
    #[serde(default = "clear_in_files_before_intervals")]
    pub clear: bool,
}

fn clear_in_files_before_intervals() -> bool {
    true
}

/// Which side of the knee fraction a step's gain is on, by its interval.
fn clearly_below(gain: &Gain) -> bool {
    gain.ci95_high.is_some_and(|high| high < KNEE_FRACTION)
}

/// The gain's interval wholly at or above the fraction.
fn clearly_above(gain: &Gain) -> bool {
    gain.ci95_low.is_some_and(|low| low >= KNEE_FRACTION)
}

/// Everything a sweep's samples say.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SweepJudgement {
    pub steps: Vec<StepStats>,
    pub cpu_speeds: Vec<CpuSpeed>,
    pub knees: Vec<Knee>,
    /// Steps whose gain is at or above the fraction while its 95 %
    /// interval reaches below it (or has none): "no knee" cannot be said
    /// of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(inner(range(min = 2)))]
    pub unclear_steps: Vec<usize>,
    /// The fraction [`KNEE_FRACTION`] the knees were found with.
    pub knee_fraction: f64,
    /// Step 1 against itself: the half-width of the distribution-free
    /// 95 % interval of its per-round time relative to its median (0.05:
    /// a step's speedup moves ±5 % from noise alone).
    pub noise_floor: Option<f64>,
    /// Why busy MHz is missing, where it is.
    pub busy_mhz_unavailable: Option<String>,
    /// Why no step has a ceiling, where none has (a COMMAND sweep runs no
    /// per-CPU baselines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling_unavailable: Option<String>,
    pub checks: Vec<Check>,
    pub excluded: Vec<ExcludedRep>,
    pub invariance_spread: Option<f64>,
    pub valid: bool,
}

/// What the judgement is asked for, beside the samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepRules {
    pub cv_bar: f64,
    pub tolerance: f64,
    pub strict: bool,
}

/// Judges a sweep; see the module docs.
pub fn judge_sweep(
    samples: &[RepSample],
    plan: &SweepPlan,
    setup: &MeasurementSetup,
    rules: &SweepRules,
) -> SweepJudgement {
    // A sample is kept unless it broke a rule itself: several samples of
    // one round share an arm, so exclusions are matched per sample, and
    // each says which CPU alone or which step it was.
    let mut excluded = Vec::new();
    let kept: Vec<&RepSample> = samples
        .iter()
        .filter(|rep| {
            let mut broke = excluded_reps(std::slice::from_ref(*rep));
            let what = match (rep.arm, rep.workers.first().and_then(|w| w.pinned_cpu)) {
                (Arm::Baseline, Some(cpu)) => format!("CPU {cpu} alone"),
                _ => format!("step {}", rep.workers.len()),
            };
            for exclusion in &mut broke {
                exclusion.why = format!("{what}: {}", exclusion.why);
            }
            let keep = !rep.warmup && broke.is_empty();
            excluded.extend(broke);
            keep
        })
        .collect();
    let baseline = |cpu: u32| -> BTreeMap<usize, f64> {
        by_round(&kept, |rep| {
            rep.arm == Arm::Baseline && rep.workers.first().and_then(|w| w.pinned_cpu) == Some(cpu)
        })
    };
    let first = plan.order.first().map_or(0, |c| c.cpu);
    let unit = baseline(first);
    let cpu_speeds = cpu_speeds(plan, &unit, baseline);
    let step_times: Vec<BTreeMap<usize, f64>> = plan
        .steps
        .iter()
        .map(|&k| match k {
            1 => unit.clone(),
            k => by_round(&kept, |rep| {
                rep.arm == Arm::StealingPinned && rep.workers.len() == k
            }),
        })
        .collect();
    let step_cpus = |k| plan.step_cpus(k);
    let steps = curve(plan, &step_times, &cpu_speeds, rules.cv_bar, |k, stats| {
        let unpinned = match k {
            1 => unit.clone(),
            k => by_round(&kept, |rep| {
                rep.arm == Arm::StealingUnpinned && rep.workers.len() == k
            }),
        };
        stats.unpinned_speedup = Ratio::paired(&unit, &unpinned);
        stats.busy_mhz = busy_mhz(&kept, &step_cpus(k));
        if k > 1 {
            let reps: BTreeMap<usize, &RepSample> = kept
                .iter()
                .filter(|rep| rep.arm == Arm::StealingPinned && rep.workers.len() == k)
                .map(|rep| (rep.rep, *rep))
                .collect();
            stats.worker_rows = (0..k).map(|w| worker_row(&reps, w, &|_| None)).collect();
            let gaps: Vec<f64> = reps.values().filter_map(|rep| finish_gap_ms(rep)).collect();
            stats.finish_gap_ms = spread(&gaps);
        }
    });
    let knees = knees(&steps);
    let unclear_steps = unclear_steps(&steps);
    let (invariance, invariance_spread) = checks::invariance(
        samples,
        rules.tolerance,
        setup.kernel_instructions_per_byte,
        setup.why_instructions_uncounted(),
    );
    let mut all_checks = vec![
        checks::pinning(samples),
        checks::multiplexing(samples),
        invariance,
    ];
    let measured = |arm: CommandArm| {
        let of_arm = |rep: &&RepSample| match arm {
            CommandArm::Step(1) => {
                rep.arm == Arm::Baseline
                    && rep.workers.first().and_then(|w| w.pinned_cpu) == Some(first)
            }
            CommandArm::Step(k) => rep.arm == Arm::StealingPinned && rep.workers.len() == k,
            CommandArm::Alone(cpu) => {
                rep.arm == Arm::Baseline
                    && rep.workers.first().and_then(|w| w.pinned_cpu) == Some(cpu)
            }
            _ => false,
        };
        (
            samples.iter().filter(|r| !r.warmup).filter(of_arm).count(),
            0,
        )
    };
    all_checks.extend(nothing_kept(plan, &step_times, baseline, measured));
    let all_quotable = steps.iter().all(|s| s.quotable);
    SweepJudgement {
        busy_mhz_unavailable: steps
            .iter()
            .all(|s| s.busy_mhz.is_none())
            .then(|| why_cycles_uncounted(setup)),
        noise_floor: noise_floor(&unit),
        ceiling_unavailable: ceiling_unavailable(plan),
        knee_fraction: KNEE_FRACTION,
        valid: judge_run(&all_checks, rules.strict).is_valid() && (!rules.strict || all_quotable),
        steps,
        cpu_speeds,
        knees,
        unclear_steps,
        checks: all_checks,
        excluded,
        invariance_spread,
    }
}

/// Why a sweep's steps have no ceiling: `--no-ceiling` measured no CPU
/// alone but the first.
pub const NO_CEILING: &str = "not measured: --no-ceiling ran no CPU alone but the first (step 1), \
     so speedups are against the first CPU alone and no ceiling is claimed";

fn ceiling_unavailable(plan: &SweepPlan) -> Option<String> {
    (!plan.per_cpu_baselines).then(|| NO_CEILING.into())
}

/// Each CPU of [`SweepPlan::baseline_cpus`] alone: its wall time and its
/// speed in first-CPU units, paired by round with `unit` (step 1's times
/// by round); `alone` gives a CPU's times by round.
fn cpu_speeds(
    plan: &SweepPlan,
    unit: &BTreeMap<usize, f64>,
    alone: impl Fn(u32) -> BTreeMap<usize, f64>,
) -> Vec<CpuSpeed> {
    plan.baseline_cpus()
        .into_iter()
        .map(|cpu| {
            let times = alone(cpu);
            CpuSpeed {
                cpu,
                wall_ms: spread(&times.values().copied().collect::<Vec<_>>()),
                speed: Ratio::paired(unit, &times),
            }
        })
        .collect()
}

/// Judges `run --sweep -- COMMAND`: step k's repetitions are the arm
/// `step:k` ([`CommandArm::Step`]), step 1 the command with `{threads}` 1
/// on the first CPU, and each other CPU of the largest step alone is the
/// arm `cpu:N` ([`CommandArm::Alone`], `{threads}` 1), whose speeds add up
/// to each step's ceiling as the kernel's baselines do. Every round ran
/// every arm, so speedups, gains and speeds pair by round as the kernel
/// sweep's. The checks are the command
/// study's placement-held, multiplexing and other-load per step
/// (`residency`, one per step); same-work is not one of them: the command
/// with `{threads}` k does its own amount of synchronisation and
/// splitting, so its instructions are not expected to agree across steps.
/// A step is quotable under the CV bar with no repetition beside other
/// load above it.
pub fn judge_command_sweep(
    reps: &[CommandRep],
    plan: &SweepPlan,
    residency: &[ArmResidency],
    rules: &SweepRules,
) -> SweepJudgement {
    let times_of = |arm: CommandArm| -> BTreeMap<usize, f64> {
        reps.iter()
            .filter(|r| r.arm == arm && !r.warmup && !r.failed)
            .map(|r| (r.round, r.sample.wall_ns as f64 / 1e6))
            .collect()
    };
    let step_times: Vec<BTreeMap<usize, f64>> = plan
        .steps
        .iter()
        .map(|&k| times_of(CommandArm::Step(k)))
        .collect();
    let unit = times_of(CommandArm::Step(1));
    let first = plan.order.first().map_or(0, |c| c.cpu);
    let alone = |cpu: u32| match cpu == first {
        true => unit.clone(),
        false => times_of(CommandArm::Alone(cpu)),
    };
    let cpu_speeds = cpu_speeds(plan, &unit, alone);
    let steps = curve(plan, &step_times, &cpu_speeds, rules.cv_bar, |k, stats| {
        let beside_load = residency
            .iter()
            .any(|r| r.arm == CommandArm::Step(k) && !r.other_load_over_bar.is_empty());
        stats.quotable &= !beside_load;
    });
    let mut all_checks = vec![
        command_checks::placement_held(residency),
        command_checks::multiplexing(reps),
    ];
    let measured = |arm: CommandArm| {
        let of_arm = reps.iter().filter(|r| r.arm == arm && !r.warmup);
        of_arm.fold((0, 0), |(measured, failed), rep| {
            (measured + 1, failed + usize::from(rep.failed))
        })
    };
    all_checks.extend(nothing_kept(plan, &step_times, alone, measured));
    all_checks.extend(command_checks::other_load(residency, rules.cv_bar));
    let all_quotable = steps.iter().all(|s| s.quotable);
    SweepJudgement {
        busy_mhz_unavailable: Some(
            "not measured: a COMMAND sweep counts the tree's cycles, not each CPU's busy clock"
                .into(),
        ),
        ceiling_unavailable: ceiling_unavailable(plan),
        noise_floor: noise_floor(&unit),
        knee_fraction: KNEE_FRACTION,
        valid: command_checks::command_valid(&all_checks, rules.strict)
            && (!rules.strict || all_quotable),
        knees: knees(&steps),
        unclear_steps: unclear_steps(&steps),
        steps,
        cpu_speeds,
        checks: all_checks,
        excluded: Vec::new(),
        invariance_spread: None,
    }
}

/// A failed `repetitions` check ([`checks::nothing_kept`]) for each step
/// and each CPU alone that kept no round: a sweep with a step or a CPU
/// without a number is invalid. `step_times` are the kept times by round of
/// `plan.steps`, `alone` gives a CPU's, and `measured` counts an arm's
/// measured repetitions and the failed ones among them.
fn nothing_kept(
    plan: &SweepPlan,
    step_times: &[BTreeMap<usize, f64>],
    alone: impl Fn(u32) -> BTreeMap<usize, f64>,
    measured: impl Fn(CommandArm) -> (usize, usize),
) -> Vec<Check> {
    let first = plan.order.first().map_or(0, |c| c.cpu);
    let steps = plan.steps.iter().zip(step_times);
    let emptied_steps = steps
        .filter(|(_, times)| times.is_empty())
        .map(|(&k, _)| CommandArm::Step(k));
    let others = plan.baseline_cpus().into_iter().filter(|&cpu| cpu != first);
    let emptied_cpus = others
        .filter(|&cpu| alone(cpu).is_empty())
        .map(CommandArm::Alone);
    emptied_steps
        .chain(emptied_cpus)
        .map(|arm| {
            let (count, failed) = measured(arm);
            checks::nothing_kept(CheckName::repetitions_of(arm), count, failed)
        })
        .collect()
}

/// Each step of `plan` from its wall times by round (`step_times`, step
/// 1's the unit): wall time, speedup paired by round, marginal gain, and
/// the ceiling and efficiency where `cpu_speeds` has every CPU of the
/// step; `more` fills in what only one kind of sweep measures.
fn curve(
    plan: &SweepPlan,
    step_times: &[BTreeMap<usize, f64>],
    cpu_speeds: &[CpuSpeed],
    cv_bar: f64,
    mut more: impl FnMut(usize, &mut StepStats),
) -> Vec<StepStats> {
    let empty = BTreeMap::new();
    let unit = step_times.first().unwrap_or(&empty);
    let gains = marginal_gains(unit, step_times, &plan.steps);
    let mut previous = 0;
    plan.steps
        .iter()
        .zip(step_times)
        .zip(gains)
        .map(|((&k, times), marginal_gain)| {
            let cpus = plan.step_cpus(k);
            let added = plan.order[previous.min(k)..k]
                .iter()
                .map(|c| c.added.clone())
                .collect();
            previous = k;
            let ceiling = cpus
                .iter()
                .map(|cpu| {
                    let speed = cpu_speeds.iter().find(|s| s.cpu == *cpu)?;
                    speed.speed.as_ref().map(|s| s.value)
                })
                .sum::<Option<f64>>();
            let speedup = Ratio::paired(unit, times);
            let wall_ms = spread(&times.values().copied().collect::<Vec<_>>());
            let quotable = wall_ms.as_ref().is_some_and(|w| w.cv <= cv_bar);
            let mut stats = StepStats {
                workers: k,
                efficiency: speedup.as_ref().zip(ceiling).map(|(s, c)| s.value / c),
                busy_mhz: None,
                cpus,
                added,
                wall_ms,
                speedup,
                marginal_gain,
                ceiling,
                quotable,
                unpinned_speedup: None,
                worker_rows: Vec::new(),
                finish_gap_ms: None,
            };
            more(k, &mut stats);
            stats
        })
        .collect()
}

/// One repetition's finish gap, ms: the last worker's finish less the
/// first's ([`StepStats::finish_gap_ms`]); `None` without workers.
fn finish_gap_ms(rep: &RepSample) -> Option<f64> {
    let finishes = rep.workers.iter().map(|w| w.finish_ns.unwrap_or(w.busy_ns));
    let (first, last) = finishes.fold(None, |span, at| match span {
        None => Some((at, at)),
        Some((first, last)) => Some((at.min(first), at.max(last))),
    })?;
    Some((last - first) as f64 / 1e6)
}

/// Wall time by round of the kept samples `wanted` picks.
fn by_round(kept: &[&RepSample], wanted: impl Fn(&RepSample) -> bool) -> BTreeMap<usize, f64> {
    kept.iter()
        .filter(|rep| wanted(rep))
        .map(|rep| (rep.rep, wall_ms(rep)))
        .collect()
}

/// Each step's marginal gain: per round, (speedupₖ − speedupₚᵣₑᵥ) / (k −
/// prev), speedups from that round's `unit` time; the median over rounds
/// with its distribution-free 95 % interval. Step 1 has none.
pub fn marginal_gains(
    unit: &BTreeMap<usize, f64>,
    step_times: &[BTreeMap<usize, f64>],
    steps: &[usize],
) -> Vec<Option<Gain>> {
    let mut gains = vec![None];
    for i in 1..steps.len().min(step_times.len()) {
        let added = (steps[i] - steps[i - 1]) as f64;
        let per_round: Vec<f64> = unit
            .iter()
            .filter_map(|(round, u)| {
                let now = step_times[i].get(round)?;
                let before = step_times[i - 1].get(round)?;
                Some((u / now - u / before) / added)
            })
            .collect();
        gains.push((!per_round.is_empty()).then(|| {
            let interval = median_interval(&per_round);
            Gain {
                value: median(&per_round),
                ci95_low: interval.map(|i| i.0),
                ci95_high: interval.map(|i| i.1),
            }
        }));
    }
    gains
}

/// The steps at which the marginal gain per added CPU first falls below
/// [`KNEE_FRACTION`], or falls below it again after rising above, or stays
/// below it while a different kind of CPU is added.
pub fn knees(steps: &[StepStats]) -> Vec<Knee> {
    let mut found = Vec::new();
    let mut below_since: Option<&StepStats> = None;
    for step in steps {
        let Some(gain) = step.marginal_gain.as_ref() else {
            continue;
        };
        if gain.value >= KNEE_FRACTION {
            below_since = None;
            continue;
        }
        let same_kind = below_since.is_some_and(|since| kinds(&since.added) == kinds(&step.added));
        if !same_kind {
            found.push(Knee {
                workers: step.workers,
                marginal_gain: gain.value,
                added: step.added.clone(),
                clear: clearly_below(gain),
            });
            below_since = Some(step);
        }
    }
    found
}

/// The steps whose gain is at or above [`KNEE_FRACTION`] but not clearly:
/// [`SweepJudgement::unclear_steps`].
pub fn unclear_steps(steps: &[StepStats]) -> Vec<usize> {
    steps
        .iter()
        .filter_map(|step| {
            let gain = step.marginal_gain.as_ref()?;
            (gain.value >= KNEE_FRACTION && !clearly_above(gain)).then_some(step.workers)
        })
        .collect()
}

/// The kinds of `added`, without which CPU: a new core, a sibling, …
fn kinds(added: &[Added]) -> Vec<std::mem::Discriminant<Added>> {
    added.iter().map(std::mem::discriminant).collect()
}

/// Step 1 against itself: the half-width of its time's distribution-free
/// 95 % interval relative to its median.
pub fn noise_floor(unit: &BTreeMap<usize, f64>) -> Option<f64> {
    let times: Vec<f64> = unit.values().copied().collect();
    let (low, high) = median_interval(&times)?;
    let middle = median(&times);
    Some((high - low) / 2.0 / middle)
}

/// The busy clock of the step pinned on `cpus`: per round, the mean over
/// its workers of cycles per busy microsecond; the median over rounds.
fn busy_mhz(kept: &[&RepSample], cpus: &[u32]) -> Option<f64> {
    let pinned_on = |rep: &RepSample| {
        let pinned = rep.workers.iter().map(|w| w.pinned_cpu);
        pinned.eq(cpus.iter().map(|c| Some(*c)))
    };
    let per_round: Vec<f64> = kept
        .iter()
        .filter(|rep| pinned_on(rep))
        .filter_map(|rep| {
            let mhz: Vec<f64> = rep
                .workers
                .iter()
                .filter(|w| w.busy_ns > 0)
                .map(|w| Some(w.counters.cycles? as f64 * 1e3 / w.busy_ns as f64))
                .collect::<Option<_>>()?;
            (!mhz.is_empty()).then(|| mhz.iter().sum::<f64>() / mhz.len() as f64)
        })
        .collect();
    (!per_round.is_empty()).then(|| median(&per_round))
}

/// Why the setup counted no cycles.
fn why_cycles_uncounted(setup: &MeasurementSetup) -> String {
    setup
        .hardware_counters
        .event(HardwareEvent::Cycles)
        .and_then(|status| status.reason.clone())
        .or_else(|| setup.why_instructions_uncounted().map(str::to_string))
        .unwrap_or_else(|| "no core cycles in the samples".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::checks::CheckName;
    use crate::measure::WorkerSample;
    use crate::measure::{ClockKind, CounterValues, HardwareCounters, SoftwareCounters};
    use crate::plan::sweep::SweepCpu;
    use crate::probe::CoreKind::Uniform;

    /// The reference study's curve on a 4 P + 4 E laptop (speedups of 1 to
    /// 8 workers over the pinned P core), replayed as per-round times: the
    /// same in every round but for a ±1 % wobble, so the medians are the
    /// curve's values.
    const REFERENCE: [f64; 8] = [1.05, 2.07, 3.07, 3.37, 4.23, 4.58, 4.79, 5.13];

    fn wobble(round: usize) -> f64 {
        1.0 + 0.01 * ((round * 7) % 5) as f64 / 2.0 - 0.01
    }

    /// Step times by round for `speedups` (relative to a unit of 1000 ms
    /// divided by the first), `rounds` rounds, each round's wobble shared
    /// by every step as drift would be.
    fn replay(speedups: &[f64], rounds: usize) -> Vec<BTreeMap<usize, f64>> {
        speedups
            .iter()
            .map(|s| {
                (0..rounds)
                    .map(|r| (r, 1000.0 * speedups[0] / s * wobble(r)))
                    .collect()
            })
            .collect()
    }

    fn step(workers: usize, gain: Option<f64>, added: Added) -> StepStats {
        StepStats {
            workers,
            cpus: Vec::new(),
            added: vec![added],
            wall_ms: None,
            speedup: None,
            marginal_gain: gain.map(|value| Gain {
                value,
                ci95_low: None,
                ci95_high: None,
            }),
            ceiling: None,
            efficiency: None,
            busy_mhz: None,
            quotable: true,
            unpinned_speedup: None,
            worker_rows: Vec::new(),
            finish_gap_ms: None,
        }
    }

    /// The increments the issue reads off the curve, from 5 workers on:
    /// 0.86, 0.35, 0.21, 0.34 (of the 1.05 of step 1, so /1.05 here).
    #[test]
    fn the_reference_curve_gives_its_increments() {
        let times = replay(&REFERENCE, 11);
        let steps: Vec<usize> = (1..=8).collect();
        let gains = marginal_gains(&times[0], &times, &steps);
        assert!(gains[0].is_none(), "step 1 adds nothing to itself");
        let values: Vec<f64> = gains[1..]
            .iter()
            .map(|g| g.as_ref().unwrap().value * 1.05)
            .collect();
        for (got, want) in values[3..].iter().zip([0.86, 0.35, 0.21, 0.34]) {
            assert!((got - want).abs() < 0.005, "{values:?}");
        }
        // Drift shared by the steps of a round cancels: the interval is tight.
        let g = gains[1].as_ref().unwrap();
        assert!(g.ci95_high.unwrap() - g.ci95_low.unwrap() < 1e-9, "{g:?}");
    }

    /// Knees of the reference curve with P cores then E cores: the gain
    /// falls below a half at 4 workers, rises at 5 (the first E core) and
    /// falls again at 6.
    #[test]
    fn knees_of_the_reference_curve() {
        use crate::probe::CoreKind::{Efficiency, Performance};
        let times = replay(&REFERENCE, 11);
        let counts: Vec<usize> = (1..=8).collect();
        let gains = marginal_gains(&times[0], &times, &counts);
        let steps: Vec<StepStats> = counts
            .iter()
            .zip(gains)
            .map(|(&k, gain)| {
                let added = if k <= 4 {
                    Added::NewCore {
                        class: Performance,
                        node: None,
                    }
                } else {
                    Added::NewCore {
                        class: Efficiency,
                        node: None,
                    }
                };
                step(k, gain.map(|g| g.value), added)
            })
            .collect();
        let found: Vec<usize> = knees(&steps).iter().map(|k| k.workers).collect();
        assert_eq!(found, [4, 6]);
    }

    /// Below the fraction for two steps of one kind is one knee; a
    /// different kind added while still below is another.
    #[test]
    fn a_knee_is_where_the_gain_falls_or_the_kind_changes() {
        let core = Added::NewCore {
            class: Uniform,
            node: None,
        };
        let sibling = |of| Added::SmtSibling { class: Uniform, of };
        let steps = [
            step(1, None, Added::First { class: Uniform }),
            step(2, Some(0.97), core.clone()),
            step(
                3,
                Some(0.31),
                Added::OtherPackage {
                    class: Uniform,
                    package: 1,
                },
            ),
            step(4, Some(0.22), sibling(0)),
            step(5, Some(0.20), sibling(1)),
        ];
        let found: Vec<usize> = knees(&steps).iter().map(|k| k.workers).collect();
        assert_eq!(found, [3, 4]);
        assert!(knees(&steps[..2]).is_empty());
    }

    /// A knee is clear only where the gain's whole interval is below the
    /// fraction; a gain above it whose interval reaches below is unclear,
    /// and without an interval (under six rounds) nothing is clear.
    #[test]
    fn a_knee_is_clear_only_when_its_interval_is_below_the_fraction() {
        let core = Added::NewCore {
            class: Uniform,
            node: None,
        };
        let with_interval = |workers, value, low, high| {
            let mut s = step(workers, Some(value), core.clone());
            s.marginal_gain = Some(Gain {
                value,
                ci95_low: Some(low),
                ci95_high: Some(high),
            });
            s
        };
        let first = step(1, None, Added::First { class: Uniform });
        // The failing CI boot: -0.004 with no interval (four rounds).
        let noisy = [first.clone(), step(2, Some(-0.004), core.clone())];
        assert!(!knees(&noisy)[0].clear);
        let straddling = [first.clone(), with_interval(2, 0.40, -0.12, 0.77)];
        assert!(!knees(&straddling)[0].clear);
        let below = [first.clone(), with_interval(2, 0.20, 0.05, 0.35)];
        assert!(knees(&below)[0].clear);
        assert!(unclear_steps(&below).is_empty());
        let above_but_wide = [first.clone(), with_interval(2, 0.60, 0.30, 0.90)];
        assert!(knees(&above_but_wide).is_empty());
        assert_eq!(unclear_steps(&above_but_wide), [2]);
        let clearly_above = [first, with_interval(2, 0.90, 0.80, 1.00)];
        assert!(unclear_steps(&clearly_above).is_empty());
    }

    #[test]
    fn the_noise_floor_is_step_one_against_itself() {
        let quiet: BTreeMap<usize, f64> = (0..11).map(|r| (r, 100.0 * wobble(r))).collect();
        let floor = noise_floor(&quiet).unwrap();
        assert!(floor > 0.0 && floor < 0.02, "{floor}");
        let few: BTreeMap<usize, f64> = (0..5).map(|r| (r, 100.0)).collect();
        assert_eq!(
            noise_floor(&few),
            None,
            "under six rounds there is no interval"
        );
    }

    fn setup() -> MeasurementSetup {
        MeasurementSetup {
            kernel: "mul".into(),
            kernel_description: String::new(),
            kernel_instructions_per_byte: 0.78125,
            kernel_port_bound_cycles_per_byte: 0.5,
            bytes_per_worker: 1000,
            buffer_bytes: 1000,
            passes: 1,
            clock: ClockKind::Tsc,
            tick_clock: ClockKind::Tsc,
            hardware_counters: HardwareCounters::Unavailable {
                reason: "none here".into(),
            },
            software_counters: SoftwareCounters::PerfEvents,
            tsc_hz: 1e9,
            tsc_hz_source: "stated".into(),
            warmups: 0,
        }
    }

    fn sample(arm: Arm, round: usize, cpus: &[u32], wall_ms: f64) -> RepSample {
        let busy_ns = (wall_ms * 1e6) as u64;
        RepSample {
            arm,
            rep: round,
            warmup: false,
            wall_ns: busy_ns,
            dispatcher_task_clock_ns: 0,
            workers: cpus
                .iter()
                .enumerate()
                .map(|(worker, &cpu)| WorkerSample {
                    worker,
                    pinned_cpu: Some(cpu),
                    cpu_start: cpu,
                    cpu_end: cpu,
                    bytes: 1000,
                    busy_ns,
                    tsc_ticks: busy_ns,
                    barrier_wait_ns: 0,
                    finish_ns: None,
                    counters: CounterValues {
                        task_clock_ns: busy_ns,
                        time_enabled_ns: busy_ns,
                        time_running_ns: busy_ns,
                        ..CounterValues::default()
                    },
                    checksum: 0,
                    items: None,
                    pages: None,
                })
                .collect(),
        }
    }

    /// A step whose second worker held its last item while its vCPU did
    /// not run (the host's cap): each round, worker 0 finished its items
    /// at 50 ms and sat idle, worker 1 finished at 70 ms. The step shows
    /// each worker's busy and idle time, and the 20 ms finish gap;
    /// samples of files before `finish_ns` read the gap from busy time.
    #[test]
    fn a_step_shows_each_workers_busy_and_idle_time_and_its_finish_gap() {
        let plan = cores_then_siblings();
        let mut samples = rounds_of_cores_then_siblings(&plan);
        for rep in samples
            .iter_mut()
            .filter(|rep| rep.arm == Arm::StealingPinned && rep.workers.len() == 2)
        {
            rep.wall_ns = 70_500_000;
            for (worker, finish) in rep.workers.iter_mut().zip([50_000_000, 70_000_000]) {
                worker.busy_ns = finish - 200_000;
                worker.finish_ns = Some(finish);
            }
        }
        let rules = SweepRules {
            cv_bar: 1.0,
            tolerance: 0.02,
            strict: false,
        };
        let judged = judge_sweep(&samples, &plan, &setup(), &rules);
        let step = &judged.steps[1];
        assert_eq!(step.workers, 2);
        let gap = step.finish_gap_ms.as_ref().unwrap();
        assert!((gap.median - 20.0).abs() < 1e-9, "{gap:?}");
        let busy: Vec<f64> = step
            .worker_rows
            .iter()
            .map(|row| row.busy_ms.as_ref().unwrap().median)
            .collect();
        let idle: Vec<f64> = step
            .worker_rows
            .iter()
            .map(|row| row.idle_ms.as_ref().unwrap().median)
            .collect();
        assert_eq!(busy, [49.8, 69.8]);
        assert!(
            (idle[0] - 20.7).abs() < 1e-9 && (idle[1] - 0.7).abs() < 1e-9,
            "{idle:?}"
        );
        assert!(judged.steps[0].worker_rows.is_empty());
        assert_eq!(judged.steps[0].finish_gap_ms, None);
        // A file before finish_ns: the busy times give the gap.
        for rep in &mut samples {
            for worker in &mut rep.workers {
                worker.finish_ns = None;
            }
        }
        let old = judge_sweep(&samples, &plan, &setup(), &rules);
        let gap = old.steps[1].finish_gap_ms.as_ref().unwrap();
        assert!((gap.median - 20.0).abs() < 1e-9, "{gap:?}");
    }

    /// Step 1's busy clock is the first CPU's alone, not every CPU's
    /// baseline: here CPU 0 runs at 3000 MHz and the others at 2000.
    #[test]
    fn busy_mhz_is_the_steps_own_cpus() {
        let plan = cores_then_siblings();
        let mut samples = rounds_of_cores_then_siblings(&plan);
        for rep in &mut samples {
            for worker in &mut rep.workers {
                let mhz = if worker.pinned_cpu == Some(0) && rep.arm == Arm::Baseline {
                    3000
                } else {
                    2000
                };
                worker.counters.cycles = Some(worker.busy_ns * mhz / 1000);
            }
        }
        let judged = judge_sweep(&samples, &plan, &setup(), &RULES);
        let mhz: Vec<Option<f64>> = judged.steps.iter().map(|s| s.busy_mhz).collect();
        assert_eq!(mhz, [Some(3000.0), Some(2000.0), Some(2000.0)]);
        assert_eq!(judged.busy_mhz_unavailable, None);
    }

    /// A moved worker leaves out its own sample only, named by what it
    /// measured: CPU 0's baseline and the steps of that round stay.
    #[test]
    fn an_excluded_sample_names_its_cpu_and_leaves_the_rest_of_its_round() {
        let plan = cores_then_siblings();
        let mut samples = rounds_of_cores_then_siblings(&plan);
        let moved = samples
            .iter_mut()
            .find(|s| s.rep == 3 && s.arm == Arm::Baseline && s.workers[0].cpu_start == 1)
            .unwrap();
        moved.workers[0].cpu_end = 0;
        let judged = judge_sweep(&samples, &plan, &setup(), &RULES);
        assert_eq!(judged.excluded.len(), 1);
        assert!(
            judged.excluded[0].why.starts_with("CPU 1 alone: "),
            "{:?}",
            judged.excluded
        );
        let reps = |cpu: usize| judged.cpu_speeds[cpu].wall_ms.as_ref().unwrap().reps;
        assert_eq!((reps(0), reps(1)), (8, 7));
        assert_eq!(judged.steps[1].wall_ms.as_ref().unwrap().reps, 8);
    }

    /// Two cores (CPUs 0, 1) and their siblings (2, 3) on a machine where a
    /// sibling adds a quarter of a CPU and CPU 1 runs at 0.9 of CPU 0:
    /// the gains, ceilings and knee the judgement reads from the samples.
    const RULES: SweepRules = SweepRules {
        cv_bar: 0.05,
        tolerance: 1e-4,
        strict: false,
    };

    fn cores_then_siblings() -> SweepPlan {
        SweepPlan {
            order_name: "cores-first".into(),
            order: vec![
                SweepCpu {
                    cpu: 0,
                    added: Added::First { class: Uniform },
                },
                SweepCpu {
                    cpu: 1,
                    added: Added::NewCore {
                        class: Uniform,
                        node: None,
                    },
                },
                SweepCpu {
                    cpu: 2,
                    added: Added::SmtSibling {
                        class: Uniform,
                        of: 0,
                    },
                },
                SweepCpu {
                    cpu: 3,
                    added: Added::SmtSibling {
                        class: Uniform,
                        of: 1,
                    },
                },
            ],
            steps: vec![1, 2, 4],
            per_cpu_baselines: true,
        }
    }

    /// Eight rounds of `plan` where CPU 1 runs at 0.9 of CPU 0, step 2
    /// reaches 1.9 and step 4 (the siblings added) 2.4.
    fn rounds_of_cores_then_siblings(plan: &SweepPlan) -> Vec<RepSample> {
        let alone = [1000.0, 1000.0 / 0.9, 1000.0, 1000.0 / 0.9];
        let speedups = [(2, 1.9), (4, 2.4)];
        let mut samples = Vec::new();
        for round in 0..8 {
            let drift = wobble(round);
            for (cpu, ms) in alone.iter().enumerate() {
                samples.push(sample(Arm::Baseline, round, &[cpu as u32], ms * drift));
            }
            for (k, s) in speedups {
                let cpus = plan.step_cpus(k);
                samples.push(sample(
                    Arm::StealingPinned,
                    round,
                    &cpus,
                    1000.0 / s * drift,
                ));
                // The scheduler's placement, 5 % slower.
                let mut free = sample(Arm::StealingUnpinned, round, &cpus, 1050.0 / s * drift);
                free.workers.iter_mut().for_each(|w| w.pinned_cpu = None);
                samples.push(free);
            }
        }
        samples
    }

    #[test]
    fn a_sweep_of_cores_then_siblings() {
        let plan = cores_then_siblings();
        let samples = rounds_of_cores_then_siblings(&plan);
        let judged = judge_sweep(&samples, &plan, &setup(), &RULES);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        let step = |k: usize| judged.steps.iter().find(|s| s.workers == k).unwrap();
        assert!(close(step(1).speedup.as_ref().unwrap().value, 1.0));
        assert!(close(step(2).speedup.as_ref().unwrap().value, 1.9));
        assert!(close(step(2).marginal_gain.as_ref().unwrap().value, 0.9));
        assert!(close(step(2).ceiling.unwrap(), 1.9));
        assert!(close(step(2).efficiency.unwrap(), 1.0));
        let unpinned = step(2).unpinned_speedup.as_ref().unwrap().value;
        assert!(close(unpinned, 1.9 / 1.05), "{unpinned}");
        // Two siblings added 0.5 between them: 0.25 each.
        assert!(close(step(4).marginal_gain.as_ref().unwrap().value, 0.25));
        assert!(close(step(4).ceiling.unwrap(), 3.8));
        assert_eq!(judged.knees.len(), 1);
        assert_eq!(judged.knees[0].workers, 4);
        assert_eq!(step(4).added.len(), 2);
        assert_eq!(
            judged.busy_mhz_unavailable.as_deref(),
            Some("none here"),
            "no cycles, and why"
        );
        assert!(judged.noise_floor.is_some());
    }

    /// Nothing measured is never valid: a step that kept no round (here
    /// step 4's, never measured) fails `repetitions step:4` and the sweep
    /// is invalid, though every other check passed.
    #[test]
    fn a_step_without_a_kept_round_makes_the_sweep_invalid() {
        let plan = cores_then_siblings();
        let mut samples = rounds_of_cores_then_siblings(&plan);
        samples.retain(|rep| rep.workers.len() != 4);
        let judged = judge_sweep(&samples, &plan, &setup(), &RULES);
        assert!(!judged.valid);
        let failed: Vec<String> = judged
            .checks
            .iter()
            .filter(|c| c.status == checks::CheckStatus::Failed)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect();
        assert_eq!(
            failed,
            [
                "repetitions step:4: none was measured (the study stopped, or ran out of time, \
              first): no number is left"
            ]
        );
    }

    /// Step 2 of a command runs in 1/1.8 of step 1's time and the command
    /// alone on CPU 1 at 0.9 of CPU 0's speed, each round's drift shared by
    /// every arm; a failed repetition is left out and a step beside other
    /// load is not quotable.
    #[test]
    fn a_command_sweep_pairs_its_steps_and_cpus_alone_by_round() {
        use crate::cpuset::CpuSet;
        use crate::judge::command::{RoundShare, arm_residency};
        use crate::measure::command::CommandSample;

        use crate::plan::command::CommandPlacement;
        let plan = SweepPlan {
            steps: vec![1, 2],
            order: cores_then_siblings().order[..2].to_vec(),
            ..cores_then_siblings()
        };
        let rep = |k: usize, round: usize, ms: f64, failed: bool| CommandRep {
            arm: CommandArm::Step(k),
            round,
            warmup: round == 0,
            failed,
            sample: CommandSample::of_wall((ms * 1e6) as u64),
        };
        let mut reps = Vec::new();
        for round in 0..9 {
            let drift = wobble(round);
            reps.push(rep(1, round, 1000.0 * drift, false));
            reps.push(CommandRep {
                arm: CommandArm::Alone(1),
                ..rep(1, round, 1000.0 / 0.9 * drift, false)
            });
            reps.push(rep(2, round, 1000.0 / 1.8 * drift, false));
        }
        // A failed step 2 far off the curve: left out, not a speedup.
        reps.push(rep(2, 9, 1.0, true));
        let residency: Vec<ArmResidency> = plan
            .steps
            .iter()
            .map(|&k| {
                let placement = CommandPlacement {
                    arm: CommandArm::Step(k),
                    cpus: CpuSet::from_cpus(plan.step_cpus(k)),
                    membind: None,
                };
                arm_residency(&reps, &placement, &[], 0.05)
            })
            .collect();
        let judged = judge_command_sweep(&reps, &plan, &residency, &RULES);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        let step2 = &judged.steps[1];
        assert!(close(step2.speedup.as_ref().unwrap().value, 1.8));
        assert!(close(step2.marginal_gain.as_ref().unwrap().value, 0.8));
        assert_eq!(
            step2.wall_ms.as_ref().unwrap().reps,
            8,
            "warm-up and failure left out"
        );
        assert!(step2.quotable);
        assert!(
            close(step2.ceiling.unwrap(), 1.9),
            "CPU 0's 1 and CPU 1's 0.9"
        );
        assert!(close(step2.efficiency.unwrap(), 1.8 / 1.9));
        let speed = |i: usize| judged.cpu_speeds[i].speed.as_ref().unwrap().value;
        assert!(close(speed(0), 1.0) && close(speed(1), 0.9));
        assert_eq!(judged.ceiling_unavailable, None);
        assert!(judged.knees.is_empty());
        assert!(judged.noise_floor.is_some());
        assert!(judged.valid, "{:?}", judged.checks);
        assert!(
            judged.checks.iter().all(|c| c.name != CheckName::SameWork),
            "different thread counts do different work"
        );

        let mut beside_load = residency.clone();
        beside_load[1].other_load_over_bar.push(RoundShare {
            round: 3,
            share: 0.2,
        });
        let judged = judge_command_sweep(&reps, &plan, &beside_load, &RULES);
        assert!(!judged.steps[1].quotable && judged.steps[0].quotable);
        assert!(
            judged
                .checks
                .iter()
                .any(|c| c.name == CheckName::OtherLoad(CommandArm::Step(2)))
        );

        // --no-ceiling: CPU 1 alone was not run, so no step has a ceiling.
        let first_alone = SweepPlan {
            per_cpu_baselines: false,
            ..plan
        };
        let reps: Vec<CommandRep> = reps
            .into_iter()
            .filter(|r| r.arm != CommandArm::Alone(1))
            .collect();
        let judged = judge_command_sweep(&reps, &first_alone, &residency, &RULES);
        assert_eq!(judged.steps[1].ceiling, None);
        assert_eq!(judged.cpu_speeds.len(), 1, "step 1 alone");
        assert_eq!(judged.ceiling_unavailable.as_deref(), Some(NO_CEILING));
    }
}
