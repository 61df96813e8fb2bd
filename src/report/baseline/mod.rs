//! `report --baseline OLD NEW…` and `--baseline NAME`: each new document
//! judged against a saved baseline of its kind. First whether the two
//! measured the same thing ([`Difference`]s: another workload or clock
//! refuses the comparison, another kernel or tool version is shown beside
//! it); then every row the two share ([`rows::Baselined`]), its change with
//! a distribution-free 95 % interval and its verdict
//! ([`crate::judge::baseline`]); then the verdicts that changed
//! ([`Finding`]s).
//!
//! The comparison is a document of its own (`--json`, its schema in
//! `schemas/baseline.schema.json`), drawn as blocks by [`view`], as CSV
//! rows by [`csv`], as metrics by [`crate::report::prom::baseline`] and as
//! a figure by [`crate::report::figure::baseline`].

pub mod csv;
pub mod rows;
pub mod view;

use crate::escape::escape_controls;
use crate::exit::{Outcome, UsageError};
use crate::judge::baseline::{BaselineVerdict, Change, judge_change};
use crate::judge::stats::{Spread, spread};
use crate::report::document;
use crate::report::table::cores;
use crate::saved::{DocumentHead, DocumentKind, RESULT_SCHEMA_VERSION, SavedDocument};
use crate::units::count;
use anyhow::Result;
use rows::{Fact, Row};
use serde::Serialize;

/// What a comparison is asked for, beside the documents.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BaselineRules {
    /// `--threshold`: a change within ±it is no change (0.05).
    pub threshold: f64,
    /// `--allow-different`: judge documents that measured different things.
    pub allow_different: bool,
    /// `--fail-on inconclusive`: an inconclusive comparison exits 5.
    pub fail_on_inconclusive: bool,
}

/// One document of a comparison: where it was read, and its head's facts.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Side {
    /// The file it was read from, or the named baseline / "this run".
    pub file: String,
    pub kind: DocumentKind,
    pub host: String,
    pub started_unix: Option<u64>,
    pub tool_version: String,
}

impl Side {
    fn of(file: &str, head: &DocumentHead) -> Side {
        Side {
            file: file.to_owned(),
            kind: head.kind,
            host: head.host.clone(),
            started_unix: head.started_unix,
            tool_version: head.tool_version.clone(),
        }
    }
}

/// Something the two documents differ in, beside their rows.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Difference {
    /// "workload", "clock", "kernel", "tool version", "CPUs of step 2".
    pub what: String,
    pub old: String,
    pub new: String,
    /// It makes the comparison meaningless: refused without
    /// `--allow-different`.
    pub decisive: bool,
}

/// A verdict that changed between the two, or a row or verdict only one
/// of them has.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    /// "gate", "class E", "row step 3".
    pub what: String,
    /// `None`: only the new document has it (it appeared).
    pub old: Option<String>,
    /// `None`: only the old document has it (it vanished).
    pub new: Option<String>,
}

/// One row both documents have, judged.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RowJudgement {
    pub row: String,
    pub quantity: String,
    /// The row's CPUs in each (they may differ: a difference names it).
    pub old_cpus: Option<String>,
    pub new_cpus: Option<String>,
    /// Median, CV, min, max and n of each side's repetitions; `None`
    /// under two.
    pub old: Option<Spread>,
    pub new: Option<Spread>,
    #[serde(flatten)]
    pub change: Change,
}

/// One new document judged against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Judged {
    pub new: Side,
    pub differences: Vec<Difference>,
    pub findings: Vec<Finding>,
    /// The regressed rows first, then the inconclusive, improved and
    /// unchanged, each group in the document's order.
    pub rows: Vec<RowJudgement>,
    pub verdict: BaselineVerdict,
}

/// The whole comparison: `report --baseline OLD NEW… --json`.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BaselineReport {
    pub schema_version: u32,
    /// Always "baseline".
    pub kind: &'static str,
    pub tool_version: String,
    /// How each change and its interval were found.
    #[schemars(extend("const" = METHOD))]
    pub method: &'static str,
    #[schemars(extend("exclusiveMinimum" = 0, "exclusiveMaximum" = 1))]
    pub threshold: f64,
    /// `--allow-different` was given.
    pub allow_different: bool,
    pub baseline: Side,
    pub judged: Vec<Judged>,
    /// The worst of the judged documents' verdicts.
    pub verdict: BaselineVerdict,
    /// The exit status it gives.
    #[schemars(extend("enum" = [Outcome::Success.exit_status(), Outcome::Undecided.exit_status(), Outcome::Regressed.exit_status()]))]
    pub exit_status: u8,
}

