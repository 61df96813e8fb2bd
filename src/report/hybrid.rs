//! The human view of a `hybrid` study (printed by `hybrid`, re-rendered by
//! `report FILE`): per-class speed, the ceiling, each scheme against it,
//! and the per-worker records that explain every aggregate.

use crate::units::with_interval;

use crate::units::DASH;

use crate::exit::Outcome;
use crate::judge::hybrid::{ClassVerdict, Ratio, SchemeStats, SpeedClass, WorkerRow};
use crate::judge::stats::Spread;
use crate::report::blocks::{Blocks, Grid};
use crate::report::document::{Document, HumanView};
use crate::report::gate::{evidence_and_notes, noise_line};
use crate::report::labels::cpu_list;
use crate::report::table::{
    check_lines, excluded_lines, headline, host_line, legend, marked, validity_verdict,
};
use crate::report::view::View;
use crate::saved::HybridResult;
use crate::units::{Fixed, bytes, count, sig4};

/// The whole human view: the verdict on the classes and the schemes'
/// sentence first, what to run next, then the baselines, the classes, the
/// schemes, the workers and the checks.
impl HumanView for HybridResult {
    fn blocks(&self, view: &View) -> Blocks {
        let result = self;
        let validity = validity_verdict(
            "study",
            result.judged.valid,
            &result.judged.checks,
            result.options.strict,
        );
        let verdict = match result.judged.valid {
            true => format!(
                "verdict: measured classes {} (exit {}); {validity}",
                result.judged.class_judgement.verdict.as_str(),
                result.outcome().exit_status()
            ),
            false => validity,
        };
        let mut out = headline(
            &result.head,
            "the rounds done are",
            verdict,
            &result.sentence,
        );
        out.line(
            "next: `placement-study run --sweep` gives the scaling curve in this order, and \
         `placement-study observe` shows which class Linux runs the work on",
            2,
        );
        out.gap().line(host_line(&result.head), 2);
        let rounds = result
            .judged
            .baselines
            .iter()
            .filter_map(|b| b.wall_ms.as_ref().map(|w| w.reps))
            .max()
            .unwrap_or(0);
        let work = format!(
            "work: {} items, each {} passes of kernel {} over a worker's {} buffer ({} per item); \
         {} per scheme on CPUs {} ({}), {} items each in equal shares",
            result.work.items,
            result.work.passes_per_item,
            result.setup.kernel,
            bytes(result.setup.buffer_bytes as u64),
            bytes(result.work.item_bytes),
            count(result.options.workers, "worker"),
            cpu_list(&result.plan.worker_cpus),
            // Where the machine names no core sibling sets, each CPU is taken
            // for a core: say so rather than claim one per core.
            match result
                .head
                .topology
                .as_ref()
                .and_then(|summary| summary.structure_unknown.as_ref())
            {
                Some(_) => "one per CPU: which CPUs share a core is unknown, so two may share one",
                None => "one per core",
            },
            result.options.items_per_worker,
        );
        out.line(work, 2);
        out.line(
            format!(
                "times are wall time on CLOCK_MONOTONIC in ms: median, CV, min–max over {} (after \
             {}; baselines and schemes interleaved by round)",
                count(rounds, "round"),
                count(result.options.warmups, "warm-up"),
            ),
            2,
        );
        if !result.judged.valid {
            out.gap().banner(
                "INVALID STUDY: the numbers below failed their validity checks (see Checks); none \
             of them may be quoted",
            );
        }
        out.gap()
            .heading(format!(
                "Per-class speed: pinned single-worker baselines, all {} items on one CPU",
                result.work.items
            ))
            .extend(baselines_table(result, view));
        out.gap()
            .heading("Measured classes, fastest first")
            .extend(classes_table(result, view));
        let judgement = &result.judged.class_judgement;
        let published: Vec<String> = result
            .classes
            .iter()
            .map(|c| format!("{} (CPUs {})", c.name, c.cpus))
            .collect();
        out.line(
            format!(
                "published: {}; measured classes {}",
                published.join(", "),
                match judgement.verdict {
                    ClassVerdict::Agree => "agree",
                    ClassVerdict::Differ => "DIFFER",
                    ClassVerdict::Inconclusive => "inconclusive",
                }
            ),
            2,
        );
        for note in &judgement.notes {
            out.line(format!("  {note}"), 4);
        }
        if !judgement.batches.is_empty() {
            let groupings: Vec<String> = judgement
                .batches
                .iter()
                .map(|b| {
                    let groups: Vec<String> = b.measured.iter().map(|g| g.to_string()).collect();
                    format!(
                        "batch {} ({} rounds): {}",
                        b.index,
                        b.rounds.len(),
                        groups.join(" / ")
                    )
                })
                .collect();
            out.line(
                format!(
                    "batches, {} ms apart, group the CPUs {}: {}",
                    result.options.batching.batch_gap_ms,
                    if judgement.batches_agree() {
                        "alike"
                    } else {
                        "DIFFERENTLY"
                    },
                    groupings.join("; ")
                ),
                2,
            );
        }
        if let Some(noise) = &result.judged.noise {
            out.line(noise_line(noise), 2);
        }
        out.line(format!("ceiling: {}", ceiling_line(result)), 2);
        out.gap()
            .line(
                format!(
                    "Schemes: the same {} items on {}; speedup against the fastest class's pinned \
                 baseline",
                    result.work.items,
                    count(result.options.workers, "worker"),
                ),
                2,
            )
            .extend(schemes_table(&result.judged.schemes, view));
        out.gap().heading("Idle and work per class").table(
            class_share_table(&result.judged.schemes),
            "no scheme was measured",
        );
        for scheme in &result.judged.schemes {
            for ratio in &scheme.work_ratios {
                let line = format!(
                    "{}: a {} worker took {:.2}× the items of a {} worker; their measured speed \
                 ratio is {:.2} ({:+.1} %)",
                    scheme.name(),
                    result
                        .judged
                        .speed_classes
                        .first()
                        .map_or("fastest", |c| c.label.as_str()),
                    Fixed(ratio.work_ratio),
                    ratio.class,
                    Fixed(ratio.speed_ratio),
                    Fixed(ratio.difference * 100.0)
                );
                out.line(line, 2);
            }
        }
        for scheme in &result.judged.schemes {
            out.gap()
                .heading(format!(
                    "Workers, {} (median [min–max] over rounds)",
                    scheme.name()
                ))
                .table(
                    workers_table(&scheme.worker_rows, view),
                    "no round of it was kept",
                );
        }
        out.gap()
            .heading("Checks")
            .extend(check_lines(&result.judged.checks));
        let baseline_excluded = result.judged.baselines.iter().flat_map(|b| {
            excluded_lines(&b.excluded)
                .into_iter()
                .map(move |line| format!("{line} (CPU {})", b.cpu))
        });
        for line in baseline_excluded.chain(excluded_lines(&result.judged.excluded)) {
            out.line(format!("  {line}"), 4);
        }
        out.extend(evidence_and_notes(&result.head.evidence, &result.warnings));
        out
    }
}

