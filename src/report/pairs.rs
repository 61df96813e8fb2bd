//! The human view of `pairs`: the verdict, both maps side by side, each
//! CPU's relation, the pairs that matter with their penalties, and every
//! comparison measured (with how much the search cost).

use crate::exit::Outcome;
use crate::judge::pairs::{ComparisonRecord, PairFinding, PairStatus, map_text};
use crate::judge::stats::spread;
use crate::report::gate::{evidence_and_notes, verdict_heading};
use crate::report::units::{capitalise, count, percent_change, sig4};
use crate::saved::PairsResult;
use std::fmt::Write;
use tabled::builder::Builder;
use tabled::settings::Style;

/// Comparisons listed in the text view; more are in `--json` and `--csv`.
const LISTED_COMPARISONS: usize = 40;

/// The whole human view.
pub fn render(result: &PairsResult) -> String {
    let mut out = verdict_heading(result.complete, "comparisons", &result.sentence);
    let _ = writeln!(
        out,
        "verdict: {} (exit {})",
        result.verdict.as_str(),
        Outcome::Map(result.verdict).exit_status()
    );
    let map = &result.map;
    let _ = writeln!(
        out,
        "\npublished  {}   (the kernel's sibling lists)",
        map_text(&map.published)
    );
    let _ = writeln!(
        out,
        "measured   {}   (co-location penalty ≥ {:.0} %)",
        map_text(&map.measured),
        result.options.threshold * 100.0
    );

    let mut cpus = Builder::default();
    cpus.push_record(["CPU", "published", "measured", "relation"]);
    for entry in &map.cpus {
        cpus.push_record([
            entry.cpu.to_string(),
            entry.published.to_string(),
            entry.measured.to_string(),
            entry.relation.as_str().to_string(),
        ]);
    }
    let _ = writeln!(out, "\n{}", cpus.build().with(Style::sharp()));

    if !map.pairs.is_empty() {
        let _ = writeln!(
            out,
            "\nPairs published as siblings, measured sharing, or undecided"
        );
        let _ = writeln!(out, "{}", pairs_table(&map.pairs, &result.comparisons));
    }
    for note in &map.notes {
        let _ = writeln!(out, "! {note}");
    }

    let effort = &result.effort;
    let _ = writeln!(
        out,
        "\n{}: {} ({} of two workers; every pair would be {}), {}, {:.1} s measuring{}",
        capitalise(result.search.as_str()),
        count(effort.comparisons, "comparison"),
        effort.pair_comparisons,
        effort.all_pairs,
        count(effort.repetitions, "repetition"),
        effort.measuring_seconds,
        if effort.budget_exhausted {
            format!(
                "; the time budget of {:.0} s ran out",
                result.options.time_budget_seconds.unwrap_or_default()
            )
        } else {
            String::new()
        }
    );
    let unit = result.clock.unit();
    let _ = writeln!(
        out,
        "cost: the probe worker's {unit} per byte (wall time, which sees a vCPU waiting for its \
         host CPU); kernel {}, {} bytes per worker per repetition; each comparison pairs the \
         probe beside its set with the probe alone, {}–{} repetitions each",
        result.setup.kernel,
        result.setup.bytes_per_worker,
        result.options.min_reps,
        result.options.max_reps
    );
    let _ = writeln!(
        out,
        "\n{}",
        comparisons_table(&result.comparisons, result.clock.column())
    );
    if result.comparisons.len() > LISTED_COMPARISONS {
        let _ = writeln!(
            out,
            "… and {} more comparisons (all of them are in --json and --csv)",
            result.comparisons.len() - LISTED_COMPARISONS
        );
    }
    if let Some(control) = &result.control {
        let _ = writeln!(
            out,
            "control (both workers on CPU {}): {} — {}",
            result.tested.first().unwrap_or_default(),
            control.status.as_str(),
            control.detail
        );
    }
    let _ = writeln!(
        out,
        "pinning: {} — {}",
        result.pinning.status.as_str(),
        result.pinning.detail
    );
    let excluded: usize = result.comparisons.iter().map(|c| c.excluded.len()).sum();
    if excluded > 0 {
        let _ = writeln!(
            out,
            "{} left out of the comparisons (a worker moved, or a counter multiplexed; see --json)",
            count(excluded, "repetition")
        );
    }
    out.push_str(&evidence_and_notes(&result.evidence, &result.warnings));
    out
}

/// "+96.1 % [+91.0, +101.3]", or a dash.
fn penalty_text(record: &ComparisonRecord) -> (String, String) {
    match &record.estimate {
        Some(e) => (
            percent_change(e.penalty),
            format!(
                "[{}, {}]",
                percent_change(e.ci95.low),
                percent_change(e.ci95.high)
            ),
        ),
        None => ("—".into(), "—".into()),
    }
}

fn pairs_table(pairs: &[PairFinding], comparisons: &[ComparisonRecord]) -> String {
    let mut table = Builder::default();
    table.push_record([
        "pair",
        "published",
        "measured",
        "penalty",
        "95 % CI",
        "reps",
        "relation",
    ]);
    for pair in pairs {
        let record = pair
            .comparison
            .and_then(|index| comparisons.iter().find(|c| c.index == index));
        let (penalty, ci) = match record {
            Some(record) => penalty_text(record),
            None => ("inferred".into(), String::new()),
        };
        let reps = record
            .and_then(|r| r.estimate.as_ref())
            .map(|e| e.reps.to_string())
            .unwrap_or_default();
        let measured = match pair.measured {
            PairStatus::Shares => "shares",
            PairStatus::Apart => "apart",
            PairStatus::Inconclusive => "inconclusive",
            PairStatus::NotMeasured => "not measured",
        };
        table.push_record([
            format!("{},{}", pair.cpus[0], pair.cpus[1]),
            if pair.published { "yes" } else { "no" }.into(),
            measured.into(),
            penalty,
            ci,
            reps,
            pair.relation.as_str().into(),
        ]);
    }
    table.build().with(Style::sharp()).to_string()
}

/// Every comparison (the first [`LISTED_COMPARISONS`]): its penalty with
/// interval, the probe's median cost alone and beside the set with CVs,
/// repetitions and outcome. `unit` names the clock ("TSC").
fn comparisons_table(comparisons: &[ComparisonRecord], unit: &str) -> String {
    let mut table = Builder::default();
    let alone = format!("alone {unit}/B (CV)");
    let loaded = format!("beside {unit}/B (CV)");
    table.push_record([
        "#",
        "probe",
        "beside",
        "penalty",
        "95 % CI",
        alone.as_str(),
        loaded.as_str(),
        "reps",
        "outcome",
    ]);
    let median_cv = |costs: &[f64]| match spread(costs) {
        Some(s) => format!("{} ({:.1} %)", sig4(s.median), s.cv * 100.0),
        None => "—".into(),
    };
    for record in comparisons.iter().take(LISTED_COMPARISONS) {
        let (penalty, ci) = penalty_text(record);
        table.push_record([
            record.index.to_string(),
            record.comparison.probe.to_string(),
            record.comparison.against.to_string(),
            penalty,
            ci,
            median_cv(&record.alone_costs),
            median_cv(&record.loaded_costs),
            record.loaded_costs.len().to_string(),
            record.outcome.as_str().into(),
        ]);
    }
    table.build().with(Style::sharp()).to_string()
}
