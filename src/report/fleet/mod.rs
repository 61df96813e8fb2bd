//! `report --fleet`: many hosts' results summed up. How many hosts said
//! what (per study), which CPU models and hypervisors they are, which are
//! outliers, which sent nothing usable; then one row per host.
//!
//! The input is read by [`crate::fleet`]; each document is
//! summarised by its [`Summary::summary`](crate::report::document::Summary::summary), as `report A.json B.json` does.
//! A host that sent documents of several kinds (a gate and a pairs search)
//! has one row per kind, and one line per kind in `--json`; every count is
//! of hosts.

use crate::fleet::{Gathered, Origin, natural};
use crate::judge::checks::CheckName;
use crate::judge::fleet::{
    FleetFlag, HostPenalty, ResultFacts, penalty_outliers, result_flags, shape_outliers,
};
use crate::judge::pairs::MapVerdict;
use crate::report::compare::{Counted, GatePenalty, HostSummary, MachineShape, SiblingMaps};
use crate::report::document;
use crate::saved::{DocumentKind, Evidence, SavedDocument};
use crate::units::{count, percent_change};
use anyhow::Result;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

mod export;
mod view;

pub use export::{CSV_HEADER, csv, json_lines};
pub use view::{blocks, render, title};

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
    /// The placement-study version that wrote the document.
    tool_version: String,
}

/// Summarises one document as it is read (the `keep` of
/// [`crate::fleet::read`]).
pub fn answer(origin: &Origin, saved: SavedDocument) -> Answer {
    let document = document::of(&saved);
    let summary = document.summary(origin.to_string());
    let head = document.head();
    let hypervisor = hypervisor_label(summary.hypervisor.as_deref(), &head.evidence);
    Answer {
        summary,
        hypervisor,
        tool_version: head.tool_version.clone(),
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
#[derive(Clone, Debug, PartialEq)]
pub struct FleetRow {
    pub host: String,
    pub state: RowState,
}

/// What a host's row holds: a result, or why there is none.
#[derive(Clone, Debug, PartialEq)]
pub enum RowState {
    /// A document of one kind, summarised.
    Result(Box<FleetResult>),
    /// Lines or an input, but no document that parses.
    Broken {
        /// Where the lines were read.
        source: Origin,
        /// One line: the parse error, or the engine's message.
        reason: String,
    },
    /// Named by `--hosts`, and no line at all.
    Missing,
}

/// A host's document of one kind, as the fleet keeps it: its summary, not
/// its samples, and what the fleet found about it.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetResult {
    /// Where the document was read.
    pub source: Origin,
    pub summary: HostSummary,
    /// The hypervisor's name ("KVM"), or its CPUID signature; "none" on
    /// bare metal, "unknown" when not recorded.
    pub hypervisor: String,
    /// The placement-study version that wrote the document: a host left
    /// behind by an upgrade says so.
    pub tool_version: String,
    /// Why the row is flagged: a penalty or a shape far from its CPU
    /// model's, sibling maps that differ, an incomplete or invalid result,
    /// failed checks.
    pub outliers: Vec<FleetFlag>,
    /// "replaced 2 earlier": the host sent this kind of document 3 times,
    /// this is the last; "1 unreadable line": a line that started like a
    /// document did not parse.
    pub notes: Vec<String>,
}

/// Why a host named by `--hosts` has no row of a result.
const NO_LINE: &str = "no line from this host";

/// A row as `--json` and `--csv` write it: every field for every row, null
/// (or empty) where the row has no result. The fields are the format's.
#[derive(Serialize)]
struct FlatRow<'a> {
    host: &'a str,
    /// Where the document (or the reason) was read; null when missing.
    source: Option<&'a Origin>,
    status: Status,
    /// Why a broken or missing host has no result.
    reason: Option<&'a str>,
    kind: Option<DocumentKind>,
    /// gate (and run): the gate's verdict, "not-run" when a run skipped it;
    /// pairs: the sibling maps' verdict; hybrid: the classes' verdict;
    /// observe: "reconciled" or "not-reconciled"; topology: the shape.
    verdict: Option<&'a str>,
    /// gate and run: the gate's paired penalty with its interval,
    /// repetitions, clock, threshold and doubts (JSON fields `penalty`,
    /// `penalty_ci95`, `penalty_reps`, `penalty_clock`,
    /// `penalty_threshold`, `penalty_doubts`).
    #[serde(flatten)]
    penalty: Cow<'a, GatePenalty>,
    model: Option<&'a str>,
    hypervisor: Option<&'a str>,
    tool_version: Option<&'a str>,
    cpus: Option<usize>,
    cores: Option<usize>,
    /// pairs: the published and measured sibling maps.
    map: Option<&'a SiblingMaps>,
    outliers: Vec<String>,
    complete: Option<bool>,
    valid: Option<bool>,
    gated: Option<bool>,
    failed_checks: &'a [CheckName],
    notes: &'a [String],
    /// topology: packages, cores, threads per core, core classes.
    #[serde(skip_serializing_if = "Option::is_none")]
    machine: Option<&'a MachineShape>,
}

