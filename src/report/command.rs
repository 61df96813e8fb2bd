//! The human view of `run -- COMMAND` (printed by `run`, re-rendered by
//! `report FILE`): each arm's CPUs, its wall time with spread, and its
//! ratio to the baseline arm, then the checks.

use crate::exit::Outcome;
use crate::judge::command_checks::{different_work, invalidating, quotable, signed_percent};
use crate::measure::command::Output;
use crate::report::blocks::{Blocks, Grid};
use crate::report::document::{Document, HumanView};
use crate::report::labels::NOT_QUOTABLE;
use crate::report::table::{banners, check_lines, host_line, legend_saying, marked, membind_line};
use crate::report::view::View;
use crate::report::warnings::notes_block;
use crate::saved::CommandResult;
use crate::units::{Fixed, count, percent, percent_change, sig4};

/// The whole human view: the validity verdict first, what to run next,
/// then each arm's wall time, where the threads ran, and the checks.
impl HumanView for CommandResult {
    fn blocks(&self, view: &View) -> Blocks {
        let result = self;
        let mut out = banners(
            result.gated,
            result.head.complete,
            "the rounds finished are",
        );
        let options = &result.options;
        let verdict = if result.valid {
            valid_verdict(result)
        } else {
            let failed: Vec<String> = invalidating(&result.checks, options.strict)
                .iter()
                .map(|c| format!("{} {}", c.name, c.status.as_str()))
                .collect();
            format!(
                "INVALID study (exit {}): {}",
                Outcome::InvalidRun.exit_status(),
                failed.join(", ")
            )
        };
        out.answer(verdict);
        if let Some(gate) = &result.gate {
            out.line(format!("gate: {}", gate.sentence), 2);
        }
        out.line(
            "next: `placement-study run --sweep -- COMMAND` gives its scaling curve, and \
         `placement-study observe -- COMMAND` shows where Linux ran its threads",
            2,
        );
        out.gap().line(host_line(&result.head), 2);
        let setup = format!(
            "`{}` with {{threads}} = {}; {} after {}, arms interleaved; its output {}{}",
            options.command_text(),
            result.plan.threads,
            rounds_done(result),
            count(options.warmups, "warm-up"),
            match &options.output {
                Output::Discard => "discarded".to_string(),
                Output::Inherit => "shown".to_string(),
                Output::File(path) => format!(
                    "in {} (the last repetition's)",
                    crate::escape::escape_path(path)
                ),
            },
            options
                .prepare
                .as_ref()
                .map_or_else(String::new, |prepare| format!("; `{prepare}` before each")),
        );
        out.line(setup, 2);
        if let Some(membind) = &options.membind {
            let arms = result.plan.placements.iter();
            out.line(
                membind_line(
                    membind,
                    arms.map(|p| (p.arm.to_string(), p.membind.as_deref())),
                    "set in the command's process before each exec and read back there; its \
                     pages are not located (the membind check)",
                ),
                2,
            );
        }
        if !result.valid {
            out.gap().banner(
                "INVALID STUDY: a check that every number rests on failed (see Checks); none of \
             them may be quoted",
            );
        }
        out.gap().extend(arms_table(result, view));
        let lines_under = [per_unit_line(result), instructions_line(result)];
        out.lines(lines_under.into_iter().flatten(), 2);
        if !result.residency.is_empty() {
            out.gap()
                .heading("Where the threads ran (share of the tree's on-CPU time)")
                .extend(residency_table(result));
        }
        let failed = result.reps.iter().filter(|r| r.failed).count();
        if failed > 0 {
            out.line(
                format!(
                    "{} failed (kept by --ignore-failure, left out of every statistic)",
                    count(failed, "repetition")
                ),
                2,
            );
        }
        out.gap()
            .heading("Checks")
            .extend(check_lines(&result.checks));
        out.extend(notes_block(&result.warnings));
        out
    }
}

