//! `report A B …`'s view, as blocks ([`Blocks`]): one row per host, a
//! column per finding in the wide view, four columns in the default one.
//! The terminal, `report A B --html` and `report A B --markdown` draw the
//! same blocks.

use super::{GatePenalty, HostSummary, MachineShape};
use crate::plan::Arm;
use crate::report::blocks::{Blocks, Grid};
use crate::report::view::View;
use crate::units::{DASH, Fixed, count, percent, percent_change, sig4};

/// One row of the hosts table: a cell per column of the wide view.
pub(super) struct HostRow {
    pub(super) file: String,
    pub(super) host: String,
    pub(super) model: String,
    pub(super) cores_threads: String,
    pub(super) hypervisor: String,
    pub(super) gate: String,
    pub(super) one_per_core: String,
    pub(super) packed: String,
    pub(super) change: String,
    pub(super) map: String,
    /// `hybrid`: the classes' speeds, the ceiling, the pinned schemes.
    pub(super) classes: String,
    /// `observe`: the classes' shares, the migrations, the reconciliation.
    pub(super) observed: String,
    /// `topology`: packages, cores, threads, classes.
    pub(super) machine: String,
    /// `run -- COMMAND`: the command and its arms against the baseline.
    pub(super) command: String,
    /// `run --sweep`: the speedup by step, the efficiency, the knees.
    pub(super) sweep: String,
    /// What is wrong with it ("INCOMPLETE", "FAILED: cv-bar"), or "passed".
    pub(super) checks: Vec<String>,
}

/// The wide view's columns, one per field of [`HostRow`].
const WIDE_HEADER: [&str; 16] = [
    "file",
    "host",
    "CPU",
    "cores/threads",
    "hypervisor",
    "gate",
    "one-per-core",
    "sibling-packed",
    "change",
    "sibling map",
    "classes",
    "observed",
    "machine",
    "command",
    "sweep",
    "checks",
];

impl HostRow {
    /// The row as the wide view's cells, in [`WIDE_HEADER`]'s order.
    fn wide(self) -> [String; 16] {
        [
            self.file,
            self.host,
            self.model,
            self.cores_threads,
            self.hypervisor,
            self.gate,
            self.one_per_core,
            self.packed,
            self.change,
            self.map,
            self.classes,
            self.observed,
            self.machine,
            self.command,
            self.sweep,
            self.checks.join("; "),
        ]
    }
}

pub(super) fn row(host: &HostSummary) -> HostRow {
    let dash = || DASH.to_string();
    let cost = |arm: Arm| match host.arms().iter().find(|a| a.arm == arm) {
        Some(a) => format!(
            "{} {} (CV {:.2} %, n={}){}",
            sig4(a.cost.median),
            a.clock.as_str(),
            Fixed(a.cost.cv * 100.0),
            a.cost.reps,
            if a.quotable { "" } else { " not quotable" }
        ),
        None => dash(),
    };
    // An invalid `observe` has no failed check to name: it is "INVALID" alone.
    let mut checks: Vec<String> = [
        (host.complete, "INCOMPLETE"),
        (!host.ungated(), "UNGATED"),
        (host.valid() != Some(false), "INVALID"),
    ]
    .into_iter()
    .filter(|(holds, _)| !holds)
    .map(|(_, mark)| mark.to_string())
    .collect();
    if !host.failed_checks().is_empty() {
        let names: Vec<String> = host.failed_checks().iter().map(|c| c.to_string()).collect();
        checks.push(format!("FAILED: {}", names.join(", ")));
    } else if host.valid() != Some(false) {
        checks.push("passed".into());
    }
    HostRow {
        file: host.file.clone(),
        host: host.host.clone().unwrap_or_else(dash),
        model: host.model.clone().unwrap_or_else(|| "unknown".into()),
        cores_threads: match (host.cores, host.cpus) {
            (Some(cores), Some(cpus)) => format!("{cores}/{cpus}"),
            _ => dash(),
        },
        hypervisor: host.hypervisor.clone().unwrap_or_else(|| "none".into()),
        gate: match host.verdict() {
            Some(verdict) => match host.penalty().and_then(GatePenalty::text) {
                Some(penalty) => format!("{} {penalty}", verdict.as_str()),
                None => verdict.as_str().to_string(),
            },
            None => "not run".into(),
        },
        one_per_core: cost(Arm::OnePerCore),
        packed: cost(Arm::SiblingPacked),
        change: host
            .change_vs_one_per_core()
            .map_or_else(dash, percent_change),
        map: match host.map() {
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
        classes: host.hybrid().map_or_else(dash, |h| {
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
        observed: host.observe().map_or_else(dash, |o| {
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
        machine: host.machine().map_or_else(dash, MachineShape::to_string),
        command: host.command().map_or_else(dash, str::to_string),
        sweep: host.sweep().map_or_else(dash, |sweep| {
            let curve: Vec<String> = sweep
                .speedups
                .iter()
                .map(|(k, s)| format!("{k} {:.2}×", Fixed(*s)))
                .collect();
            let knees: Vec<String> = sweep
                .knees
                .iter()
                .map(|(k, added)| format!("knee at {k}: {added}"))
                .collect();
            format!(
                "{}: {}; {} of the ceiling; {}",
                sweep.order,
                curve.join(", "),
                sweep
                    .efficiency
                    .map_or_else(dash, |e| format!("{:.0} %", e * 100.0)),
                if knees.is_empty() {
                    "no knee".into()
                } else {
                    knees.join(", ")
                }
            )
        }),
        checks,
    }
}

/// The hosts table. The wide view has a column per finding; the default
/// one names the host and its CPU in one cell, puts the gate's verdict and
/// what each file found in one "result" cell, a line a finding, leaves the
/// core counts and the hypervisor out, and gives each mark of the checks
/// its own line. Each of those lines is one of the cell's lines
/// ([`Grid::push_lines`]), so a line break from a file (in a host name, a
/// command) is escaped, never one of them.
pub fn blocks(hosts: &[HostSummary], view: &View) -> Blocks {
    let mut table = Grid::default();
    if view.wide {
        table.push(WIDE_HEADER);
        for host in hosts {
            table.push(row(host).wide());
        }
    } else {
        table.push(["file", "host, CPU", "result", "checks"]);
        for host in hosts {
            let row = row(host);
            let gate = host.verdict().map(|_| row.gate.as_str());
            let findings: Vec<String> = [
                ("gate", gate.unwrap_or(DASH)),
                ("one-per-core", &row.one_per_core),
                ("sibling-packed", &row.packed),
                ("change", &row.change),
                ("sibling map", &row.map),
                ("classes", &row.classes),
                ("observed", &row.observed),
                ("machine", &row.machine),
                ("command", &row.command),
                ("sweep", &row.sweep),
            ]
            .into_iter()
            .filter(|(_, finding)| *finding != DASH)
            .map(|(name, finding)| format!("{name}: {finding}"))
            .collect();
            table.push_lines([
                vec![row.file.clone()],
                vec![row.host.clone(), row.model.clone()],
                if findings.is_empty() {
                    vec![DASH.into()]
                } else {
                    findings
                },
                row.checks,
            ]);
        }
    }
    let mut blocks = Blocks::new();
    blocks.table(table, "no host to compare");
    blocks
}

/// The hosts table as the terminal shows it ([`blocks`]).
pub fn render(hosts: &[HostSummary], view: &View) -> String {
    blocks(hosts, view).to_terminal(view)
}