/// A ratio with its interval ([`with_interval`]).
pub(crate) fn ratio(r: &Option<Ratio>) -> String {
    with_interval(r.as_ref().map(|r| (r.value, r.ci95_low, r.ci95_high)))
}

/// The median, CV, min–max and repetitions columns of a spread; the CV a
/// bare number in the default view, whose heading says "CV %".
pub(crate) fn spread_cells(s: &Option<Spread>, view: &View) -> [String; 4] {
    match s {
        Some(s) if view.wide => [
            sig4(s.median),
            format!("{:.1} %", Fixed(s.cv * 100.0)),
            format!("{}–{}", sig4(s.min), sig4(s.max)),
            s.reps.to_string(),
        ],
        Some(s) => [
            sig4(s.median),
            format!("{:.1}", Fixed(s.cv * 100.0)),
            format!("{}–{}", sig4(s.min), sig4(s.max)),
            s.reps.to_string(),
        ],
        None => [DASH.into(), DASH.into(), DASH.into(), "0".into()],
    }
}

/// A fraction spread as "27.1 % [25.0–29.3]".
fn percent_spread(s: &Option<Spread>) -> String {
    s.as_ref().map_or(DASH.into(), |s| {
        format!(
            "{:.1} % [{:.1}–{:.1}]",
            Fixed(s.median * 100.0),
            Fixed(s.min * 100.0),
            Fixed(s.max * 100.0)
        )
    })
}