impl Serialize for FleetRow {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.flat().serialize(serializer)
    }
}

impl FleetRow {
    fn of(host: &str, source: Origin, answer: Answer) -> FleetRow {
        let Answer {
            summary,
            hypervisor,
            tool_version,
        } = answer;
        let failed_checks: Vec<String> = summary
            .failed_checks()
            .iter()
            .map(|c| c.to_string())
            .collect();
        let outliers = result_flags(&ResultFacts {
            complete: summary.complete,
            valid: summary.valid() != Some(false),
            gated: !summary.ungated(),
            failed_checks,
            maps: summary.map().map(|m| {
                (
                    m.what,
                    m.verdict == MapVerdict::Differ,
                    m.measured.as_str(),
                    m.published.as_str(),
                )
            }),
        });
        FleetRow {
            host: host.to_string(),
            state: RowState::Result(Box::new(FleetResult {
                source,
                summary,
                hypervisor,
                tool_version,
                outliers,
                notes: Vec::new(),
            })),
        }
    }

    /// Its result, where it has one.
    pub fn result(&self) -> Option<&FleetResult> {
        match &self.state {
            RowState::Result(result) => Some(result),
            RowState::Broken { .. } | RowState::Missing => None,
        }
    }

    fn result_mut(&mut self) -> Option<&mut FleetResult> {
        match &mut self.state {
            RowState::Result(result) => Some(result),
            RowState::Broken { .. } | RowState::Missing => None,
        }
    }

    /// Whether it holds a result.
    pub fn status(&self) -> Status {
        match self.state {
            RowState::Result(_) => Status::Ok,
            RowState::Broken { .. } => Status::Broken,
            RowState::Missing => Status::Missing,
        }
    }

    /// The kind of its document; `None` without a result.
    pub fn kind(&self) -> Option<DocumentKind> {
        self.result().map(|r| r.summary.kind)
    }

    /// The study a row's verdict counts under (a run's gate is a gate).
    fn study(&self) -> Option<&Counted> {
        self.result().map(|r| &r.summary.counted)
    }

    /// Its flags; none without a result.
    fn outliers(&self) -> &[FleetFlag] {
        self.result().map_or(&[], |r| &r.outliers)
    }

