//! The human view of a run (printed by `run`, re-rendered by `report FILE`).

use crate::exit::Outcome;
use crate::judge::arms::measured;
use crate::judge::checks::CheckName;
use crate::judge::cost;
use crate::judge::stats::median;
use crate::plan::Arm;
use crate::report::blocks::{Blocks, Grid};
use crate::report::document::{Document, HumanView};
use crate::report::table::{
    arms_table, banners, check_lines, excluded_lines, headline_table, host_line, legend, marked,
    membind_line, validity_verdict,
};
use crate::report::view::View;
use crate::report::warnings::{clock_note, counter_notes, notes_block};
use crate::saved::RunResult;
use crate::units::{count, percent, sig4};
use std::collections::BTreeMap;
use tabled::Tabled;

/// The whole human view: the validity verdict first, what to run next,
/// then the arms, where the time went, and the checks behind the verdict.
impl HumanView for RunResult {
    fn blocks(&self, view: &View) -> Blocks {
        let result = self;
        let mut out = banners(
            result.gated,
            result.head.complete,
            "the repetitions done are",
        );
        let status_of = |name: CheckName| {
            result
                .checks
                .iter()
                .find(|c| c.name == name)
                .map_or("not run", |c| c.status.as_str())
        };
        let verdict = validity_verdict("run", result.valid, &result.checks, result.options.strict);
        out.answer(format!(
            "{verdict} (pinning {}, multiplexing {}, invariance {})",
            status_of(CheckName::Pinning),
            status_of(CheckName::Multiplexing),
            status_of(CheckName::Invariance)
        ));
        if let Some(gate) = &result.gate {
            out.line(format!("gate: {}", gate.sentence), 2);
        }
        out.line(
            "next: `placement-study run -- COMMAND` measures your own program under these arms; \
         `placement-study run --sweep` gives the scaling curve",
            2,
        );
        out.gap().line(host_line(&result.head), 2);
        let setup = format!(
            "{} per arm on {} cores of package {}{}; kernel {} ({} instructions/byte by \
         construction, port bound {} cycles/byte on one core; {} bytes per worker per repetition); \
         {} after {}, arms interleaved",
            count(result.options.workers, "worker"),
            result.plan.class,
            result.plan.package,
            result
                .plan
                .node
                .map(|node| format!(", NUMA node {node}"))
                .unwrap_or_default(),
            result.setup.kernel,
            result.setup.kernel_instructions_per_byte,
            result.setup.kernel_port_bound_cycles_per_byte,
            result.setup.bytes_per_worker,
            repetitions_done(result),
            count(result.options.warmups, "warm-up")
        );
        out.line(setup, 2);
        if let Some(membind) = &result.options.membind {
            let arms = result.plan.placements.iter();
            out.line(
                membind_line(
                    membind,
                    arms.map(|p| (p.arm.to_string(), p.membind.as_deref())),
                    "each worker's buffer bound by mbind and its pages located by move_pages \
                     (the membind check)",
                ),
                2,
            );
        }
        out.line(clock_note(&result.setup), 2);
        out.lines(counter_notes(&result.setup), 2);
        if !result.valid {
            out.gap().banner(
                "INVALID RUN: the numbers below failed their validity checks (see Checks); none of \
             them may be quoted",
            );
        }
        out.gap().extend(headline_table(&result.arms, view));
        out.gap().extend(arms_table(
            &result.arms,
            result.setup.tick_clock,
            true,
            view,
        ));
        out.gap()
            .heading("Where the time went (medians over repetitions)")
            .extend(worker_table(result, view));
        out.gap()
            .heading("Checks")
            .extend(check_lines(&result.checks));
        for line in excluded_lines(&result.excluded) {
            out.line(format!("  {line}"), 4);
        }
        if let Some(share) = dispatcher_share(result) {
            out.line(
                format!(
                    "  dispatcher task-clock: {} of the workers' (it only releases and collects)",
                    percent(share)
                ),
                4,
            );
        }
        out.extend(notes_block(&result.warnings));
        out
    }
}

#[derive(Tabled)]
struct WorkerRow {
    /// The arm, marked when its costs are not quotable: these medians are
    /// its workers' share of them.
    arm: String,
    worker: usize,
    #[tabled(rename = "CPU")]
    cpu: String,
    core: String,
    class: String,
    bytes: u64,
    #[tabled(rename = "busy ms")]
    busy: String,
    #[tabled(rename = "idle at barrier ms")]
    idle: String,
    #[tabled(rename = "cost/byte")]
    cost: String,
    /// Median count of the worker's own cycles counter, per repetition.
    cycles: String,
    /// Median count of the worker's own instructions counter.
    instructions: String,
}

