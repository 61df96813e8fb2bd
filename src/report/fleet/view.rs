//! `report --fleet`'s view, as blocks ([`Blocks`]): the title, the tables
//! of counts, the notes, and the table of hosts. The terminal, `report
//! --fleet --html` and `report --fleet --markdown` draw the same blocks.

use super::*;
use crate::fleet::Origin;
use crate::fleet::hostlist::fold_host_list;
use crate::report::blocks::{Blocks, Grid};
use crate::report::compare::GatePenalty;
use crate::report::view::View;
use crate::units::{DASH, count};
use std::collections::HashSet;
use std::fmt::Write;

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
    if !fleet.unread.is_empty() {
        let _ = write!(line, "; {} unreadable", count(fleet.unread.len(), "line"));
    }
    line
}

/// Where the unreadable lines are, the first [`UNREAD_SHOWN`] of them.
pub(super) const UNREAD_SHOWN: usize = 10;

/// The unreadable lines: how many, why, and where.
pub(super) fn unread_note(unread: &[Origin]) -> String {
    let mut places: Vec<String> = unread
        .iter()
        .take(UNREAD_SHOWN)
        .map(Origin::to_string)
        .collect();
    if unread.len() > UNREAD_SHOWN {
        places.push(format!("and {} more", unread.len() - UNREAD_SHOWN));
    }
    format!(
        "Unreadable ({}): a document behind a prefix that is not a host name (a host name is \
         1 to 253 ASCII letters, digits, '-', '.' and '_'), not counted in any host: {}",
        count(unread.len(), "line"),
        places.join(", ")
    )
}

/// The human view: the title, the counts, the outliers, the hosts without
/// a result, then one row per host.
pub fn blocks(fleet: &Fleet, view: &View) -> Blocks {
    let mut out = Blocks::new();
    out.answer(title(fleet));
    if !fleet.verdicts.is_empty() {
        let mut table = Grid::default();
        table.push(["study", "verdict", "hosts", "flagged"]);
        for tally in &fleet.verdicts {
            table.push([
                tally.study.to_string(),
                tally.verdict.clone(),
                tally.hosts.to_string(),
                tally.flagged.to_string(),
            ]);
        }
        table.align_right(&[2, 3]);
        out.gap().table(table, "no verdict");
    }
    // The versions only when the hosts run more than one: a host an
    // upgrade left behind.
    for (heading, counts, least) in [
        ("CPU model", &fleet.models, 1),
        ("hypervisor", &fleet.hypervisors, 1),
        ("placement-study version", &fleet.versions, 2),
    ] {
        if counts.len() < least {
            continue;
        }
        let mut table = Grid::default();
        table.push([heading, "hosts"]);
        for (value, hosts) in counts {
            table.push([value.clone(), hosts.to_string()]);
        }
        table.align_right(&[1]);
        out.gap().table(table, "no host");
    }

    let flagged: Vec<&FleetRow> = fleet
        .rows
        .iter()
        .filter(|r| !r.outliers().is_empty())
        .collect();
    if !flagged.is_empty() {
        let hosts: HashSet<&str> = flagged.iter().map(|r| r.host.as_str()).collect();
        out.gap().heading(format!(
            "Outliers and flags ({})",
            count(hosts.len(), "host")
        ));
        for row in flagged {
            let kind = row.kind().map(|k| k.to_string()).unwrap_or_default();
            for why in row.outliers() {
                out.line(format!("  {} {kind}: {why}", row.host), 4);
            }
        }
    }
    let missing: Vec<String> = fleet
        .rows
        .iter()
        .filter(|r| r.state == RowState::Missing)
        .map(|r| r.host.clone())
        .collect();
    if !missing.is_empty() {
        let line = format!("Missing ({}): {}", missing.len(), fold_host_list(&missing));
        out.gap().line(line, 2);
    }
    if !fleet.unread.is_empty() {
        out.gap().line(unread_note(&fleet.unread), 2);
    }
    let broken: Vec<(&str, &str)> = fleet
        .rows
        .iter()
        .filter_map(|r| match &r.state {
            RowState::Broken { reason, .. } => Some((r.host.as_str(), reason.as_str())),
            RowState::Result(_) | RowState::Missing => None,
        })
        .collect();
    if !broken.is_empty() {
        out.gap().heading(format!("Broken ({})", broken.len()));
        for (host, reason) in broken {
            out.line(format!("  {host}: {reason}"), 4);
        }
    }

    if !fleet.rows.is_empty() {
        let dash = || vec![DASH.to_string()];
        let mut table = Grid::default();
        table.push([
            "host",
            "kind",
            "CPU model",
            "hypervisor",
            "verdict",
            "marks",
        ]);
        let shared = shared_basis(&fleet.rows);
        for row in &fleet.rows {
            let cells = match &row.state {
                RowState::Result(result) => [
                    vec![result.summary.kind.to_string()],
                    vec![result.summary.model.clone().unwrap_or_else(|| DASH.into())],
                    vec![result.hypervisor.clone()],
                    verdict_cell(result, &shared, view),
                    vec![marks(result)],
                ],
                RowState::Broken { .. } => [dash(), dash(), dash(), vec!["BROKEN".into()], dash()],
                RowState::Missing => [dash(), dash(), dash(), vec!["MISSING".into()], dash()],
            };
            let [kind, model, hypervisor, verdict, marks] = cells;
            table.push_lines([
                vec![row.host.clone()],
                kind,
                model,
                hypervisor,
                verdict,
                marks,
            ]);
        }
        out.gap().table(table, "no host");
        out.lines(penalty_notes(&fleet.rows, &shared), 2);
    }
    out
}

