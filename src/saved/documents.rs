//! The saved documents of `gate --json` and `run --json`: what `report`
//! reads back. Field names are schema (see `schemas/` and its README for the
//! policy): adding a field is compatible; renaming or removing one, or
//! changing its meaning or type, bumps [`RESULT_SCHEMA_VERSION`].

use super::head::DocumentHead;
use super::kinds::DocumentKind;
use crate::cpuset::CpuSet;
use crate::judge::arms::ArmStats;
use crate::judge::batches::{Batch, Batching, HostNoise};
use crate::judge::checks::{Check, ExcludedRep};
use crate::judge::command::{ArmResidency, CommandArmStats};
use crate::judge::gate::{Interval, MeanBased, SlowCpu, Verdict, WorkerPenalty};
use crate::judge::hybrid::HybridJudgement;
use crate::judge::latency::{LatencyJudgement, PairLatency, PublishedLevels};
use crate::judge::observe::ObserveJudgement;
use crate::judge::pairs::{ComparisonRecord, MapJudgement};
use crate::judge::sweep::SweepJudgement;
use crate::judge::warnings::Warning;
use crate::measure::command::{CommandRep, Output};
use crate::measure::recording::CommandEnd;
use crate::measure::{ClockKind, MeasurementSetup, RepSample};
use crate::plan::command::{CommandArm, CommandPlan, Units};
use crate::plan::hybrid::HybridPlan;
use crate::plan::membind::Membind;
use crate::plan::pairs::SearchKind;
use crate::plan::sweep::SweepPlan;
use crate::plan::{Arm, GateBaseline, GatePairs, RunPlan, arms_where};
use crate::probe::recording::Recording;
use crate::probe::{
    Cache, CoreClass, CpuEntry, CpuidReport, Crosscheck, MidrReport, NumaNode, ProbeSource,
    Summary, Topology,
};
use serde::{Deserialize, Serialize};

/// Defined with the head they open every document with; `saved` re-exports
/// them from here too.
pub use super::head::{Evidence, RESULT_SCHEMA_VERSION};

/// The whole `gate --json` document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GateResult {
    /// Kind, host, machine, evidence (their fields at the top level).
    #[serde(flatten)]
    pub head: DocumentHead,
    /// `run` wrote this document: it stopped at its gate and measured
    /// nothing else. Written only when true; false in `gate`'s own documents
    /// and in older files.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub run_stopped_at_gate: bool,
    pub verdict: Verdict,
    /// What the siblings were measured against; null for `no-smt`.
    #[serde(default)]
    pub baseline: Option<GateBaseline>,
    /// The plain sentence printed first.
    pub sentence: String,
    /// The median of the per-round ratios siblings / baseline, minus 1,
    /// over every kept round of every batch (before 0.2: their geometric
    /// mean, now `mean_based`).
    pub penalty: Option<f64>,
    /// median(siblings) / median(baseline) − 1.
    pub penalty_of_medians: Option<f64>,
    /// The distribution-free 95 % interval of `penalty`.
    pub ci95: Option<Interval>,
    /// The estimate before 0.2 (geometric mean, t-interval) from the same
    /// rounds, kept for one release so the two can be compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_based: Option<MeanBased>,
    pub threshold: f64,
    pub reps: usize,
    pub clock: Option<ClockKind>,
    pub pairs: Option<GatePairs>,
    /// Why there is no sibling pair (verdict no-smt).
    pub no_smt_reason: Option<String>,
    pub setup: Option<MeasurementSetup>,
    pub arms: Vec<ArmStats>,
    pub control: Option<Check>,
    /// Earlier measurements of a control that failed, in order; `control`
    /// is the last one. Empty when the first passed.
    #[serde(default)]
    pub control_attempts: Vec<Check>,
    /// The batches the rounds were measured in, and each one's side of
    /// the threshold (empty in files before 0.2).
    #[serde(default)]
    pub batches: Vec<Batch>,
    /// Each sibling worker's penalty against its own CPU alone (empty in
    /// older files, whose penalty set both workers against one baseline).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers: Vec<WorkerPenalty>,
    /// A sibling CPU that ran steadily slower alone than the other: a
    /// neighbour on its host CPU, never a cost of sharing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_cpu: Option<SlowCpu>,
    /// How noisy the host was while the gate measured.
    #[serde(default)]
    pub noise: Option<HostNoise>,
    pub excluded: Vec<ExcludedRep>,
    pub warnings: Vec<Warning>,
    /// Every raw repetition, warm-ups included (marked).
    pub samples: Vec<RepSample>,
}

