//! `report --fleet`: many hosts' results summed up. How many hosts said
//! what (per study), which CPU models and hypervisors they are, which are
//! outliers, which sent nothing usable; then one row per host.
//!
//! The input is read by [`crate::saved::fleet`]; each document is
//! summarised by [`compare::summarise`], as `report A.json B.json` does.
//! A host that sent documents of several kinds (a gate and a pairs search)
//! has one row per kind, and one line per kind in `--json`; every count is
//! of hosts.

use crate::judge::checks::CheckName;
use crate::judge::fleet::penalty_outliers;
use crate::report::compare::{self, HostSummary, SiblingMaps};
use crate::report::csv::{opt, quoted};
use crate::report::table::fit;
use crate::report::units::{count, percent_change};
use crate::report::view::View;
use crate::saved::fleet::{FleetHost, Origin, fold_host_list, natural};
use crate::saved::{DocumentKind, Evidence, SavedDocument};
use anyhow::Result;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;
use std::path::Path;
use tabled::builder::Builder;
use tabled::settings::Alignment;
use tabled::settings::object::Columns;

pub use crate::saved::fleet::parse_host_list;

/// What `report --fleet` is told besides its inputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FleetOptions {
    /// `--hosts`, expanded: the hosts that should have answered. Those
    /// without a line are missing.
    pub expected_hosts: Vec<String>,
}

/// What the fleet report keeps of one document: its summary, not its
/// samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    summary: HostSummary,
    hypervisor: String,
}

/// Summarises one document as it is read (the `keep` of
/// [`crate::saved::fleet::read`]).
pub fn answer(origin: &Origin, document: SavedDocument) -> Answer {
    let summary = compare::summarise(Path::new(&origin.to_string()), &document);
    let hypervisor = hypervisor_label(summary.hypervisor.as_deref(), evidence(&document));
    Answer {
        summary,
        hypervisor,
    }
}

fn evidence(document: &SavedDocument) -> &Evidence {
    match document {
        SavedDocument::Gate(gate) => &gate.evidence,
        SavedDocument::Run(run) => &run.evidence,
        SavedDocument::Pairs(pairs) => &pairs.evidence,
        SavedDocument::Hybrid(hybrid) => &hybrid.evidence,
        SavedDocument::Observe(observe) => &observe.evidence,
    }
}

/// The hypervisor by name as CPUID gives it ("KVM", "QEMU TCG"), else by
/// its CPUID signature; "none" when the CPU said there is none (the CPUID
/// hypervisor bit or the cpuinfo flag clear); "unknown" when nothing was
/// recorded either way (an Arm host, or `--no-cpuid`).
fn hypervisor_label(signature: Option<&str>, evidence: &Evidence) -> String {
    match (signature, &evidence.cpuid_hypervisor_name) {
        (Some(_), Some(name)) => name.clone(),
        (Some(signature), None) => signature.to_string(),
        (None, _)
            if evidence.cpuid_hypervisor_bit == Some(false)
                || evidence.cpuinfo_hypervisor_flag == Some(false) =>
        {
            "none".into()
        }
        (None, _) => "unknown".into(),
    }
}

/// Whether a host's row holds a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// A document of the row's kind.
    Ok,
    /// Lines or an input, but no document that parses.
    Broken,
    /// Named by `--hosts`, and no line at all.
    Missing,
}