/// Each CPU's pinned baseline; the default view leaves out the min–max.
fn baselines_table(result: &HybridResult, view: &View) -> Blocks {
    let mut table = Grid::default();
    if view.wide {
        table.push([
            "CPU",
            "class",
            "wall ms",
            "CV",
            "min–max",
            "reps",
            "items/ms",
            "× fastest [95 % CI]",
        ]);
    } else {
        table.push([
            "CPU",
            "class",
            "wall ms",
            "CV %",
            "n",
            "items/ms",
            "× fastest [95 % CI]",
        ]);
    }
    for b in &result.judged.baselines {
        let [median, cv, range, reps] = spread_cells(&b.wall_ms, view);
        let mut row = vec![
            marked(b.cpu, b.quotable, view),
            b.class.to_string(),
            median,
            cv,
        ];
        if view.wide {
            row.push(range);
        }
        row.extend([
            reps,
            b.items_per_ms.map_or(DASH.into(), sig4),
            ratio(&b.slowdown),
        ]);
        table.push(row);
    }
    let marks = result.judged.baselines.iter().any(|b| !b.quotable);
    legend(table, marks, view)
}

/// The measured classes; the default view leaves out how much slower each
/// is (the inverse of its speed).
fn classes_table(result: &HybridResult, view: &View) -> Blocks {
    let mut table = Grid::default();
    let mut header = vec![
        "class",
        "measured on",
        "worker CPUs",
        "wall ms [min–max]",
        "speed [95 % CI]",
    ];
    if view.wide {
        header.push("slower by");
    }
    table.push(header);
    // A class's wall time is its baselines' median, and its speed that
    // against the fastest class's: marked when a baseline behind either is
    // over the CV bar.
    let fastest = result.judged.speed_classes.first();
    let quotable = |class: &SpeedClass| {
        result
            .judged
            .baselines
            .iter()
            .filter(|b| {
                [Some(class), fastest]
                    .into_iter()
                    .flatten()
                    .any(|c| c.measured_cpus.contains(b.cpu))
            })
            .all(|b| b.quotable)
    };
    for class in &result.judged.speed_classes {
        let mut row = vec![
            marked(&class.label, quotable(class), view),
            class.measured_cpus.to_string(),
            class.cpus.to_string(),
            class.wall_ms.as_ref().map_or(DASH.into(), |w| {
                format!("{} [{}–{}]", sig4(w.median), sig4(w.min), sig4(w.max))
            }),
            ratio(&class.speed),
        ];
        if view.wide {
            row.push(
                class
                    .slowdown
                    .as_ref()
                    .map_or(DASH.into(), |s| format!("{:.2}×", s.value)),
            );
        }
        table.push(row);
    }
    let marks = result.judged.speed_classes.iter().any(|c| !quotable(c));
    legend(table, marks, view)
}

/// "1.46 fastest-class CPUs over 2 worker CPUs (1 × 1.00 + 1 × 0.46)".
fn ceiling_line(result: &HybridResult) -> String {
    let Some(ceiling) = result.judged.ceiling else {
        return "unknown: a worker CPU has no measured speed".into();
    };
    let terms: Vec<String> = result
        .judged
        .speed_classes
        .iter()
        .filter_map(|class| {
            let workers = result
                .plan
                .worker_cpus
                .iter()
                .filter(|cpu| class.cpus.contains(**cpu))
                .count();
            let speed = class.speed.as_ref()?.value;
            (workers > 0).then(|| format!("{workers} × {speed:.2} ({})", class.label))
        })
        .collect();
    format!(
        "{ceiling:.2} fastest-class CPUs' worth over {} = {}",
        count(result.plan.worker_cpus.len(), "worker CPU"),
        terms.join(" + ")
    )
}

