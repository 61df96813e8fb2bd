//! `hybrid`'s judgement: each class's speed from pinned single-worker
//! baselines, the classes those speeds form, the ceiling, and what each
//! scheme made of the CPUs.
//!
//! Every time here is wall time on CLOCK_MONOTONIC, in milliseconds: a
//! repetition's from releasing its workers to collecting the last (so a
//! scheme's idle time includes the wake-up and the wait at the end), a
//! worker's busy time from its first item to its last. Wall time, not core
//! cycles, because speed is what differs between classes: an E core's
//! cycle is longer, and a vCPU the host starves loses wall time, not cycles.
//!
//! Repetitions are measured in rounds (every baseline, then every scheme),
//! so a baseline and a scheme of one round ran back to back: ratios are
//! paired by round, and the host's drift cancels inside each pair.

use crate::cpuset::CpuSet;
use crate::judge::batches::HostNoise;
use crate::judge::checks::{self, Check, CheckName, CheckStatus, ExcludedRep, excluded_reps};
use crate::judge::stats::{Spread, median, penalty_centre, penalty_ci95, spread};
use crate::judge::validity::judge_run;
use crate::measure::{MeasurementSetup, RepSample, WorkerSample};
use crate::plan::Arm;
use crate::plan::command::CommandArm;
use crate::plan::hybrid::{HybridPlan, SCHEME_ARMS, Scheme};
use crate::probe::{CoreClass, CoreKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// CPUs whose speeds differ by less than this fraction are one measured
/// class even when the interval says they differ: a Turbo Boost Max
/// favoured core is 2-5 % faster than its neighbours, and a real E core
/// 30 % slower and more.
pub const CLASS_GAP: f64 = 0.10;

/// A ratio with its 95 % interval (paired by round, on the log scale; see
/// [`crate::judge::stats::penalty_ci95`]). The interval is absent with
/// fewer than three paired rounds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub value: f64,
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
}

impl Ratio {
    /// `numerator / denominator`, paired by round: the geometric mean of the
    /// per-round ratios, with its interval; `None` without a common round.
    pub(crate) fn paired(
        numerator: &BTreeMap<usize, f64>,
        denominator: &BTreeMap<usize, f64>,
    ) -> Option<Ratio> {
        let (top, bottom): (Vec<f64>, Vec<f64>) = numerator
            .iter()
            .filter_map(|(round, n)| Some((*n, *denominator.get(round)?)))
            .unzip();
        if top.is_empty() {
            return None;
        }
        let interval = penalty_ci95(&top, &bottom);
        let value = penalty_centre(&top, &bottom)
            .map(|p| 1.0 + p)
            .unwrap_or_else(|| median(&top) / median(&bottom));
        Some(Ratio {
            value,
            ci95_low: interval.as_ref().map(|i| 1.0 + i.low),
            ci95_high: interval.as_ref().map(|i| 1.0 + i.high),
        })
    }

    /// The ratio the other way up (its interval too).
    fn inverse(&self) -> Ratio {
        Ratio {
            value: 1.0 / self.value,
            ci95_low: self.ci95_high.map(|h| 1.0 / h),
            ci95_high: self.ci95_low.map(|l| 1.0 / l),
        }
    }
}

/// One CPU's pinned single-worker baseline: all the items on one worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BaselineStats {
    pub cpu: u32,
    /// Its published class.
    pub class: CoreKind,
    /// Wall time of all the work, milliseconds.
    pub wall_ms: Option<Spread>,
    /// Items per millisecond of busy time (median over rounds).
    pub items_per_ms: Option<f64>,
    /// How many times longer than the fastest baseline CPU it took.
    pub slowdown: Option<Ratio>,
    /// Under the CV bar.
    pub quotable: bool,
    /// Its repetitions left out of the statistics, and why.
    pub excluded: Vec<ExcludedRep>,
}

/// CPUs of one speed, the classes the schemes are judged by: the measured
/// groups of baseline CPUs, each also speaking for the worker CPUs of its
/// published classes that had no baseline of their own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedClass {
    /// The published class's name where this class is exactly one
    /// published class's measured CPUs, else "measured N" (0 the fastest).
    pub label: String,
    /// The published classes its CPUs belong to.
    pub published: Vec<CoreKind>,
    /// The baseline CPUs it was measured on.
    pub measured_cpus: CpuSet,
    /// The worker CPUs it speaks for: its measured CPUs, and (without
    /// `--every-cpu`) the rest of its published class.
    pub cpus: CpuSet,
    /// Its baselines' wall time, milliseconds (per round, the mean of its
    /// CPUs).
    pub wall_ms: Option<Spread>,
    /// How many times longer than the fastest class it takes: "P is 2.17×
    /// faster" is an E class's slowdown of 2.17.
    pub slowdown: Option<Ratio>,
    /// Its speed relative to the fastest class: 1 / slowdown.
    pub speed: Option<Ratio>,
}

