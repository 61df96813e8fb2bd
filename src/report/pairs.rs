//! The human view of `pairs`: the verdict, both maps side by side, each
//! CPU's relation, the pairs that matter with their penalties, and every
//! comparison measured (with how much the search cost).

use crate::exit::Outcome;
use crate::judge::checks::ExcludedRep;
use crate::judge::pairs::{ComparisonRecord, MapVerdict, PairFinding, PairStatus, map_text};
use crate::judge::stats::spread;
use crate::report::blocks::{Blocks, Grid};
use crate::report::document::{Document, HumanView};
use crate::report::gate::{evidence_and_notes, noise_and_control, verdict_heading};
use crate::report::table::excluded_lines;
use crate::report::view::View;
use crate::saved::{FirstPass, PairsResult};
use crate::units::{Fixed, capitalise, count, percent_change, sig4};

/// Comparisons listed in the text view; more are in `--json` and `--csv`.
const LISTED_COMPARISONS: usize = 40;

/// The whole human view: the verdict and its sentence first, what to run
/// next, then both maps, the pairs, every comparison and the checks.
impl HumanView for PairsResult {
    fn blocks(&self, view: &View) -> Blocks {
        let result = self;
        let mut out = verdict_heading(result.head.complete, "comparisons");
        out.answer(format!(
            "verdict: {} (exit {})",
            result.verdict.as_str(),
            Outcome::Map(result.verdict).exit_status()
        ));
        out.line(capitalise(&result.sentence), 0);
        out.line(next_step(result.verdict), 2);
        let map = &result.map;
        let published = match &map.published_unknown {
            Some(reason) => format!("published  unknown   ({reason})"),
            None => format!(
                "published  {}   (the kernel's sibling lists)",
                map_text(&map.published)
            ),
        };
        let known = map.published_unknown.is_none();
        let measured = format!(
            "measured   {}   (co-location penalty ≥ {:.0} %{})",
            map_text(&map.measured),
            result.options.threshold * 100.0,
            if result
                .first_pass
                .as_ref()
                .is_some_and(|p| p.unused.is_none())
            {
                "; apart across latency sets"
            } else {
                ""
            }
        );
        out.gap().line(published, 11).line(measured, 11);

        let mut cpus = Grid::default();
        cpus.push(["CPU", "published", "measured", "relation"]);
        for entry in &map.cpus {
            cpus.push([
                entry.cpu.to_string(),
                if known {
                    entry.published.to_string()
                } else {
                    "?".to_string()
                },
                entry.measured.to_string(),
                if known {
                    entry.relation.label().to_string()
                } else {
                    "measured only".to_string()
                },
            ]);
        }
        out.gap().table(cpus, "no CPU was tested");

        if !map.pairs.is_empty() {
            out.gap()
                .heading("Pairs published as siblings, measured sharing, or undecided")
                .table(
                    pairs_table(&map.pairs, &result.comparisons, known, view),
                    "no pair",
                );
        }
        for note in &map.notes {
            out.line(format!("! {note}"), 2);
        }

        let effort = &result.effort;
        let search = format!(
            "{}: {} ({} of two workers; every pair would be {}), {}, {:.1} s measuring{}",
            capitalise(result.search.label()),
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
        out.gap().line(search, 2);
        if let Some(pass) = &result.first_pass {
            out.line(first_pass(pass), 2);
        }
        let unit = result.clock.unit();
        let options = &result.options;
        let batches = if options.batching.batches > 0 {
            format!(
                " per batch; {} batch{} {} ms apart (at most {}) must agree",
                options.batching.batches,
                if options.batching.batches == 1 {
                    ""
                } else {
                    "es"
                },
                options.batching.batch_gap_ms,
                options.batching.max_batches
            )
        } else {
            String::new()
        };
        let cost = format!(
            "cost: the probe worker's {unit} per byte (wall time, which sees a vCPU waiting for its \
         host CPU); kernel {}, {} bytes per worker per repetition; each comparison pairs the \
         probe beside its set with the probe alone, {}–{} repetitions each{batches}",
            result.setup.kernel, result.setup.bytes_per_worker, options.min_reps, options.max_reps
        );
        out.line(cost, 2);
        if !result.comparisons.is_empty() {
            out.gap().table(
                comparisons_table(&result.comparisons, result.clock.column(), view),
                "no comparison",
            );
        }
        if result.comparisons.len() > LISTED_COMPARISONS {
            out.line(
                format!(
                    "… and {} more comparisons (all of them are in --json and --csv)",
                    result.comparisons.len() - LISTED_COMPARISONS
                ),
                0,
            );
        }
        let on = format!("CPU {}", result.tested.first().unwrap_or_default());
        out.extend(noise_and_control(
            result.noise.as_ref(),
            &result.control_attempts,
            result.control.as_ref(),
            &on,
        ));
        out.line(
            format!(
                "pinning: {} — {}",
                result.pinning.status.as_str(),
                result.pinning.detail
            ),
            2,
        );
        let excluded: Vec<ExcludedRep> = result
            .comparisons
            .iter()
            .flat_map(|c| c.excluded.iter().cloned())
            .collect();
        out.lines(excluded_lines(&excluded), 2);
        out.extend(evidence_and_notes(&result.head.evidence, &result.warnings));
        out
    }
}

/// What to run after `pairs`, by its verdict.
fn next_step(verdict: MapVerdict) -> &'static str {
    match verdict {
        MapVerdict::Agree => {
            "next: `placement-study latency` measures which CPUs share a cache, and \
             `placement-study run -- COMMAND` what sharing a core costs your program"
        }
        MapVerdict::Differ => {
            "next: place work by the measured map, not the published one; `placement-study \
             latency` measures which CPUs share a cache as well"
        }
        MapVerdict::Inconclusive => {
            "next: run it again at a quieter moment, or with a larger --max-reps; the reason is \
             in the sentence above"
        }
    }
}