/// The method every report names.
pub const METHOD: &str = "hodges-lehmann";

impl BaselineReport {
    /// Judges each of `new` (named as read) against `old` (named `old_file`).
    pub fn judge(
        old_file: &str,
        old: &SavedDocument,
        new: &[(String, &SavedDocument)],
        rules: &BaselineRules,
    ) -> Result<BaselineReport> {
        let judged = new
            .iter()
            .map(|(file, document)| judge_one((old_file, old), (file, document), rules))
            .collect::<Result<Vec<_>>>()?;
        let verdict = judged
            .iter()
            .map(|j| j.verdict)
            .min()
            .unwrap_or(BaselineVerdict::NothingRegressed);
        Ok(BaselineReport {
            schema_version: RESULT_SCHEMA_VERSION,
            kind: "baseline",
            tool_version: env!("CARGO_PKG_VERSION").into(),
            method: METHOD,
            threshold: rules.threshold,
            allow_different: rules.allow_different,
            baseline: Side::of(old_file, old.head()),
            exit_status: outcome(verdict, rules.fail_on_inconclusive).exit_status(),
            judged,
            verdict,
        })
    }

    /// How the command that judged ends.
    pub fn outcome(&self, fail_on_inconclusive: bool) -> Outcome {
        outcome(self.verdict, fail_on_inconclusive)
    }
}

/// The outcome of a comparison whose verdict is `verdict`.
fn outcome(verdict: BaselineVerdict, fail_on_inconclusive: bool) -> Outcome {
    match verdict {
        BaselineVerdict::Regressed => Outcome::Regressed,
        BaselineVerdict::Inconclusive if fail_on_inconclusive => Outcome::Undecided,
        BaselineVerdict::Inconclusive | BaselineVerdict::NothingRegressed => Outcome::Success,
    }
}

/// The facts every document's head gives: shown beside the result when
/// they differ, never refusing it (another host, kernel or version is
/// often what is being tested).
fn head_facts(head: &DocumentHead) -> Vec<Fact> {
    let unknown = || "unknown".to_string();
    let topology = head.topology.as_ref().map_or_else(unknown, |summary| {
        format!("{}, {}", count(summary.cpus, "CPU"), cores(summary))
    });
    let kernel = head.environment.as_ref().and_then(|e| e.kernel.clone());
    [
        ("host", head.host.clone()),
        ("CPU model", head.model.clone().unwrap_or_else(unknown)),
        ("topology", topology),
        ("kernel", kernel.unwrap_or_else(unknown)),
        ("tool version", head.tool_version.clone()),
    ]
    .into_iter()
    .map(|(what, value)| Fact {
        what,
        value,
        decisive: false,
    })
    .collect()
}