/// Whether the measured classes are the published ones.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum ClassVerdict {
    /// Every published class measured as one class, each apart from the others.
    Agree,
    /// A published class measured as several, or several as one.
    Differ,
    /// Too little measured to say (a baseline without repetitions).
    Inconclusive,
}

impl ClassVerdict {
    /// The verdict word, as tables print it and JSON spells it.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The measured classes beside the published ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassJudgement {
    pub verdict: ClassVerdict,
    /// The baseline CPUs grouped by measured speed, fastest first.
    pub measured: Vec<CpuSet>,
    /// The baseline CPUs grouped by published class, in the topology's order.
    pub published: Vec<CpuSet>,
    /// One sentence per disagreement, and what was not measured.
    pub notes: Vec<String>,
    /// How each batch, measured a pause apart, grouped the CPUs (empty in
    /// files before 0.2).
    #[serde(default)]
    pub batches: Vec<ClassBatch>,
}

/// One worker of one scheme, medians over the measured rounds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerRow {
    pub worker: usize,
    /// The CPU it was pinned to; `None` unpinned.
    pub pinned_cpu: Option<u32>,
    /// Every CPU it did items on, over all rounds.
    pub ran_on: CpuSet,
    /// Its speed class's label (pinned), or that of the CPU it did most
    /// items on (unpinned); `None` where no class covers the CPU.
    pub class: Option<String>,
    pub items: Option<Spread>,
    pub stolen: Option<f64>,
    pub busy_ms: Option<Spread>,
    /// Wall time minus busy time: waking up, and waiting at the end.
    pub idle_ms: Option<Spread>,
    /// Items per millisecond of busy time.
    pub items_per_ms: Option<f64>,
}

/// A speed class's part in one scheme.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassShare {
    pub class: String,
    /// Workers of this class (pinned); `None` unpinned.
    pub workers: Option<usize>,
    /// Fraction of all items done on this class's CPUs.
    pub items: Option<f64>,
    /// Idle fraction of this class's workers: those pinned to its CPUs, or
    /// (unpinned) those that did most of a repetition's items on them.
    pub idle: Option<Spread>,
}

/// What the stealing scheme gave each class, against their speeds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkRatio {
    /// The slower class compared with the fastest.
    pub class: String,
    /// Items per worker of the fastest class / items per worker of `class`.
    pub work_ratio: f64,
    /// `class`'s measured slowdown.
    pub speed_ratio: f64,
    /// work_ratio / speed_ratio − 1.
    pub difference: f64,
}

/// One scheme's statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SchemeStats {
    pub arm: Arm,
    pub scheme: Scheme,
    pub pinned: bool,
    pub workers: usize,
    pub wall_ms: Option<Spread>,
    /// Fastest class's baseline time / this scheme's, paired by round.
    pub speedup: Option<Ratio>,
    /// speedup / ceiling.
    pub of_ceiling: Option<f64>,
    /// Idle fraction of all workers: Σ idle / (workers × wall).
    pub idle: Option<Spread>,
    pub classes: Vec<ClassShare>,
    /// Stealing, pinned, with more than one class.
    pub work_ratios: Vec<WorkRatio>,
    pub worker_rows: Vec<WorkerRow>,
    pub quotable: bool,
}

/// What the judgement is asked for, beside the samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HybridRules {
    /// Every worker CPU had a baseline (`--every-cpu`).
    pub every_cpu: bool,
    /// CV above which a baseline or scheme is not quotable.
    pub cv_bar: f64,
    /// Relative tolerance of instructions per byte.
    pub tolerance: f64,
    /// A baseline or scheme over the CV bar invalidates the study.
    pub strict: bool,
}

