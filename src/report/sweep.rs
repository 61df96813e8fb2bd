//! The human view of a sweep (printed by `run --sweep`, re-rendered by
//! `report FILE`): each step's speedup against the ideal and the ceiling,
//! what each added CPU is worth, and the knees.

use crate::units::DASH;

use crate::judge::sentences::sweep::added_text;
use crate::judge::sentences::sweep::gain;

use crate::judge::sentences::sweep::MORE_EVIDENCE;
use crate::judge::sentences::sweep::knee_sentence;

use crate::exit::Outcome;
use crate::judge::stats::Spread;
use crate::judge::sweep::{StepStats, SweepJudgement};
use crate::report::blocks::{Blocks, Grid};
use crate::report::document::{Document, HumanView};
use crate::report::hybrid::{ratio, spread_cells};
use crate::report::labels::UNGATED;
use crate::report::labels::cpu_list;
use crate::report::table::{
    check_lines, excluded_lines, headline, host_line, legend, marked, validity_verdict,
};
use crate::report::view::View;
use crate::saved::SweepResult;
use crate::units::{Fixed, count};

/// The whole human view: the validity verdict and the curve's sentence
/// first, what to run next, then the steps, the knees, each CPU alone and
/// the checks.
impl HumanView for SweepResult {
    fn blocks(&self, view: &View) -> Blocks {
        let result = self;
        let mut out = Blocks::new();
        if !result.gated {
            out.banner(UNGATED).gap();
        }
        let judged = &result.judged;
        let verdict =
            validity_verdict("study", judged.valid, &judged.checks, result.options.strict);
        out.extend(headline(
            &result.head,
            "the rounds done are",
            verdict,
            &result.sentence,
        ));
        if let Some(gate) = &result.gate {
            out.line(format!("gate: {}", gate.sentence), 2);
        }
        out.line(
            "next: `placement-study hybrid` measures whether the CPUs differ in speed, and \
         `placement-study observe` shows where Linux runs the work when nothing pins it",
            2,
        );
        out.gap().line(host_line(&result.head), 2);
        let rounds = judged
            .steps
            .first()
            .and_then(|s| s.wall_ms.as_ref())
            .map_or(0, |w| w.reps);
        let order: Vec<String> = result
            .plan
            .order
            .iter()
            .map(|c| c.cpu.to_string())
            .collect();
        let first = result.plan.order.first().map_or(0, |c| c.cpu);
        let each_alone = judged.cpu_speeds.len() > 1;
        let work = match (&result.command, &result.work, &result.setup) {
            (Some(command), _, _) => format!(
                "order {} (CPUs {}); COMMAND: {}, with {{threads}} k and confined to the step's \
             CPUs; step 1 is the command with {{threads}} 1 on CPU {first} alone, the unit of \
             every speedup and gain{}",
                result.plan.order_name,
                order.join(", "),
                command.argv.join(" "),
                match each_alone {
                    true => "; every other CPU runs it alone with {threads} 1, for the ceiling",
                    false => "",
                }
            ),
            (None, Some(work), Some(setup)) => format!(
                "order {} (CPUs {}); work: {} items of kernel {} ({} passes each), shared by work \
             stealing among one pinned worker per CPU; step 1 is CPU {first} alone, the unit \
             of every speedup, gain and ceiling",
                result.plan.order_name,
                order.join(", "),
                work.items,
                setup.kernel,
                work.passes_per_item,
            ),
            _ => format!(
                "order {} (CPUs {}); step 1 is CPU {first} alone",
                result.plan.order_name,
                order.join(", "),
            ),
        };
        out.line(work, 2);
        let interleaved = match each_alone {
            true => "every step and every CPU alone interleaved by round",
            false => "every step interleaved by round",
        };
        out.line(
            format!(
                "times are wall time on CLOCK_MONOTONIC in ms: median, CV, min–max over {} (after \
             {}; {interleaved})",
                count(rounds, "round"),
                count(result.options.warmups, "warm-up"),
            ),
            2,
        );
        if !judged.valid {
            out.gap().banner(
                "INVALID STUDY: the numbers below failed their validity checks (see Checks); none \
             of them may be quoted",
            );
        }
        out.gap()
            .heading("Steps: k workers on the first k CPUs of the order")
            .extend(steps_table(judged, view));
        out.line(noise_line(judged), 2);
        out.line(busy_line(judged), 2);
        out.lines(finish_lines(result), 2);
        out.gap().heading("Knees").line(knees_text(judged), 2);
        out.gap().heading("Each CPU alone");
        match &judged.ceiling_unavailable {
            Some(why) => out.line(format!("ceiling: unavailable ({why})"), 2),
            None => out.table(speeds_table(judged, view), "no CPU was measured alone"),
        };
        out.gap()
            .heading("Checks")
            .extend(check_lines(&judged.checks));
        for line in excluded_lines(&judged.excluded) {
            out.line(format!("  {line}"), 4);
        }
        out
    }
}

