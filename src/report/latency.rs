//! The human view of `latency`: the verdict, the matrix (up to
//! [`MATRIX_CPUS`] CPUs; a summary by domain above), the clusters with the
//! gaps that separate them, and each published level against the measured
//! domains at it.

use crate::cpuset::cpu_pair;
use crate::exit::Outcome;
use crate::judge::latency::PairLatency;
use crate::judge::pairs::{PairRelation, map_text};
use crate::judge::warnings::Warning;
use crate::report::blocks::{Blocks, Grid};
use crate::report::document::{Document, HumanView};
use crate::report::gate::{evidence_and_notes, verdict_heading};
use crate::report::view::View;
use crate::saved::LatencyResult;
use crate::units::{capitalise, count, nanos};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Up to this many CPUs the view prints the whole matrix, and every pair.
pub const MATRIX_CPUS: usize = 16;

/// "verdict: agree (exit 0)"; for a study a signal stopped, no verdict but
/// the stop and the status it exits with ("verdict: none, stopped by
/// SIGINT (exit 130)"), never the inconclusive verdict's exit 5.
fn verdict_line(result: &LatencyResult) -> String {
    let stopped = result.warnings.iter().find_map(Warning::stop_signal);
    match stopped {
        Some(signal) if !result.head.complete => format!(
            "verdict: none, stopped by {} (exit {})",
            signal.name(),
            Outcome::Stopped(signal).exit_status()
        ),
        _ => format!(
            "verdict: {} (exit {})",
            result.verdict.as_str(),
            Outcome::Map(result.verdict).exit_status()
        ),
    }
}

/// The whole human view: the verdict and its sentence first, what to run
/// next, then the matrix, the domains, the published levels and the
/// checks.
impl HumanView for LatencyResult {
    fn blocks(&self, view: &View) -> Blocks {
        let result = self;
        let mut out = verdict_heading(result.head.complete, "pairs");
        out.answer(verdict_line(result));
        out.line(capitalise(&result.sentence), 0);
        out.line(
            "next: `placement-study pairs` measures which CPUs share a core's execution units, \
         and `placement-study run -- COMMAND` what these domains cost your program",
            2,
        );
        let options = &result.options;
        let units = format!(
            "one-way latency: half a round trip of a cache line passed by compare-and-swap, the 10th \
         percentile of up to {} samples per pair of {} round trips each (wall time; a sample ends \
         at {} ms)",
            options.samples, options.round_trips_per_sample, options.sample_ms
        );
        out.gap().line(units, 2);
        if result.tested.len() <= MATRIX_CPUS {
            out.gap().extend(matrix(result, view));
            out.gap()
                .table(pairs_table(&result.pairs), "no pair was measured");
        }
        if let Some(control) = &result.control {
            let line = format!(
                "control (both threads on CPU {}): {} — {}",
                control.cpus[0],
                control
                    .one_way_ns
                    .map_or_else(|| "no progress".into(), nanos),
                result
                    .control_check
                    .as_ref()
                    .map_or("", |c| c.detail.as_str())
            );
            out.line(line, 2);
        }

        let judgement = &result.judgement;
        out.gap()
            .heading("Domains (latencies split where one is at least 1.5 × the one below)");
        let mut clusters = Grid::default();
        clusters.push(["class", "one-way", "pairs", "measured domains"]);
        for cluster in &judgement.clusters {
            let range = match (cluster.low_ns, cluster.high_ns) {
                (Some(low), Some(high)) if low == high => nanos(low),
                (Some(low), Some(high)) => format!("{} – {}", nanos(low), nanos(high)),
                _ => "no progress".to_string(),
            };
            clusters.push([
                cluster.class.as_str().to_string(),
                range,
                cluster.pairs.len().to_string(),
                map_text(&cluster.domains),
            ]);
        }
        out.table(clusters, "no latency was measured, so no domain");
        for gap in &judgement.gaps {
            out.line(
                format!(
                    "gap: {} → {} (× {:.1})",
                    nanos(gap.below_ns),
                    nanos(gap.above_ns),
                    gap.ratio
                ),
                2,
            );
        }

        out.gap()
            .heading("Published levels against the measured domains");
        let mut levels = Grid::default();
        levels.push([
            "level",
            "published",
            "measured",
            "fake",
            "hidden",
            "verdict",
        ]);
        for level in &judgement.levels {
            let pairs = |relation: PairRelation| {
                let found = level.map.pairs.iter().filter(|p| p.relation == relation);
                found.count().to_string()
            };
            levels.push([
                level.level.as_str().to_string(),
                match &level.map.published_unknown {
                    Some(_) => "unknown".to_string(),
                    None => map_text(&level.map.published),
                },
                map_text(&level.map.measured),
                pairs(PairRelation::Fake),
                pairs(PairRelation::Hidden),
                level.verdict.as_str().to_string(),
            ]);
        }
        out.table(levels, "no level is published");

        let effort = &result.effort;
        let mut line = format!(
            "{} of {} measured{}, {:.1} s, {} ({})",
            count(effort.pairs_measured, "pair"),
            effort.all_pairs,
            if effort.pairs_inferred > 0 {
                format!(
                    ", {} inferred from a representative's row (\"via\")",
                    effort.pairs_inferred
                )
            } else {
                String::new()
            },
            effort.measuring_seconds,
            count(effort.samples_taken, "sample"),
            if options.early_stop {
                "each pair until its latency settled"
            } else {
                "every sample asked for"
            }
        );
        if effort.bridges > 0 {
            let _ = write!(
                line,
                "; {} across a row's classes checked what it inferred: {}",
                count(effort.bridges, "bridge"),
                match effort.bridges_not_borne_out {
                    0 => "each bore its row out".to_string(),
                    n => format!("{n} did not, so every pair across those classes was measured"),
                }
            );
        }
        if effort.gap_edges_rechecked > 0 {
            let _ = write!(
                line,
                "; {} just above a gap measured again (the faster reading kept)",
                count(effort.gap_edges_rechecked, "pair")
            );
        }
        if effort.pairs_at_once > 1 {
            let _ = write!(line, "; {} pairs at once", effort.pairs_at_once);
        }
        if effort.budget_exhausted {
            let _ = write!(
                line,
                "; the time budget of {:.0} s ran out",
                options.time_budget_seconds.unwrap_or_default()
            );
        }
        out.gap().line(line, 2);
        out.line(
            format!(
                "pinning: {} — {}",
                result.pinning.status.as_str(),
                result.pinning.detail
            ),
            2,
        );
        if let Some(parallel) = &result.parallel_check {
            out.line(
                format!(
                    "parallel: {} — {}",
                    parallel.status.as_str(),
                    parallel.detail
                ),
                2,
            );
        }
        out.extend(evidence_and_notes(&result.head.evidence, &result.warnings));
        out
    }
}