/// A valid study's last line, saying which arms' numbers may be quoted:
/// a study every arm of which failed its CV bar is valid, but has nothing
/// to quote.
fn valid_verdict(result: &CommandResult) -> String {
    let (quotable, not): (Vec<_>, Vec<_>) = result
        .arms
        .iter()
        .map(|stats| stats.arm)
        .partition(|&arm| quotable(&result.checks, arm));
    let names = |arms: &[_]| {
        arms.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (quotable.is_empty(), not.is_empty()) {
        (_, true) => "valid study; every arm's wall time is quotable".to_string(),
        (true, false) => "valid study, but no arm's wall time is quotable (each is above its CV \
                          bar or was disturbed): nothing here may be quoted; more --reps or a \
                          quieter machine may settle them"
            .to_string(),
        (false, false) => format!(
            "valid study; quotable: {}; not quotable: {}",
            names(&quotable),
            names(&not)
        ),
    }
}

/// Per arm: its CPUs, its wall time's median (CV), min–max and n, and its
/// ratio to the baseline with the 95 % interval.
fn arms_table(result: &CommandResult, view: &View) -> Blocks {
    let mut table = Grid::default();
    table.push([
        "arm",
        "CPUs",
        "wall s (CV)",
        "min–max s",
        "n",
        &format!("vs {}", result.options.baseline),
    ]);
    let mut marks = false;
    for stats in &result.arms {
        let cpus = result
            .plan
            .placements
            .iter()
            .find(|p| p.arm == stats.arm)
            .map_or_else(|| "—".to_string(), |p| p.cpus.to_string());
        let is_quotable = quotable(&result.checks, stats.arm);
        marks |= !is_quotable;
        let (wall, range, n) = match &stats.wall_s {
            Some(spread) => (
                format!(
                    "{} ({:.2} %)",
                    sig4(spread.median),
                    Fixed(spread.cv * 100.0)
                ),
                format!("{}–{}", sig4(spread.min), sig4(spread.max)),
                spread.reps.to_string(),
            ),
            None => ("—".into(), "—".into(), "—".into()),
        };
        let ratio = if stats.arm == result.options.baseline {
            "baseline".to_string()
        } else {
            match (stats.vs_baseline, &stats.vs_baseline_ci95) {
                (Some(ratio), Some(ci)) => format!(
                    "{} ({} to {})",
                    percent_change(ratio),
                    percent_change(ci.low),
                    percent_change(ci.high)
                ),
                (Some(ratio), None) => percent_change(ratio),
                _ => "—".into(),
            }
        };
        table.push([
            marked(stats.arm, is_quotable, view),
            cpus,
            wall,
            range,
            n,
            ratio,
        ]);
    }
    legend_saying(table, marks, NOT_QUOTABLE, view)
}

/// With `--units`: each arm's median wall time per unit, all in one time
/// unit (s, ms, µs or ns: the largest that keeps the smallest median at 1
/// or more), e.g. "wall time per byte (--units 24000000), median:
/// one-per-core 31.25 ns, same-cpu 62.40 ns".
fn per_unit_line(result: &CommandResult) -> Option<String> {
    let units = result.options.units.as_ref()?;
    let medians: Vec<(String, Option<f64>)> = result
        .arms
        .iter()
        .map(|arm| {
            let median = arm.wall_s_per_unit.as_ref().map(|spread| spread.median);
            (arm.arm.to_string(), median)
        })
        .collect();
    let smallest = medians
        .iter()
        .filter_map(|(_, median)| *median)
        .fold(f64::INFINITY, f64::min);
    let (scale, symbol) = [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")]
        .into_iter()
        .find(|(scale, _)| smallest >= *scale)
        .unwrap_or((1e-9, "ns"));
    let arms: Vec<String> = medians
        .iter()
        .map(|(arm, median)| match median {
            Some(median) => format!("{arm} {} {symbol}", sig4(median / scale)),
            None => format!("{arm} —"),
        })
        .collect();
    Some(format!(
        "wall time per {} (--units {}), median: {}",
        units.name,
        units.count,
        arms.join(", ")
    ))
}

/// Each arm's user-space instructions against the baseline arm's, where a
/// PMU counted them, an arm beyond the same-work tolerance marked
/// DIFFERENT WORK (its cost stands: the program did other work there).
fn instructions_line(result: &CommandResult) -> Option<String> {
    let baseline = result.options.baseline;
    let arms: Vec<String> = result
        .arms
        .iter()
        .filter_map(|stats| {
            let change = stats.instructions_vs_baseline?;
            let mark = if different_work(change, result.options.tolerance) {
                " DIFFERENT WORK"
            } else {
                ""
            };
            Some(format!("{} {}{mark}", stats.arm, signed_percent(change)))
        })
        .collect();
    (!arms.is_empty()).then(|| {
        format!(
            "user-space instructions against {baseline} (same-work tolerance ±{} %): {}",
            sig4(result.options.tolerance * 100.0),
            arms.join(", ")
        )
    })
}

/// Per arm, from the repetitions' context-switch records: the share of
/// the tree's on-CPU time on the arm's CPUs, and the shares during which
/// its CPU's SMT sibling ran another thread of the tree, or something else.
fn residency_table(result: &CommandResult) -> Blocks {
    // Without SMT no CPU has a sibling: the sibling columns would read
    // "0.00 %", which says "nothing interfered", not "nothing can".
    let no_siblings = result
        .head
        .topology
        .as_ref()
        .is_some_and(|summary| summary.smt == Some(false));
    let mut table = Grid::default();
    if no_siblings {
        table.push(["arm", "on its CPUs", "judged"]);
    } else {
        table.push([
            "arm",
            "on its CPUs",
            "sibling ran the tree",
            "sibling ran other load",
            "judged",
        ]);
    }
    let share = |value: Option<f64>| value.map_or_else(|| "—".to_string(), percent);
    for arm in &result.residency {
        let judged = format!("{} of {}", arm.judged, arm.judged + arm.unjudged);
        if no_siblings {
            table.push([arm.arm.to_string(), share(arm.held_share), judged]);
        } else {
            table.push([
                arm.arm.to_string(),
                share(arm.held_share),
                share(arm.co_residency),
                share(arm.other_load),
                judged,
            ]);
        }
    }
    let mut blocks = Blocks::new();
    blocks.table(table, "no arm kept a repetition to judge");
    if no_siblings {
        blocks.line(
            "no CPU here has an SMT sibling, so no other thread can share an arm's core",
            2,
        );
    } else if let Some(why) = result
        .residency
        .iter()
        .find_map(|arm| arm.other_load_unavailable.as_deref())
    {
        // Why the other load is not known (one reason: the same for every arm).
        blocks.line(format!("other load unavailable: {why}"), 2);
    }
    blocks
}

/// "15 rounds", or for a stopped study "3 of 15 rounds".
fn rounds_done(result: &CommandResult) -> String {
    let asked = result.options.reps;
    if result.head.complete {
        return count(asked, "round");
    }
    let first_arm = result.plan.placements.first().map(|p| p.arm);
    let done = result
        .reps
        .iter()
        .filter(|r| !r.warmup && Some(r.arm) == first_arm)
        .count();
    format!("{done} of {}", count(asked, "round"))
}

impl Document for CommandResult {
    fn outcome(&self) -> Outcome {
        Outcome::of_study(self.valid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An arm whose user-space instructions moved beyond the tolerance is
    /// marked under the arms table, its cost kept; one within it is not.
    #[test]
    fn an_arm_that_did_other_work_is_marked_under_the_table() {
        let mut result: CommandResult = serde_json::from_str(include_str!(
            "../../fixtures/results/command-vm-skip-gate.json"
        ))
        .unwrap();
        assert_eq!(instructions_line(&result), None, "no PMU counted there");
        result.options.tolerance = 0.01;
        result.arms[0].user_instructions = Some(1e7);
        result.arms[1].user_instructions = Some(1.04e7);
        result.arms[1].instructions_vs_baseline = Some(0.04);
        assert_eq!(
            instructions_line(&result).unwrap(),
            "user-space instructions against one-per-core (same-work tolerance ±1.000 %): \
             same-cpu +4.000 % DIFFERENT WORK"
        );
        result.arms[1].instructions_vs_baseline = Some(-0.002);
        assert!(
            instructions_line(&result)
                .unwrap()
                .ends_with("same-cpu -0.200 %")
        );
    }
}