/// Options a run was made with, saved so a report can say so.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunOptions {
    pub workers: usize,
    pub arms: Vec<Arm>,
    pub reps: usize,
    pub warmups: usize,
    pub rep_ms: u64,
    pub kernel: String,
    pub cv_bar: f64,
    pub tolerance: f64,
    pub strict: bool,
    pub skip_gate: bool,
    pub threshold: f64,
    /// `--membind` as given (`local`, or a node list); absent (not
    /// written) without it. Each arm's nodes are its plan placement's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub membind: Option<Membind>,
}

/// The whole `run --json` document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunResult {
    /// Kind, host, machine, evidence (their fields at the top level).
    /// `complete` is false when a stop signal ended the run: only the
    /// repetitions done are here.
    #[serde(flatten)]
    pub head: DocumentHead,
    /// False with --skip-gate when the gate did not say physical (or did not run).
    pub gated: bool,
    pub gate: Option<GateResult>,
    /// The probed CPUs (core, package, class of each), so a report can say
    /// where every worker ran.
    pub cpus: Vec<CpuEntry>,
    pub options: RunOptions,
    pub setup: MeasurementSetup,
    pub plan: RunPlan,
    pub arms: Vec<ArmStats>,
    pub checks: Vec<Check>,
    /// Repetitions left out of the statistics (multiplexed, or a pinned
    /// worker moved), with the reason; their raw samples stay in `samples`.
    #[serde(default)]
    pub excluded: Vec<ExcludedRep>,
    /// Observed relative spread of instructions per byte, when counted.
    pub invariance_spread: Option<f64>,
    /// Pinning, multiplexing and invariance held (and, with --strict, every
    /// arm quotable): `judge::validity::judge_run` over `checks`.
    pub valid: bool,
    pub warnings: Vec<Warning>,
    pub samples: Vec<RepSample>,
}

/// Options a command study was made with, saved so a report can say so.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommandOptions {
    /// The command and its arguments as given: `{threads}` and `{cpus}`
    /// unreplaced (bytes that are not UTF-8 replaced by U+FFFD).
    #[schemars(length(min = 1))]
    pub argv: Vec<String>,
    /// What `{threads}` stood for.
    #[schemars(range(min = 1))]
    pub threads: usize,
    pub arms: Vec<CommandArm>,
    /// The arm every other is compared with.
    pub baseline: CommandArm,
    /// Measured rounds after the warm-ups.
    pub reps: usize,
    pub warmups: usize,
    /// `--prepare`: run through `sh -c` before each repetition.
    pub prepare: Option<String>,
    /// Where the command's output went.
    pub output: Output,
    /// `--units N --unit NAME`, where given.
    #[serde(default)]
    pub units: Option<Units>,
    /// A failed repetition was kept, marked, rather than stop the study.
    pub ignore_failure: bool,
    pub cv_bar: f64,
    pub tolerance: f64,
    pub strict: bool,
    pub skip_gate: bool,
    pub threshold: f64,
    /// `--membind` as given (`local`, or a node list); absent (not
    /// written) without it. Each arm's nodes are its plan placement's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub membind: Option<Membind>,
}

impl CommandOptions {
    /// The command as a shell would take it back, placeholders unreplaced.
    pub fn command_text(&self) -> String {
        shell_words(&self.argv)
    }
}

