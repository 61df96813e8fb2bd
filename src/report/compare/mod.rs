//! `report A.json B.json …`: one row per host, like the table of all the
//! hosts of a study. `report --json` gives the same rows as numbers, not
//! as the table's formatted strings.

use crate::judge::checks::{Check, CheckName, CheckStatus};
use crate::judge::fleet::PenaltyDoubt;
use crate::judge::gate::{Interval, Verdict};
use crate::judge::hybrid::ClassVerdict;
use crate::judge::pairs::{MapVerdict, map_text};
use crate::judge::stats::Spread;
use crate::measure::ClockKind;
use crate::plan::Arm;
use crate::plan::command::CommandArm;
use crate::report::csv::{header, opt, quoted, rows};
use crate::saved::{
    CommandResult, DocumentHead, DocumentKind, GateResult, HybridResult, ObserveResult,
    PairsResult, RunResult, SweepResult, TopologyResult,
};
use crate::units::{Fixed, count, percent_change};
use serde::Serialize;
use std::borrow::Cow;
use std::fmt::Write;
use std::sync::LazyLock;

/// One arm's cost on one host.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArmCost {
    pub arm: Arm,
    pub clock: ClockKind,
    /// Median, CV, min, max and repetitions of the cost per byte.
    pub cost: Spread,
    pub quotable: bool,
}

/// What one saved file says about its host: what every document says
/// (host, machine, whether it ran to its end), and what its kind found.
#[derive(Clone, Debug, PartialEq)]
pub struct HostSummary {
    pub file: String,
    pub kind: DocumentKind,
    /// `None` for a gate saved before 0.2.0, which did not record it.
    pub host: Option<String>,
    pub model: Option<String>,
    pub cores: Option<usize>,
    pub cpus: Option<usize>,
    pub hypervisor: Option<String>,
    pub complete: bool,
    pub finding: Finding,
    /// What a fleet counts it under.
    pub counted: Counted,
}

/// What one kind of document found, in a row.
#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    /// A gate: its verdict and penalty, and whether its control failed.
    Gate {
        verdict: Verdict,
        penalty: GatePenalty,
        failed_checks: Vec<CheckName>,
    },
    /// A run: its gate (none with `--skip-gate`), its arms, and its
    /// validity rule.
    Run(Box<RunFinding>),
    /// A `pairs` search: the measured sibling map against the published one.
    Pairs {
        map: SiblingMaps,
        failed_checks: Vec<CheckName>,
    },
    /// A `hybrid` study: the classes, the ceiling, the pinned schemes.
    Hybrid {
        hybrid: HybridSummary,
        failed_checks: Vec<CheckName>,
        valid: bool,
    },
    /// An observation: where the workload ran, and whether that adds up.
    Observe {
        observe: ObserveSummary,
        valid: bool,
    },
    /// A topology: the machine's shape.
    Topology { machine: MachineShape },
    /// A sweep: its curve and knees.
    Sweep {
        sweep: SweepSummary,
        failed_checks: Vec<CheckName>,
        gated: bool,
        valid: bool,
    },
}

/// What a run found.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFinding {
    /// The gate's verdict and penalty; `None` when `--skip-gate` skipped it.
    pub gate: Option<(Verdict, GatePenalty)>,
    pub arms: Vec<ArmCost>,
    /// median(sibling-packed) / median(one-per-core) − 1, when both ran.
    pub change_vs_one_per_core: Option<f64>,
    pub failed_checks: Vec<CheckName>,
    /// The gate said physical before the arms were measured.
    pub gated: bool,
    /// Pinning, multiplexing and invariance held.
    pub valid: bool,
    /// `run -- COMMAND`: the command, and each arm's wall time against the
    /// baseline's ("`xz -T{threads} …`: same-cpu +110.3 %"); `None` for
    /// the kernel study.
    pub command: Option<String>,
}

impl HostSummary {
    /// The gate's verdict, when a gate ran (a gate, or a run's gate).
    pub fn verdict(&self) -> Option<Verdict> {
        match &self.finding {
            Finding::Gate { verdict, .. } => Some(*verdict),
            Finding::Run(run) => run.gate.as_ref().map(|(verdict, _)| *verdict),
            _ => None,
        }
    }

