//! The gate as a figure: every paired round's penalty as a dot, one row
//! per batch, each batch's median with its 95 % interval, the pooled
//! estimate the verdict rests on, and the threshold it was judged by. A
//! reader sees at once whether the batches agree and how far from the
//! threshold the rounds fall.

use super::Figure;
use super::{Anchor, FAINT, INK, PALETTE, Paint, Scale, Svg, TEXT, UNQUOTABLE, grid};
use crate::judge::batches::NOISY_BASELINE;
use crate::judge::gate::{
    Estimate, Interval, PairedCosts, UNEVEN_WORKERS, paired_costs, worker_paired_costs,
};
use crate::measure::ClockKind;
use crate::plan::{Arm, GateBaseline};
use crate::saved::GateResult;
use std::collections::BTreeMap;

const WIDTH: f64 = 760.0;
/// Room on the left for a row's name.
const LABEL_WIDTH: f64 = 110.0;
const ROW_HEIGHT: f64 = 44.0;
/// The colour of the measured rounds and estimates.
const ROUNDS: &str = PALETTE[0];
/// The colour of the threshold line.
const THRESHOLD: &str = PALETTE[5];

/// One paired round: its penalty, and whether it was left out as host
/// noise.
struct Round {
    penalty: f64,
    noisy: bool,
}

/// One row of rounds: a batch, or every round of a file saved before the
/// gate measured in batches.
struct Row<'a> {
    label: String,
    /// The batch's own estimate.
    estimate: Option<&'a Estimate>,
    rounds: Vec<Round>,
}