/// The whole `run --json -- COMMAND` document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommandResult {
    /// Kind, host, machine, evidence (their fields at the top level).
    /// `complete` is false when a stop signal ended the study: only the
    /// rounds finished before it are here.
    #[serde(flatten)]
    pub head: DocumentHead,
    /// False with --skip-gate.
    pub gated: bool,
    pub gate: Option<GateResult>,
    /// The probed CPUs, so a report can say what each arm's CPUs are.
    pub cpus: Vec<CpuEntry>,
    pub options: CommandOptions,
    /// Each arm's CPU set.
    pub plan: CommandPlan,
    /// Every repetition, warm-ups and kept failures included (marked).
    pub reps: Vec<CommandRep>,
    pub arms: Vec<CommandArmStats>,
    /// Each arm's placement and co-residency, from the repetitions'
    /// context-switch records (which are not saved: they run to megabytes).
    pub residency: Vec<ArmResidency>,
    pub checks: Vec<Check>,
    /// No check that breaks every number failed (and, with --strict, every
    /// arm is under the CV bar): `judge::command_checks::command_valid`.
    pub valid: bool,
    pub warnings: Vec<Warning>,
}

/// Options a `pairs` search was made with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PairsOptions {
    pub threshold: f64,
    /// Rounds of a batch (before 0.2: of a comparison) before it may decide.
    pub min_reps: usize,
    pub max_reps: usize,
    /// How many batches must agree, at most how many, how far apart.
    #[serde(flatten)]
    pub batching: BatchOptions,
    pub warmups: usize,
    pub rep_ms: u64,
    pub kernel: String,
    pub exhaustive: bool,
    /// `--time-budget` in seconds, when one was given.
    pub time_budget_seconds: Option<f64>,
}

/// `--batches`, `--max-batches` and `--batch-gap`, as `pairs` and `hybrid`
/// save them (each 0 in files before 0.2, which measured in one stretch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BatchOptions {
    #[serde(default)]
    pub batches: usize,
    #[serde(default)]
    pub max_batches: usize,
    #[serde(default)]
    pub batch_gap_ms: u64,
}

impl From<Batching> for BatchOptions {
    fn from(batching: Batching) -> BatchOptions {
        BatchOptions {
            batches: batching.batches,
            max_batches: batching.max_batches,
            batch_gap_ms: u64::try_from(batching.gap.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

/// How much a `pairs` search measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PairsEffort {
    /// Comparisons measured (sets and pairs).
    pub comparisons: usize,
    /// Of them, comparisons of exactly two workers.
    pub pair_comparisons: usize,
    /// Every pair of the tested CPUs: what an exhaustive search measures.
    pub all_pairs: usize,
    /// Measured repetitions, both arms of every comparison and the control.
    pub repetitions: usize,
    /// Wall time from the first warm-up to the last comparison.
    pub measuring_seconds: f64,
    /// The time budget ran out before the search finished.
    pub budget_exhausted: bool,
}

/// What `pairs --first-pass latency` found before the search.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FirstPass {
    /// The latency pass's verdict on the published levels.
    pub verdict: crate::judge::pairs::MapVerdict,
    /// Pairs it measured, of every pair.
    pub pairs_measured: usize,
    pub all_pairs: usize,
    pub samples_taken: usize,
    /// Its wall time (part of the effort's measuring seconds).
    pub seconds: f64,
    /// The sets searched within; empty when the pass could not be used
    /// (`unused` says why) and the whole machine was searched instead.
    pub candidate_sets: Vec<crate::plan::pairs::CandidateSet>,
    /// Why the pass was not used: its control or pinning failed, or it was
    /// stopped or ran out of time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unused: Option<String>,
}

/// The whole `pairs --json` document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PairsResult {
    /// Kind, host, machine, evidence (their fields at the top level).
    #[serde(flatten)]
    pub head: DocumentHead,
    pub verdict: crate::judge::pairs::MapVerdict,
    /// The plain sentence printed first.
    pub sentence: String,
    pub search: SearchKind,
    /// `--first-pass latency`: the latency pass and the sets it gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_pass: Option<FirstPass>,
    pub options: PairsOptions,
    /// The clock every comparison's cost is on: the tick clock (wall time),
    /// which sees a vCPU that waits for its host CPU, as core cycles do not.
    pub clock: ClockKind,
    /// The CPUs compared: those this process may run on.
    pub tested: CpuSet,
    pub map: MapJudgement,
    pub comparisons: Vec<ComparisonRecord>,
    pub effort: PairsEffort,
    /// Both workers on the first CPU against one alone there.
    /// How noisy the host was over every comparison: noisy rounds summed,
    /// the largest drift of one comparison's baseline between its batches.
    #[serde(default)]
    pub noise: Option<HostNoise>,
    pub control: Option<Check>,
    /// Earlier measurements of a control that failed, in order; `control`
    /// is the last one. Empty when the first passed.
    #[serde(default)]
    pub control_attempts: Vec<Check>,
    /// Pinning over every measured repetition.
    pub pinning: Check,
    pub setup: MeasurementSetup,
    pub warnings: Vec<Warning>,
    /// The control's raw repetitions, warm-ups included (the comparisons
    /// keep their costs, in `comparisons`).
    pub control_samples: Vec<RepSample>,
}

/// Options a `latency` study was made with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyOptions {
    /// Samples kept per pair (`--samples`), a warm-up one discarded first.
    #[schemars(range(min = 3))]
    pub samples: usize,
    /// Round trips one sample times together.
    #[schemars(range(min = 1))]
    pub round_trips_per_sample: u64,
    /// `--sample-ms`: the wall-time bound of one sample.
    #[schemars(range(min = 1))]
    pub sample_ms: u64,
    /// `--time-budget` in seconds, when one was given.
    pub time_budget_seconds: Option<f64>,
    /// A pair stopped sampling once its latency settled (not
    /// `--all-samples`).
    pub early_stop: bool,
    /// `--parallel`, when given (otherwise half the CPUs).
    #[schemars(range(min = 1))]
    pub parallel: Option<usize>,
    /// `--one-per-domain`: rows of one representative per domain, the
    /// other pairs inferred.
    pub one_per_domain: bool,
}