/// One host's result of one kind, or a host without one: a line of
/// `report --fleet --json`, a row of its CSV and table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FleetRow {
    pub host: String,
    /// Where the document (or the reason) was read; null when missing.
    pub source: Option<Origin>,
    pub status: Status,
    /// Why a broken or missing host has no result.
    pub reason: Option<String>,
    pub kind: Option<DocumentKind>,
    /// gate (and run): the gate's verdict, "not-run" when a run skipped it;
    /// pairs: the sibling maps' verdict; hybrid: the classes' verdict;
    /// observe: "reconciled" or "not-reconciled".
    pub verdict: Option<String>,
    /// The gate's paired penalty (a fraction), when measured.
    pub penalty: Option<f64>,
    pub model: Option<String>,
    /// The hypervisor's name ("KVM"), or its CPUID signature; "none" on
    /// bare metal, "unknown" when not recorded.
    pub hypervisor: Option<String>,
    pub cpus: Option<usize>,
    pub cores: Option<usize>,
    /// pairs: the published and measured sibling maps.
    pub map: Option<SiblingMaps>,
    /// Why the row is flagged: a penalty far from its CPU model's, sibling
    /// maps that differ, an incomplete or invalid result, failed checks.
    pub outliers: Vec<String>,
    pub complete: Option<bool>,
    pub valid: Option<bool>,
    pub gated: Option<bool>,
    pub failed_checks: Vec<CheckName>,
    /// "replaced 2 earlier": the host sent this kind of document 3 times,
    /// this is the last; "1 unreadable line": a line that started like a
    /// document did not parse.
    pub notes: Vec<String>,
}