    /// The gate's paired penalty, with what it rests on, when a gate ran.
    pub fn penalty(&self) -> Option<&GatePenalty> {
        match &self.finding {
            Finding::Gate { penalty, .. } => Some(penalty),
            Finding::Run(run) => run.gate.as_ref().map(|(_, penalty)| penalty),
            _ => None,
        }
    }

    /// The run's arms; none for other kinds.
    pub fn arms(&self) -> &[ArmCost] {
        match &self.finding {
            Finding::Run(run) => &run.arms,
            _ => &[],
        }
    }

    /// The checks that failed, by name.
    pub fn failed_checks(&self) -> &[CheckName] {
        match &self.finding {
            Finding::Gate { failed_checks, .. }
            | Finding::Pairs { failed_checks, .. }
            | Finding::Hybrid { failed_checks, .. }
            | Finding::Sweep { failed_checks, .. } => failed_checks,
            Finding::Run(run) => &run.failed_checks,
            Finding::Observe { .. } | Finding::Topology { .. } => &[],
        }
    }

    /// Whether it passed its validity rule: `None` for a kind that has no
    /// such rule (a gate or a `pairs` search, whose doubts are in their
    /// verdicts and checks; a topology, which measures nothing).
    pub fn valid(&self) -> Option<bool> {
        match &self.finding {
            Finding::Run(run) => Some(run.valid),
            Finding::Hybrid { valid, .. }
            | Finding::Observe { valid, .. }
            | Finding::Sweep { valid, .. } => Some(*valid),
            Finding::Gate { .. } | Finding::Pairs { .. } | Finding::Topology { .. } => None,
        }
    }

    /// A run measured without its gate saying physical (`--skip-gate`).
    pub fn ungated(&self) -> bool {
        match &self.finding {
            Finding::Run(run) => !run.gated,
            Finding::Sweep { gated, .. } => !gated,
            _ => false,
        }
    }

    /// A sweep's curve and knees.
    pub fn sweep(&self) -> Option<&SweepSummary> {
        match &self.finding {
            Finding::Sweep { sweep, .. } => Some(sweep),
            _ => None,
        }
    }

    /// The sibling maps of a `pairs` search.
    pub fn map(&self) -> Option<&SiblingMaps> {
        match &self.finding {
            Finding::Pairs { map, .. } => Some(map),
            _ => None,
        }
    }

    /// median(sibling-packed) / median(one-per-core) − 1, where a run
    /// measured both.
    pub fn change_vs_one_per_core(&self) -> Option<f64> {
        match &self.finding {
            Finding::Run(run) => run.change_vs_one_per_core,
            _ => None,
        }
    }

    /// A `hybrid` study's classes, ceiling and schemes.
    pub fn hybrid(&self) -> Option<&HybridSummary> {
        match &self.finding {
            Finding::Hybrid { hybrid, .. } => Some(hybrid),
            _ => None,
        }
    }

    /// An observation's residency, migrations and reconciliation.
    pub fn observe(&self) -> Option<&ObserveSummary> {
        match &self.finding {
            Finding::Observe { observe, .. } => Some(observe),
            _ => None,
        }
    }

    /// A command study's command and its arms against the baseline.
    pub fn command(&self) -> Option<&str> {
        match &self.finding {
            Finding::Run(run) => run.command.as_deref(),
            _ => None,
        }
    }

    /// The machine's shape, for a topology.
    pub fn machine(&self) -> Option<&MachineShape> {
        match &self.finding {
            Finding::Topology { machine } => Some(machine),
            _ => None,
        }
    }

    /// The row in the `report --json` format: every field for every kind,
    /// null where the kind has none; a kind without a validity rule is
    /// written `valid: true`, one that is not a run `gated: true`.
    fn flat(&self) -> FlatHost<'_> {
        FlatHost {
            file: &self.file,
            kind: self.kind,
            host: self.host.as_deref(),
            model: self.model.as_deref(),
            cores: self.cores,
            cpus: self.cpus,
            hypervisor: self.hypervisor.as_deref(),
            verdict: self.verdict(),
            penalty: self
                .penalty()
                .map_or_else(|| Cow::Owned(GatePenalty::default()), Cow::Borrowed),
            arms: self.arms(),
            change_vs_one_per_core: self.change_vs_one_per_core(),
            failed_checks: self.failed_checks(),
            complete: self.complete,
            gated: !self.ungated(),
            valid: self.valid().unwrap_or(true),
            map: self.map(),
            hybrid: self.hybrid(),
            observe: self.observe(),
            machine: self.machine(),
            sweep: self.sweep(),
        }
    }
}

