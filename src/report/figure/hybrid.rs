//! The hybrid study as a figure: each scheme's workers, busy then idle,
//! on one time axis (the reference study's per-worker tables drawn: a
//! static share leaves the fast class idle, work stealing does not), then
//! each class's speed and each scheme's speedup against the ceiling the
//! classes allow.

use super::Figure;
use super::bars::{Bar, Mark, horizontal_bars, horizontal_bars_marked};
use super::{Anchor, FAINT, INK, PALETTE, Paint, Scale, Svg, TEXT, UNQUOTABLE, grid, num};
use crate::judge::hybrid::{Ratio, SchemeStats, WorkerRow};
use crate::report::labels::cpu_list;
use crate::saved::HybridResult;

const WIDTH: f64 = 760.0;
/// Room on the left for a worker's name.
const LABEL_WIDTH: f64 = 210.0;
const ROW_HEIGHT: f64 = 16.0;
const ROW_GAP: f64 = 4.0;

/// The figure of `result`.
impl Figure for HybridResult {
    fn figure(&self) -> String {
        let result = self;
        let judged = &result.judged;
        let mut svg = Svg::new(
            WIDTH,
            0.0,
            &format!(
                "Hybrid study on {}: per-worker time, class speeds, the ceiling",
                result.head.host
            ),
        );
        let rounds = judged
            .baselines
            .iter()
            .filter_map(|b| b.wall_ms.as_ref().map(|w| w.reps))
            .max()
            .unwrap_or(0);
        let mut about = vec![
            "busy and idle: each worker's median per round, ms; wall time on CLOCK_MONOTONIC"
                .to_owned(),
            "speeds and speedups: in units of the fastest class alone, 95 % intervals paired by \
         round"
                .to_owned(),
            format!(
                "n = {rounds} rounds; {} workers on CPUs {}; {} items of kernel {}",
                result.options.workers,
                cpu_list(&result.plan.worker_cpus),
                result.work.items,
                result.setup.kernel
            ),
        ];
        let unquotable = judged.schemes.iter().any(|s| !s.quotable)
            || judged.baselines.iter().any(|b| !b.quotable);
        if unquotable {
            about.push(format!(
                "grey, dashed: not quotable (coefficient of variation over the {} % bar)",
                num(result.options.cv_bar * 100.0)
            ));
        }
        if !judged.valid {
            about.push(
                "INVALID STUDY: it failed its validity checks; no number may be quoted".into(),
            );
        }
        if !result.head.complete {
            about.push(
                "incomplete: a stop signal ended the study; the rounds done are drawn".into(),
            );
        }
        let mut y = svg.heading(&about);

        y = worker_bars(&mut svg, result, y);

        let classes: Vec<Bar> = judged
            .speed_classes
            .iter()
            .enumerate()
            .filter_map(|(i, class)| {
                let speed = class.speed.as_ref()?;
                let quotable = judged
                    .baselines
                    .iter()
                    .filter(|b| class.measured_cpus.contains(b.cpu))
                    .all(|b| b.quotable);
                Some(ratio_bar(
                    format!("{} (CPUs {})", class.label, class.cpus),
                    speed,
                    quotable,
                    class_colour(i),
                    format!("{}×", num2(speed.value)),
                ))
            })
            .collect();
        y = section(&mut svg, y, "Speed of each class, one worker alone");
        y = horizontal_bars(
            &mut svg,
            10.0,
            y,
            WIDTH - 20.0,
            "speed relative to the fastest class (×, wall time on CLOCK_MONOTONIC)",
            &classes,
        );

        let schemes: Vec<Bar> = judged
            .schemes
            .iter()
            .enumerate()
            .filter_map(|(i, scheme)| {
                let speedup = scheme.speedup.as_ref()?;
                let of_ceiling = scheme
                    .of_ceiling
                    .map(|f| format!(" ({:.0} % of the ceiling)", f * 100.0))
                    .unwrap_or_default();
                Some(ratio_bar(
                    scheme_name(scheme),
                    speedup,
                    scheme.quotable,
                    PALETTE[(i + 2) % PALETTE.len()],
                    format!("{}×{of_ceiling}", num2(speedup.value)),
                ))
            })
            .collect();
        let ceiling = judged.ceiling.map(|value| Mark {
            value,
            label: format!("ceiling {}× (the classes' speeds summed)", num2(value)),
        });
        y = section(&mut svg, y, "Speedup of each scheme, against the ceiling");
        y = horizontal_bars_marked(
            &mut svg,
            10.0,
            y,
            WIDTH - 20.0,
            "speedup over the fastest class alone (×, wall time on CLOCK_MONOTONIC)",
            &schemes,
            ceiling.as_ref(),
        );
        svg.set_height(y);
        svg.finish()
    }
}

