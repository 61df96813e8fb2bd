//! The human view of a baseline comparison, as blocks: the verdict with
//! its exit status, the sentence that says why, what to do next; then per
//! judged document what differs from the baseline, the verdicts that
//! changed, and the rows (the regressed first).

use super::{BaselineReport, Judged, RowJudgement};
use crate::judge::baseline::{BaselineVerdict, IntervalMethod, MOST_REPS, RowVerdict};
use crate::judge::stats::Spread;
use crate::report::blocks::{Blocks, Grid};
use crate::report::view::View;
use crate::units::{capitalise, count, percent_change, sig4};

/// The whole view.
pub fn blocks(report: &BaselineReport, view: &View) -> Blocks {
    let mut out = Blocks::new();
    out.answer(answer(report));
    out.line(capitalise(&sentence(report)), 2);
    out.line(next(report), 2);
    out.gap().line(
        format!(
            "baseline: {} — {} on host {}, placement-study {}",
            report.baseline.file,
            report.baseline.kind,
            report.baseline.host,
            report.baseline.tool_version
        ),
        2,
    );
    for judged in &report.judged {
        out.gap()
            .extend(judged_blocks(judged, report.threshold, view));
    }
    out.gap().line(method_line(report), 0);
    out
}

/// "REGRESSED (exit 7): …": the verdict and the status it exits with.
fn answer(report: &BaselineReport) -> String {
    let rows: Vec<&RowJudgement> = report.judged.iter().flat_map(|j| &j.rows).collect();
    let with = |verdict: RowVerdict| rows.iter().filter(|r| r.change.verdict == verdict).count();
    match report.verdict {
        BaselineVerdict::Regressed => {
            let regressed = with(RowVerdict::Regressed);
            format!(
                "REGRESSED (exit {}): {regressed} of {} {} more than the baseline, beyond {}",
                report.exit_status,
                count(rows.len(), "row"),
                if regressed == 1 { "costs" } else { "cost" },
                band(report.threshold)
            )
        }
        BaselineVerdict::Inconclusive => format!(
            "INCONCLUSIVE (exit {}): nothing regressed for sure, but {} of {} cannot be told \
             from {}",
            report.exit_status,
            with(RowVerdict::Inconclusive),
            count(rows.len(), "row"),
            band(report.threshold)
        ),
        BaselineVerdict::NothingRegressed => format!(
            "NOTHING REGRESSED (exit {}): {} unchanged within {}, {} improved",
            report.exit_status,
            count(with(RowVerdict::Unchanged), "row"),
            band(report.threshold),
            with(RowVerdict::Improved)
        ),
    }
}

/// "±5 %".
fn band(threshold: f64) -> String {
    let percent = threshold * 100.0;
    if percent.fract() == 0.0 {
        format!("±{percent:.0} %")
    } else {
        format!("±{} %", sig4(percent))
    }
}

/// Why: the worst row, in words.
fn sentence(report: &BaselineReport) -> String {
    let worst = report
        .judged
        .iter()
        .flat_map(|j| j.rows.iter().map(move |row| (j, row)))
        .min_by_key(|(_, row)| row.change.verdict);
    let Some((judged, row)) = worst else {
        return "the documents share no row that was measured twice; the findings below are \
                all there is"
            .into();
    };
    let within = if report.judged.len() > 1 {
        format!(" in {}", judged.new.file)
    } else {
        String::new()
    };
    let change = change_words(row);
    match row.change.verdict {
        RowVerdict::Regressed => format!(
            "{}{within}: {change}, the whole interval above +{}",
            row.row,
            band(report.threshold).trim_start_matches('±')
        ),
        RowVerdict::Inconclusive if row.change.ci95.is_none() => {
            format!("{}{within}: {change}; {}", row.row, decide_words(row))
        }
        RowVerdict::Inconclusive => format!(
            "{}{within}: {change}, which reaches across the threshold; {}",
            row.row,
            decide_words(row)
        ),
        RowVerdict::Improved | RowVerdict::Unchanged => format!(
            "every row's interval lies within or below {}; the largest change is {}{within}: \
             {}",
            band(report.threshold),
            largest(report).map_or_else(|| row.row.clone(), |r| r.row.clone()),
            largest(report).map_or(change.clone(), change_words)
        ),
    }
}

/// The row whose estimate moved furthest.
fn largest(report: &BaselineReport) -> Option<&RowJudgement> {
    report
        .judged
        .iter()
        .flat_map(|j| &j.rows)
        .filter(|row| row.change.change.is_some())
        .max_by(|a, b| {
            let size = |row: &RowJudgement| row.change.change.unwrap_or_default().abs();
            size(a).total_cmp(&size(b))
        })
}

/// "its wall time (ms) changed +38.2 % (95 % interval +30.1 % to +47.0 %)".
fn change_words(row: &RowJudgement) -> String {
    let Some(change) = row.change.change else {
        return format!("its {} has no positive value on one side", row.quantity);
    };
    match &row.change.ci95 {
        Some(interval) => format!(
            "its {} changed {} (95 % interval {} to {})",
            row.quantity,
            percent_change(change),
            percent_change(interval.low),
            percent_change(interval.high)
        ),
        None => format!(
            "its {} changed {}, with too few repetitions for an interval",
            row.quantity,
            percent_change(change)
        ),
    }
}