/// A [`HostSummary`] as `report --json` writes it.
#[derive(Serialize)]
struct FlatHost<'a> {
    file: &'a str,
    kind: DocumentKind,
    host: Option<&'a str>,
    model: Option<&'a str>,
    cores: Option<usize>,
    cpus: Option<usize>,
    hypervisor: Option<&'a str>,
    /// The gate's verdict, when a gate ran.
    verdict: Option<Verdict>,
    /// The gate's paired penalty, with what it rests on.
    #[serde(flatten)]
    penalty: Cow<'a, GatePenalty>,
    /// The study's arms (none for a gate file).
    arms: &'a [ArmCost],
    /// median(sibling-packed) / median(one-per-core) − 1, when both ran.
    change_vs_one_per_core: Option<f64>,
    failed_checks: &'a [CheckName],
    complete: bool,
    gated: bool,
    /// A run that passed the validity rule. A gate or pairs file has no
    /// such rule (its doubts are in its verdict), so it is written valid.
    valid: bool,
    /// `pairs`: the measured sibling map against the published one.
    map: Option<&'a SiblingMaps>,
    /// `hybrid`: the classes, the ceiling and the pinned schemes.
    hybrid: Option<&'a HybridSummary>,
    /// `observe`: where the workload ran, and whether that adds up.
    observe: Option<&'a ObserveSummary>,
    /// `topology`: the machine's shape.
    machine: Option<&'a MachineShape>,
    /// `run --sweep`: the curve and its knees.
    sweep: Option<&'a SweepSummary>,
}

impl Serialize for HostSummary {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.flat().serialize(serializer)
    }
}

/// The study a fleet counts a result under, and its verdict there: a run
/// counts under its gate; a topology's "verdict" is its machine's shape,
/// so the counts are the fleet's inventory.
#[derive(Clone, Debug, PartialEq)]
pub struct Counted {
    /// The kind whose verdicts these are (a run's is the gate's).
    pub study: DocumentKind,
    /// The counts' name for it: "gate", "pairs map", "hybrid classes",
    /// "observe", "topology".
    pub label: &'static str,
    /// The verdict word; `None` when the result has none to count.
    pub verdict: Option<String>,
}

/// A machine's shape as an inventory counts it: two hosts of one CPU model
/// with different shapes are worth a look (a package offline, SMT off).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct MachineShape {
    pub packages: usize,
    /// `None` where which CPUs share a core is unknown (the probe's count
    /// is then the CPUs', each entered as a core of its own).
    pub cores: Option<usize>,
    /// "1", "2", or "mixed(8x2,8x1)".
    pub threads_per_core: String,
    pub core_classes: usize,
}

impl MachineShape {
    /// The shape `summary` gives.
    pub fn of(summary: &crate::probe::Summary) -> MachineShape {
        MachineShape {
            packages: summary.packages,
            cores: summary.structure_unknown.is_none().then_some(summary.cores),
            threads_per_core: summary.threads_per_core.clone(),
            core_classes: summary.core_classes,
        }
    }
}

impl std::fmt::Display for MachineShape {
    /// "1 package, 4 cores × 2 threads, 1 core class".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let threads = match self.threads_per_core.as_str() {
            "1" => "1 thread".to_string(),
            n if n.parse::<usize>().is_ok() => format!("{n} threads"),
            mixed => format!("{mixed} threads"),
        };
        let cores = match self.cores {
            Some(cores) => format!("{} × {threads}", count(cores, "core")),
            None => "cores unknown".to_string(),
        };
        write!(
            f,
            "{}, {cores}, {}",
            count(self.packages, "package"),
            match self.core_classes {
                1 => "1 core class".to_string(),
                n => format!("{n} core classes"),
            }
        )
    }
}

