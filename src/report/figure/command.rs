//! The figure of `run -- COMMAND`: as the run's, the machine with each
//! arm's CPUs marked beside its bars, plus each arm's co-residency share.

use super::Figure;
use super::UNQUOTABLE;
use super::bars::Bar;
use super::machine::{CpuMark, Machine};
use super::run::{arm_colour, arm_letter, draw, n_text, push_banners};
use crate::judge::command::{CommandArmStats, wall_by_round};
use crate::judge::command_checks::quotable;
use crate::judge::stats::median_interval;
use crate::plan::Arm;
use crate::plan::command::CommandArm;
use crate::report::labels::NOT_QUOTABLE;
use crate::saved::CommandResult;
use crate::units::{percent, sig4};

/// The machine with each arm's CPUs marked with its letter, beside bars:
/// wall time per arm with its 95 % whiskers (CLOCK_MONOTONIC), the tree's
/// user-space instructions where counted, and the share of the tree's
/// on-CPU time its sibling ran another of its threads (co-residency).
impl Figure for CommandResult {
    fn figure(&self) -> String {
        let result = self;
        let mut marks = Vec::new();
        let mut arm_legend = Vec::new();
        for (index, stats) in result.arms.iter().enumerate() {
            let letter = arm_letter(index);
            let cpus = result
                .plan
                .placements
                .iter()
                .find(|p| p.arm == stats.arm)
                .map(|p| p.cpus.clone())
                .unwrap_or_default();
            let placed = if stats.arm == CommandArm::Placement(Arm::Unpinned) {
                format!("placed by the scheduler on CPUs {cpus}, not marked")
            } else {
                marks.extend(cpus.iter().map(|cpu| CpuMark {
                    cpu,
                    colour: arm_colour(index),
                    label: letter.to_string(),
                }));
                format!("CPUs {cpus}")
            };
            let mark = if quotable(&result.checks, stats.arm) {
                ""
            } else {
                " (not quotable)"
            };
            arm_legend.push((
                Some(arm_colour(index)),
                format!("{letter} {}{mark}: {placed}", stats.arm),
            ));
        }
        if result
            .arms
            .iter()
            .any(|stats| !quotable(&result.checks, stats.arm))
        {
            arm_legend.push((
                Some(UNQUOTABLE),
                NOT_QUOTABLE.replace("* ", "grey dashed bars, "),
            ));
        }

        // Milliseconds where every arm took under a second, so the axis's
        // ticks are whole numbers.
        let longest = result
            .arms
            .iter()
            .filter_map(|stats| stats.wall_s.as_ref().map(|spread| spread.max))
            .fold(0.0, f64::max);
        let (scale, unit) = if longest < 1.0 {
            (1e3, "ms")
        } else {
            (1.0, "s")
        };
        let wall = bars(result, |stats| {
            let spread = stats.wall_s.as_ref()?;
            let walls: Vec<f64> = wall_by_round(&result.reps, stats.arm)
                .into_iter()
                .map(|(_, wall)| wall * scale)
                .collect();
            let median = spread.median * scale;
            Some((
                median,
                median_interval(&walls),
                format!("{} {unit}", sig4(median)),
            ))
        });
        let instructions = bars(result, |stats| {
            let count = stats.user_instructions?;
            Some((count, None, sig4(count)))
        });
        let co_residency = bars(result, |stats| {
            let share = result
                .residency
                .iter()
                .find(|r| r.arm == stats.arm)?
                .co_residency?;
            Some((share * 100.0, None, percent(share)))
        });
        let charts = [
            (format!("wall time, {unit} (CLOCK_MONOTONIC)"), wall),
            (
                "user-space instructions of the process tree (median)".to_string(),
                instructions,
            ),
            (
                "co-residency, % of on-CPU time beside another of its threads".to_string(),
                co_residency,
            ),
        ];

        let reps: Vec<usize> = result
            .arms
            .iter()
            .filter_map(|stats| stats.wall_s.as_ref().map(|spread| spread.reps))
            .collect();
        let mut about = vec![
            format!(
                "`{}` with {{threads}} = {}",
                result.options.command_text(),
                result.plan.threads
            ),
            format!(
                "units: {unit} of wall time on CLOCK_MONOTONIC; bars are medians, whiskers their \
             95 % interval; n = {} kept repetitions per arm",
                n_text(&reps)
            ),
        ];
        let why_not = [
            "no arm has two kept repetitions",
            "no repetition's hardware counters ran all their time",
            "no repetition's context switches were recorded",
        ];
        for ((name, bars), why) in charts.iter().zip(why_not) {
            if bars.is_empty() {
                about.push(format!("{name}: not drawn, {why}"));
            }
        }
        push_banners(&mut about, result.gated, result.valid, "STUDY");
        let title = format!(
            "run -- COMMAND on {}: where each arm ran, and how long it took",
            result.head.host
        );
        let machine = Machine {
            cpus: &result.cpus,
            caches: &[],
            outer_label: None,
        };
        draw(&title, &about, machine, &marks, &arm_legend, &charts)
    }
}

/// One bar per arm that has the quantity `of` gives: its value, its 95 %
/// interval where one was measured, and the value as written.
fn bars(
    result: &CommandResult,
    of: impl Fn(&CommandArmStats) -> Option<(f64, Option<(f64, f64)>, String)>,
) -> Vec<Bar> {
    result
        .arms
        .iter()
        .enumerate()
        .filter_map(|(index, stats)| {
            let (value, interval, value_text) = of(stats)?;
            Some(Bar {
                label: format!("{} {}", arm_letter(index), stats.arm),
                value,
                interval,
                quotable: quotable(&result.checks, stats.arm),
                colour: arm_colour(index),
                value_text,
            })
        })
        .collect()
}
