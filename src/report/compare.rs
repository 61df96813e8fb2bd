//! `report A.json B.json …`: one row per host, like the table of all the
//! hosts of a study. `report --json` gives the same rows as numbers, not
//! as the table's formatted strings.

use crate::judge::checks::{Check, CheckName, CheckStatus};
use crate::judge::gate::Verdict;
use crate::judge::hybrid::ClassVerdict;
use crate::judge::pairs::{MapVerdict, map_text};
use crate::judge::stats::Spread;
use crate::measure::ClockKind;
use crate::plan::Arm;
use crate::report::csv::{opt, quoted};
use crate::report::table::fit;
use crate::report::units::{count, percent, percent_change, sig4};
use crate::report::view::View;
use crate::saved::{
    DocumentKind, GateResult, HybridResult, ObserveResult, PairsResult, RunResult, SavedDocument,
};
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;
use tabled::builder::Builder;
use tabled::{Table, Tabled};

/// One arm's cost on one host.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArmCost {
    pub arm: Arm,
    pub clock: ClockKind,
    /// Median, CV, min, max and repetitions of the cost per byte.
    pub cost: Spread,
    pub quotable: bool,
}

/// What one saved file says about its host, as numbers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostSummary {
    pub file: String,
    pub kind: DocumentKind,
    pub host: Option<String>,
    pub model: Option<String>,
    pub cores: Option<usize>,
    pub cpus: Option<usize>,
    pub hypervisor: Option<String>,
    /// The gate's verdict, when a gate ran.
    pub verdict: Option<Verdict>,
    /// The gate's paired penalty (a fraction), when measured.
    pub penalty: Option<f64>,
    /// The study's arms (none for a gate file).
    pub arms: Vec<ArmCost>,
    /// median(sibling-packed) / median(one-per-core) − 1, when both ran.
    pub change_vs_one_per_core: Option<f64>,
    pub failed_checks: Vec<CheckName>,
    pub complete: bool,
    pub gated: bool,
    /// A run that passed the validity rule. A gate or pairs file has no
    /// such rule (its doubts are in its verdict), so it is always valid.
    pub valid: bool,
    /// `pairs`: the measured sibling map against the published one.
    pub map: Option<SiblingMaps>,
    /// `hybrid`: the classes, the ceiling and the pinned schemes.
    pub hybrid: Option<HybridSummary>,
    /// `observe`: where the workload ran, and whether that adds up.
    pub observe: Option<ObserveSummary>,
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

/// A `pairs` result's maps, in sysfs list form.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SiblingMaps {
    pub verdict: MapVerdict,
    pub published: String,
    pub measured: String,
}

/// Summarises one loaded file.
pub fn summarise(path: &Path, document: &SavedDocument) -> HostSummary {
    let file = path.display().to_string();
    match document {
        SavedDocument::Gate(gate) => of_gate(file, gate),
        SavedDocument::Run(run) => of_run(file, run),
        SavedDocument::Pairs(pairs) => of_pairs(file, pairs),
        SavedDocument::Hybrid(hybrid) => of_hybrid(file, hybrid),
        SavedDocument::Observe(observe) => of_observe(file, observe),
    }
}

/// The names of the checks that failed.
fn failed<'a>(checks: impl IntoIterator<Item = &'a Check>) -> Vec<CheckName> {
    checks
        .into_iter()
        .filter(|c| c.status == CheckStatus::Failed)
        .map(|c| c.name)
        .collect()
}

/// A gate saved before 0.2.0 records no host, model or topology: those stay
/// unknown, and the hypervisor comes from its evidence.
fn of_gate(file: String, gate: &GateResult) -> HostSummary {
    let topology = gate.topology.as_ref();
    HostSummary {
        file,
        kind: DocumentKind::Gate,
        host: gate.host.clone(),
        model: gate.model.clone(),
        cores: topology.map(|t| t.cores),
        cpus: topology.map(|t| t.cpus),
        hypervisor: match topology {
            Some(topology) => topology.hypervisor.clone(),
            None => gate.evidence.cpuid_hypervisor_signature.clone(),
        },
        verdict: Some(gate.verdict),
        penalty: gate.penalty,
        arms: Vec::new(),
        change_vs_one_per_core: None,
        failed_checks: failed(&gate.control),
        complete: gate.complete,
        gated: true,
        valid: true,
        map: None,
        hybrid: None,
        observe: None,
    }
}