/// The figure of `result`.
impl Figure for GateResult {
    fn figure(&self) -> String {
        let result = self;
        let host = &result.head.host;
        let mut svg = Svg::new(
            WIDTH,
            0.0,
            &format!("Gate on {host}: {}", result.verdict.as_str()),
        );
        let rows = batch_rounds(result);
        let (Some(baseline), Some(setup), false) =
            (result.baseline, &result.setup, rows.is_empty())
        else {
            let why = result.no_smt_reason.as_deref().unwrap_or(&result.sentence);
            let below = svg.heading(&[format!("nothing to draw: no paired rounds ({why})")]);
            svg.set_height(below);
            return svg.finish();
        };
        let kept = rows
            .iter()
            .flat_map(|row| &row.rounds)
            .filter(|r| !r.noisy)
            .count();
        let noisy = rows
            .iter()
            .flat_map(|row| &row.rounds)
            .filter(|r| r.noisy)
            .count();
        let mut about = vec![
            format!(
                "penalty: the siblings' cost over the cost {}, per paired round, minus 1 (%)",
                baseline.describe(),
            ),
            format!(
                "costs in {} per byte ({} clock)",
                setup.clock.unit(),
                setup.clock.as_str()
            ),
            format!(
                "n = {kept} paired rounds kept, {noisy} left out as host noise{}; threshold {}",
                match result.batches.len() {
                    0 => String::new(),
                    1 => ", in 1 batch".into(),
                    batches => format!(", in {batches} batches"),
                },
                percent(result.threshold)
            ),
        ];
        if !result.head.complete {
            about
                .push("incomplete: a stop signal ended the gate; the rounds done are drawn".into());
        }
        let top = svg.heading(&about);

        let mut values: Vec<f64> = vec![0.0, result.threshold];
        values.extend(rows.iter().flat_map(|row| &row.rounds).map(|r| r.penalty));
        let intervals = rows
            .iter()
            .filter_map(|row| row.estimate.map(|e| &e.ci95))
            .chain(result.ci95.as_ref());
        values.extend(intervals.flat_map(|i| [i.low, i.high]));
        let (low, high) = values
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
        let pad = (high - low).max(0.01) * 0.06;
        let x = Scale {
            low: low - pad,
            high: high + pad,
            start: LABEL_WIDTH,
            end: WIDTH - 30.0,
        };
        let plot_top = top + 16.0;
        let bottom = plot_top + (rows.len() + 1) as f64 * ROW_HEIGHT;
        let below_axis = grid(&mut svg, (&x, 6), None, (plot_top, bottom), percent);
        svg.line(
            x.at(0.0),
            plot_top,
            x.at(0.0),
            bottom,
            Paint::stroke(INK, 1.0),
        );

        for (index, row) in rows.iter().enumerate() {
            let middle = plot_top + (index as f64 + 0.5) * ROW_HEIGHT;
            svg.text(
                LABEL_WIDTH - 8.0,
                middle + 4.0,
                TEXT,
                Anchor::End,
                &row.label,
            );
            for (i, round) in row.rounds.iter().enumerate() {
                // Spread over five lanes, in measuring order, so equal
                // penalties stay visible.
                let y = middle - 8.0 + (i % 5) as f64 * 3.0;
                let paint = match round.noisy {
                    false => Paint::fill(ROUNDS),
                    true => Paint::stroke(UNQUOTABLE, 1.5),
                };
                svg.circle(x.at(round.penalty), y, 3.5, paint);
            }
            if let Some(estimate) = row.estimate {
                estimate_mark(
                    &mut svg,
                    &x,
                    middle + 12.0,
                    estimate.penalty,
                    &estimate.ci95,
                );
            }
        }
        let pooled_middle = plot_top + (rows.len() as f64 + 0.5) * ROW_HEIGHT;
        svg.line(
            LABEL_WIDTH - 100.0,
            pooled_middle - ROW_HEIGHT / 2.0,
            x.end,
            pooled_middle - ROW_HEIGHT / 2.0,
            Paint::stroke(FAINT, 1.0),
        );
        svg.text_styled(
            LABEL_WIDTH - 8.0,
            pooled_middle + 4.0,
            TEXT,
            Anchor::End,
            true,
            "pooled",
        );
        if let (Some(penalty), Some(ci95)) = (result.penalty, &result.ci95) {
            estimate_mark(&mut svg, &x, pooled_middle, penalty, ci95);
            // Beside the interval, on the side with room.
            let (at, anchor) = match x.at(penalty) > (x.start + x.end) / 2.0 {
                true => (x.at(ci95.low) - 8.0, Anchor::End),
                false => (x.at(ci95.high) + 8.0, Anchor::Start),
            };
            svg.text(
                at,
                pooled_middle - 6.0,
                TEXT - 1.0,
                anchor,
                &format!(
                    "{} [{}, {}]",
                    percent(penalty),
                    percent(ci95.low),
                    percent(ci95.high)
                ),
            );
        }
        let threshold = Paint::stroke(THRESHOLD, 2.0).dashed();
        svg.line(
            x.at(result.threshold),
            plot_top - 6.0,
            x.at(result.threshold),
            bottom,
            threshold,
        );
        svg.text(
            x.at(result.threshold),
            plot_top - 9.0,
            TEXT - 1.0,
            Anchor::Middle,
            &format!("threshold {}", percent(result.threshold)),
        );

        let mut y = below_axis + 14.0;
        let legend_x = LABEL_WIDTH;
        svg.circle(legend_x, y - 4.0, 3.5, Paint::fill(ROUNDS));
        svg.text(
            legend_x + 10.0,
            y,
            TEXT - 1.0,
            Anchor::Start,
            "a paired round",
        );
        y += 18.0;
        svg.circle(legend_x, y - 4.0, 3.5, Paint::stroke(UNQUOTABLE, 1.5));
        svg.text(
            legend_x + 10.0,
            y,
            TEXT - 1.0,
            Anchor::Start,
            &format!(
                "left out as host noise: baseline over {:.0} % off its batch's median, or workers \
             {:.0} points more uneven than usual",
                NOISY_BASELINE * 100.0,
                UNEVEN_WORKERS * 100.0
            ),
        );
        y += 18.0;
        whisker_mark(
            &mut svg,
            y - 4.0,
            legend_x + 8.0,
            (legend_x - 6.0, legend_x + 22.0),
        );
        svg.text(
            legend_x + 30.0,
            y,
            TEXT - 1.0,
            Anchor::Start,
            "median of the kept rounds and its distribution-free 95 % interval",
        );
        svg.set_height(y + 14.0);
        svg.finish()
    }
}