/// Each scheme against the ceiling; the default view leaves out the
/// min–max and the idle share (the next table has it per class).
fn schemes_table(schemes: &[SchemeStats], view: &View) -> Blocks {
    let mut table = Grid::default();
    if view.wide {
        table.push([
            "scheme",
            "wall ms",
            "CV",
            "min–max",
            "reps",
            "speedup [95 % CI]",
            "of ceiling",
            "idle [min–max]",
        ]);
    } else {
        table.push([
            "scheme",
            "wall ms",
            "CV %",
            "n",
            "speedup [95 % CI]",
            "of ceiling",
        ]);
    }
    for s in schemes {
        let [median, cv, range, reps] = spread_cells(&s.wall_ms, view);
        let mut row = vec![marked(s.name(), s.quotable, view), median, cv];
        if view.wide {
            row.push(range);
        }
        row.extend([
            reps,
            ratio(&s.speedup),
            s.of_ceiling
                .map_or(DASH.into(), |f| format!("{:.0} %", f * 100.0)),
        ]);
        if view.wide {
            row.push(percent_spread(&s.idle));
        }
        table.push(row);
    }
    let marks = schemes.iter().any(|s| !s.quotable);
    legend(table, marks, view)
}

fn class_share_table(schemes: &[SchemeStats]) -> Grid {
    let mut table = Grid::default();
    table.push(["scheme", "class", "workers", "items", "idle [min–max]"]);
    for s in schemes {
        for share in &s.classes {
            table.push([
                s.name(),
                share.class.clone(),
                share.workers.map_or("OS".into(), |n| n.to_string()),
                share
                    .items
                    .map_or(DASH.into(), |f| format!("{:.1} %", f * 100.0)),
                percent_spread(&share.idle),
            ]);
        }
    }
    table
}

/// Each worker's items, steals, busy and idle time; the default view
/// leaves out its items per ms (its items over its busy time).
fn workers_table(rows: &[WorkerRow], view: &View) -> Grid {
    let mut table = Grid::default();
    let mut header = vec![
        "worker", "CPU", "class", "items", "stolen", "busy ms", "idle ms",
    ];
    if view.wide {
        header.push("items/ms");
    }
    table.push(header);
    // The median, then the range over rounds: "70.6 [69.9–71.2]", "68 [66–70]".
    let ranged = |s: &Option<Spread>, digits: usize| {
        s.as_ref().map_or(DASH.into(), |s| {
            format!(
                "{:.digits$} [{:.digits$}–{:.digits$}]",
                s.median, s.min, s.max
            )
        })
    };
    for row in rows {
        let mut record = vec![
            row.worker.to_string(),
            match row.pinned_cpu {
                Some(cpu) => cpu.to_string(),
                None => format!("OS: {}", row.ran_on),
            },
            row.class.clone().unwrap_or_else(|| DASH.into()),
            ranged(&row.items, 0),
            row.stolen.map_or(DASH.into(), |n| format!("{n:.0}")),
            ranged(&row.busy_ms, 1),
            ranged(&row.idle_ms, 1),
        ];
        if view.wide {
            record.push(row.items_per_ms.map_or(DASH.into(), sig4));
        }
        table.push(record);
    }
    table
}

impl Document for HybridResult {
    fn outcome(&self) -> Outcome {
        if self.judged.valid {
            Outcome::Classes(self.judged.class_judgement.verdict)
        } else {
            Outcome::InvalidRun
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the machine names no core sibling sets, the work line says
    /// the workers are one per CPU, not one per core.
    #[test]
    fn workers_on_an_unknown_structure_are_one_per_cpu_not_per_core() {
        let mut result: HybridResult = serde_json::from_str(include_str!(
            "../../fixtures/results/hybrid-guest-slow-second-core.json"
        ))
        .unwrap();
        let one_per_core = "on CPUs 0-1 (one per core)";
        assert!(result.render(&View::default()).contains(one_per_core));
        let summary = result.head.topology.as_mut().unwrap();
        summary.structure_unknown = Some("no core sibling set for CPUs 0-1".into());
        let unwrapped = View {
            width: 1000,
            ..View::default()
        };
        let text = result.render(&unwrapped);
        assert!(
            text.contains(
                "(one per CPU: which CPUs share a core is unknown, so two may share one)"
            ),
            "{text}"
        );
    }
}