fn of_pairs(file: String, pairs: &PairsResult) -> HostSummary {
    HostSummary {
        file,
        kind: DocumentKind::Pairs,
        host: Some(pairs.host.clone()),
        model: pairs.model.clone(),
        cores: Some(pairs.topology.cores),
        cpus: Some(pairs.topology.cpus),
        hypervisor: pairs.topology.hypervisor.clone(),
        verdict: None,
        penalty: None,
        arms: Vec::new(),
        change_vs_one_per_core: None,
        failed_checks: failed(pairs.control.iter().chain([&pairs.pinning])),
        complete: pairs.complete,
        gated: true,
        valid: true,
        map: Some(SiblingMaps {
            verdict: pairs.verdict,
            published: map_text(&pairs.map.published),
            measured: map_text(&pairs.map.measured),
        }),
        hybrid: None,
        observe: None,
    }
}

fn of_hybrid(file: String, hybrid: &HybridResult) -> HostSummary {
    HostSummary {
        file,
        kind: DocumentKind::Hybrid,
        host: Some(hybrid.host.clone()),
        model: hybrid.model.clone(),
        cores: Some(hybrid.topology.cores),
        cpus: Some(hybrid.topology.cpus),
        hypervisor: hybrid.topology.hypervisor.clone(),
        verdict: None,
        penalty: None,
        arms: Vec::new(),
        change_vs_one_per_core: None,
        failed_checks: failed(&hybrid.judged.checks),
        complete: hybrid.complete,
        gated: true,
        valid: hybrid.judged.valid,
        map: None,
        hybrid: Some(HybridSummary {
            classes: hybrid.judged.class_judgement.verdict,
            speeds: hybrid
                .judged
                .speed_classes
                .iter()
                .filter_map(|c| Some(format!("{} {:.2}", c.label, c.speed.as_ref()?.value)))
                .collect(),
            ceiling: hybrid.judged.ceiling,
            static_pinned_of_ceiling: of_ceiling(hybrid, Arm::StaticPinned),
            stealing_pinned_of_ceiling: of_ceiling(hybrid, Arm::StealingPinned),
        }),
        observe: None,
    }
}

/// A scheme's speedup as a fraction of the ceiling, where measured.
fn of_ceiling(hybrid: &HybridResult, arm: Arm) -> Option<f64> {
    hybrid
        .judged
        .schemes
        .iter()
        .find(|s| s.arm == arm)
        .and_then(|s| s.of_ceiling)
}

fn of_run(file: String, run: &RunResult) -> HostSummary {
    let arms: Vec<ArmCost> = run
        .arms
        .iter()
        .filter_map(|a| {
            Some(ArmCost {
                arm: a.name,
                clock: a.clock,
                cost: a.cost.clone()?,
                quotable: a.quotable,
            })
        })
        .collect();
    let median = |arm: Arm| arms.iter().find(|a| a.arm == arm).map(|a| a.cost.median);
    HostSummary {
        file,
        kind: DocumentKind::Run,
        host: Some(run.host.clone()),
        model: run.model.clone(),
        cores: Some(run.topology.cores),
        cpus: Some(run.topology.cpus),
        hypervisor: run.topology.hypervisor.clone(),
        verdict: run.gate.as_ref().map(|g| g.verdict),
        penalty: run.gate.as_ref().and_then(|g| g.penalty),
        change_vs_one_per_core: median(Arm::OnePerCore)
            .zip(median(Arm::SiblingPacked))
            .map(|(base, packed)| packed / base - 1.0),
        arms,
        failed_checks: failed(&run.checks),
        complete: run.complete,
        gated: run.gated,
        valid: run.valid,
        map: None,
        hybrid: None,
        observe: None,
    }
}

/// One row of the hosts table.
#[derive(Tabled)]
struct HostRow {
    file: String,
    host: String,
    #[tabled(rename = "CPU")]
    model: String,
    #[tabled(rename = "cores/threads")]
    cores_threads: String,
    hypervisor: String,
    gate: String,
    #[tabled(rename = "one-per-core")]
    one_per_core: String,
    #[tabled(rename = "sibling-packed")]
    packed: String,
    change: String,
    #[tabled(rename = "sibling map")]
    map: String,
    /// `hybrid`: the classes' speeds, the ceiling, the pinned schemes.
    classes: String,
    /// `observe`: the classes' shares, the migrations, the reconciliation.
    observed: String,
    checks: String,
}

