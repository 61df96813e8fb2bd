//! `report --fleet --json` and `--csv`: one line or row per host and kind.

use super::{Fleet, FleetRow};
use crate::report::compare::PenaltyCells;
use crate::report::csv::{header, opt, quoted, rows};
use crate::saved::DocumentKind;
use anyhow::Result;
use serde::Serialize;
use std::sync::LazyLock;

/// `--json`: one line per row (JSON lines), each a whole document.
pub fn json_lines(fleet: &Fleet) -> Result<String> {
    let mut out = String::new();
    for row in &fleet.rows {
        out.push_str(&serde_json::to_string(row)?);
        out.push('\n');
    }
    Ok(out)
}

/// A row of `report --fleet --csv` up to its `penalty`: numbers
/// unformatted (floats as Rust prints them), text quoted ([`quoted`]).
#[derive(Default, Serialize)]
struct CsvHead {
    host: String,
    file: String,
    line: Option<usize>,
    /// The row's [`Status`](super::Status), as serde spells it (always
    /// there; an `Option` so that the header of no row has a default).
    status: Option<super::Status>,
    reason: String,
    kind: Option<DocumentKind>,
    verdict: String,
    penalty: String,
}

/// The rest of a row, after its [`PenaltyCells`]; lists joined with ";".
#[derive(Default, Serialize)]
struct CsvTail {
    model: String,
    hypervisor: String,
    tool_version: String,
    cpus: Option<usize>,
    cores: Option<usize>,
    map_verdict: &'static str,
    published_map: String,
    measured_map: String,
    outliers: String,
    complete: Option<bool>,
    valid: Option<bool>,
    gated: Option<bool>,
    failed_checks: String,
    notes: String,
}

/// The columns of `report --fleet --csv`: the host, its file, status,
/// kind, verdict and penalty, the [`PenaltyCells`], then the rest.
pub static CSV_HEADER: LazyLock<String> = LazyLock::new(header::<(CsvHead, PenaltyCells, CsvTail)>);

/// One CSV row per host and kind, numbers unformatted, text quoted; lists
/// joined with ";".
pub fn csv(fleet: &Fleet) -> String {
    let text = |v: Option<&str>| v.map(quoted).unwrap_or_default();
    rows(fleet.rows.iter().map(FleetRow::flat).map(|row| {
        let checks: Vec<String> = row.failed_checks.iter().map(|c| c.to_string()).collect();
        let map = row.map;
        let head = CsvHead {
            host: quoted(row.host),
            file: text(row.source.map(|s| s.file.as_str())),
            line: row.source.and_then(|s| s.line),
            status: Some(row.status),
            reason: text(row.reason),
            kind: row.kind,
            verdict: text(row.verdict),
            penalty: opt(row.penalty.value),
        };
        let tail = CsvTail {
            model: text(row.model),
            hypervisor: text(row.hypervisor),
            tool_version: text(row.tool_version),
            cpus: row.cpus,
            cores: row.cores,
            map_verdict: map.map(|m| m.verdict.as_str()).unwrap_or_default(),
            published_map: text(map.map(|m| m.published.as_str())),
            measured_map: text(map.map(|m| m.measured.as_str())),
            outliers: quoted(&row.outliers.join(";")),
            complete: row.complete,
            valid: row.valid,
            gated: row.gated,
            failed_checks: quoted(&checks.join(";")),
            notes: quoted(&row.notes.join(";")),
        };
        (head, row.penalty.csv_cells(), tail)
    }))
}