/// Everything a `hybrid` study's samples say.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HybridJudgement {
    pub baselines: Vec<BaselineStats>,
    /// The classes the schemes are judged by, fastest first.
    pub speed_classes: Vec<SpeedClass>,
    /// The measured classes beside the published ones.
    pub class_judgement: ClassJudgement,
    /// The worker CPUs' speeds added up, in fastest-class CPUs.
    pub ceiling: Option<f64>,
    pub schemes: Vec<SchemeStats>,
    pub checks: Vec<Check>,
    /// The schemes' repetitions left out (each baseline lists its own).
    pub excluded: Vec<ExcludedRep>,
    pub invariance_spread: Option<f64>,
    /// How noisy the host was: the baselines' drift between batches and
    /// the rounds in which a baseline strayed from its batch's median.
    #[serde(default)]
    pub noise: Option<HostNoise>,
    /// No pinning, multiplexing or invariance failure (and, with `strict`,
    /// every baseline and scheme under the CV bar).
    pub valid: bool,
}

/// Judges a `hybrid` study: baselines, the classes their speeds form
/// against the published `classes` (in all the rounds, and in each of
/// `batches`, the round numbers of each batch: a class verdict needs them
/// to agree), the ceiling, every scheme, and the checks that say whether
/// any of it may be quoted.
pub fn judge_hybrid(
    samples: &[RepSample],
    plan: &HybridPlan,
    setup: &MeasurementSetup,
    classes: &[CoreClass],
    rules: &HybridRules,
    batches: &[Vec<usize>],
) -> HybridJudgement {
    let class_of = |cpu: u32| {
        classes
            .iter()
            .find(|c| c.cpus.contains(cpu))
            .map_or(CoreKind::Uniform, |c| c.name)
    };
    // Every baseline CPU's repetitions share the arm and the round number,
    // so each CPU's exclusions are kept apart from the schemes'.
    let mut baseline_excluded: BTreeMap<u32, Vec<ExcludedRep>> = BTreeMap::new();
    let mut excluded = Vec::new();
    for rep in samples {
        for exclusion in excluded_reps(std::slice::from_ref(rep)) {
            match rep.workers.first().and_then(|w| w.pinned_cpu) {
                Some(cpu) if rep.arm == Arm::Baseline => {
                    baseline_excluded.entry(cpu).or_default().push(exclusion)
                }
                _ => excluded.push(exclusion),
            }
        }
    }

    // Rounds a burst of host load spoiled are left out like any other
    // excluded repetition, so that medians, paired ratios and the class
    // grouping rest on the rounds the host left alone.
    let BaselineNoise { noise, flagged } =
        baseline_noise(samples, &plan.baseline_cpus, &baseline_excluded, batches);
    for (cpu, rounds) in flagged {
        baseline_excluded.entry(cpu).or_default().extend(rounds);
    }
    let baselines = baseline_stats(samples, plan, class_of, &baseline_excluded, rules.cv_bar);
    let groups = measured_groups(samples, &baselines);
    let published_order: Vec<CoreKind> = classes.iter().map(|c| c.name).collect();
    let mut class_judgement = judge_classes(
        &baselines,
        groups.clone(),
        &published_order,
        rules.every_cpu,
    );
    judge_batches(&mut class_judgement, samples, &baselines, batches);
    let speed_classes = speed_classes(samples, &baselines, &groups, &plan.worker_cpus, class_of);
    let ceiling = ceiling(&speed_classes, &plan.worker_cpus);
    let fastest = groups
        .first()
        .map(|group| group_times(samples, &baselines, group))
        .unwrap_or_default();
    let mut schemes: Vec<SchemeStats> = SCHEME_ARMS
        .iter()
        .filter_map(|&arm| scheme_stats(samples, arm, &excluded, &speed_classes, &fastest, ceiling))
        .collect();

    let mut all_checks = vec![checks::pinning(samples), checks::multiplexing(samples)];
    let (invariance, invariance_spread) = checks::invariance(
        samples,
        rules.tolerance,
        setup.kernel_instructions_per_byte,
        setup.why_instructions_uncounted(),
    );
    all_checks.push(invariance);
    all_checks.push(baselines_cv_check(&baselines, rules.cv_bar));
    for scheme in &mut schemes {
        let check = match &scheme.wall_ms {
            Some(wall) => checks::cv_bar(CheckName::CvBar(scheme.arm), wall, rules.cv_bar),
            None => Check::unavailable(
                CheckName::CvBar(scheme.arm),
                "fewer than 2 measured repetitions",
            ),
        };
        scheme.quotable = check.status == CheckStatus::Passed;
        all_checks.push(check);
    }
    all_checks.extend(nothing_kept(samples, plan, &baseline_excluded, &excluded));
    let valid = judge_run(&all_checks, rules.strict).is_valid();
    HybridJudgement {
        baselines,
        speed_classes,
        class_judgement,
        ceiling,
        schemes,
        checks: all_checks,
        excluded,
        invariance_spread,
        noise,
        valid,
    }
}