fn row(host: &HostSummary) -> HostRow {
    let dash = || "—".to_string();
    let cost = |arm: Arm| match host.arms.iter().find(|a| a.arm == arm) {
        Some(a) => format!(
            "{} {} (CV {:.2} %, n={}){}",
            sig4(a.cost.median),
            a.clock.as_str(),
            a.cost.cv * 100.0,
            a.cost.reps,
            if a.quotable { "" } else { " not quotable" }
        ),
        None => dash(),
    };
    // An invalid `observe` has no failed check to name: it is "INVALID" alone.
    let mut marks: Vec<String> = [
        (host.complete, "INCOMPLETE"),
        (host.gated, "UNGATED"),
        (host.valid, "INVALID"),
    ]
    .into_iter()
    .filter(|(holds, _)| !holds)
    .map(|(_, mark)| mark.to_string())
    .collect();
    if !host.failed_checks.is_empty() {
        let names: Vec<String> = host.failed_checks.iter().map(|c| c.to_string()).collect();
        marks.push(format!("FAILED: {}", names.join(", ")));
    } else if host.valid {
        marks.push("passed".into());
    }
    let checks = marks.join("; ");
    HostRow {
        file: host.file.clone(),
        host: host.host.clone().unwrap_or_else(dash),
        model: host.model.clone().unwrap_or_else(|| "unknown".into()),
        cores_threads: match (host.cores, host.cpus) {
            (Some(cores), Some(cpus)) => format!("{cores}/{cpus}"),
            _ => dash(),
        },
        hypervisor: host.hypervisor.clone().unwrap_or_else(|| "none".into()),
        gate: match host.verdict {
            Some(verdict) => format!(
                "{}{}",
                verdict.as_str(),
                host.penalty
                    .map(|p| format!(" {}", percent_change(p)))
                    .unwrap_or_default()
            ),
            None => "not run".into(),
        },
        one_per_core: cost(Arm::OnePerCore),
        packed: cost(Arm::SiblingPacked),
        change: host
            .change_vs_one_per_core
            .map_or_else(dash, percent_change),
        map: match &host.map {
            Some(map) if map.measured == map.published => {
                format!("{}: {}", map.verdict.as_str(), map.measured)
            }
            Some(map) => format!(
                "{}: measured {}, published {}",
                map.verdict.as_str(),
                map.measured,
                map.published
            ),
            None => dash(),
        },
        classes: host.hybrid.as_ref().map_or_else(dash, |h| {
            let share = |f: Option<f64>| f.map_or_else(dash, |f| format!("{:.0} %", f * 100.0));
            format!(
                "{}: {}; ceiling {}; pinned static {}, stealing {} of it",
                h.classes.as_str(),
                h.speeds.join(", "),
                h.ceiling.map_or_else(dash, |c| format!("{c:.2}")),
                share(h.static_pinned_of_ceiling),
                share(h.stealing_pinned_of_ceiling)
            )
        }),
        observed: host.observe.as_ref().map_or_else(dash, |o| {
            format!(
                "{}; {}; {} {}",
                o.classes.join(", "),
                count(o.migrations, "migration"),
                if o.reconciled {
                    "reconciled"
                } else {
                    "NOT reconciled"
                },
                percent(o.reconciliation_difference)
            )
        }),
        checks,
    }
}

/// The hosts table. The wide view has a column per finding; the default
/// one names the host and its CPU in one cell, puts the gate's verdict and
/// what each file found in one "result" cell, a line a finding, leaves the
/// core counts and the hypervisor out, and gives each mark of the checks
/// its own line.
pub fn render(hosts: &[HostSummary], view: &View) -> String {
    let rows = hosts.iter().map(row);
    if view.wide {
        return fit(Table::new(rows), view);
    }
    let mut table = Builder::default();
    table.push_record(["file", "host, CPU", "result", "checks"]);
    for (host, row) in hosts.iter().zip(rows) {
        let gate = host.verdict.map(|_| row.gate.as_str());
        let findings: Vec<String> = [
            ("gate", gate.unwrap_or("—")),
            ("one-per-core", &row.one_per_core),
            ("sibling-packed", &row.packed),
            ("change", &row.change),
            ("sibling map", &row.map),
            ("classes", &row.classes),
            ("observed", &row.observed),
        ]
        .into_iter()
        .filter(|(_, finding)| *finding != "—")
        .map(|(name, finding)| format!("{name}: {finding}"))
        .collect();
        table.push_record([
            row.file.clone(),
            format!("{}\n{}", row.host, row.model),
            if findings.is_empty() {
                "—".into()
            } else {
                findings.join("\n")
            },
            row.checks.replace("; ", "\n"),
        ]);
    }
    fit(table.build(), view)
}