/// How much a `latency` study measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyEffort {
    /// Pairs measured (the control not counted).
    pub pairs_measured: usize,
    /// `--one-per-domain`: pairs inferred from a representative's row.
    pub pairs_inferred: usize,
    /// Every pair of the tested CPUs.
    pub all_pairs: usize,
    /// Wall time from the control to the last pair.
    pub measuring_seconds: f64,
    /// The time budget ran out before every pair was measured.
    pub budget_exhausted: bool,
    /// Pairs measured at once after the first round (1 when the parallel
    /// check failed or one pair at a time was asked for).
    #[schemars(range(min = 1))]
    pub pairs_at_once: usize,
    /// Samples kept over every pair.
    pub samples_taken: usize,
    /// Time-sliced pairs measured once more because the other pairs of
    /// their CPUs did not bear them out (a host stall looks time-sliced).
    pub time_sliced_rechecked: usize,
    /// `--one-per-domain`: pairs measured across two classes of a split
    /// row to check what it infers (counted in `pairs_measured` too).
    #[serde(default)]
    pub bridges: usize,
    /// Of them, those in another class than the row's entry: every pair
    /// across those two classes was measured instead of inferred.
    #[serde(default)]
    pub bridges_not_borne_out: usize,
    /// Pairs just above a gap between transfer clusters measured again,
    /// the faster reading kept: noise only adds, so a gap one noisy pair
    /// opened closes.
    #[serde(default)]
    pub gap_edges_rechecked: usize,
}