/// One CV-bar check for all the baselines: they are one arm, measured on
/// several CPUs, and each must be quotable.
fn baselines_cv_check(baselines: &[BaselineStats], bar: f64) -> Check {
    const NAME: CheckName = CheckName::CvBar(Arm::Baseline);
    let measured: Vec<(&BaselineStats, &Spread)> = baselines
        .iter()
        .filter_map(|b| Some((b, b.wall_ms.as_ref()?)))
        .collect();
    if measured.len() < baselines.len() || measured.is_empty() {
        return Check::unavailable(NAME, "a baseline CPU has fewer than 2 measured repetitions");
    }
    let noisy: Vec<String> = measured
        .iter()
        .filter(|(_, wall)| wall.cv > bar)
        .map(|(b, wall)| format!("CPU {} CV {:.2} %", b.cpu, wall.cv * 100.0))
        .collect();
    let worst = measured.iter().map(|(_, w)| w.cv).fold(0.0, f64::max);
    if noisy.is_empty() {
        Check::passed(
            NAME,
            format!(
                "every baseline CPU's CV is within the {:.2} % bar (at most {:.2} %)",
                bar * 100.0,
                worst * 100.0
            ),
        )
    } else {
        Check::failed(
            NAME,
            format!(
                "above the {:.2} % bar: {}: not quotable",
                bar * 100.0,
                noisy.join(", ")
            ),
        )
    }
}

impl SchemeStats {
    /// "static, pinned", "stealing, unpinned": how tables and sentences
    /// name it.
    pub fn name(&self) -> String {
        format!(
            "{}, {}",
            self.scheme.label(),
            if self.pinned { "pinned" } else { "unpinned" }
        )
    }
}

/// A repetition's wall time in milliseconds.
pub(crate) fn wall_ms(rep: &RepSample) -> f64 {
    rep.wall_ns as f64 / 1e6
}

/// The measured, not excluded repetitions of `arm` (and, for baselines,
/// of `cpu`), by round.
fn rounds<'a>(
    samples: &'a [RepSample],
    arm: Arm,
    cpu: Option<u32>,
    excluded: &[ExcludedRep],
) -> BTreeMap<usize, &'a RepSample> {
    samples
        .iter()
        .filter(|rep| rep.arm == arm && !rep.warmup)
        .filter(|rep| cpu.is_none() || rep.workers.first().and_then(|w| w.pinned_cpu) == cpu)
        .filter(|rep| !excluded.iter().any(|e| e.covers(arm, rep.rep)))
        .map(|rep| (rep.rep, rep))
        .collect()
}

/// A failed `repetitions` check ([`checks::nothing_kept`]) for each
/// baseline CPU (`repetitions cpu:N`) and each scheme (`repetitions ARM`)
/// that kept no round: a class or scheme without a number makes the study
/// invalid. `baseline_excluded` holds each baseline CPU's exclusions,
/// `excluded` the schemes'.
fn nothing_kept(
    samples: &[RepSample],
    plan: &HybridPlan,
    baseline_excluded: &BTreeMap<u32, Vec<ExcludedRep>>,
    excluded: &[ExcludedRep],
) -> Vec<Check> {
    let measured = |arm: Arm, cpu: Option<u32>| rounds(samples, arm, cpu, &[]).len();
    let no_exclusions = Vec::new();
    let baselines = plan
        .baseline_cpus
        .iter()
        .filter(|&cpu| {
            let cpu_excluded = baseline_excluded.get(cpu).unwrap_or(&no_exclusions);
            rounds(samples, Arm::Baseline, Some(*cpu), cpu_excluded).is_empty()
        })
        .map(|&cpu| {
            let name = CheckName::repetitions_of(CommandArm::Alone(cpu));
            checks::nothing_kept(name, measured(Arm::Baseline, Some(cpu)), 0)
        });
    let schemes = plan
        .schemes
        .iter()
        .map(|p| p.arm)
        .filter(|&arm| rounds(samples, arm, None, excluded).is_empty())
        .map(|arm| checks::nothing_kept(CheckName::Repetitions(arm), measured(arm, None), 0));
    baselines.chain(schemes).collect()
}

