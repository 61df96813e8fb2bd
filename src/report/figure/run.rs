//! The figure of `run`: the machine with each arm's workers placed on it,
//! beside bar charts of what each arm cost (the reference study's figure).

use super::Figure;
use super::bars::{Bar, horizontal_bars};
use super::machine::{CpuMark, Machine, MachineLayout};
use super::{PALETTE, Svg, UNQUOTABLE, heading_lines, legend};
use crate::judge::arms::{ArmStats, measured, per_rep_means};
use crate::judge::cost;
use crate::judge::stats::{Spread, median_interval};
use crate::measure::HardwareCounters;
use crate::report::labels::UNGATED;
use crate::report::table::{NOT_QUOTABLE_LEGEND, cpus_label};
use crate::saved::RunResult;
use crate::units::{count, sig4};
use std::collections::BTreeMap;

/// How wide the machine is drawn at most, and the charts beside it.
const MACHINE_WIDTH: f64 = 560.0;
const CHARTS_WIDTH: f64 = 460.0;

/// The letter an arm's marks and legend carry: A, B, C, … in the
/// document's order, so the figure reads without its colours.
pub(super) fn arm_letter(index: usize) -> char {
    char::from(b'A' + (index % 26) as u8)
}

/// The colour of the arm at `index`, on the machine and in the charts.
pub(super) fn arm_colour(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// The machine with each arm's workers marked ("A0": arm A's worker 0;
/// "C×4": four of arm C's workers on one CPU), beside bars with 95 %
/// whiskers: the cost per byte on the run's clock, and L1i misses per 1000
/// instructions and instructions per byte where they were counted.
impl Figure for RunResult {
    fn figure(&self) -> String {
        let result = self;
        let mut marks = Vec::new();
        let mut arm_legend = Vec::new();
        for (index, arm) in result.arms.iter().enumerate() {
            let letter = arm_letter(index);
            let mut workers: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
            for (worker, cpu) in arm.cpus.iter().enumerate() {
                if let Some(cpu) = cpu {
                    workers.entry(*cpu).or_default().push(worker);
                }
            }
            for (cpu, on) in workers {
                let label = match on.as_slice() {
                    [worker] => format!("{letter}{worker}"),
                    several => format!("{letter}×{}", several.len()),
                };
                marks.push(CpuMark {
                    cpu,
                    colour: arm_colour(index),
                    label,
                });
            }
            let placed = if arm.cpus.iter().all(Option::is_none) {
                "placed by the scheduler, not marked".to_string()
            } else {
                format!("workers on CPUs {}", cpus_label(&arm.cpus))
            };
            let quotable = if arm.quotable { "" } else { " (not quotable)" };
            arm_legend.push((
                Some(arm_colour(index)),
                format!("{letter} {}{quotable}: {placed}", arm.name),
            ));
        }
        if result.arms.iter().any(|arm| !arm.quotable) {
            arm_legend.push((
                Some(UNQUOTABLE),
                NOT_QUOTABLE_LEGEND.replace("* ", "grey dashed bars, "),
            ));
        }

        let clock = result.setup.clock;
        let reps_of = |arm: &ArmStats| measured(&result.samples, arm.name, &result.excluded);
        let cost_bars = bars(result, |arm| {
            let costs: Vec<f64> = reps_of(arm)
                .iter()
                .filter_map(|rep| cost::rep_cost(rep, arm.clock))
                .collect();
            (arm.cost.clone(), costs)
        });
        let l1i_bars = bars(result, |arm| {
            let values = per_rep_means(&reps_of(arm), cost::l1i_per_kilo_instruction);
            (arm.l1i_misses_per_kilo_instruction.clone(), values)
        });
        let ipb_bars = bars(result, |arm| {
            let values = per_rep_means(&reps_of(arm), cost::instructions_per_byte);
            (arm.instructions_per_byte.clone(), values)
        });
        let not_counted = match &result.setup.hardware_counters {
            HardwareCounters::Unavailable { reason } => reason.clone(),
            HardwareCounters::Available { .. } => "no arm's repetitions counted it".into(),
        };
        let charts = [
            (
                format!("cost per byte, {} ({} clock)", clock.unit(), clock.as_str()),
                cost_bars,
            ),
            ("L1i misses per 1000 instructions".to_string(), l1i_bars),
            ("instructions per byte".to_string(), ipb_bars),
        ];

        let reps: Vec<usize> = result
            .arms
            .iter()
            .filter_map(|a| a.cost.as_ref().map(|c| c.reps))
            .collect();
        let mut about = vec![
            format!(
                "{} per arm on {} cores of package {}; kernel {}",
                count(result.options.workers, "worker"),
                result.plan.class,
                result.plan.package,
                result.setup.kernel
            ),
            format!(
                "units: {} per byte on the {} clock; bars are medians, whiskers their 95 % interval; \
             n = {} kept repetitions per arm",
                clock.unit(),
                clock.as_str(),
                n_text(&reps)
            ),
        ];
        for (name, bars) in &charts {
            if bars.is_empty() {
                about.push(format!("{name}: not drawn, {not_counted}"));
            }
        }
        push_banners(&mut about, result.gated, result.valid, "RUN");
        let title = format!(
            "run on {}: where each arm's workers ran, and what it cost",
            result.head.host
        );
        draw(
            &title,
            &about,
            machine(result),
            &marks,
            &arm_legend,
            &charts,
        )
    }
}

/// The banners a run's and a command study's text views open with, as
/// heading lines: UNGATED without the gate, INVALID (`what`: "RUN",
/// "STUDY") when a check every number rests on failed.
pub(super) fn push_banners(about: &mut Vec<String>, gated: bool, valid: bool, what: &str) {
    if !gated {
        about.push(UNGATED.into());
    }
    if !valid {
        about.push(format!(
            "INVALID {what}: a check that every number rests on failed; none may be quoted"
        ));
    }
}

/// The machine of a document that saved its CPUs (and no caches).
fn machine(result: &RunResult) -> Machine<'_> {
    Machine {
        cpus: &result.cpus,
        caches: &[],
        outer_label: None,
    }
}