impl FleetRow {
    fn without_result(
        host: String,
        status: Status,
        source: Option<Origin>,
        reason: String,
    ) -> Self {
        FleetRow {
            host,
            source,
            status,
            reason: Some(reason),
            kind: None,
            verdict: None,
            penalty: None,
            model: None,
            hypervisor: None,
            cpus: None,
            cores: None,
            map: None,
            outliers: Vec::new(),
            complete: None,
            valid: None,
            gated: None,
            failed_checks: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn of(host: &str, source: Origin, answer: Answer) -> FleetRow {
        let Answer {
            summary,
            hypervisor,
        } = answer;
        let verdict = match summary.kind {
            DocumentKind::Gate | DocumentKind::Run => Some(
                summary
                    .verdict
                    .map_or("not-run", |v| v.as_str())
                    .to_string(),
            ),
            DocumentKind::Pairs => summary.map.as_ref().map(|m| m.verdict.as_str().to_string()),
            DocumentKind::Hybrid => summary
                .hybrid
                .as_ref()
                .map(|h| h.classes.as_str().to_string()),
            DocumentKind::Observe => summary.observe.as_ref().map(|o| {
                if o.reconciled {
                    "reconciled"
                } else {
                    "not-reconciled"
                }
                .to_string()
            }),
        };
        let mut outliers = Vec::new();
        if let Some(map) = &summary.map
            && (map.verdict == crate::judge::pairs::MapVerdict::Differ
                || map.measured != map.published)
        {
            outliers.push(format!(
                "sibling maps differ: measured {}, published {}",
                map.measured, map.published
            ));
        }
        for (holds, what) in [
            (summary.complete, "incomplete: a signal stopped it"),
            (summary.valid, "invalid: it failed its validity rule"),
            (
                summary.gated,
                "ungated: run with --skip-gate, the gate not physical",
            ),
        ] {
            if !holds {
                outliers.push(what.to_string());
            }
        }
        if !summary.failed_checks.is_empty() {
            let names: Vec<String> = summary
                .failed_checks
                .iter()
                .map(|c| c.to_string())
                .collect();
            outliers.push(format!("failed checks: {}", names.join(", ")));
        }
        FleetRow {
            host: host.to_string(),
            source: Some(source),
            status: Status::Ok,
            reason: None,
            kind: Some(summary.kind),
            verdict,
            penalty: summary.penalty,
            model: summary.model,
            hypervisor: Some(hypervisor),
            cpus: summary.cpus,
            cores: summary.cores,
            map: summary.map,
            outliers,
            complete: Some(summary.complete),
            valid: Some(summary.valid),
            gated: Some(summary.gated),
            failed_checks: summary.failed_checks,
            notes: Vec::new(),
        }
    }

    /// The study a row's verdict counts under (a run's gate is a gate),
    /// with its place in the counts.
    fn study(&self) -> Option<(usize, &'static str)> {
        Some(match self.kind? {
            DocumentKind::Gate | DocumentKind::Run => (0, "gate"),
            DocumentKind::Pairs => (1, "pairs map"),
            DocumentKind::Hybrid => (2, "hybrid classes"),
            DocumentKind::Observe => (3, "observe"),
        })
    }
}

/// Hosts by what they said in one study.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tally {
    pub study: &'static str,
    pub verdict: String,
    pub hosts: usize,
    /// Of them, hosts with an outlier or a flag.
    pub flagged: usize,
}

/// The whole fleet.
#[derive(Clone, Debug, PartialEq)]
pub struct Fleet {
    /// Hosts, by name (`node2` before `node10`), each kind of a host a row.
    pub rows: Vec<FleetRow>,
    /// Distinct hosts, with a result or not.
    pub hosts: usize,
    pub answered: usize,
    pub broken: usize,
    pub missing: usize,
    /// Hosts that answered though `--hosts` does not name them.
    pub unexpected: usize,
    pub verdicts: Vec<Tally>,
    /// Hosts per CPU model ("unknown" when not recorded), most first.
    pub models: Vec<(String, usize)>,
    /// Hosts per hypervisor, most first.
    pub hypervisors: Vec<(String, usize)>,
}

impl Fleet {
    /// Sums up what the hosts sent, against the hosts expected.
    pub fn of(sent: Vec<FleetHost<Answer>>, options: &FleetOptions) -> Fleet {
        let mut rows = Vec::new();
        let mut seen = HashSet::new();
        for host in sent {
            seen.insert(host.host.clone());
            if let Some(broken) = host.broken {
                rows.push(FleetRow::without_result(
                    host.host,
                    Status::Broken,
                    Some(broken.source),
                    broken.reason,
                ));
                continue;
            }
            for (i, received) in host.documents.into_iter().enumerate() {
                let mut row = FleetRow::of(&host.host, received.source, received.document);
                if received.replaced > 0 {
                    row.notes
                        .push(format!("replaced {} earlier", received.replaced));
                }
                if i == 0 && host.unreadable > 0 {
                    row.notes.push(count(host.unreadable, "unreadable line"));
                }
                rows.push(row);
            }
        }
        let expected: HashSet<&str> = options.expected_hosts.iter().map(String::as_str).collect();
        let unexpected = if expected.is_empty() {
            0
        } else {
            seen.iter()
                .filter(|h| !expected.contains(h.as_str()))
                .count()
        };
        for host in &options.expected_hosts {
            if !seen.contains(host) {
                rows.push(FleetRow::without_result(
                    host.clone(),
                    Status::Missing,
                    None,
                    "no line from this host".into(),
                ));
            }
        }
        rows.sort_by(|a, b| {
            natural(&a.host, &b.host).then_with(|| kind_rank(a.kind).cmp(&kind_rank(b.kind)))
        });
        flag_penalties(&mut rows);

        let mut by_status: HashMap<&str, Status> = HashMap::new();
        for row in &rows {
            by_status.entry(&row.host).or_insert(row.status);
        }
        let tally = |status| by_status.values().filter(|s| **s == status).count();
        let (answered, broken, missing) = (
            tally(Status::Ok),
            tally(Status::Broken),
            tally(Status::Missing),
        );
        Fleet {
            verdicts: verdicts(&rows),
            models: per_host(&rows, |r| r.model.clone()),
            hypervisors: per_host(&rows, |r| r.hypervisor.clone()),
            hosts: by_status.len(),
            answered,
            broken,
            missing,
            unexpected,
            rows,
        }
    }
}

/// Kinds in the order a host's rows are shown: the gate first.
fn kind_rank(kind: Option<DocumentKind>) -> usize {
    match kind {
        Some(DocumentKind::Gate) => 0,
        Some(DocumentKind::Run) => 1,
        Some(DocumentKind::Pairs) => 2,
        Some(DocumentKind::Hybrid) => 3,
        Some(DocumentKind::Observe) => 4,
        None => 5,
    }
}

/// The row of a host that the gate counts come from: its gate document,
/// else its run's gate.
fn gate_rows(rows: &[FleetRow]) -> Vec<usize> {
    let mut chosen: Vec<usize> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if row.study().is_none_or(|(rank, _)| rank != 0) {
            continue;
        }
        match chosen.last() {
            // Rows are sorted by host, gate before run: the first one wins.
            Some(&last) if rows[last].host == row.host => {}
            _ => chosen.push(i),
        }
    }
    chosen
}