/// The whole `latency --json` document. Every `*_ns` value is wall time
/// (CLOCK_MONOTONIC) for one transfer of the cache line: half a round trip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyResult {
    /// Kind, host, machine, evidence (their fields at the top level).
    #[serde(flatten)]
    pub head: DocumentHead,
    pub verdict: crate::judge::pairs::MapVerdict,
    /// The plain sentence printed first.
    pub sentence: String,
    pub options: LatencyOptions,
    /// The CPUs measured: those this process may run on.
    pub tested: CpuSet,
    /// The published thread siblings, last-level cache and packages.
    pub published: PublishedLevels,
    /// Each measured pair, lower CPU first, in the order measured.
    pub pairs: Vec<PairLatency>,
    /// Both threads on the first tested CPU: the time-slice scale.
    pub control: Option<PairLatency>,
    /// The control judged: it passes when both threads stayed pinned and
    /// its samples ran into their bound (they took turns by time slice).
    pub control_check: Option<Check>,
    /// Pairs measured at once against the same pairs alone: absent when
    /// every pair was measured alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_check: Option<Check>,
    /// Pinning over the control and every pair.
    pub pinning: Check,
    pub judgement: LatencyJudgement,
    pub effort: LatencyEffort,
    pub warnings: Vec<Warning>,
}

/// Options a `hybrid` study was made with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HybridOptions {
    pub workers: usize,
    pub every_cpu: bool,
    /// Items each worker's equal share holds.
    pub items_per_worker: u64,
    /// Measured rounds asked for, split into the first `batches` batches.
    pub reps: usize,
    /// How many batches must group the CPUs alike, at most how many, how
    /// far apart.
    #[serde(flatten)]
    pub batching: BatchOptions,
    pub warmups: usize,
    /// `--rep-ms`: how long one worker's share takes on the CPU the item
    /// size was calibrated on.
    pub rep_ms: u64,
    pub kernel: String,
    pub cv_bar: f64,
    pub tolerance: f64,
    pub strict: bool,
}

/// The work every baseline and scheme does: the same in every round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HybridWork {
    /// Items in all.
    pub items: u64,
    /// Kernel passes over a worker's buffer per item (`setup.passes`).
    pub passes_per_item: u64,
    /// Bytes per item (`setup.bytes_per_worker`).
    pub item_bytes: u64,
}

/// The whole `hybrid --json` document. Every `*_ms` value is wall time on
/// CLOCK_MONOTONIC.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HybridResult {
    /// Kind, host, machine, evidence (their fields at the top level).
    #[serde(flatten)]
    pub head: DocumentHead,
    /// The plain sentence printed first.
    pub sentence: String,
    pub options: HybridOptions,
    /// The published classes.
    pub classes: Vec<CoreClass>,
    pub plan: HybridPlan,
    pub work: HybridWork,
    /// Baselines, classes, the ceiling, the schemes and the checks (their
    /// fields at the top level of the document).
    #[serde(flatten)]
    pub judged: HybridJudgement,
    pub setup: MeasurementSetup,
    pub warnings: Vec<Warning>,
    /// Every repetition, warm-ups included (marked): baselines first in
    /// each round, then the schemes.
    #[schemars(transform = arms_where(|arm| arm == Arm::Baseline || arm.scheme().is_some()))]
    pub samples: Vec<RepSample>,
}

/// Options a sweep was made with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SweepOptions {
    /// Measured rounds; each measures every step and every CPU's baseline.
    pub reps: usize,
    pub warmups: usize,
    /// `--rep-ms`: how long one worker's equal share of the largest step
    /// takes on the CPU the item size was calibrated on.
    pub rep_ms: u64,
    /// The kernel swept; absent in a COMMAND sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    pub cv_bar: f64,
    pub tolerance: f64,
    pub strict: bool,
    /// The gate was skipped (`--skip-gate`): every output says UNGATED.
    pub skip_gate: bool,
}

/// What `run --sweep -- COMMAND` ran: the command, and each repetition
/// of each step (arm `step:K`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommandSweep {
    /// The command and its arguments, `{threads}` and `{cpus}` unreplaced.
    #[schemars(length(min = 1))]
    pub argv: Vec<String>,
    pub prepare: Option<String>,
    pub output: Output,
    pub ignore_failure: bool,
    /// Each step's placement and co-residency.
    pub residency: Vec<ArmResidency>,
    /// Every repetition, warm-ups and failures included (marked): in each
    /// round, steps 1 and up.
    pub reps: Vec<CommandRep>,
}

