//! `report --baseline … --csv`: one row per judged row of every new
//! document, through serde (the header is the row's field names).

use super::BaselineReport;
use crate::report::csv::{opt, quoted, rows};
use serde::Serialize;

/// One judged row. Text fields come quoted (CPU lists hold commas);
/// absent numbers are empty fields.
#[derive(Serialize, Default)]
struct ChangeRow {
    new_file: String,
    row: String,
    quantity: String,
    old_cpus: String,
    new_cpus: String,
    old_median: String,
    old_cv: String,
    old_n: String,
    new_median: String,
    new_cv: String,
    new_n: String,
    change: String,
    ci95_low: String,
    ci95_high: String,
    method: String,
    verdict: &'static str,
    reps_to_decide: String,
    threshold: f64,
}

/// The comparison's rows as CSV.
pub fn csv(report: &BaselineReport) -> String {
    rows(report.judged.iter().flat_map(|judged| {
        judged.rows.iter().map(|row| {
            let (old, new, ci95) = (row.old.as_ref(), row.new.as_ref(), row.change.ci95.as_ref());
            ChangeRow {
                new_file: quoted(&judged.new.file),
                row: quoted(&row.row),
                quantity: quoted(&row.quantity),
                old_cpus: row.old_cpus.as_deref().map(quoted).unwrap_or_default(),
                new_cpus: row.new_cpus.as_deref().map(quoted).unwrap_or_default(),
                old_median: opt(old.map(|s| s.median)),
                old_cv: opt(old.map(|s| s.cv)),
                old_n: opt(old.map(|s| s.reps)),
                new_median: opt(new.map(|s| s.median)),
                new_cv: opt(new.map(|s| s.cv)),
                new_n: opt(new.map(|s| s.reps)),
                change: opt(row.change.change),
                ci95_low: opt(ci95.map(|i| i.low)),
                ci95_high: opt(ci95.map(|i| i.high)),
                method: opt(row.change.method),
                verdict: row.change.verdict.into(),
                reps_to_decide: opt(row.change.reps_to_decide),
                threshold: report.threshold,
            }
        })
    }))
}
