//! `report A.json B.json …`: one row per host, like the table of all the
//! hosts of a study. Reads only the headers of each file (the raw samples are
//! skipped by the parser), so hundreds of files take well under a second.

use crate::judge::checks::{Check, CheckStatus};
use crate::judge::gate::Verdict;
use crate::measure::ClockKind;
use crate::probe::Summary;
use crate::report::units::{percent_change, sig4};
use crate::results::{ArmStats, RESULT_SCHEMA_VERSION};
use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use std::path::Path;
use tabled::settings::Style;
use tabled::{Table, Tabled};

/// The part of a saved run the comparison needs.
#[derive(Debug, Deserialize)]
pub struct RunHeader {
    pub schema_version: u32,
    pub kind: String,
    pub host: String,
    pub model: Option<String>,
    pub topology: Summary,
    pub gated: bool,
    pub gate: Option<GateHeader>,
    pub complete: bool,
    pub valid: bool,
    pub arms: Vec<ArmStats>,
    pub checks: Vec<Check>,
}

#[derive(Debug, Deserialize)]
pub struct GateHeader {
    pub verdict: Verdict,
    pub penalty: Option<f64>,
}

#[derive(Deserialize)]
struct VersionProbe {
    schema_version: Option<u32>,
    kind: Option<String>,
}

/// Checks a document's kind and schema version; the error names the file
/// and the fix.
fn check_version(path: &Path, kind: Option<&str>, version: Option<u32>) -> Result<()> {
    match (kind, version) {
        (Some("run"), Some(RESULT_SCHEMA_VERSION)) => Ok(()),
        (Some("run"), Some(v)) => Err(anyhow!(
            "{}: schema version {v}, this placement-study reads version {RESULT_SCHEMA_VERSION}; \
             re-render it with the placement-study version that wrote it",
            path.display()
        )),
        (Some(other), _) => Err(anyhow!(
            "{}: a '{other}' result, not a run; `report` reads files written by `run --json`",
            path.display()
        )),
        (None, _) => Err(anyhow!(
            "{}: no \"kind\" field: not a file written by `placement-study run --json`",
            path.display()
        )),
    }
}

/// A saved document that says what it is.
pub trait Versioned {
    fn kind(&self) -> &str;
    fn schema_version(&self) -> u32;
}

impl Versioned for RunHeader {
    fn kind(&self) -> &str {
        &self.kind
    }
    fn schema_version(&self) -> u32 {
        self.schema_version
    }
}

impl Versioned for crate::results::RunResult {
    fn kind(&self) -> &str {
        &self.kind
    }
    fn schema_version(&self) -> u32 {
        self.schema_version
    }
}

/// Reads and parses a saved run. A file of another schema version or kind,
/// or a damaged one, gets a one-line error naming it.
pub fn load<T: serde::de::DeserializeOwned + Versioned>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))?;
    match serde_json::from_str::<T>(&text) {
        Ok(doc) => {
            check_version(path, Some(doc.kind()), Some(doc.schema_version()))?;
            Ok(doc)
        }
        Err(parse_error) => {
            let probe: VersionProbe = serde_json::from_str(&text).map_err(|e| {
                anyhow!(
                    "{}: not a placement-study JSON file ({e}); was it truncated?",
                    path.display()
                )
            })?;
            check_version(path, probe.kind.as_deref(), probe.schema_version)?;
            Err(anyhow!(
                "{}: damaged run file: {parse_error}",
                path.display()
            ))
        }
    }
}

/// One row of the hosts table (also the `report --json` form).
#[derive(Debug, Serialize, Tabled)]
pub struct HostRow {
    pub file: String,
    pub host: String,
    #[tabled(rename = "CPU")]
    pub model: String,
    #[tabled(rename = "cores/threads")]
    pub cores_threads: String,
    pub hypervisor: String,
    pub gate: String,
    #[tabled(rename = "one-per-core")]
    pub one_per_core: String,
    #[tabled(rename = "sibling-packed")]
    pub packed: String,
    pub change: String,
    pub checks: String,
}

fn arm_cost(header: &RunHeader, name: &str) -> Option<(f64, usize, f64, ClockKind, bool)> {
    let arm = header.arms.iter().find(|a| a.name == name)?;
    let cost = arm.cost.as_ref()?;
    Some((cost.median, cost.reps, cost.cv, arm.clock, arm.quotable))
}

/// Builds a host's row.
pub fn row(path: &Path, header: &RunHeader) -> HostRow {
    let fmt_cost = |name: &str| match arm_cost(header, name) {
        Some((median, reps, cv, clock, quotable)) => format!(
            "{} {} (CV {:.2} %, n={reps}){}",
            sig4(median),
            clock.as_str(),
            cv * 100.0,
            if quotable { "" } else { " not quotable" }
        ),
        None => "—".into(),
    };
    let change = match (
        arm_cost(header, "one-per-core"),
        arm_cost(header, "sibling-packed"),
    ) {
        (Some((base, ..)), Some((packed, ..))) => percent_change(packed / base - 1.0),
        _ => "—".into(),
    };
    let failed: Vec<&str> = header
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Failed)
        .map(|c| c.name.as_str())
        .collect();
    let mut checks = if failed.is_empty() {
        "passed".to_string()
    } else {
        format!("FAILED: {}", failed.join(", "))
    };
    if !header.valid {
        checks = format!("INVALID; {checks}");
    }
    if !header.gated {
        checks = format!("UNGATED; {checks}");
    }
    if !header.complete {
        checks = format!("INCOMPLETE; {checks}");
    }
    HostRow {
        file: path.display().to_string(),
        host: header.host.clone(),
        model: header.model.clone().unwrap_or_else(|| "unknown".into()),
        cores_threads: format!("{}/{}", header.topology.cores, header.topology.cpus),
        hypervisor: header
            .topology
            .hypervisor
            .clone()
            .unwrap_or_else(|| "none".into()),
        gate: match &header.gate {
            Some(g) => format!(
                "{}{}",
                g.verdict.as_str(),
                g.penalty
                    .map(|p| format!(" {}", percent_change(p)))
                    .unwrap_or_default()
            ),
            None => "not run".into(),
        },
        one_per_core: fmt_cost("one-per-core"),
        packed: fmt_cost("sibling-packed"),
        change,
        checks,
    }
}

/// The hosts table.
pub fn render(rows: &[HostRow]) -> String {
    Table::new(rows).with(Style::sharp()).to_string()
}