/// The whole `run --sweep --json` document. Every `*_ms` value is wall
/// time on CLOCK_MONOTONIC; speedups, gains and ceilings are in units of
/// the order's first CPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SweepResult {
    /// Kind, host, machine, evidence (their fields at the top level).
    #[serde(flatten)]
    pub head: DocumentHead,
    /// The plain sentence printed first.
    pub sentence: String,
    pub options: SweepOptions,
    /// False with --skip-gate when the gate did not say physical (or did
    /// not run).
    pub gated: bool,
    pub gate: Option<GateResult>,
    pub plan: SweepPlan,
    /// The kernel's shared work; absent in a COMMAND sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<HybridWork>,
    /// Steps, CPU speeds, knees, noise floor and checks (their fields at
    /// the top level of the document).
    #[serde(flatten)]
    pub judged: SweepJudgement,
    /// The kernel's measurement setup; absent in a COMMAND sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<MeasurementSetup>,
    /// The COMMAND swept; absent in a sweep of the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandSweep>,
    pub warnings: Vec<Warning>,
    /// The kernel's repetitions, warm-ups included (marked): in each round
    /// every CPU's baseline (step 1 the first), then steps 2 and up. Empty
    /// in a COMMAND sweep (its are under `command`).
    #[serde(default)]
    pub samples: Vec<RepSample>,
}

impl SweepResult {
    /// What was swept: the kernel's name, or the command line.
    pub fn workload(&self) -> String {
        match (&self.command, &self.options.kernel) {
            (Some(command), _) => command.argv.join(" "),
            (None, Some(kernel)) => kernel.clone(),
            (None, None) => String::new(),
        }
    }
}

/// What `observe` followed.
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
pub enum ObserveMode {
    /// `observe -- COMMAND`: a command and its process tree.
    Command,
    /// `observe --pid PID`: a running process.
    Pid,
    /// `observe --kernel NAME`: the built-in kernel, unpinned.
    Kernel,
}

/// Options an observation was made with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ObserveOptions {
    pub mode: ObserveMode,
    /// The command and its arguments (`command` mode).
    #[schemars(length(min = 1))]
    pub command: Option<Vec<String>>,
    #[schemars(range(min = 1))]
    pub pid: Option<u32>,
    pub kernel: Option<String>,
    #[schemars(range(min = 1))]
    pub threads: Option<usize>,
    /// `--seconds`: how long `--kernel` ran, or at most how long `--pid`
    /// was followed.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub seconds: Option<f64>,
    /// `--interval`, ms: the timeline's step.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub interval_ms: Option<f64>,
    /// Whether cycles were asked for (not `--no-hardware-counters`).
    pub cycles: bool,
}

impl ObserveOptions {
    /// What was observed, in a few words: "`sh -c 'a b'`", "PID 42", "2 mul threads".
    pub fn target_text(&self) -> String {
        match self.mode {
            ObserveMode::Command => {
                let argv = self.command.as_deref().unwrap_or_default();
                let words = shell_words(argv);
                let mut shown: String = words.chars().take(60).collect();
                if shown.len() < words.len() {
                    shown.push('…');
                }
                format!("`{shown}`")
            }
            ObserveMode::Pid => format!("PID {}", self.pid.unwrap_or_default()),
            ObserveMode::Kernel => format!(
                "{} {} thread{}",
                self.threads.unwrap_or_default(),
                self.kernel.as_deref().unwrap_or_default(),
                if self.threads == Some(1) { "" } else { "s" }
            ),
        }
    }
}