fn times(rounds: &BTreeMap<usize, &RepSample>) -> BTreeMap<usize, f64> {
    rounds
        .iter()
        .map(|(round, rep)| (*round, wall_ms(rep)))
        .collect()
}

/// One baseline CPU's wall time by round, its `excluded` rounds left out.
fn baseline_times(
    samples: &[RepSample],
    cpu: u32,
    excluded: &[ExcludedRep],
) -> BTreeMap<usize, f64> {
    times(&rounds(samples, Arm::Baseline, Some(cpu), excluded))
}

/// The CPU a worker belongs to in one repetition: where it was pinned, or
/// (unpinned) where it did most of its items.
fn main_cpu(w: &WorkerSample) -> Option<u32> {
    w.pinned_cpu.or_else(|| {
        let per_cpu = &w.items.as_ref()?.per_cpu;
        per_cpu.iter().max_by_key(|c| c.items).map(|c| c.cpu)
    })
}

/// Items a worker did in a repetition (0 for a sample without items).
fn items_of(w: &WorkerSample) -> u64 {
    w.items.as_ref().map_or(0, |i| i.items)
}

/// Every baseline CPU's statistics; `excluded` holds each CPU's exclusions.
fn baseline_stats(
    samples: &[RepSample],
    plan: &HybridPlan,
    class_of: impl Fn(u32) -> CoreKind,
    excluded: &BTreeMap<u32, Vec<ExcludedRep>>,
    cv_bar: f64,
) -> Vec<BaselineStats> {
    let none = Vec::new();
    let by_cpu: Vec<(u32, BTreeMap<usize, f64>, Option<f64>)> = plan
        .baseline_cpus
        .iter()
        .map(|&cpu| {
            let reps = rounds(
                samples,
                Arm::Baseline,
                Some(cpu),
                excluded.get(&cpu).unwrap_or(&none),
            );
            let rates: Vec<f64> = reps
                .values()
                .filter_map(|rep| rep.workers.first())
                .filter(|w| w.busy_ns > 0)
                .map(|w| items_of(w) as f64 / (w.busy_ns as f64 / 1e6))
                .collect();
            let rate = (!rates.is_empty()).then(|| median(&rates));
            (cpu, times(&reps), rate)
        })
        .collect();
    let fastest = by_cpu
        .iter()
        .filter(|(_, t, _)| !t.is_empty())
        .min_by(|a, b| median_of(&a.1).total_cmp(&median_of(&b.1)));
    by_cpu
        .iter()
        .map(|(cpu, t, rate)| {
            let wall = spread(&t.values().copied().collect::<Vec<f64>>());
            BaselineStats {
                cpu: *cpu,
                class: class_of(*cpu),
                quotable: wall.as_ref().is_some_and(|s| s.cv <= cv_bar),
                wall_ms: wall,
                items_per_ms: *rate,
                slowdown: fastest.and_then(|(_, fast, _)| Ratio::paired(t, fast)),
                excluded: excluded.get(cpu).cloned().unwrap_or_default(),
            }
        })
        .collect()
}

fn median_of(times: &BTreeMap<usize, f64>) -> f64 {
    median(&times.values().copied().collect::<Vec<f64>>())
}

/// Groups the baseline CPUs by speed, fastest first: in order of median
/// time, a CPU joins the current group unless it is slower than the
/// group's fastest CPU beyond the noise (the paired interval above 1) and
/// by at least [`CLASS_GAP`]. Without an interval the gap alone decides.
fn measured_groups(samples: &[RepSample], baselines: &[BaselineStats]) -> Vec<CpuSet> {
    let mut ordered: Vec<(u32, BTreeMap<usize, f64>)> = baselines
        .iter()
        .map(|b| (b.cpu, baseline_times(samples, b.cpu, &b.excluded)))
        .filter(|(_, t)| !t.is_empty())
        .collect();
    ordered.sort_by(|a, b| median_of(&a.1).total_cmp(&median_of(&b.1)));
    let mut groups: Vec<(BTreeMap<usize, f64>, Vec<u32>)> = Vec::new();
    for (cpu, t) in ordered {
        let apart = groups.last().is_none_or(|(first, _)| {
            Ratio::paired(&t, first).is_none_or(|r| {
                r.value >= 1.0 + CLASS_GAP && r.ci95_low.is_none_or(|low| low > 1.0)
            })
        });
        if apart {
            groups.push((t, vec![cpu]));
        } else if let Some((_, cpus)) = groups.last_mut() {
            cpus.push(cpu);
        }
    }
    groups
        .into_iter()
        .map(|(_, cpus)| CpuSet::from_cpus(cpus))
        .collect()
}