/// Each step: wall time, speedup against the ideal (k) and the ceiling,
/// the marginal gain and what was added; the default view leaves out the
/// min–max, the CPUs, the unpinned speedup and the busy clock.
fn steps_table(judged: &SweepJudgement, view: &View) -> Blocks {
    let mut table = Grid::default();
    let mut header = vec!["k", "wall ms", "CV %", "n"];
    if view.wide {
        header.splice(2..3, ["CV", "min–max"]);
        header.push("CPUs");
    }
    header.push("speedup [95 % CI]");
    if view.wide {
        header.push("unpinned");
    }
    header.extend(["ceiling", "eff.", "gain [95 % CI]"]);
    if view.wide {
        header.push("busy MHz");
    }
    header.push("added");
    table.push(header);
    for step in &judged.steps {
        let [median, cv, range, reps] = spread_cells(&step.wall_ms, view);
        let mut row = vec![marked(step.workers, step.quotable, view), median, cv];
        if view.wide {
            row.push(range);
        }
        row.push(reps);
        if view.wide {
            row.push(cpu_list(&step.cpus));
        }
        row.push(ratio(&step.speedup));
        if view.wide {
            row.push(ratio(&step.unpinned_speedup));
        }
        row.extend([
            step.ceiling
                .map_or(DASH.into(), |c| format!("{:.2}", Fixed(c))),
            step.efficiency
                .map_or(DASH.into(), |e| format!("{:.0} %", e * 100.0)),
            gain(&step.marginal_gain),
        ]);
        if view.wide {
            row.push(step.busy_mhz.map_or(DASH.into(), |m| format!("{m:.0}")));
        }
        row.push(added_text(&step.added));
        table.push(row);
    }
    let marks = judged.steps.iter().any(|s| !s.quotable);
    legend(table, marks, view)
}

/// Each CPU's single-worker speed: what the ceiling adds up.
fn speeds_table(judged: &SweepJudgement, view: &View) -> Grid {
    let mut table = Grid::default();
    table.push(["CPU", "wall ms", "CV %", "n", "speed [95 % CI]"]);
    let narrow = View {
        wide: false,
        ..*view
    };
    for speed in &judged.cpu_speeds {
        let [median, cv, _, reps] = spread_cells(&speed.wall_ms, &narrow);
        table.push([speed.cpu.to_string(), median, cv, reps, ratio(&speed.speed)]);
    }
    table
}

/// "noise floor: step 1 against itself ±2.1 % (95 % interval of its
/// median)".
fn noise_line(judged: &SweepJudgement) -> String {
    match judged.noise_floor {
        Some(floor) => format!(
            "noise floor: step 1 against itself moves ±{:.1} % (half its time's 95 % interval \
             over its median): smaller differences between steps are noise",
            floor * 100.0
        ),
        None => "noise floor: unknown (step 1 needs 6 measured rounds or more)".into(),
    }
}

/// A finish gap at or above this share of its step's time is worth a
/// line of its own: the step lost that much to waiting at the end.
const MATERIAL_FINISH_GAP: f64 = 0.05;

/// Each step whose workers finished apart by a material share of its
/// time: the gap, each worker's busy and idle time, and whether the gap
/// is the work's granularity (within two items) or a worker that held
/// its last item while it did not run; otherwise one line that the
/// workers finished together. Nothing where no step recorded its workers
/// (a COMMAND sweep).
fn finish_lines(result: &SweepResult) -> Vec<String> {
    let steps: Vec<(&StepStats, f64, f64)> = result
        .judged
        .steps
        .iter()
        .filter_map(|step| {
            let gap = step.finish_gap_ms.as_ref()?.median;
            let wall = step.wall_ms.as_ref()?.median;
            (wall > 0.0).then_some((step, gap, wall))
        })
        .collect();
    // An item's length: step 1 is one worker doing every item.
    let item_ms = result
        .judged
        .steps
        .first()
        .and_then(|step| step.wall_ms.as_ref())
        .zip(result.work.as_ref())
        .filter(|(_, work)| work.items > 0)
        .map(|(wall, work)| wall.median / work.items as f64);
    let material: Vec<String> = steps
        .iter()
        .filter(|(_, gap, wall)| gap / wall >= MATERIAL_FINISH_GAP)
        .map(|&(step, gap, wall)| {
            let workers: Vec<String> = step
                .worker_rows
                .iter()
                .map(|row| {
                    let who = row
                        .pinned_cpu
                        .map_or(format!("worker {}", row.worker), |cpu| format!("CPU {cpu}"));
                    let ms = |s: &Option<Spread>| {
                        s.as_ref()
                            .map_or(DASH.into(), |s| format!("{:.1}", s.median))
                    };
                    format!(
                        "{who} busy {} ms, idle {}",
                        ms(&row.busy_ms),
                        ms(&row.idle_ms)
                    )
                })
                .collect();
            let cause = match item_ms {
                Some(item) if gap <= 2.0 * item => format!(
                    "within two items ({item:.1} ms each): the work's granularity at the end"
                ),
                Some(item) => format!(
                    "{:.0} items' length ({item:.1} ms each): a worker held its last item while \
                     it did not run (its vCPU descheduled or capped), so the gain lost here is \
                     that wait at the end, not a slower CPU",
                    gap / item
                ),
                None => "the gain lost here is that wait at the end, not a slower CPU".into(),
            };
            format!(
                "step {}: the workers finished {gap:.1} ms apart, {:.0} % of the step's {wall:.1} \
                 ms ({}); {cause}",
                step.workers,
                gap / wall * 100.0,
                workers.join("; "),
            )
        })
        .collect();
    if !material.is_empty() {
        return material;
    }
    let Some(&(step, gap, wall)) = steps
        .iter()
        .max_by(|a, b| (a.1 / a.2).total_cmp(&(b.1 / b.2)))
    else {
        return Vec::new();
    };
    vec![format!(
        "finish gap: each step's workers finished within {:.0} % of its time of each other \
         (the most: step {}, {gap:.1} ms of {wall:.1}): no step lost its gain to waiting at \
         the end",
        MATERIAL_FINISH_GAP * 100.0,
        step.workers
    )]
}