/// One new document against the old: refused where they are of other
/// kinds, or (without `allow_different`) differ in a decisive fact.
fn judge_one(
    (old_file, old): (&str, &SavedDocument),
    (new_file, new): (&str, &SavedDocument),
    rules: &BaselineRules,
) -> Result<Judged> {
    let (old_doc, new_doc) = (document::of(old), document::of(new));
    let (old_kind, new_kind) = (old.head().kind, new.head().kind);
    let shown = |file: &str| escape_controls(file).into_owned();
    if old_kind != new_kind {
        return Err(UsageError(format!(
            "--baseline {}: a {old_kind} document, and {} is a {new_kind} document; a baseline \
             is judged against a new document of its own kind",
            shown(old_file),
            shown(new_file)
        ))
        .into());
    }
    let old_rows = old_doc.baseline_rows();
    if old_rows.is_empty() && old_doc.verdicts().is_empty() {
        return Err(UsageError(format!(
            "--baseline {}: a {old_kind} document measures nothing twice; a baseline is a gate, \
             run, pairs, latency or hybrid document (`run -- COMMAND` and `run --sweep` too)",
            shown(old_file)
        ))
        .into());
    }
    let differences = differences(
        [head_facts(old.head()), old_doc.facts()].concat(),
        [head_facts(new.head()), new_doc.facts()].concat(),
    );
    if let Some(refused) = differences.iter().find(|d| d.decisive)
        && !rules.allow_different
    {
        return Err(UsageError(format!(
            "--baseline {}: {} measured something else: its {} is {}, the baseline's {}; judge \
             like against like, or give --allow-different to judge them anyway",
            shown(old_file),
            shown(new_file),
            refused.what,
            escape_controls(&refused.new),
            escape_controls(&refused.old),
        ))
        .into());
    }
    let new_rows = new_doc.baseline_rows();
    let mut findings = verdict_findings(&old_doc.verdicts(), &new_doc.verdicts());
    let mut differences = differences;
    let mut rows = Vec::new();
    for old_row in &old_rows {
        match new_rows.iter().find(|row| row.name == old_row.name) {
            Some(new_row) => {
                if old_row.cpus != new_row.cpus {
                    differences.push(Difference {
                        what: format!("CPUs of {}", old_row.name),
                        old: old_row.cpus.clone().unwrap_or_default(),
                        new: new_row.cpus.clone().unwrap_or_default(),
                        decisive: false,
                    });
                }
                rows.push(judge_row(old_row, new_row, rules.threshold));
            }
            None => findings.push(Finding {
                what: format!("row {}", old_row.name),
                old: Some("measured".into()),
                new: None,
            }),
        }
    }
    findings.extend(
        new_rows
            .iter()
            .filter(|row| !old_rows.iter().any(|old| old.name == row.name))
            .map(|row| Finding {
                what: format!("row {}", row.name),
                old: None,
                new: Some("measured".into()),
            }),
    );
    // Stable: each verdict's rows keep the document's order.
    rows.sort_by_key(|row| row.change.verdict);
    let verdict = BaselineVerdict::of(rows.iter().map(|row| row.change.verdict));
    Ok(Judged {
        new: Side::of(new_file, new.head()),
        differences,
        findings,
        rows,
        verdict,
    })
}

/// Every fact of `old` and `new` (by name) whose values differ, or that
/// only one of them has.
fn differences(old: Vec<Fact>, new: Vec<Fact>) -> Vec<Difference> {
    let absent = || "not recorded".to_string();
    let mut out: Vec<Difference> = Vec::new();
    for fact in &old {
        let other = new.iter().find(|n| n.what == fact.what);
        if other.is_some_and(|n| n.value == fact.value) {
            continue;
        }
        out.push(Difference {
            what: fact.what.into(),
            old: fact.value.clone(),
            new: other.map_or_else(absent, |n| n.value.clone()),
            decisive: fact.decisive || other.is_some_and(|n| n.decisive),
        });
    }
    out.extend(
        new.iter()
            .filter(|fact| !old.iter().any(|o| o.what == fact.what))
            .map(|fact| Difference {
                what: fact.what.into(),
                old: absent(),
                new: fact.value.clone(),
                decisive: fact.decisive,
            }),
    );
    out
}

/// The verdicts that changed, appeared or vanished.
fn verdict_findings(old: &[(String, String)], new: &[(String, String)]) -> Vec<Finding> {
    let value = |list: &[(String, String)], what: &str| {
        list.iter()
            .find(|(name, _)| name == what)
            .map(|(_, v)| v.clone())
    };
    let mut names: Vec<&String> = old.iter().map(|(name, _)| name).collect();
    names.extend(
        new.iter()
            .map(|(name, _)| name)
            .filter(|name| !old.iter().any(|(o, _)| o == *name)),
    );
    names
        .into_iter()
        .filter_map(|what| {
            let (before, after) = (value(old, what), value(new, what));
            (before != after).then(|| Finding {
                what: what.clone(),
                old: before,
                new: after,
            })
        })
        .collect()
}

/// A row both have, judged at `threshold`.
fn judge_row(old: &Row, new: &Row, threshold: f64) -> RowJudgement {
    RowJudgement {
        row: old.name.clone(),
        quantity: old.quantity.clone(),
        old_cpus: old.cpus.clone(),
        new_cpus: new.cpus.clone(),
        old: spread(&old.values),
        new: spread(&new.values),
        change: judge_change(&old.values, &new.values, threshold),
    }
}

#[cfg(test)]
mod tests;