/// The penalty and its interval: "+96.1 %" and "[+91.0 %, +101.3 %]", or
/// dashes; the default view gives the numbers alone ("+96.1", "[+91.0,
/// +101.3]") under headings that say "%".
fn penalty_text(record: &ComparisonRecord, view: &View) -> (String, String) {
    let change = |fraction: f64| {
        let text = percent_change(fraction);
        match view.wide {
            true => text,
            false => text.trim_end_matches(" %").to_string(),
        }
    };
    match &record.estimate {
        Some(e) => (
            change(e.penalty),
            format!("[{}, {}]", change(e.ci95.low), change(e.ci95.high)),
        ),
        None => ("—".into(), "—".into()),
    }
}

/// The heading of [`penalty_text`]'s penalty.
fn penalty_heading(view: &View) -> &'static str {
    if view.wide { "penalty" } else { "penalty %" }
}

/// The pairs that matter: each penalty with its interval and repetitions.
/// The default view leaves out what was measured (the relation says it).
/// `published_known`: false where the published map is unknown, whose
/// column and relations then say so instead of comparing with nothing.
fn pairs_table(
    pairs: &[PairFinding],
    comparisons: &[ComparisonRecord],
    published_known: bool,
    view: &View,
) -> Grid {
    let mut table = Grid::default();
    let mut header = vec!["pair", "published"];
    if view.wide {
        header.push("measured");
    }
    header.extend([
        penalty_heading(view),
        "95 % CI",
        if view.wide { "reps" } else { "n" },
        "relation",
    ]);
    table.push(header);
    for pair in pairs {
        let record = pair
            .comparison
            .and_then(|index| comparisons.iter().find(|c| c.index == index));
        let (penalty, ci) = match (record, pair.measured) {
            (Some(record), _) => penalty_text(record, view),
            (None, PairStatus::NotMeasured) => ("—".into(), String::new()),
            (None, _) => ("inferred".into(), String::new()),
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
        let published = match (published_known, pair.published) {
            (false, _) => "?",
            (true, true) => "yes",
            (true, false) => "no",
        };
        let mut row = vec![
            format!("{},{}", pair.cpus[0], pair.cpus[1]),
            published.into(),
        ];
        if view.wide {
            row.push(measured.into());
        }
        let relation = match (view.wide, pair.measured) {
            _ if !published_known => format!("{measured} (published unknown)"),
            (false, PairStatus::NotMeasured) => {
                format!("{} (not measured)", pair.relation.label())
            }
            _ => pair.relation.label().into(),
        };
        row.extend([penalty, ci, reps, relation]);
        table.push(row);
    }
    table
}

/// Every comparison (the first [`LISTED_COMPARISONS`]): its penalty with
/// interval, repetitions and outcome; the wide view adds the probe's median
/// cost alone and beside the set, with CVs. `unit` names the clock ("TSC").
fn comparisons_table(comparisons: &[ComparisonRecord], unit: &str, view: &View) -> Grid {
    let mut table = Grid::default();
    let alone = format!("alone {unit}/B (CV)");
    let loaded = format!("beside {unit}/B (CV)");
    let mut header = vec!["#", "probe", "beside", penalty_heading(view), "95 % CI"];
    if view.wide {
        header.extend([alone.as_str(), loaded.as_str(), "reps"]);
    } else {
        header.push("n");
    }
    header.push("outcome");
    table.push(header);
    let median_cv = |costs: &[f64]| match spread(costs) {
        Some(s) => format!("{} ({:.1} %)", sig4(s.median), Fixed(s.cv * 100.0)),
        None => "—".into(),
    };
    for record in comparisons.iter().take(LISTED_COMPARISONS) {
        let (penalty, ci) = penalty_text(record, view);
        let mut row = vec![
            record.index.to_string(),
            record.comparison.probe.to_string(),
            record.comparison.against.to_string(),
            penalty,
            ci,
        ];
        if view.wide {
            row.extend([
                median_cv(&record.alone_costs),
                median_cv(&record.loaded_costs),
            ]);
        }
        row.extend([
            record.loaded_costs.len().to_string(),
            record.outcome.as_str().into(),
        ]);
        table.push(row);
    }
    table
}

impl Document for PairsResult {
    fn outcome(&self) -> Outcome {
        Outcome::Map(self.verdict)
    }
}

/// The line on `--first-pass latency`: what the pass measured and the sets
/// the search stayed within (or why it searched the whole machine).
fn first_pass(pass: &FirstPass) -> String {
    let measured = format!(
        "First pass: latency, {} of {} pairs, {}, {:.1} s (in the measuring time above)",
        pass.pairs_measured,
        pass.all_pairs,
        count(pass.samples_taken, "sample"),
        pass.seconds
    );
    if let Some(why) = &pass.unused {
        return format!("{measured}; not used: {why}; the whole machine was searched");
    }
    let sets: Vec<String> = pass
        .candidate_sets
        .iter()
        .filter(|set| set.cpus.len() > 1)
        .map(|set| {
            format!(
                "{}{}",
                set.cpus,
                if set.stacked { " (stacked)" } else { "" }
            )
        })
        .collect();
    let sets = if sets.is_empty() {
        "none: every CPU alone".to_owned()
    } else {
        sets.join(" / ")
    };
    format!(
        "{measured}; candidate sets {sets}; every sibling confirmed by a penalty, CPUs of \
         different sets apart by latency"
    )
}