/// Flags the penalties far from their CPU model's ([`penalty_outliers`]),
/// over one penalty per host.
fn flag_penalties(rows: &mut [FleetRow]) {
    let measured: Vec<usize> = gate_rows(rows)
        .into_iter()
        .filter(|&i| rows[i].model.is_some() && rows[i].penalty.is_some())
        .collect();
    let penalties: Vec<(&str, f64)> = measured
        .iter()
        .filter_map(|&i| Some((rows[i].model.as_deref()?, rows[i].penalty?)))
        .collect();
    let verdicts = penalty_outliers(&penalties);
    for (&i, outlier) in measured.iter().zip(verdicts) {
        if let (Some(outlier), Some(penalty)) = (outlier, rows[i].penalty) {
            rows[i].outliers.insert(
                0,
                format!(
                    "penalty {} is far from the median {} of the {} hosts of its CPU model \
                     (more than {:.1} points off)",
                    percent_change(penalty),
                    percent_change(outlier.median),
                    outlier.peers,
                    outlier.bound * 100.0
                ),
            );
        }
    }
}

/// Hosts per study and verdict; a host with a gate and a run counts once,
/// by its gate.
fn verdicts(rows: &[FleetRow]) -> Vec<Tally> {
    let gates: HashSet<usize> = gate_rows(rows).into_iter().collect();
    // A host has one row per kind, and one gate row is chosen: counting
    // rows counts hosts.
    let mut tallies: BTreeMap<(usize, &'static str, String), (usize, usize)> = BTreeMap::new();
    for (i, row) in rows.iter().enumerate() {
        let (Some((rank, study)), Some(verdict)) = (row.study(), &row.verdict) else {
            continue;
        };
        if rank == 0 && !gates.contains(&i) {
            continue;
        }
        let (hosts, flagged) = tallies.entry((rank, study, verdict.clone())).or_default();
        *hosts += 1;
        *flagged += usize::from(!row.outliers.is_empty());
    }
    tallies
        .into_iter()
        .map(|((_, study, verdict), (hosts, flagged))| Tally {
            study,
            verdict,
            hosts,
            flagged,
        })
        .collect()
}

/// Hosts per value of `field` (taken from a host's first row that has
/// one; "unknown" when none has), most first, then by name.
fn per_host(
    rows: &[FleetRow],
    field: impl Fn(&FleetRow) -> Option<String>,
) -> Vec<(String, usize)> {
    let mut value_of: HashMap<&str, Option<String>> = HashMap::new();
    for row in rows.iter().filter(|r| r.status == Status::Ok) {
        let value = value_of.entry(&row.host).or_default();
        if value.is_none() {
            *value = field(row);
        }
    }
    let mut counts: HashMap<String, usize> = HashMap::new();
    for value in value_of.into_values() {
        *counts
            .entry(value.unwrap_or_else(|| "unknown".into()))
            .or_default() += 1;
    }
    let mut counts: Vec<(String, usize)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts
}

/// `builder`'s table with the numbers of `right_aligned` columns to the
/// right, [`fit`] to the view.
fn fitted(builder: Builder, right_aligned: &[usize], view: &View) -> String {
    let mut table = builder.build();
    for &column in right_aligned {
        table.modify(Columns::one(column), Alignment::right());
    }
    fit(table, view)
}

/// The title line: "12 hosts: 9 with a result, 2 broken, 1 missing".
pub fn title(fleet: &Fleet) -> String {
    let mut line = format!(
        "{}: {} with a result, {} broken, {} missing",
        count(fleet.hosts, "host"),
        fleet.answered,
        fleet.broken,
        fleet.missing
    );
    if fleet.unexpected > 0 {
        let _ = write!(line, " ({} not in --hosts)", fleet.unexpected);
    }
    line
}

/// The human view: the title, the counts, the outliers, the hosts without
/// a result, then one row per host.
pub fn render(fleet: &Fleet, view: &View) -> String {
    let mut out = title(fleet) + "\n";
    if !fleet.verdicts.is_empty() {
        let mut table = Builder::default();
        table.push_record(["study", "verdict", "hosts", "flagged"]);
        for tally in &fleet.verdicts {
            table.push_record([
                tally.study.to_string(),
                tally.verdict.clone(),
                tally.hosts.to_string(),
                tally.flagged.to_string(),
            ]);
        }
        let _ = write!(out, "\n{}\n", fitted(table, &[2, 3], view));
    }
    for (heading, counts) in [
        ("CPU model", &fleet.models),
        ("hypervisor", &fleet.hypervisors),
    ] {
        if counts.is_empty() {
            continue;
        }
        let mut table = Builder::default();
        table.push_record([heading, "hosts"]);
        for (value, hosts) in counts {
            table.push_record([value.clone(), hosts.to_string()]);
        }
        let _ = write!(out, "\n{}\n", fitted(table, &[1], view));
    }

    let flagged: Vec<&FleetRow> = fleet
        .rows
        .iter()
        .filter(|r| !r.outliers.is_empty())
        .collect();
    if !flagged.is_empty() {
        let hosts: HashSet<&str> = flagged.iter().map(|r| r.host.as_str()).collect();
        let _ = writeln!(out, "\nOutliers and flags ({})", count(hosts.len(), "host"));
        for row in flagged {
            let kind = row.kind.map(|k| k.to_string()).unwrap_or_default();
            for why in &row.outliers {
                let line = format!("  {} {kind}: {why}", row.host);
                let _ = writeln!(out, "{}", view.wrap(&line, 4));
            }
        }
    }
    let missing: Vec<String> = fleet
        .rows
        .iter()
        .filter(|r| r.status == Status::Missing)
        .map(|r| r.host.clone())
        .collect();
    if !missing.is_empty() {
        let line = format!("Missing ({}): {}", missing.len(), fold_host_list(&missing));
        let _ = write!(out, "\n{}\n", view.wrap(&line, 2));
    }
    let broken: Vec<&FleetRow> = fleet
        .rows
        .iter()
        .filter(|r| r.status == Status::Broken)
        .collect();
    if !broken.is_empty() {
        let _ = writeln!(out, "\nBroken ({})", broken.len());
        for row in broken {
            let line = format!(
                "  {}: {}",
                row.host,
                row.reason.as_deref().unwrap_or_default()
            );
            let _ = writeln!(out, "{}", view.wrap(&line, 4));
        }
    }

    if !fleet.rows.is_empty() {
        let dash = || "—".to_string();
        let mut table = Builder::default();
        table.push_record([
            "host",
            "kind",
            "CPU model",
            "hypervisor",
            "verdict",
            "marks",
        ]);
        for row in &fleet.rows {
            let verdict = match row.status {
                Status::Ok => format!(
                    "{}{}",
                    row.verdict.as_deref().unwrap_or("—"),
                    row.penalty
                        .map(|p| format!(" {}", percent_change(p)))
                        .unwrap_or_default()
                ),
                Status::Broken => "BROKEN".into(),
                Status::Missing => "MISSING".into(),
            };
            table.push_record([
                row.host.clone(),
                row.kind.map_or_else(dash, |k| k.to_string()),
                row.model.clone().unwrap_or_else(dash),
                row.hypervisor.clone().unwrap_or_else(dash),
                verdict,
                marks(row),
            ]);
        }
        let _ = write!(out, "\n{}\n", fitted(table, &[], view));
    }
    out
}

/// A row's marks, short: what is wrong with it, or "ok".
fn marks(row: &FleetRow) -> String {
    if row.status != Status::Ok {
        return "—".into();
    }
    let mut marks: Vec<String> = [
        (row.complete, "INCOMPLETE"),
        (row.valid, "INVALID"),
        (row.gated, "UNGATED"),
    ]
    .into_iter()
    .filter(|(holds, _)| *holds == Some(false))
    .map(|(_, mark)| mark.to_string())
    .collect();
    if !row.failed_checks.is_empty() {
        marks.push("FAILED checks".into());
    }
    if row.outliers.iter().any(|o| o.starts_with("penalty")) {
        marks.push("OUTLIER penalty".into());
    }
    if row.outliers.iter().any(|o| o.starts_with("sibling maps")) {
        marks.push("maps differ".into());
    }
    marks.extend(row.notes.iter().cloned());
    if marks.is_empty() {
        "ok".into()
    } else {
        marks.join("; ")
    }
}

/// `--json`: one line per row (JSON lines), each a whole document.
pub fn json_lines(fleet: &Fleet) -> Result<String> {
    let mut out = String::new();
    for row in &fleet.rows {
        out.push_str(&serde_json::to_string(row)?);
        out.push('\n');
    }
    Ok(out)
}

/// The columns of `report --fleet --csv`.
pub const CSV_HEADER: &str = "host,file,line,status,reason,kind,verdict,penalty,model,hypervisor,\
cpus,cores,map_verdict,published_map,measured_map,outliers,complete,valid,gated,failed_checks,notes";

/// One CSV row per host and kind, numbers unformatted, text quoted; lists
/// joined with ";".
pub fn csv(fleet: &Fleet) -> String {
    let text = |v: Option<&str>| v.map(quoted).unwrap_or_default();
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for row in &fleet.rows {
        let checks: Vec<String> = row.failed_checks.iter().map(|c| c.to_string()).collect();
        let map = row.map.as_ref();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            quoted(&row.host),
            text(row.source.as_ref().map(|s| s.file.as_str())),
            opt(row.source.as_ref().and_then(|s| s.line)),
            match row.status {
                Status::Ok => "ok",
                Status::Broken => "broken",
                Status::Missing => "missing",
            },
            text(row.reason.as_deref()),
            opt(row.kind),
            text(row.verdict.as_deref()),
            opt(row.penalty),
            text(row.model.as_deref()),
            text(row.hypervisor.as_deref()),
            opt(row.cpus),
            opt(row.cores),
            map.map(|m| m.verdict.as_str()).unwrap_or_default(),
            text(map.map(|m| m.published.as_str())),
            text(map.map(|m| m.measured.as_str())),
            quoted(&row.outliers.join(";")),
            opt(row.complete),
            opt(row.valid),
            opt(row.gated),
            quoted(&checks.join(";")),
            quoted(&row.notes.join(";")),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_signature_is_bare_metal_only_when_the_cpu_says_so() {
        let evidence = |bit, flag| Evidence {
            cpuid_hypervisor_bit: bit,
            cpuid_hypervisor_signature: None,
            cpuid_hypervisor_name: None,
            cpuinfo_hypervisor_flag: flag,
            dmi_vendor: None,
            dmi_product: None,
            crosscheck: None,
            cpuid_absent: None,
            devicetree_compatible: None,
        };
        assert_eq!(
            hypervisor_label(Some("KVMKVMKVM"), &evidence(Some(true), None)),
            "KVMKVMKVM"
        );
        let named = Evidence {
            cpuid_hypervisor_name: Some("KVM".into()),
            ..evidence(Some(true), None)
        };
        assert_eq!(hypervisor_label(Some("KVMKVMKVM"), &named), "KVM");
        assert_eq!(hypervisor_label(None, &evidence(Some(false), None)), "none");
        assert_eq!(hypervisor_label(None, &evidence(None, Some(false))), "none");
        assert_eq!(hypervisor_label(None, &evidence(None, None)), "unknown");
    }
}