    /// The row in the `--json` and `--csv` format.
    fn flat(&self) -> FlatRow<'_> {
        let result = self.result();
        let summary = result.map(|r| &r.summary);
        let (source, reason) = match &self.state {
            RowState::Result(result) => (Some(&result.source), None),
            RowState::Broken { source, reason } => (Some(source), Some(reason.as_str())),
            RowState::Missing => (None, Some(NO_LINE)),
        };
        FlatRow {
            host: &self.host,
            source,
            status: self.status(),
            reason,
            kind: self.kind(),
            verdict: summary.and_then(|s| s.counted.verdict.as_deref()),
            penalty: summary.map_or_else(
                || Cow::Owned(GatePenalty::default()),
                |s| {
                    s.penalty()
                        .map_or_else(|| Cow::Owned(GatePenalty::default()), Cow::Borrowed)
                },
            ),
            model: summary.and_then(|s| s.model.as_deref()),
            hypervisor: result.map(|r| r.hypervisor.as_str()),
            tool_version: result.map(|r| r.tool_version.as_str()),
            cpus: summary.and_then(|s| s.cpus),
            cores: summary.and_then(|s| s.cores),
            map: summary.and_then(HostSummary::map),
            outliers: self.outliers().iter().map(ToString::to_string).collect(),
            complete: summary.map(|s| s.complete),
            // The format's convention: a kind without a validity rule, or
            // that is not a run, is written valid and gated.
            valid: summary.map(|s| s.valid().unwrap_or(true)),
            gated: summary.map(|s| !s.ungated()),
            failed_checks: summary.map_or(&[], HostSummary::failed_checks),
            notes: result.map_or(&[], |r| &r.notes),
            machine: summary.and_then(HostSummary::machine),
        }
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
    /// Hosts per placement-study version, most first.
    pub versions: Vec<(String, usize)>,
    /// Input lines with a document that belongs to no host (a prefix that
    /// is not a host name), by where they are.
    pub unread: Vec<Origin>,
}