/// Per arm and worker: where it ran and where its time went, over the
/// repetitions the statistics kept (excluded ones are listed, not counted).
/// The default view leaves out the core, the bytes and the counts.
fn worker_table(result: &RunResult, view: &View) -> Blocks {
    let mut per: BTreeMap<(usize, usize), Vec<&crate::measure::WorkerSample>> = BTreeMap::new();
    let order: Vec<Arm> = result.plan.placements.iter().map(|p| p.arm).collect();
    let quotable = |arm: Arm| result.arms.iter().any(|a| a.name == arm && a.quotable);
    for (arm_index, &arm) in order.iter().enumerate() {
        for rep in measured(&result.samples, arm, &result.excluded) {
            for w in &rep.workers {
                per.entry((arm_index, w.worker)).or_default().push(w);
            }
        }
    }
    let rows = per.into_iter().map(|((arm_index, worker), samples)| {
        let cpus: std::collections::BTreeSet<u32> = samples
            .iter()
            .flat_map(|w| [w.cpu_start, w.cpu_end])
            .collect();
        let cpu_label = cpus
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join("/");
        let first_cpu = cpus.iter().next().copied();
        let entry = first_cpu.and_then(|c| result.cpus.iter().find(|e| e.cpu == c));
        let (core, class) = entry
            .map(|e| (e.core.to_string(), e.class.to_string()))
            .unwrap_or_else(|| ("?".into(), "?".into()));
        let ms = |f: &dyn Fn(&crate::measure::WorkerSample) -> u64| {
            sig4(median(
                &samples
                    .iter()
                    .map(|w| f(w) as f64 / 1e6)
                    .collect::<Vec<_>>(),
            ))
        };
        let costs: Vec<f64> = samples
            .iter()
            .filter_map(|w| cost::worker_cost_per_byte(w, result.setup.clock))
            .collect();
        // Counts are whole numbers: shown in full, so exactness shows.
        let median_count = |f: &dyn Fn(&crate::measure::WorkerSample) -> Option<u64>| {
            let counts: Vec<f64> = samples
                .iter()
                .filter_map(|w| f(w))
                .map(|c| c as f64)
                .collect();
            // `samples` is never empty (its first sample made the entry), so
            // this also covers a counter that counted in no sample.
            if counts.len() < samples.len() {
                "—".to_string()
            } else {
                format!("{:.0}", median(&counts))
            }
        };
        WorkerRow {
            arm: marked(order[arm_index], quotable(order[arm_index]), view),
            worker,
            cpu: cpu_label,
            core,
            class,
            bytes: samples[0].bytes,
            busy: ms(&|w| w.busy_ns),
            idle: ms(&|w| w.barrier_wait_ns),
            cost: if costs.is_empty() {
                "—".into()
            } else {
                sig4(median(&costs))
            },
            cycles: median_count(&|w| w.counters.cycles),
            instructions: median_count(&|w| w.counters.instructions),
        }
    });
    let marks = order.iter().any(|&arm| !quotable(arm));
    if view.wide {
        let mut blocks = Blocks::new();
        blocks.table(Grid::of_rows(rows), "no repetition was kept");
        return blocks;
    }
    let mut table = Grid::default();
    let cost_header = format!("{}/B", result.setup.clock.column());
    table.push([
        "arm",
        "worker",
        "CPU",
        "class",
        "busy ms",
        "idle ms",
        &cost_header,
    ]);
    for row in rows {
        table.push([
            row.arm.to_string(),
            row.worker.to_string(),
            row.cpu,
            row.class,
            row.busy,
            row.idle,
            row.cost,
        ]);
    }
    legend(table, marks, view)
}

/// "15 repetitions", or for a stopped run "3 of 15 repetitions".
fn repetitions_done(result: &RunResult) -> String {
    let asked = result.options.reps;
    if result.head.complete {
        return count(asked, "repetition");
    }
    let first_arm = result.plan.placements.first().map(|p| p.arm);
    let done = result
        .samples
        .iter()
        .filter(|r| !r.warmup && Some(r.arm) == first_arm)
        .count();
    format!("{done} of {}", count(asked, "repetition"))
}

/// Dispatcher task-clock as a share of the workers' summed task-clock.
fn dispatcher_share(result: &RunResult) -> Option<f64> {
    let reps = result.samples.iter().filter(|r| !r.warmup);
    let (mut dispatcher, mut workers) = (0u64, 0u64);
    for rep in reps {
        dispatcher += rep.dispatcher_task_clock_ns;
        workers += rep
            .workers
            .iter()
            .map(|w| w.counters.task_clock_ns)
            .sum::<u64>();
    }
    (workers > 0).then(|| dispatcher as f64 / workers as f64)
}

impl Document for RunResult {
    fn outcome(&self) -> Outcome {
        Outcome::of_study(self.valid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::saved::{SavedDocument, load};

    /// The setup line names the NUMA node the arms were placed in, where
    /// the plan has one, and says nothing of nodes where it has none.
    #[test]
    fn the_setup_names_the_node_of_the_arms() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/results/run-vm-skip-gate.json");
        let Ok(SavedDocument::Run(mut result)) = load(&path) else {
            panic!("{} is a run", path.display());
        };
        let view = View::default();
        assert!(!result.render(&view).contains("NUMA node"));
        result.plan.node = Some(1);
        let text = result.render(&view);
        assert!(text.contains("package 0, NUMA node 1;"), "{text}");
    }
}