/// A gate's penalty as the hosts' tables carry it: never the number
/// without its interval, its repetitions and the clock it was counted on,
/// and marked when the gate that measured it failed its validity bar. In
/// JSON its fields sit beside the host's others, each named `penalty…`;
/// all are null (the doubts empty) when no penalty was measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GatePenalty {
    /// The paired estimate (a fraction): 0.37 is 37 % more.
    #[serde(rename = "penalty")]
    pub value: Option<f64>,
    /// Its 95 % confidence interval.
    #[serde(rename = "penalty_ci95")]
    pub ci95: Option<Interval>,
    /// Repetitions per arm it comes from.
    #[serde(rename = "penalty_reps")]
    pub reps: Option<usize>,
    /// The clock the costs were counted on.
    #[serde(rename = "penalty_clock")]
    pub clock: Option<ClockKind>,
    /// The gate's threshold (a fraction): physical at or above it.
    #[serde(rename = "penalty_threshold")]
    pub threshold: Option<f64>,
    /// Why it failed its validity bar; empty when it held.
    #[serde(rename = "penalty_doubts")]
    pub doubts: Vec<PenaltyDoubt>,
}

impl GatePenalty {
    /// What a saved gate says about its penalty.
    pub fn of(gate: &GateResult) -> GatePenalty {
        let Some(value) = gate.penalty else {
            return GatePenalty::default();
        };
        let control_failed = gate
            .control
            .as_ref()
            .is_some_and(|c| c.status == CheckStatus::Failed);
        let doubts = [
            (!gate.head.complete, PenaltyDoubt::Incomplete),
            (control_failed, PenaltyDoubt::ControlFailed),
        ]
        .into_iter()
        .filter_map(|(doubted, doubt)| doubted.then_some(doubt))
        .collect();
        GatePenalty {
            value: Some(value),
            ci95: gate.ci95.clone(),
            reps: Some(gate.reps),
            clock: gate.clock,
            threshold: Some(gate.threshold),
            doubts,
        }
    }

    /// The estimate and its interval, in per cent: "+9.0 %" and "[3.3,
    /// 15.0]" (a bound below zero with its minus sign), or "(no interval)";
    /// `None` without a penalty.
    pub fn estimate_parts(&self) -> Option<(String, String)> {
        let value = percent_change(self.value?);
        let interval = match &self.ci95 {
            Some(ci95) => {
                let bound = |b: f64| {
                    let text = percent_change(b);
                    text.trim_start_matches('+')
                        .trim_end_matches(" %")
                        .to_string()
                };
                format!("[{}, {}]", bound(ci95.low), bound(ci95.high))
            }
            None => "(no interval)".into(),
        };
        Some((value, interval))
    }

    /// [`Self::estimate_parts`] on one line: "+9.0 % [3.3, 15.0]".
    pub fn estimate_text(&self) -> Option<String> {
        let (value, interval) = self.estimate_parts()?;
        Some(format!("{value} {interval}"))
    }

    /// What the estimate rests on, each part when known: the repetitions
    /// per arm ("n=5"), the clock's unit ("TSC ticks") and the threshold
    /// ("threshold +15.0 %").
    pub fn basis(&self) -> [Option<String>; 3] {
        [
            self.reps.map(|n| format!("n={n}")),
            self.clock.map(|c| c.unit().to_string()),
            self.threshold
                .map(|t| format!("threshold {}", percent_change(t))),
        ]
    }

    /// The doubts as words, ";"-separated as the CSVs join lists:
    /// "incomplete;control-failed".
    fn doubts_list(&self) -> String {
        let words: Vec<&str> = self.doubts.iter().map(|d| d.as_str()).collect();
        words.join(";")
    }

    /// Its [`PenaltyCells`]: the interval's bounds, the repetitions, the
    /// clock, the threshold and the doubts (";"-separated); empty fields
    /// where unknown.
    pub fn csv_cells(&self) -> PenaltyCells {
        let ci95 = self.ci95.as_ref();
        PenaltyCells {
            penalty_ci95_low: opt(ci95.map(|c| c.low)),
            penalty_ci95_high: opt(ci95.map(|c| c.high)),
            penalty_reps: self.reps,
            penalty_clock: self.clock.map(ClockKind::as_str).unwrap_or_default(),
            penalty_threshold: opt(self.threshold),
            penalty_doubts: quoted(&self.doubts_list()),
        }
    }

