//! The human view of `memory`: the verdict, the ladder's plateaus and the
//! steps between them against the published cache levels, each published
//! shared cache's pairs inside and outside, and the NUMA matrix against
//! the published distances.

use crate::exit::Outcome;
use crate::judge::latency::PairLatency;
use crate::judge::memory::{LevelStatus, Plateau};
use crate::judge::memory_sharing::{SharingJudgement, SharingStatus};
use crate::report::blocks::{Blocks, Grid};
use crate::report::document::{Document, HumanView};
use crate::report::gate::{evidence_and_notes, verdict_heading};
use crate::report::view::View;
use crate::saved::MemoryResult;
use crate::units::{bytes, capitalise, nanos as ns};

/// "5.2 GB/s".
fn bandwidth(bytes_per_second: f64) -> String {
    format!("{:.1} GB/s", bytes_per_second / 1e9)
}

impl HumanView for MemoryResult {
    /// The verdict and its sentence first, what to run next, then the
    /// plateaus, the published levels, the shared levels, and the matrix.
    fn blocks(&self, view: &View) -> Blocks {
        let result = self;
        let mut out = verdict_heading(result.head.complete, "sizes");
        out.answer(format!(
            "verdict: {} (exit {})",
            result.verdict.as_str(),
            Outcome::Map(result.verdict).exit_status()
        ));
        out.line(capitalise(&result.sentence), 0);
        out.line(
            "next: `placement-study run --arms cache:L3:0,node:0 -- COMMAND` measures what \
             spanning a cache or a node costs your program",
            2,
        );
        let ladder = &result.ladder;
        out.gap().line(
            format!(
                "cache ladder: a dependent-load chase on CPU {}, one load per {} B line in a \
                 random cycle, {} buffer sizes from {} to {}; ns per load on {} (the 10th \
                 percentile of each size's samples), {:.1} s measuring{}",
                ladder.cpu,
                ladder.line_bytes,
                ladder.points.len(),
                ladder
                    .points
                    .first()
                    .map_or_else(String::new, |p| bytes(p.size_bytes)),
                ladder
                    .points
                    .last()
                    .map_or_else(String::new, |p| bytes(p.size_bytes)),
                ladder.clock,
                ladder.seconds,
                match ladder.huge_bytes {
                    Some(huge) if huge > 0 => format!("; {} in huge pages", bytes(huge)),
                    _ => String::new(),
                }
            ),
            2,
        );
        let judged = &result.ladder_judgement;
        out.gap().heading("Plateaus (sizes with one latency)");
        let mut plateaus = Grid::default();
        plateaus.push(["sizes", "ns per load", "low–high", "n sizes"]);
        for p in &judged.plateaus {
            plateaus.push(plateau_row(p));
        }
        out.table(plateaus, "no plateau: the ladder measured no size");
        out.gap()
            .heading("Published cache levels against the steps");
        let mut levels = Grid::default();
        levels.push(["level", "published", "verdict", "step"]);
        for level in &judged.levels {
            let step = level.step.and_then(|i| judged.steps.get(i)).map_or_else(
                || "—".into(),
                |s| format!("{} → {}", bytes(s.below_bytes), bytes(s.above_bytes)),
            );
            levels.push([
                format!("L{}", level.level),
                bytes(level.size_bytes),
                match level.status {
                    LevelStatus::Agreed => "agreed".to_string(),
                    LevelStatus::Fake => "FAKE".to_string(),
                    LevelStatus::Undecided => "undecided".to_string(),
                    LevelStatus::TlbStep => "TLB's step too".to_string(),
                },
                step,
            ]);
        }
        out.table(levels, "no cache level is published");
        for step in judged.steps.iter().filter(|s| s.level.is_none()) {
            let (what, why) = match step.translation {
                true => (
                    "translation step",
                    "a chase of one line per page steps there too: the TLB's reach, not a cache",
                ),
                false => ("hidden step", "no published level there"),
            };
            out.line(
                format!(
                    "{what}: {} → {} (× {:.1}), {why}",
                    bytes(step.below_bytes),
                    bytes(step.above_bytes),
                    step.gap.ratio
                ),
                2,
            );
        }
        out.line(format!("ladder: {}", judged.reason), 2);
        if let Some(sharing) = &result.sharing {
            sharing_section(&mut out, sharing);
        }
        let numa = &result.numa_judgement;
        out.gap().heading(
            "NUMA: latency and read bandwidth from each CPU node's CPUs to each node's memory",
        );
        let mut matrix = Grid::default();
        let mut header = vec![
            "CPUs of".to_string(),
            "memory of".into(),
            "latency".into(),
            "× local".into(),
            "distance / 10".into(),
        ];
        if view.wide {
            header.push("bandwidth".into());
        }
        header.push("agrees".into());
        matrix.push(header);
        for row in &numa.rows {
            for cell in &row.cells {
                let mut cells = vec![
                    format!("node {}", cell.cpu_node),
                    format!(
                        "node {}{}",
                        cell.memory_node,
                        if row.memory_only {
                            " (memory only)"
                        } else {
                            ""
                        }
                    ),
                    cell.latency
                        .as_ref()
                        .map_or_else(|| "not placed".into(), |l| ns(l.ns)),
                    cell.ratio.map_or_else(|| "—".into(), |r| format!("{r:.2}")),
                    cell.published_ratio
                        .map_or_else(|| "—".into(), |r| format!("{r:.1}")),
                ];
                if view.wide {
                    cells.push(
                        cell.bandwidth
                            .as_ref()
                            .map_or_else(|| "—".into(), |b| bandwidth(b.bytes_per_second)),
                    );
                }
                cells.push(match cell.agrees {
                    Some(true) => "yes".into(),
                    Some(false) => "NO".into(),
                    None => "—".into(),
                });
                matrix.push(cells);
            }
        }
        out.table(matrix, "no NUMA cell was measured");
        out.line(format!("NUMA: {}", numa.reason), 2);
        out.extend(evidence_and_notes(&result.head.evidence, &result.warnings));
        out
    }
}