/// The whole `observe --json` document. Every time is CLOCK_MONOTONIC in
/// ms since the recording began; residency comes from the kernel's switch
/// records, task-clock from its own counter, busy MHz from core cycles.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ObserveResult {
    /// Kind, host, machine, evidence (their fields at the top level).
    /// `complete` is false when a stop signal ended a recording that had an
    /// end of its own (`--kernel`, `--pid` with `--seconds`).
    #[serde(flatten)]
    pub head: DocumentHead,
    /// The plain sentence printed first.
    pub sentence: String,
    pub options: ObserveOptions,
    /// The published classes.
    pub classes: Vec<CoreClass>,
    /// How the command ended (`command` mode).
    pub command_end: Option<CommandEnd>,
    /// The status `observe -- COMMAND` exits with: the command's, as a
    /// shell reports it.
    pub exit_status: Option<u8>,
    /// Why there is no busy frequency, when cycles were not counted.
    pub cycles_unavailable: Option<String>,
    /// What of the command's tree outlived it (`command` mode), and what
    /// ended each.
    #[serde(default)]
    pub outlivers: Vec<crate::measure::tree::Outliver>,
    /// Threads, residency, migrations, timeline and the reconciliation
    /// (their fields at the top level of the document).
    #[serde(flatten)]
    pub judged: ObserveJudgement,
    pub warnings: Vec<Warning>,
}

/// The whole `topology --json` document: the head, then the probed machine
/// as `topology --json` wrote it before it had a head (`summary`, `cpus`,
/// `classes`, …), so readers of those fields are unaffected. The machine's
/// `environment` is the head's; its one-line summary is both the head's
/// `topology` and `summary`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TopologyResult {
    #[serde(flatten)]
    pub head: DocumentHead,
    /// Where the facts came from: "live", or the snapshot root / dump folder.
    pub source: ProbeSource,
    pub summary: Summary,
    /// One entry per online CPU, ascending by `cpu`.
    pub cpus: Vec<CpuEntry>,
    pub classes: Vec<CoreClass>,
    pub caches: Vec<Cache>,
    /// CPUID facts; null when no CPUID source was read.
    pub cpuid: Option<CpuidReport>,
    /// Which cores these are, from Arm's MIDR; null where none is published.
    #[serde(default)]
    pub midr: Option<MidrReport>,
    /// CPUID against sysfs; null unless both were read.
    pub crosscheck: Option<Crosscheck>,
    /// Problems in the kernel's sibling sets, one line each.
    #[serde(default)]
    pub sibling_map_notes: Vec<String>,
    /// The NUMA nodes (see [`Topology::nodes`]); empty in files saved
    /// before they were read.
    #[serde(default)]
    pub nodes: Vec<NumaNode>,
    /// Disagreements in the node files, one line each.
    #[serde(default)]
    pub node_notes: Vec<String>,
}

impl TopologyResult {
    /// The document of `topology`, probed on `host`.
    pub fn new(topology: Topology, host: String, started_unix: u64) -> TopologyResult {
        let head = DocumentHead::new(DocumentKind::Topology, &topology, host, started_unix);
        TopologyResult {
            head,
            source: topology.source,
            summary: topology.summary,
            cpus: topology.cpus,
            classes: topology.classes,
            caches: topology.caches,
            cpuid: topology.cpuid,
            midr: topology.midr,
            crosscheck: topology.crosscheck,
            sibling_map_notes: topology.sibling_map_notes,
            nodes: topology.nodes,
            node_notes: topology.node_notes,
        }
    }

    /// The probed machine again, as the topology view and CSV take it.
    pub fn machine(&self) -> Topology {
        Topology {
            schema_version: self.head.schema_version,
            source: self.source.clone(),
            summary: self.summary.clone(),
            cpus: self.cpus.clone(),
            classes: self.classes.clone(),
            caches: self.caches.clone(),
            environment: self.head.environment.clone().unwrap_or_default(),
            cpuid: self.cpuid.clone(),
            midr: self.midr.clone(),
            crosscheck: self.crosscheck.clone(),
            sibling_map_notes: self.sibling_map_notes.clone(),
            nodes: self.nodes.clone(),
            node_notes: self.node_notes.clone(),
        }
    }
}