    /// The whole penalty in one cell: "+9.0 % [3.3, 15.0] (n=27, TSC
    /// ticks, threshold +15.0 %)", then "not valid: incomplete" when it
    /// failed its bar; `None` without a penalty.
    fn text(&self) -> Option<String> {
        let basis: Vec<String> = self.basis().into_iter().flatten().collect();
        let mut text = format!("{} ({})", self.estimate_text()?, basis.join(", "));
        if !self.doubts.is_empty() {
            let _ = write!(
                text,
                " not valid: {}",
                self.doubts_list().replace(';', ", ")
            );
        }
        Some(text)
    }
}

/// An `observe` result in one row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ObserveSummary {
    /// What was followed: "`cmd …`", "PID 42", "2 mul threads".
    pub target: String,
    /// Each class's share of the on-CPU time, as "performance 99.8 %".
    pub classes: Vec<String>,
    pub threads: usize,
    pub migrations: usize,
    pub wall_ms: f64,
    /// |Σ residency + hand-overs − Σ task-clock| ÷ Σ task-clock.
    pub reconciliation_difference: f64,
    /// The difference is within its bar.
    pub reconciled: bool,
}

/// A `hybrid` result in one row: the classes' verdict, the ceiling, and
/// the pinned schemes' speedups as fractions of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HybridSummary {
    pub classes: ClassVerdict,
    /// Measured classes, fastest first, as "label speed" ("measured 1 0.46").
    pub speeds: Vec<String>,
    pub ceiling: Option<f64>,
    pub static_pinned_of_ceiling: Option<f64>,
    pub stealing_pinned_of_ceiling: Option<f64>,
}

/// A sweep in one row: the order, each step's speedup, the largest
/// step's efficiency, and the knees.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepSummary {
    pub order: String,
    /// Each step's worker count and speedup over step 1.
    pub speedups: Vec<(usize, f64)>,
    /// The largest step's speedup over its ceiling.
    pub efficiency: Option<f64>,
    /// Each knee: its worker count and what was added there.
    pub knees: Vec<(usize, String)>,
}

/// A map-judging result's maps (`pairs`' and `latency`'s sibling maps,
/// `memory`'s cache levels), in list form.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SiblingMaps {
    /// What the maps are: "sibling maps", "cache levels".
    #[serde(skip)]
    pub what: &'static str,
    pub verdict: MapVerdict,
    pub published: String,
    pub measured: String,
}

/// The columns of [`GatePenalty::csv_cells`], in both CSVs of hosts: after
/// `penalty` in `report --fleet`'s, last in `report A B`'s (so that the
/// columns it had keep their places). Floats are written as Rust prints
/// them, text quoted ([`quoted`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PenaltyCells {
    pub penalty_ci95_low: String,
    pub penalty_ci95_high: String,
    pub penalty_reps: Option<usize>,
    pub penalty_clock: &'static str,
    pub penalty_threshold: String,
    pub penalty_doubts: String,
}

/// One row of `report --csv` over several files, before its
/// [`PenaltyCells`]: numbers unformatted (floats as Rust prints them), text
/// quoted ([`quoted`]), lists joined with ";".
#[derive(Default, Serialize)]
struct CsvHost {
    file: String,
    kind: &'static str,
    host: String,
    model: String,
    cores: Option<usize>,
    cpus: Option<usize>,
    hypervisor: String,
    verdict: &'static str,
    penalty: String,
    one_per_core_median: String,
    one_per_core_cv: String,
    sibling_packed_median: String,
    sibling_packed_cv: String,
    clock: &'static str,
    change_vs_one_per_core: String,
    failed_checks: String,
    complete: bool,
    gated: bool,
    valid: bool,
    map_verdict: &'static str,
    published_map: String,
    measured_map: String,
    class_verdict: &'static str,
    ceiling: String,
    static_pinned_of_ceiling: String,
    stealing_pinned_of_ceiling: String,
    observed_target: String,
    observed_classes: String,
    observed_threads: Option<usize>,
    migrations: Option<usize>,
    observed_wall_ms: String,
    reconciliation_difference: String,
    reconciled: Option<bool>,
    sweep_order: String,
    sweep_speedups: String,
    sweep_efficiency: String,
    sweep_knees: String,
}