/// The measured groups against the published classes (both restricted to
/// the baseline CPUs).
fn judge_classes(
    baselines: &[BaselineStats],
    measured: Vec<CpuSet>,
    published_order: &[CoreKind],
    every_cpu: bool,
) -> ClassJudgement {
    let published: Vec<(CoreKind, CpuSet)> = published_order
        .iter()
        .filter_map(|class| {
            let cpus = CpuSet::from_cpus(
                baselines
                    .iter()
                    .filter(|b| &b.class == class)
                    .map(|b| b.cpu),
            );
            (!cpus.is_empty()).then_some((*class, cpus))
        })
        .collect();
    let mut notes = Vec::new();
    let unmeasured: Vec<u32> = baselines
        .iter()
        .filter(|b| b.wall_ms.is_none())
        .map(|b| b.cpu)
        .collect();
    for (class, cpus) in &published {
        let parts: Vec<&CpuSet> = measured
            .iter()
            .filter(|m| !m.intersection(cpus).is_empty())
            .collect();
        if parts.len() > 1 {
            let listed: Vec<String> = parts
                .iter()
                .map(|p| p.intersection(cpus).to_string())
                .collect();
            notes.push(format!(
                "published class {class} (CPUs {cpus}) measures as {} classes: CPUs {}",
                parts.len(),
                listed.join(" / ")
            ));
        }
    }
    for group in &measured {
        let classes: Vec<String> = published
            .iter()
            .filter(|(_, cpus)| !cpus.intersection(group).is_empty())
            .map(|(class, _)| class.to_string())
            .collect();
        if classes.len() > 1 {
            notes.push(format!(
                "published classes {} measure alike (CPUs {group})",
                classes.join(" and ")
            ));
        }
    }
    let verdict = if !unmeasured.is_empty() {
        notes.push(format!(
            "no measured repetition on CPU {}: the classes cannot be compared",
            CpuSet::from_cpus(unmeasured)
        ));
        ClassVerdict::Inconclusive
    } else if notes.is_empty() {
        ClassVerdict::Agree
    } else {
        ClassVerdict::Differ
    };
    if !every_cpu && published.iter().any(|(_, cpus)| cpus.len() == 1) {
        notes.push(
            "one CPU per published class was measured, so a class whose CPUs differ in speed \
             cannot show here: --every-cpu measures them all"
                .into(),
        );
    }
    ClassJudgement {
        verdict,
        measured,
        published: published.into_iter().map(|(_, cpus)| cpus).collect(),
        notes,
        batches: Vec::new(),
    }
}

/// The speed classes the schemes are judged by (see [`SpeedClass`]):
/// `groups` of baseline CPUs, fastest first, each also speaking for the
/// worker CPUs of its published classes that had no baseline.
fn speed_classes(
    samples: &[RepSample],
    baselines: &[BaselineStats],
    groups: &[CpuSet],
    worker_cpus: &[u32],
    class_of: impl Fn(u32) -> CoreKind,
) -> Vec<SpeedClass> {
    let measured_cpus: CpuSet = baselines.iter().map(|b| b.cpu).collect();
    let group_times: Vec<BTreeMap<usize, f64>> = groups
        .iter()
        .map(|group| group_times(samples, baselines, group))
        .collect();
    groups
        .iter()
        .zip(&group_times)
        .enumerate()
        .map(|(index, (group, t))| {
            let mut published: Vec<CoreKind> = Vec::new();
            for cpu in group.iter() {
                let class = class_of(cpu);
                if !published.contains(&class) {
                    published.push(class);
                }
            }
            let unmeasured_of_class = worker_cpus
                .iter()
                .copied()
                .filter(|cpu| !measured_cpus.contains(*cpu) && published.contains(&class_of(*cpu)));
            let cpus: CpuSet = group.iter().chain(unmeasured_of_class).collect();
            let whole_class = published.len() == 1
                && baselines
                    .iter()
                    .filter(|b| b.class == published[0])
                    .all(|b| group.contains(b.cpu));
            let label = if whole_class {
                published[0].to_string()
            } else {
                format!("measured {index}")
            };
            let slowdown = group_times.first().and_then(|fast| Ratio::paired(t, fast));
            SpeedClass {
                label,
                published,
                measured_cpus: group.clone(),
                cpus,
                wall_ms: spread(&t.values().copied().collect::<Vec<f64>>()),
                speed: slowdown.as_ref().map(Ratio::inverse),
                slowdown,
            }
        })
        .collect()
}