/// What would decide an inconclusive row.
fn decide_words(row: &RowJudgement) -> String {
    match (row.change.reps_to_decide, &row.change.ci95) {
        (Some(n), Some(_)) => format!("about {n} repetitions a side would likely decide it"),
        (Some(n), None) => format!("at least {n} repetitions a side are needed for an interval"),
        (None, _) => format!(
            "the change sits at the threshold: more than {MOST_REPS} repetitions a side would be \
             needed"
        ),
    }
}

/// What to do next, by the verdict.
fn next(report: &BaselineReport) -> String {
    match report.verdict {
        BaselineVerdict::Regressed => "next: read what differs from the baseline below (kernel, \
             tool version, CPUs); `--svg OUT` draws each row's interval against the threshold"
            .into(),
        BaselineVerdict::Inconclusive => {
            "next: measure again with more repetitions (--reps) or at \
             a quieter moment; `--fail-on inconclusive` makes this exit 5 in CI"
                .into()
        }
        BaselineVerdict::NothingRegressed => "next: keep the new result as the next baseline \
             (`--save-baseline NAME`, or keep its --json file)"
            .into(),
    }
}

/// One judged document: its name, differences, findings and rows.
fn judged_blocks(judged: &Judged, threshold: f64, view: &View) -> Blocks {
    let mut out = Blocks::new();
    out.heading(format!(
        "{} against the baseline: {}",
        judged.new.file, judged.verdict
    ));
    out.line(
        format!(
            "new: {} on host {}, placement-study {}",
            judged.new.kind, judged.new.host, judged.new.tool_version
        ),
        2,
    );
    let (decisive, shown): (Vec<_>, Vec<_>) = judged.differences.iter().partition(|d| d.decisive);
    for difference in &decisive {
        out.line(
            format!(
                "MEASURED SOMETHING ELSE (judged anyway, --allow-different): {}: {} → {}",
                difference.what, difference.old, difference.new
            ),
            4,
        );
    }
    for difference in &shown {
        out.line(
            format!(
                "differs: {}: {} → {}",
                difference.what, difference.old, difference.new
            ),
            4,
        );
    }
    for finding in &judged.findings {
        let text = match (&finding.old, &finding.new) {
            (Some(old), Some(new)) => format!("{} → {}", old, new),
            (None, Some(new)) => format!("appeared ({new})"),
            (Some(old), None) => format!("vanished (was {old})"),
            (None, None) => continue,
        };
        out.line(format!("finding: {}: {text}", finding.what), 4);
    }
    let mut table = Grid::default();
    let mut header = vec![
        "row",
        "baseline",
        "new",
        "change",
        "95 % interval",
        "verdict",
    ];
    if view.wide {
        header.insert(1, "quantity");
        header.insert(2, "CPUs");
    }
    table.push(header);
    for row in &judged.rows {
        let mut cells = vec![
            row.row.clone(),
            spread_text(row.old.as_ref()),
            spread_text(row.new.as_ref()),
            row.change.change.map_or_else(|| "—".into(), percent_change),
            row.change.ci95.as_ref().map_or_else(
                || "—".into(),
                |i| format!("{} to {}", percent_change(i.low), percent_change(i.high)),
            ),
            verdict_text(row),
        ];
        if view.wide {
            cells.insert(1, row.quantity.clone());
            cells.insert(2, cpus_text(row));
        }
        table.push(cells);
    }
    out.table(table, "no row both documents measured");
    let mut quantities: Vec<&str> = judged.rows.iter().map(|r| r.quantity.as_str()).collect();
    quantities.dedup();
    if !quantities.is_empty() && !view.wide {
        out.line(
            format!(
                "each cell a median ± its CV (n repetitions); quantity: {}; a row is regressed \
                 or improved when its whole interval lies beyond {}",
                quantities.join(", "),
                band(threshold)
            ),
            2,
        );
    }
    out
}

/// "2.350 ±1.2 % (15)".
fn spread_text(spread: Option<&Spread>) -> String {
    spread.map_or_else(
        || "—".into(),
        |s| format!("{} ±{:.1} % ({})", sig4(s.median), s.cv * 100.0, s.reps),
    )
}

/// The row's CPUs, or both where they differ.
fn cpus_text(row: &RowJudgement) -> String {
    match (&row.old_cpus, &row.new_cpus) {
        (Some(old), Some(new)) if old != new => format!("{old} → {new}"),
        (_, Some(new)) => new.clone(),
        (Some(old), None) => old.clone(),
        (None, None) => "—".into(),
    }
}

/// "regressed", "inconclusive: ~40 reps a side".
fn verdict_text(row: &RowJudgement) -> String {
    match (
        row.change.verdict,
        row.change.reps_to_decide,
        &row.change.ci95,
    ) {
        (RowVerdict::Inconclusive, Some(n), Some(_)) => format!("inconclusive: ~{n} reps a side"),
        (RowVerdict::Inconclusive, Some(n), None) => format!("inconclusive: under {n} reps"),
        (RowVerdict::Inconclusive, None, _) => "inconclusive: at the threshold".into(),
        (verdict, _, _) => verdict.to_string(),
    }
}

/// How every number was found.
fn method_line(report: &BaselineReport) -> String {
    let normal = report
        .judged
        .iter()
        .flat_map(|j| &j.rows)
        .any(|r| r.change.method == Some(IntervalMethod::Normal));
    format!(
        "method: the Hodges–Lehmann shift of log values (a ratio: new / old − 1) with its \
         distribution-free 95 % interval ({} Mann–Whitney critical values); the studies are not \
         paired, so every new repetition is set against every old one",
        if normal {
            "exact up to 120 repetitions in all, normal-approximated above"
        } else {
            "exact"
        }
    )
}