/// Each published shared cache: a pair inside against one outside, or one
/// line where no pair could be measured.
fn sharing_section(out: &mut Blocks, sharing: &SharingJudgement) {
    if !sharing.measured() {
        out.gap()
            .line(format!("shared caches: {}", sharing.reason), 2);
        return;
    }
    out.gap()
        .heading("Shared caches: a line passed inside each, against one across its edge");
    let mut levels = Grid::default();
    levels.push(["level", "shared by", "inside", "outside", "verdict"]);
    for level in &sharing.levels {
        let plan = &level.plan;
        levels.push([
            format!("L{}", plan.level),
            format!("CPUs {}", plan.cpus),
            pair_cell(plan.inside, level.inside_latency.as_ref()),
            pair_cell(plan.outside, level.outside_latency.as_ref()),
            match level.status {
                SharingStatus::Agreed => "agreed".to_string(),
                SharingStatus::Differs => "DIFFERS".to_string(),
                SharingStatus::Undecided => "undecided".to_string(),
            },
        ]);
    }
    out.table(levels, "no published cache is shared");
    out.line(format!("sharing: {}", sharing.reason), 2);
}

/// "0 and 1: 40.0 ns", "0 and 8: time-sliced", "—" (no pair planned).
fn pair_cell(cpus: Option<[u32; 2]>, pair: Option<&PairLatency>) -> String {
    let Some([a, b]) = cpus else {
        return "—".into();
    };
    let how = match pair {
        None => "not measured".to_string(),
        Some(p) if p.time_sliced() => "time-sliced".to_string(),
        Some(p) => p.one_way_ns.map_or_else(|| "no progress".into(), ns),
    };
    format!("{a} and {b}: {how}")
}

fn plateau_row(p: &Plateau) -> [String; 4] {
    [
        if p.first_bytes == p.last_bytes {
            bytes(p.first_bytes)
        } else {
            format!("{} – {}", bytes(p.first_bytes), bytes(p.last_bytes))
        },
        ns(p.ns),
        format!("{} – {}", ns(p.low_ns), ns(p.high_ns)),
        p.sizes.to_string(),
    ]
}

impl Document for MemoryResult {
    fn outcome(&self) -> Outcome {
        Outcome::Map(self.verdict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuset::CpuSet;
    use crate::judge::memory_sharing::judge_sharing;
    use crate::plan::memory::SharingPlan;

    fn saved() -> MemoryResult {
        serde_json::from_str(include_str!("../../fixtures/results/memory-vm.json")).unwrap()
    }

    fn wide() -> View {
        View {
            width: 1000,
            ..View::default()
        }
    }

    fn l3(cpus: &[u32], outside: Option<[u32; 2]>) -> SharingPlan {
        SharingPlan {
            level: 3,
            kind: "Unified".into(),
            cpus: CpuSet::from_cpus(cpus.iter().copied()),
            inside: Some([0, 1]),
            outside,
        }
    }

    /// A file saved before the check shows no sharing section; one where
    /// nothing could be measured says why in one line.
    #[test]
    fn sharing_not_measured_is_one_line() {
        let mut result = saved();
        result.sharing = None;
        assert!(!result.render(&wide()).contains("shared"));
        result.sharing = Some(judge_sharing(0, &[l3(&[0, 1], None)], &[]));
        let text = result.render(&wide());
        assert!(
            text.contains(
                "shared caches: L3 shared by CPUs 0-1: no allowed CPU outside it to compare \
                 with, so not measured"
            ),
            "{text}"
        );
        assert!(!text.contains("Shared caches:"), "{text}");
    }

    /// Measured pairs are a table, the verdict word per level.
    #[test]
    fn measured_sharing_is_a_table() {
        use crate::judge::latency::recorded::pair;
        let mut result = saved();
        let plans = [l3(&[0, 1, 2, 3], Some([0, 4]))];
        let measured = [pair(0, 1, Some(118.0)), pair(0, 4, Some(121.0))];
        result.sharing = Some(judge_sharing(0, &plans, &measured));
        let text = result.render(&wide());
        let row = text
            .lines()
            .find(|l| l.contains("CPUs 0-3"))
            .unwrap_or_else(|| panic!("{text}"));
        for cell in ["L3", "0 and 1: 118 ns", "0 and 4: 121 ns", "DIFFERS"] {
            assert!(row.contains(cell), "{row}");
        }
        assert!(
            text.contains("sharing: L3 published as shared by CPUs 0-3, but CPUs 0 and 1"),
            "{text}"
        );
        assert_eq!(
            result.caches_verdict(),
            crate::judge::pairs::MapVerdict::Differ
        );
    }
}