/// The CPU × CPU matrix of one-way latencies ("—" on the diagonal, "?"
/// for a pair not measured, "stall" for one without progress).
fn matrix(result: &LatencyResult, view: &View) -> Blocks {
    let by_pair: BTreeMap<[u32; 2], &PairLatency> =
        result.pairs.iter().map(|p| (p.cpus, p)).collect();
    let cpus = result.tested.cpus();
    let mut table = Grid::default();
    table.push(std::iter::once("CPU".to_string()).chain(cpus.iter().map(u32::to_string)));
    for &a in cpus {
        let cells = cpus.iter().map(|&b| {
            if a == b {
                return "—".to_string();
            }
            match by_pair.get(&cpu_pair(a, b)) {
                None => "?".to_string(),
                Some(pair) => pair.one_way_ns.map_or_else(|| "stall".into(), nanos),
            }
        });
        table.push(std::iter::once(a.to_string()).chain(cells));
    }
    // Squeezed below its cells, a matrix breaks every latency over two
    // lines: where it does not fit, say where it is instead.
    let drawn = table.to_terminal(&View {
        wide: true,
        ..*view
    });
    let widest = drawn.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut blocks = Blocks::new();
    if view.wide || widest <= view.width {
        blocks.table(table, "no CPU was tested");
    } else {
        blocks.line(
            format!(
                "(the {n} × {n} matrix needs {widest} columns: --wide shows it; every pair is \
                 below, in --json and in --csv)",
                n = cpus.len()
            ),
            0,
        );
    }
    blocks
}

/// Every measured pair: latency, spread, samples.
fn pairs_table(pairs: &[PairLatency]) -> Grid {
    let mut table = Grid::default();
    table.push([
        "CPUs",
        "one-way",
        "p10 – p90",
        "samples",
        "at bound",
        "pinned",
    ]);
    for pair in pairs {
        let spread = match (pair.p10_ns, pair.p90_ns) {
            (Some(low), Some(high)) => format!("{} – {}", nanos(low), nanos(high)),
            _ => "no progress within a sample's bound".to_string(),
        };
        table.push([
            format!("{}-{}", pair.cpus[0], pair.cpus[1]),
            pair.one_way_ns.map_or_else(|| "—".into(), nanos),
            spread,
            pair.samples.to_string(),
            pair.bounded_samples.to_string(),
            match (pair.inferred_from, pair.pinned) {
                (Some(representative), _) => format!("via {representative}"),
                (None, true) => "yes".to_string(),
                (None, false) => "no".to_string(),
            },
        ]);
    }
    table
}

impl Document for LatencyResult {
    fn outcome(&self) -> Outcome {
        Outcome::Map(self.verdict)
    }
}