/// "10", or "8–10" where the arms kept different numbers.
pub(super) fn n_text(reps: &[usize]) -> String {
    let low = reps.iter().min().copied().unwrap_or(0);
    let high = reps.iter().max().copied().unwrap_or(0);
    if low == high {
        low.to_string()
    } else {
        format!("{low}–{high}")
    }
}

/// One bar per arm that has the quantity `of` gives (its spread, and the
/// per-repetition values its interval comes from).
fn bars(result: &RunResult, of: impl Fn(&ArmStats) -> (Option<Spread>, Vec<f64>)) -> Vec<Bar> {
    result
        .arms
        .iter()
        .enumerate()
        .filter_map(|(index, arm)| {
            let (spread, values) = of(arm);
            let spread = spread?;
            Some(Bar {
                label: format!("{} {}", arm_letter(index), arm.name),
                value: spread.median,
                interval: median_interval(&values),
                quotable: arm.quotable,
                colour: arm_colour(index),
                value_text: sig4(spread.median),
            })
        })
        .collect()
}

/// The figure: heading, the machine with `marks` and the arms' legend on
/// the left, each chart that has bars on the right.
pub(super) fn draw(
    title: &str,
    about: &[String],
    machine: Machine<'_>,
    marks: &[CpuMark],
    arm_legend: &[(Option<&str>, String)],
    charts: &[(String, Vec<Bar>)],
) -> String {
    let layout = MachineLayout::new(machine, marks, MACHINE_WIDTH);
    let charts_x = 10.0 + layout.width().max(300.0) + 20.0;
    let mut svg = Svg::new(charts_x + CHARTS_WIDTH + 10.0, 0.0, title);
    let top = svg.heading(&heading_lines(about, svg.width()));
    layout.draw(&mut svg, 10.0, top);
    let left = legend(
        &mut svg,
        10.0,
        top + layout.height() + 10.0,
        charts_x - 30.0,
        arm_legend,
    );
    let mut right = top;
    for (axis, bars) in charts.iter().filter(|(_, bars)| !bars.is_empty()) {
        right = horizontal_bars(&mut svg, charts_x, right, CHARTS_WIDTH, axis, bars) + 10.0;
    }
    svg.set_height(left.max(right) + 10.0);
    svg.finish()
}