/// Each batch with the penalties of its paired rounds, in measuring
/// order: the siblings' cost over the baseline's (on the gate's clock),
/// paired by repetition as the verdict paired them. A file saved before
/// batches has one row of every round.
fn batch_rounds(result: &GateResult) -> Vec<Row<'_>> {
    let (Some(baseline), Some(setup)) = (result.baseline, &result.setup) else {
        return Vec::new();
    };
    let penalties = round_penalties(result, baseline, setup.clock);
    let rounds = |in_row: &dyn Fn(usize) -> bool, noisy: &dyn Fn(usize) -> bool| -> Vec<Round> {
        penalties
            .iter()
            .filter(|(rep, _)| in_row(*rep))
            .map(|&(rep, penalty)| Round {
                penalty,
                noisy: noisy(rep),
            })
            .collect()
    };
    if result.batches.is_empty() {
        let every = rounds(&|_| true, &|_| false);
        return match every.is_empty() {
            true => Vec::new(),
            false => vec![Row {
                label: "every round".into(),
                estimate: None,
                rounds: every,
            }],
        };
    }
    result
        .batches
        .iter()
        .map(|batch| Row {
            label: format!("batch {}", batch.index),
            estimate: batch.estimate.as_ref(),
            rounds: rounds(&|rep| batch.rounds.contains(&rep), &|rep| {
                batch.noisy_rounds.contains(&rep)
            }),
        })
        .collect()
}

/// Each paired round's penalty, by repetition: against each worker's own
/// CPU alone, the smaller of the two workers' (what both paid, as the
/// verdict reads it); in an older file, the siblings' mean over its
/// baseline.
fn round_penalties(
    result: &GateResult,
    baseline: GateBaseline,
    clock: ClockKind,
) -> Vec<(usize, f64)> {
    let ratios = |paired: &PairedCosts| -> Vec<(usize, f64)> {
        paired
            .reps
            .iter()
            .zip(paired.treated.iter().zip(&paired.baseline))
            .map(|(rep, (treated, baseline))| (*rep, treated / baseline - 1.0))
            .collect()
    };
    match (baseline, &result.pairs) {
        (GateBaseline::EachAlone, Some(pairs)) => {
            let each: Vec<BTreeMap<usize, f64>> =
                worker_paired_costs(&result.samples, pairs.siblings, clock)
                    .iter()
                    .map(|paired| ratios(paired).into_iter().collect())
                    .collect();
            let Some(first) = each.first() else {
                return Vec::new();
            };
            first
                .keys()
                .filter_map(|rep| {
                    let all: Option<Vec<f64>> = each.iter().map(|w| w.get(rep).copied()).collect();
                    Some((*rep, all?.into_iter().fold(f64::INFINITY, f64::min)))
                })
                .collect()
        }
        _ => ratios(&paired_costs(
            &result.samples,
            Arm::Siblings,
            baseline.arm(),
            clock,
        )),
    }
}

/// A median (a bar across) on its 95 % interval (a whisker), at `y`.
fn estimate_mark(svg: &mut Svg, x: &Scale, y: f64, median: f64, interval: &Interval) {
    whisker_mark(
        svg,
        y,
        x.at(median),
        (x.at(interval.low), x.at(interval.high)),
    );
}

/// The same mark in user units: the median at `median`, the interval
/// from `low` to `high`.
fn whisker_mark(svg: &mut Svg, y: f64, median: f64, (low, high): (f64, f64)) {
    let whisker = Paint::stroke(INK, 1.5);
    svg.line(low, y, high, y, whisker);
    for end in [low, high] {
        svg.line(end, y - 4.0, end, y + 4.0, whisker);
    }
    svg.line(median, y - 7.0, median, y + 7.0, Paint::stroke(ROUNDS, 3.0));
}

/// A penalty as the figure writes it: "+15 %", "-2.5 %".
fn percent(value: f64) -> String {
    let percent = value * 100.0;
    if percent.abs() >= 10.0 || percent.fract().abs() < 0.05 {
        format!("{percent:+.0} %")
    } else {
        format!("{percent:+.1} %")
    }
}