/// The columns of `report --csv` over several files: a host's fields,
/// then the [`PenaltyCells`].
pub static CSV_HEADER: LazyLock<String> = LazyLock::new(header::<(CsvHost, PenaltyCells)>);

/// One CSV row per host, numbers unformatted; text fields quoted.
pub fn csv(hosts: &[HostSummary]) -> String {
    rows(hosts.iter().map(HostSummary::flat).map(|host| {
        let text = |v: Option<&str>| v.map(quoted).unwrap_or_default();
        let arm = |arm: Arm| host.arms.iter().find(|a| a.arm == arm);
        let names: Vec<String> = host.failed_checks.iter().map(|c| c.to_string()).collect();
        let (hybrid, observe, sweep) = (host.hybrid, host.observe, host.sweep);
        // "1:1;2:1.95": each step's workers and speedup; "3;6": the knees.
        let speedups = sweep.map(|w| {
            let steps: Vec<String> = w.speedups.iter().map(|(k, s)| format!("{k}:{s}")).collect();
            steps.join(";")
        });
        let knees = sweep.map(|w| {
            let at: Vec<String> = w.knees.iter().map(|(k, _)| k.to_string()).collect();
            at.join(";")
        });
        let row = CsvHost {
            file: quoted(host.file),
            kind: host.kind.into(),
            host: text(host.host),
            model: text(host.model),
            cores: host.cores,
            cpus: host.cpus,
            hypervisor: text(host.hypervisor),
            verdict: host.verdict.map(|v| v.as_str()).unwrap_or_default(),
            penalty: opt(host.penalty.value),
            one_per_core_median: opt(arm(Arm::OnePerCore).map(|a| a.cost.median)),
            one_per_core_cv: opt(arm(Arm::OnePerCore).map(|a| a.cost.cv)),
            sibling_packed_median: opt(arm(Arm::SiblingPacked).map(|a| a.cost.median)),
            sibling_packed_cv: opt(arm(Arm::SiblingPacked).map(|a| a.cost.cv)),
            clock: host
                .arms
                .first()
                .map(|a| a.clock.as_str())
                .unwrap_or_default(),
            change_vs_one_per_core: opt(host.change_vs_one_per_core),
            failed_checks: quoted(&names.join(";")),
            complete: host.complete,
            gated: host.gated,
            valid: host.valid,
            map_verdict: host.map.map(|m| m.verdict.as_str()).unwrap_or_default(),
            published_map: text(host.map.map(|m| m.published.as_str())),
            measured_map: text(host.map.map(|m| m.measured.as_str())),
            class_verdict: hybrid.map(|h| h.classes.as_str()).unwrap_or_default(),
            ceiling: opt(hybrid.and_then(|h| h.ceiling)),
            static_pinned_of_ceiling: opt(hybrid.and_then(|h| h.static_pinned_of_ceiling)),
            stealing_pinned_of_ceiling: opt(hybrid.and_then(|h| h.stealing_pinned_of_ceiling)),
            observed_target: text(observe.map(|o| o.target.as_str())),
            observed_classes: text(observe.map(|o| o.classes.join(";")).as_deref()),
            observed_threads: observe.map(|o| o.threads),
            migrations: observe.map(|o| o.migrations),
            observed_wall_ms: opt(observe.map(|o| o.wall_ms)),
            reconciliation_difference: opt(observe.map(|o| o.reconciliation_difference)),
            reconciled: observe.map(|o| o.reconciled),
            sweep_order: text(sweep.map(|w| w.order.as_str())),
            sweep_speedups: text(speedups.as_deref()),
            sweep_efficiency: opt(sweep.and_then(|w| w.efficiency)),
            sweep_knees: text(knees.as_deref()),
        };
        (row, host.penalty.csv_cells())
    }))
}

/// The document in one row of `report A B` and `report --fleet`; `file`
/// names where it was read. Each kind's in `report::compare`.
pub trait Summary {
    fn summary(&self, file: String) -> HostSummary;
}

mod summaries;
mod view;

pub use view::{blocks, render};
#[cfg(test)]
mod tests;