/// Every scheme's workers: a bar of busy time in its class's colour, then
/// its idle time, faint, on one scale for all of them; a legend of the
/// classes below. Returns the y below it.
fn worker_bars(svg: &mut Svg, result: &HybridResult, y: f64) -> f64 {
    let judged = &result.judged;
    let longest = judged
        .schemes
        .iter()
        .flat_map(|s| &s.worker_rows)
        .map(|w| median(w.busy_ms.as_ref()) + median(w.idle_ms.as_ref()))
        .fold(0.0, f64::max);
    let x = Scale {
        low: 0.0,
        high: if longest > 0.0 { longest * 1.05 } else { 1.0 },
        start: LABEL_WIDTH,
        end: WIDTH - 130.0,
    };
    let top = section(svg, y, "Each worker's busy and idle time, per scheme (ms)");
    let row = ROW_HEIGHT + ROW_GAP;
    let height: f64 = judged
        .schemes
        .iter()
        .map(|s| (s.worker_rows.len() + 1) as f64 * row + ROW_GAP)
        .sum();
    let below = grid(svg, (&x, 6), None, (top, top + height), |tick| {
        format!("{tick:.0}")
    });
    let mut y = top;
    for scheme in &judged.schemes {
        let name = scheme_name(scheme);
        svg.text_styled(10.0, y + ROW_HEIGHT - 3.0, TEXT, Anchor::Start, true, &name);
        y += row;
        for worker in &scheme.worker_rows {
            worker_row(svg, result, &x, y, scheme, worker);
            y += row;
        }
        y += ROW_GAP;
    }
    svg.text(
        (x.start + x.end) / 2.0,
        below + 12.0,
        TEXT - 1.0,
        Anchor::Middle,
        "ms per round (median), wall time on CLOCK_MONOTONIC",
    );
    let mut legend_x = 10.0;
    let legend_y = below + 32.0;
    for (i, class) in judged.speed_classes.iter().enumerate() {
        let text = format!("busy, {}", class.label);
        svg.rect(
            legend_x,
            legend_y - 10.0,
            12.0,
            12.0,
            Paint::fill(class_colour(i)),
        );
        svg.text(legend_x + 16.0, legend_y, TEXT - 1.0, Anchor::Start, &text);
        legend_x += 16.0 + super::text_width(&text, TEXT - 1.0) + 16.0;
    }
    svg.rect(
        legend_x,
        legend_y - 10.0,
        12.0,
        12.0,
        Paint::fill(FAINT).outlined(INK, 0.5),
    );
    svg.text(legend_x + 16.0, legend_y, TEXT - 1.0, Anchor::Start, "idle");
    legend_y + 24.0
}

/// One worker of `scheme`: its name, busy then idle, and the two values.
fn worker_row(
    svg: &mut Svg,
    result: &HybridResult,
    x: &Scale,
    y: f64,
    scheme: &SchemeStats,
    worker: &WorkerRow,
) {
    let place = match worker.pinned_cpu {
        Some(cpu) => format!("CPU {cpu}"),
        None => format!("ran on {}", worker.ran_on),
    };
    let class = worker.class.as_deref().unwrap_or("class unknown");
    svg.text(
        LABEL_WIDTH - 6.0,
        y + ROW_HEIGHT - 4.0,
        TEXT - 1.0,
        Anchor::End,
        &format!("worker {}, {place}, {class}", worker.worker),
    );
    let busy = median(worker.busy_ms.as_ref());
    let idle = median(worker.idle_ms.as_ref());
    let colour = worker
        .class
        .as_ref()
        .and_then(|c| {
            result
                .judged
                .speed_classes
                .iter()
                .position(|s| &s.label == c)
        })
        .map_or(INK, class_colour);
    let paint = match scheme.quotable {
        true => Paint::fill(colour),
        false => Paint::fill(UNQUOTABLE).outlined(INK, 1.0).dashed(),
    };
    let tooltip = format!(
        "{}, worker {}: busy {} ms, idle {} ms",
        scheme_name(scheme),
        worker.worker,
        num(busy),
        num(idle)
    );
    svg.rect_with_tooltip(
        x.at(0.0),
        y,
        x.at(busy) - x.at(0.0),
        ROW_HEIGHT,
        paint,
        &tooltip,
    );
    svg.rect_with_tooltip(
        x.at(busy),
        y,
        x.at(busy + idle) - x.at(busy),
        ROW_HEIGHT,
        Paint::fill(FAINT).outlined(INK, 0.5),
        &tooltip,
    );
    svg.text(
        x.at(busy + idle) + 6.0,
        y + ROW_HEIGHT - 4.0,
        TEXT - 1.0,
        Anchor::Start,
        &format!("{} + {} ms", num(busy), num(idle)),
    );
}

/// A section's title, bold, at `y`; returns the y below it.
fn section(svg: &mut Svg, y: f64, title: &str) -> f64 {
    svg.text_styled(10.0, y + TEXT, TEXT + 1.0, Anchor::Start, true, title);
    y + TEXT + 14.0
}

/// "static-pinned (static, pinned)".
fn scheme_name(scheme: &SchemeStats) -> String {
    format!(
        "{} ({}, {})",
        scheme.arm,
        scheme.scheme.label(),
        if scheme.pinned { "pinned" } else { "unpinned" }
    )
}

/// A ratio as a bar with its interval, where it has one.
fn ratio_bar(
    label: String,
    ratio: &Ratio,
    quotable: bool,
    colour: &'static str,
    value_text: String,
) -> Bar {
    Bar {
        label,
        value: ratio.value,
        interval: ratio.ci95_low.zip(ratio.ci95_high),
        quotable,
        colour,
        value_text,
    }
}

/// The colour of the `index`th speed class (0 the fastest).
fn class_colour(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

fn median(spread: Option<&crate::judge::stats::Spread>) -> f64 {
    spread.map_or(0.0, |s| s.median)
}

/// A ratio with two decimals: "1.48".
fn num2(value: f64) -> String {
    format!("{value:.2}")
}