/// A command as a shell would take it back: each word quoted where it
/// needs to be (`echo 'a b'`), so the words stay apart. A NUL byte, which
/// no shell word can hold, leaves the words escaped instead.
fn shell_words(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str))
        .unwrap_or_else(|_| argv.join(" ").escape_debug().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed_command(argv: &[&str]) -> ObserveOptions {
        ObserveOptions {
            mode: ObserveMode::Command,
            command: Some(argv.iter().map(|w| w.to_string()).collect()),
            pid: None,
            kernel: None,
            threads: None,
            seconds: None,
            interval_ms: None,
            cycles: false,
        }
    }

    #[test]
    fn a_command_is_shown_as_a_shell_would_take_it_back() {
        assert_eq!(
            observed_command(&["echo", "a b"]).target_text(),
            "`echo 'a b'`"
        );
        assert_eq!(
            observed_command(&["sh", "-c", "echo \"$HOME\""]).target_text(),
            r#"`sh -c 'echo "$HOME"'`"#
        );
        assert_eq!(observed_command(&["true"]).target_text(), "`true`");
        assert_eq!(observed_command(&["a\0b"]).target_text(), "`a\\0b`");
    }
}

/// The document of `snapshot FILE.json`: the machine's topology files in
/// one file. `recording` holds every folder listing and file that probing
/// the machine read (and on x86_64 its CPUID dump, as `cpuid/puN`), so
/// `--sysfs-root FILE.json` probes it as `--sysfs-root` of a folder
/// snapshot does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SnapshotResult {
    #[serde(flatten)]
    pub head: DocumentHead,
    pub recording: Recording,
}

impl SnapshotResult {
    /// The document of `recording`, taken of `topology` (the machine as
    /// the recording reads back) on `host`.
    pub fn new(
        recording: Recording,
        topology: &Topology,
        host: String,
        started_unix: u64,
    ) -> SnapshotResult {
        SnapshotResult {
            head: DocumentHead::new(DocumentKind::Snapshot, topology, host, started_unix),
            recording,
        }
    }
}

/// Options a `memory` study was made with.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MemoryOptions {
    /// The ladder's CPU (`None`: the first allowed).
    pub cpu: Option<u32>,
    /// Ladder sizes per doubling.
    pub steps_per_octave: u32,
    /// Streaming threads per cell (`None`: one per core of the CPU node).
    pub threads: Option<usize>,
    pub ladder: crate::measure::memory::LadderOptions,
    pub numa: crate::measure::memory::NumaOptions,
}

impl Default for MemoryOptions {
    fn default() -> MemoryOptions {
        MemoryOptions {
            cpu: None,
            steps_per_octave: crate::plan::memory::STEPS_PER_OCTAVE,
            threads: None,
            ladder: crate::measure::memory::LadderOptions::default(),
            numa: crate::measure::memory::NumaOptions::default(),
        }
    }
}

/// The whole `memory --json` document: the cache ladder and the NUMA
/// latency and bandwidth matrix, measured and judged against what the
/// machine publishes (cache sizes, node distances).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MemoryResult {
    /// Kind, host, machine, evidence (their fields at the top level).
    #[serde(flatten)]
    pub head: DocumentHead,
    /// The caches' ([`MemoryResult::caches_verdict`]) and the matrix's
    /// verdicts together: differ if either differs, else inconclusive if
    /// either is, else agree.
    pub verdict: crate::judge::pairs::MapVerdict,
    /// The plain sentence printed first.
    pub sentence: String,
    pub options: MemoryOptions,
    pub ladder_plan: crate::plan::memory::LadderPlan,
    pub numa_plan: crate::plan::memory::NumaPlan,
    pub ladder: crate::measure::memory::Ladder,
    pub matrix: crate::measure::memory::NumaMatrix,
    pub ladder_judgement: crate::judge::memory::LadderJudgement,
    pub numa_judgement: crate::judge::memory::NumaJudgement,
    /// Each published cache shared by two or more CPUs: a pair inside
    /// against one outside. `None` in files saved before the check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharing: Option<crate::judge::memory_sharing::SharingJudgement>,
    pub warnings: Vec<Warning>,
}

impl MemoryResult {
    /// The caches' verdict: the ladder's, made differ by a measured
    /// sharing that differs.
    pub fn caches_verdict(&self) -> crate::judge::pairs::MapVerdict {
        crate::judge::memory_sharing::caches_verdict(
            self.ladder_judgement.verdict,
            self.sharing.as_ref(),
        )
    }
}
