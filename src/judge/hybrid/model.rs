//! What `hybrid`'s judgement saves: each baseline, the classes their
//! speeds form, each scheme's statistics, and the rules that decided.

use crate::cpuset::CpuSet;
use crate::judge::batches::HostNoise;
use crate::judge::checks::{Check, ExcludedRep};
use crate::judge::stats::{Spread, median, penalty_centre, penalty_ci95};
use crate::plan::hybrid::Scheme;
use crate::plan::{Arm, arms_where};
use crate::probe::CoreKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A ratio with its 95 % interval (paired by round, on the log scale; see
/// [`crate::judge::stats::penalty_ci95`]). The interval is absent with
/// fewer than three paired rounds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    pub(super) fn inverse(&self) -> Ratio {
        Ratio {
            value: 1.0 / self.value,
            ci95_low: self.ci95_high.map(|h| 1.0 / h),
            ci95_high: self.ci95_low.map(|l| 1.0 / l),
        }
    }
}

/// One CPU's pinned single-worker baseline: all the items on one worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    schemars::JsonSchema,
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SchemeStats {
    #[schemars(transform = arms_where(|arm| arm.scheme().is_some()))]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// One batch of `hybrid` rounds and how its baselines alone group the CPUs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClassBatch {
    /// 1-based, in the order measured.
    #[schemars(range(min = 1))]
    pub index: usize,
    /// Its round numbers.
    pub rounds: Vec<usize>,
    /// Its baseline CPUs grouped by measured speed, fastest first.
    pub measured: Vec<CpuSet>,
}

impl ClassJudgement {
    /// Every batch grouped the CPUs as all the rounds together do: a
    /// class verdict rests on evidence spread in time.
    pub fn batches_agree(&self) -> bool {
        self.batches.iter().all(|b| b.measured == self.measured)
    }
}

/// CPUs whose speeds differ by less than this fraction are one measured
/// class even when the interval says they differ: a Turbo Boost Max
/// favoured core is 2-5 % faster than its neighbours, and a real E core
/// 30 % slower and more.
pub const CLASS_GAP: f64 = 0.10;