impl Fleet {
    /// Sums up what the hosts sent, against the hosts expected.
    pub fn of(sent: Gathered<Answer>, options: &FleetOptions) -> Fleet {
        let mut rows = Vec::new();
        let mut seen = HashSet::new();
        for host in sent.hosts {
            seen.insert(host.host.clone());
            if let Some(broken) = host.broken {
                rows.push(FleetRow {
                    host: host.host,
                    state: RowState::Broken {
                        source: broken.source,
                        reason: broken.reason,
                    },
                });
                continue;
            }
            for (i, received) in host.documents.into_iter().enumerate() {
                let mut row = FleetRow::of(&host.host, received.source, received.document);
                if let Some(result) = row.result_mut() {
                    if received.replaced > 0 {
                        result
                            .notes
                            .push(format!("replaced {} earlier", received.replaced));
                    }
                    if i == 0 && host.unreadable > 0 {
                        result.notes.push(count(host.unreadable, "unreadable line"));
                    }
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
                rows.push(FleetRow {
                    host: host.clone(),
                    state: RowState::Missing,
                });
            }
        }
        rows.sort_by(|a, b| {
            // A host's rows in the kinds' order (the gate first), then the
            // rows without a result.
            natural(&a.host, &b.host)
                .then_with(|| (a.kind().is_none(), a.kind()).cmp(&(b.kind().is_none(), b.kind())))
        });
        flag_penalties(&mut rows);
        flag_shapes(&mut rows);

        let mut by_status: HashMap<&str, Status> = HashMap::new();
        for row in &rows {
            by_status.entry(&row.host).or_insert(row.status());
        }
        let tally = |status| by_status.values().filter(|s| **s == status).count();
        let (answered, broken, missing) = (
            tally(Status::Ok),
            tally(Status::Broken),
            tally(Status::Missing),
        );
        Fleet {
            verdicts: verdicts(&rows),
            models: per_host(&rows, |r| r.summary.model.clone()),
            hypervisors: per_host(&rows, |r| Some(r.hypervisor.clone())),
            versions: per_host(&rows, |r| Some(r.tool_version.clone())),
            hosts: by_status.len(),
            answered,
            broken,
            missing,
            unexpected,
            rows,
            unread: sent.unread,
        }
    }
}

/// The row of a host that the gate counts come from: its gate document,
/// else its run's gate.
fn gate_rows(rows: &[FleetRow]) -> Vec<usize> {
    let mut chosen: Vec<usize> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if row.study().is_none_or(|c| c.study != DocumentKind::Gate) {
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

/// Flags the penalties far from those of their CPU model on their clock
/// ([`penalty_outliers`]), over one penalty per host; a penalty with a
/// doubt takes no part.
fn flag_penalties(rows: &mut [FleetRow]) {
    let (measured, hosts): (Vec<usize>, Vec<HostPenalty>) = gate_rows(rows)
        .into_iter()
        .filter_map(|i| {
            let summary = &rows[i].result()?.summary;
            let penalty = summary.penalty()?;
            let host = HostPenalty {
                model: summary.model.as_deref()?,
                clock: penalty.clock?,
                penalty: penalty.value?,
                doubts: &penalty.doubts,
            };
            Some((i, host))
        })
        .unzip();
    let verdicts = penalty_outliers(&hosts);
    for (i, outlier) in measured.into_iter().zip(verdicts) {
        let Some(result) = rows[i].result_mut() else {
            continue;
        };
        let Some(penalty) = result.summary.penalty() else {
            continue;
        };
        let (Some(outlier), Some(estimate), Some(clock)) =
            (outlier, penalty.estimate_text(), penalty.clock)
        else {
            continue;
        };
        result.outliers.insert(
            0,
            FleetFlag::Penalty(format!(
                "penalty {estimate} is far from the median {} (MAD {:.1} points) of the {} hosts \
                 of its CPU model on {}: more than {:.1} points off",
                percent_change(outlier.median),
                outlier.mad * 100.0,
                outlier.peers,
                clock.unit(),
                outlier.bound * 100.0
            )),
        );
    }
}

/// Flags the machines shaped unlike most hosts of their CPU model
/// ([`shape_outliers`]), over the rows of topology documents.
fn flag_shapes(rows: &mut [FleetRow]) {
    let (inventoried, hosts): (Vec<usize>, Vec<(&str, &MachineShape)>) = rows
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let summary = &row.result()?.summary;
            Some((i, (summary.model.as_deref()?, summary.machine()?)))
        })
        .unzip();
    let outliers: Vec<Option<String>> = shape_outliers(&hosts)
        .into_iter()
        .map(|outlier| {
            let outlier = outlier?;
            Some(format!(
                "most of the {} hosts of its CPU model have {}",
                outlier.peers, outlier.usual
            ))
        })
        .collect();
    for (i, outlier) in inventoried.into_iter().zip(outliers) {
        if let (Some(outlier), Some(result)) = (outlier, rows[i].result_mut()) {
            let shape = result
                .summary
                .machine()
                .map(ToString::to_string)
                .unwrap_or_default();
            result.outliers.insert(
                0,
                FleetFlag::Shape(format!("shaped {shape}, unlike its CPU model: {outlier}")),
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
    let mut tallies: BTreeMap<(DocumentKind, &'static str, String), (usize, usize)> =
        BTreeMap::new();
    for (i, row) in rows.iter().enumerate() {
        let Some(Counted {
            study,
            label,
            verdict: Some(verdict),
        }) = row.study()
        else {
            continue;
        };
        if *study == DocumentKind::Gate && !gates.contains(&i) {
            continue;
        }
        let (hosts, flagged) = tallies.entry((*study, label, verdict.clone())).or_default();
        *hosts += 1;
        *flagged += usize::from(!row.outliers().is_empty());
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
    field: impl Fn(&FleetResult) -> Option<String>,
) -> Vec<(String, usize)> {
    let mut value_of: HashMap<&str, Option<String>> = HashMap::new();
    for row in rows {
        let Some(result) = row.result() else {
            continue;
        };
        let value = value_of.entry(&row.host).or_default();
        if value.is_none() {
            *value = field(result);
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

#[cfg(test)]
mod tests;