/// A group of baseline CPUs' wall time by round: per round, the mean of
/// its CPUs' baselines (rounds where one of them was excluded are left out).
fn group_times(
    samples: &[RepSample],
    baselines: &[BaselineStats],
    group: &CpuSet,
) -> BTreeMap<usize, f64> {
    let per_cpu: Vec<BTreeMap<usize, f64>> = baselines
        .iter()
        .filter(|b| group.contains(b.cpu))
        .map(|b| baseline_times(samples, b.cpu, &b.excluded))
        .collect();
    mean_by_round(&per_cpu)
}

/// Per round present in every map, the mean of the maps' values.
fn mean_by_round(maps: &[BTreeMap<usize, f64>]) -> BTreeMap<usize, f64> {
    let Some(first) = maps.first() else {
        return BTreeMap::new();
    };
    first
        .keys()
        .filter_map(|round| {
            let values: Option<Vec<f64>> = maps.iter().map(|m| m.get(round).copied()).collect();
            let values = values?;
            Some((*round, values.iter().sum::<f64>() / values.len() as f64))
        })
        .collect()
}

/// The ceiling: the worker CPUs' speeds added up, in fastest-class CPUs.
/// `None` when a worker CPU has no measured speed.
fn ceiling(classes: &[SpeedClass], worker_cpus: &[u32]) -> Option<f64> {
    worker_cpus
        .iter()
        .map(|cpu| Some(speed_class_of(classes, *cpu)?.speed.as_ref()?.value))
        .sum()
}

/// The speed class that speaks for `cpu`.
fn speed_class_of(classes: &[SpeedClass], cpu: u32) -> Option<&SpeedClass> {
    classes.iter().find(|c| c.cpus.contains(cpu))
}

/// One scheme's statistics over its measured rounds. `fastest` is the
/// fastest class's baseline time by round.
fn scheme_stats(
    samples: &[RepSample],
    arm: Arm,
    excluded: &[ExcludedRep],
    classes: &[SpeedClass],
    fastest: &BTreeMap<usize, f64>,
    ceiling: Option<f64>,
) -> Option<SchemeStats> {
    let scheme = arm.scheme()?;
    let reps = rounds(samples, arm, None, excluded);
    let workers = reps.values().map(|r| r.workers.len()).max().unwrap_or(0);
    let pinned = arm.pinned();
    let class_of_cpu = |cpu: u32| speed_class_of(classes, cpu).map(|c| c.label.clone());
    let wall: BTreeMap<usize, f64> = times(&reps);
    let speedup = Ratio::paired(fastest, &wall);
    let idle_of = |rep: &RepSample, members: &dyn Fn(&WorkerSample) -> bool| -> Option<f64> {
        let chosen: Vec<&WorkerSample> = rep.workers.iter().filter(|w| members(w)).collect();
        if chosen.is_empty() || rep.wall_ns == 0 {
            return None;
        }
        let idle: f64 = chosen
            .iter()
            .map(|w| rep.wall_ns.saturating_sub(w.busy_ns) as f64)
            .sum();
        Some(idle / (chosen.len() as f64 * rep.wall_ns as f64))
    };
    let idle = spread(
        &reps
            .values()
            .filter_map(|r| idle_of(r, &|_| true))
            .collect::<Vec<f64>>(),
    );
    let total_items: Vec<f64> = reps
        .values()
        .map(|r| r.workers.iter().map(items_of).sum::<u64>() as f64)
        .collect();
    let class_shares: Vec<ClassShare> = classes
        .iter()
        .map(|class| {
            let in_class =
                |w: &WorkerSample| main_cpu(w).is_some_and(|cpu| class.cpus.contains(cpu));
            let shares: Vec<f64> = reps
                .values()
                .zip(&total_items)
                .filter(|(_, total)| **total > 0.0)
                .map(|(rep, total)| {
                    let on_class: u64 = rep
                        .workers
                        .iter()
                        .filter_map(|w| w.items.as_ref())
                        .flat_map(|i| &i.per_cpu)
                        .filter(|c| class.cpus.contains(c.cpu))
                        .map(|c| c.items)
                        .sum();
                    on_class as f64 / total
                })
                .collect();
            ClassShare {
                class: class.label.clone(),
                workers: pinned.then(|| {
                    reps.values()
                        .next()
                        .map_or(0, |r| r.workers.iter().filter(|w| in_class(w)).count())
                }),
                items: (!shares.is_empty()).then(|| median(&shares)),
                idle: spread(
                    &reps
                        .values()
                        .filter_map(|r| idle_of(r, &in_class))
                        .collect::<Vec<f64>>(),
                ),
            }
        })
        .collect();
    let work_ratios = if pinned && scheme == Scheme::WorkStealing {
        work_ratios(classes, &class_shares)
    } else {
        Vec::new()
    };
    let worker_rows = (0..workers)
        .map(|worker| worker_row(&reps, worker, &class_of_cpu))
        .collect();
    let of_ceiling = speedup.as_ref().zip(ceiling).map(|(s, c)| s.value / c);
    Some(SchemeStats {
        arm,
        scheme,
        pinned,
        workers,
        // Set from the scheme's CV-bar check.
        quotable: false,
        wall_ms: spread(&wall.values().copied().collect::<Vec<f64>>()),
        speedup,
        of_ceiling,
        idle,
        classes: class_shares,
        work_ratios,
        worker_rows,
    })
}