fn busy_line(judged: &SweepJudgement) -> String {
    match &judged.busy_mhz_unavailable {
        Some(why) => format!("busy MHz: unavailable ({why})"),
        None => {
            let clocks: Vec<String> = judged
                .steps
                .iter()
                .filter_map(|s| Some(format!("{} {:.0}", s.workers, s.busy_mhz?)))
                .collect();
            format!(
                "busy MHz (core cycles per busy µs, by step): {}; a curve that bends while \
                 this falls bends because the clock fell",
                clocks.join(", ")
            )
        }
    }
}

/// The knees, one sentence each, or that there is none; a knee or a step
/// whose gain's interval reaches across the fraction is named unclear.
fn knees_text(judged: &SweepJudgement) -> String {
    if judged.steps.iter().all(|s| s.marginal_gain.is_none()) {
        return "unknown: no marginal gain was measured".into();
    }
    let fraction = judged.knee_fraction;
    let mut lines: Vec<String> = judged
        .knees
        .iter()
        .map(|knee| knee_sentence(knee, judged))
        .collect();
    if !judged.unclear_steps.is_empty() {
        lines.push(format!(
            "unclear at {}: the gain is {fraction:.2} or more, but its 95 % interval {} \
             below {fraction:.2} ({})",
            unclear_list(&judged.unclear_steps),
            if judged.unclear_steps.len() == 1 {
                "reaches"
            } else {
                "reach"
            },
            MORE_EVIDENCE
        ));
    }
    if lines.is_empty() {
        return format!("none: every added CPU gained {fraction:.2} of the first CPU or more");
    }
    lines.join("\n")
}

/// "2 workers", "2, 3 and 4 workers".
fn unclear_list(workers: &[usize]) -> String {
    let numbers: Vec<String> = workers.iter().map(usize::to_string).collect();
    let listed = match numbers.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => numbers.join(""),
    };
    let unit = if workers.len() == 1 && workers[0] == 1 {
        "worker"
    } else {
        "workers"
    };
    format!("{listed} {unit}")
}

impl Document for SweepResult {
    fn outcome(&self) -> Outcome {
        Outcome::of_study(self.judged.valid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::saved::{SavedDocument, load};

    fn live_sweep() -> SweepResult {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/results/sweep-vm-per-worker.json");
        match load(&path).unwrap() {
            SavedDocument::Sweep(sweep) => *sweep,
            _ => panic!("not a sweep"),
        }
    }

    /// The recorded 2-vCPU sweep: its workers finished 0.2 ms apart, one
    /// line says so. Made to finish 20 ms apart, as a capped second vCPU
    /// holding its last item does, step 2 gets its line: the gap, each
    /// worker's busy and idle time, and that the gap is many items long.
    #[test]
    fn a_material_finish_gap_names_each_workers_busy_and_idle_time() {
        let mut sweep = live_sweep();
        assert_eq!(
            finish_lines(&sweep),
            [
                "finish gap: each step's workers finished within 5 % of its time of each other \
              (the most: step 2, 0.2 ms of 51.9): no step lost its gain to waiting at the end"
            ]
        );
        let step = &mut sweep.judged.steps[1];
        let gap = step.finish_gap_ms.as_mut().unwrap();
        gap.median = 20.0;
        step.wall_ms.as_mut().unwrap().median = 70.0;
        let lines = finish_lines(&sweep);
        assert_eq!(lines.len(), 1, "{lines:?}");
        let line = &lines[0];
        assert!(
            line.starts_with(
                "step 2: the workers finished 20.0 ms apart, 29 % of the step's 70.0 ms (CPU 0 \
                 busy 51.7 ms, idle 0.2; CPU 1 busy "
            ),
            "{line}"
        );
        assert!(
            line.ends_with(
                "a worker held its last item while it did not run (its vCPU descheduled or \
                 capped), so the gain lost here is that wait at the end, not a slower CPU"
            ),
            "{line}"
        );
    }
}