/// The columns of `report --csv` over several files.
pub const CSV_HEADER: &str = "file,kind,host,model,cores,cpus,hypervisor,verdict,penalty,\
one_per_core_median,one_per_core_cv,sibling_packed_median,sibling_packed_cv,clock,\
change_vs_one_per_core,failed_checks,complete,gated,valid,map_verdict,published_map,measured_map,\
class_verdict,ceiling,static_pinned_of_ceiling,stealing_pinned_of_ceiling,observed_target,\
observed_classes,observed_threads,migrations,observed_wall_ms,reconciliation_difference,reconciled";

/// One CSV row per host, numbers unformatted; text fields quoted.
pub fn csv(hosts: &[HostSummary]) -> String {
    let text = |v: Option<String>| v.map(|v| quoted(&v)).unwrap_or_default();
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for host in hosts {
        let arm = |arm: Arm| host.arms.iter().find(|a| a.arm == arm);
        let names: Vec<String> = host.failed_checks.iter().map(|c| c.to_string()).collect();
        let hybrid = host.hybrid.as_ref();
        let observe = host.observe.as_ref();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            quoted(&host.file),
            host.kind,
            text(host.host.clone()),
            text(host.model.clone()),
            opt(host.cores),
            opt(host.cpus),
            text(host.hypervisor.clone()),
            host.verdict.map(|v| v.as_str()).unwrap_or_default(),
            opt(host.penalty),
            opt(arm(Arm::OnePerCore).map(|a| a.cost.median)),
            opt(arm(Arm::OnePerCore).map(|a| a.cost.cv)),
            opt(arm(Arm::SiblingPacked).map(|a| a.cost.median)),
            opt(arm(Arm::SiblingPacked).map(|a| a.cost.cv)),
            host.arms
                .first()
                .map(|a| a.clock.as_str())
                .unwrap_or_default(),
            opt(host.change_vs_one_per_core),
            quoted(&names.join(";")),
            host.complete,
            host.gated,
            host.valid,
            host.map
                .as_ref()
                .map(|m| m.verdict.as_str())
                .unwrap_or_default(),
            text(host.map.as_ref().map(|m| m.published.clone())),
            text(host.map.as_ref().map(|m| m.measured.clone())),
            hybrid.map(|h| h.classes.as_str()).unwrap_or_default(),
            opt(hybrid.and_then(|h| h.ceiling)),
            opt(hybrid.and_then(|h| h.static_pinned_of_ceiling)),
            opt(hybrid.and_then(|h| h.stealing_pinned_of_ceiling)),
            text(observe.map(|o| o.target.clone())),
            text(observe.map(|o| o.classes.join(";"))),
            opt(observe.map(|o| o.threads)),
            opt(observe.map(|o| o.migrations)),
            opt(observe.map(|o| o.wall_ms)),
            opt(observe.map(|o| o.reconciliation_difference)),
            opt(observe.map(|o| o.reconciled)),
        );
    }
    out
}

fn of_observe(file: String, observe: &ObserveResult) -> HostSummary {
    let judged = &observe.judged;
    HostSummary {
        file,
        kind: DocumentKind::Observe,
        host: Some(observe.host.clone()),
        model: observe.model.clone(),
        cores: Some(observe.topology.cores),
        cpus: Some(observe.topology.cpus),
        hypervisor: observe.topology.hypervisor.clone(),
        verdict: None,
        penalty: None,
        arms: Vec::new(),
        change_vs_one_per_core: None,
        failed_checks: Vec::new(),
        complete: observe.complete,
        gated: true,
        valid: judged.valid,
        map: None,
        hybrid: None,
        observe: Some(ObserveSummary {
            target: observe.options.target_text(),
            classes: judged
                .classes
                .iter()
                .map(|c| format!("{} {:.1} %", c.class, c.share * 100.0))
                .collect(),
            threads: judged.threads.len(),
            migrations: judged.migrations.len(),
            wall_ms: judged.wall_ms,
            reconciliation_difference: judged.reconciliation.difference,
            reconciled: judged.reconciliation.holds,
        }),
    }
}