/// Items per worker of the fastest class against each slower class's.
fn work_ratios(classes: &[SpeedClass], shares: &[ClassShare]) -> Vec<WorkRatio> {
    let per_worker = |share: &ClassShare| -> Option<f64> {
        let workers = share.workers.filter(|n| *n > 0)? as f64;
        Some(share.items? / workers)
    };
    let Some(fastest) = shares.first().and_then(per_worker) else {
        return Vec::new();
    };
    classes
        .iter()
        .zip(shares)
        .skip(1)
        .filter_map(|(class, share)| {
            let slower = per_worker(share).filter(|v| *v > 0.0)?;
            let speed_ratio = class.slowdown.as_ref()?.value;
            let work_ratio = fastest / slower;
            Some(WorkRatio {
                class: class.label.clone(),
                work_ratio,
                speed_ratio,
                difference: work_ratio / speed_ratio - 1.0,
            })
        })
        .collect()
}

/// One worker's row: medians over the rounds (`reps`, by round);
/// `run --sweep`'s steps have them too.
pub(crate) fn worker_row(
    reps: &BTreeMap<usize, &RepSample>,
    worker: usize,
    class_of_cpu: &dyn Fn(u32) -> Option<String>,
) -> WorkerRow {
    let samples: Vec<(&RepSample, &WorkerSample)> = reps
        .values()
        .filter_map(|rep| Some((*rep, rep.workers.iter().find(|w| w.worker == worker)?)))
        .collect();
    let pinned_cpu = samples.first().and_then(|(_, w)| w.pinned_cpu);
    let mut on_cpu: BTreeMap<u32, u64> = BTreeMap::new();
    for (_, w) in &samples {
        for entry in w.items.iter().flat_map(|i| &i.per_cpu) {
            *on_cpu.entry(entry.cpu).or_default() += entry.items;
        }
    }
    let main_cpu = pinned_cpu.or_else(|| on_cpu.iter().max_by_key(|(_, n)| **n).map(|(c, _)| *c));
    let column = |f: &dyn Fn(&RepSample, &WorkerSample) -> f64| -> Vec<f64> {
        samples.iter().map(|(rep, w)| f(rep, w)).collect()
    };
    let items = column(&|_, w| items_of(w) as f64);
    let busy = column(&|_, w| w.busy_ns as f64 / 1e6);
    let rates: Vec<f64> = items
        .iter()
        .zip(&busy)
        .filter(|(_, b)| **b > 0.0)
        .map(|(i, b)| i / b)
        .collect();
    let stolen = column(&|_, w| w.items.as_ref().map_or(0, |i| i.stolen) as f64);
    WorkerRow {
        worker,
        pinned_cpu,
        ran_on: on_cpu.keys().copied().collect(),
        class: main_cpu.and_then(class_of_cpu),
        items: spread(&items),
        stolen: (!stolen.is_empty()).then(|| median(&stolen)),
        busy_ms: spread(&busy),
        idle_ms: spread(&column(&|rep, w| {
            rep.wall_ns.saturating_sub(w.busy_ns) as f64 / 1e6
        })),
        items_per_ms: (!rates.is_empty()).then(|| median(&rates)),
    }
}

mod batches;

pub use batches::ClassBatch;
use batches::{BaselineNoise, baseline_noise, judge_batches};

#[cfg(test)]
mod tests;