/// The human view as the terminal shows it ([`blocks`]).
pub fn render(fleet: &Fleet, view: &View) -> String {
    blocks(fleet, view).to_terminal(view)
}

/// The parts of [`GatePenalty::basis`] every penalty in `rows` shares
/// ("n=5", "TSC ticks", "threshold +15.0 %"), each `None` where the hosts
/// differ: a shared part is said once under the table, the others in each
/// host's cell.
pub(super) fn shared_basis(rows: &[FleetRow]) -> [Option<String>; 3] {
    let bases: Vec<[Option<String>; 3]> = rows
        .iter()
        .filter_map(|r| r.result()?.summary.penalty())
        .filter(|p| p.value.is_some())
        .map(GatePenalty::basis)
        .collect();
    std::array::from_fn(|part| {
        let first = bases.first()?[part].clone()?;
        bases
            .iter()
            .all(|basis| basis[part].as_ref() == Some(&first))
            .then_some(first)
    })
}

/// The verdict, then the gate's penalty, "*" when it failed its validity
/// bar, its interval, and the parts of its basis the other hosts do not
/// share: "virtual", "+9.0 %", "[3.3, 15.0]", "n=27": the cell's lines.
/// The default view gives each its own line, short enough that the column
/// rarely wraps one; `--wide` keeps the cell on one line.
pub(super) fn verdict_cell(
    result: &FleetResult,
    shared: &[Option<String>; 3],
    view: &View,
) -> Vec<String> {
    let summary = &result.summary;
    let mut lines = vec![
        summary
            .counted
            .verdict
            .clone()
            .unwrap_or_else(|| "—".into()),
    ];
    if let Some(penalty) = summary.penalty()
        && let Some((value, interval)) = penalty.estimate_parts()
    {
        let mark = if penalty.doubts.is_empty() { "" } else { "*" };
        lines.extend([format!("{value}{mark}"), interval]);
        let own: Vec<String> = penalty
            .basis()
            .into_iter()
            .zip(shared)
            .filter_map(|(part, shared)| part.filter(|_| shared.is_none()))
            .collect();
        if !own.is_empty() {
            lines.push(own.join(", "));
        }
    }
    if view.wide {
        lines = vec![lines.join(" ")];
    }
    lines
}

/// The lines under the hosts table when it shows a penalty: how to read
/// it with what every host shares, and what "*" means when a row has it.
pub(super) fn penalty_notes(rows: &[FleetRow], shared: &[Option<String>; 3]) -> Vec<String> {
    let penalties: Vec<&GatePenalty> = rows
        .iter()
        .filter_map(|r| r.result()?.summary.penalty())
        .collect();
    if penalties.iter().all(|p| p.value.is_none()) {
        return Vec::new();
    }
    let mut key = "penalty: the gate's paired estimate, [its 95 % interval], n repetitions per arm"
        .to_string();
    let shared: Vec<&str> = shared.iter().flatten().map(String::as_str).collect();
    if !shared.is_empty() {
        let _ = write!(key, "; the same for every host: {}", shared.join(", "));
    }
    let mut notes = vec![key];
    if penalties.iter().any(|p| !p.doubts.is_empty()) {
        notes.push(
            "* not valid: its gate was cut short (incomplete) or its same-CPU control failed; \
             left out of the outlier rule"
                .into(),
        );
    }
    notes
}

/// A row's marks, short: what is wrong with it, or "ok".
pub(super) fn marks(row: &FleetResult) -> String {
    let summary = &row.summary;
    let mut marks: Vec<String> = [
        (summary.complete, "INCOMPLETE"),
        (summary.valid() != Some(false), "INVALID"),
        (!summary.ungated(), "UNGATED"),
    ]
    .into_iter()
    .filter(|(holds, _)| !holds)
    .map(|(_, mark)| mark.to_string())
    .collect();
    if !summary.failed_checks().is_empty() {
        marks.push("FAILED checks".into());
    }
    for mark in FleetFlag::MARKS {
        if row.outliers.iter().any(|flag| flag.mark() == Some(mark)) {
            marks.push(mark.into());
        }
    }
    marks.extend(row.notes.iter().cloned());
    if marks.is_empty() {
        "ok".into()
    } else {
        marks.join("; ")
    }
}
