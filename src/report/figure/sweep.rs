//! The sweep as a figure: speedup against workers, beside the ideal
//! (k workers, k times as fast) and the ceiling the CPUs' own speeds
//! allow, with each step's 95 % interval, each added CPU's kind marked
//! along the bottom, and the knees named where the curve bends. A kernel
//! sweep and a COMMAND sweep are drawn the same way.

use super::Figure;
use super::{Anchor, INK, PALETTE, Paint, Scale, Svg, TEXT, UNQUOTABLE, grid, num};
use crate::judge::sweep::StepStats;
use crate::plan::sweep::Added;
use crate::saved::SweepResult;

const WIDTH: f64 = 760.0;
const PLOT_HEIGHT: f64 = 340.0;
/// Room on the left for the speedup's ticks and name.
const LEFT: f64 = 70.0;
const RIGHT: f64 = 40.0;
/// The measured speedup's colour.
const MEASURED: &str = PALETTE[0];
/// The ceiling's colour.
const CEILING: &str = PALETTE[2];

/// What an added CPU is, as the figure tells them apart: by shape and by
/// colour both, so neither alone has to carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    First,
    NewCore,
    SmtSibling,
    OtherPackage,
    OtherNode,
}

impl Kind {
    const ALL: [Kind; 5] = [
        Kind::First,
        Kind::NewCore,
        Kind::SmtSibling,
        Kind::OtherPackage,
        Kind::OtherNode,
    ];

    fn of(added: &Added) -> Kind {
        match added {
            Added::First { .. } => Kind::First,
            Added::NewCore { node: None, .. } => Kind::NewCore,
            Added::NewCore { node: Some(_), .. } => Kind::OtherNode,
            Added::SmtSibling { .. } => Kind::SmtSibling,
            Added::OtherPackage { .. } => Kind::OtherPackage,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::First => "first CPU",
            Kind::NewCore => "new core",
            Kind::SmtSibling => "SMT sibling",
            Kind::OtherPackage => "core in another package",
            Kind::OtherNode => "core in another node",
        }
    }

    fn colour(self) -> &'static str {
        match self {
            Kind::First => PALETTE[7],
            Kind::NewCore => PALETTE[0],
            Kind::SmtSibling => PALETTE[1],
            Kind::OtherPackage => PALETTE[3],
            Kind::OtherNode => PALETTE[5],
        }
    }

    /// Its marker, `size` across, centred on (x, y): a circle, a square,
    /// a triangle, a diamond, a triangle pointing down.
    fn draw(self, svg: &mut Svg, x: f64, y: f64, size: f64) {
        let paint = Paint::fill(self.colour());
        let half = size / 2.0;
        match self {
            Kind::First => svg.circle(x, y, half, paint),
            Kind::NewCore => svg.rect(x - half, y - half, size, size, paint),
            Kind::SmtSibling => svg.polygon(
                &[(x, y - half), (x + half, y + half), (x - half, y + half)],
                paint,
            ),
            Kind::OtherPackage => svg.polygon(
                &[(x, y - half), (x + half, y), (x, y + half), (x - half, y)],
                paint,
            ),
            Kind::OtherNode => svg.polygon(
                &[(x - half, y - half), (x + half, y - half), (x, y + half)],
                paint,
            ),
        }
    }
}

/// The figure of `result`.
impl Figure for SweepResult {
    fn figure(&self) -> String {
        let result = self;
        let judged = &result.judged;
        let workload = match &result.command {
            Some(_) => format!("`{}`", result.workload()),
            None => format!("kernel {}", result.workload()),
        };
        let mut svg = Svg::new(
            WIDTH,
            0.0,
            &format!(
                "Sweep of {workload} on {}: speedup against workers",
                result.head.host
            ),
        );
        let first = result.plan.order.first().map_or(0, |c| c.cpu);
        let rounds = judged
            .steps
            .first()
            .and_then(|s| s.wall_ms.as_ref())
            .map_or(0, |w| w.reps);
        let mut about = vec![
            format!(
                "speedup: step 1's wall time over step k's (CLOCK_MONOTONIC), in units of CPU \
             {first} alone; 95 % intervals paired by round"
            ),
            format!(
                "n = {rounds} rounds per step; CPUs added in order {}",
                result.plan.order_name
            ),
        ];
        if judged.steps.iter().any(|s| !s.quotable) {
            about.push(format!(
                "grey, hollow: a step not quotable (coefficient of variation over the {} % bar)",
                num(result.options.cv_bar * 100.0)
            ));
        }
        if let Some(why) = &judged.ceiling_unavailable {
            about.push(format!("no ceiling: {why}"));
        }
        if !result.gated {
            about.push(
                "UNGATED: the gate did not say physical; placement may be fiction here".into(),
            );
        }
        if !judged.valid {
            about.push(
                "INVALID STUDY: it failed its validity checks; no number may be quoted".into(),
            );
        }
        if !result.head.complete {
            about.push(
                "incomplete: a stop signal ended the sweep; the rounds done are drawn".into(),
            );
        }
        let top = svg.heading(&about) + 22.0;

        let most = result
            .plan
            .order
            .len()
            .max(judged.steps.iter().map(|s| s.workers).max().unwrap_or(1))
            .max(1) as f64;
        let highest = judged
            .steps
            .iter()
            .flat_map(|s| {
                let speedup = s.speedup.as_ref();
                [
                    s.ceiling,
                    speedup.map(|r| r.value),
                    speedup.and_then(|r| r.ci95_high),
                ]
            })
            .flatten()
            .filter(|v| v.is_finite())
            .fold(most, f64::max);
        let x = Scale {
            low: 0.0,
            high: most,
            start: LEFT,
            end: WIDTH - RIGHT,
        };
        let y = Scale {
            low: 0.0,
            high: highest * 1.05,
            start: top + PLOT_HEIGHT,
            end: top,
        };
        let bottom = top + PLOT_HEIGHT;
        let below = grid(
            &mut svg,
            (&x, 6.min(most as usize)),
            Some(&y),
            (top, bottom),
            num,
        );

        // The ideal: k workers, k times as fast.
        svg.line(
            x.at(0.0),
            y.at(0.0),
            x.at(most),
            y.at(most),
            Paint::stroke(INK, 1.0).dashed(),
        );
        let ceiling: Vec<(f64, f64)> = judged
            .steps
            .iter()
            .filter_map(|s| Some((x.at(s.workers as f64), y.at(s.ceiling?))))
            .collect();
        if ceiling.len() > 1 {
            svg.polyline(&ceiling, Paint::stroke(CEILING, 2.0));
        }
        let measured: Vec<(f64, f64)> = judged
            .steps
            .iter()
            .filter_map(|s| Some((x.at(s.workers as f64), y.at(s.speedup.as_ref()?.value))))
            .collect();
        svg.polyline(&measured, Paint::stroke(MEASURED, 1.5));
        for step in &judged.steps {
            step_mark(&mut svg, &x, &y, step);
        }
        for knee in &judged.knees {
            let Some(step) = judged.steps.iter().find(|s| s.workers == knee.workers) else {
                continue;
            };
            let Some(speedup) = &step.speedup else {
                continue;
            };
            let (at_x, at_y) = (x.at(step.workers as f64), y.at(speedup.value));
            svg.line(at_x, at_y + 8.0, at_x, at_y + 30.0, Paint::stroke(INK, 1.0));
            let kinds: Vec<&str> = knee.added.iter().map(|a| Kind::of(a).name()).collect();
            let anchor = if at_x > (x.start + x.end) / 2.0 {
                Anchor::End
            } else {
                Anchor::Start
            };
            svg.text(
                at_x,
                at_y + 42.0,
                TEXT - 1.0,
                anchor,
                &format!(
                    "{} at {}: {:+.2} per added CPU ({})",
                    if knee.clear { "knee" } else { "unclear knee" },
                    knee.workers,
                    knee.marginal_gain,
                    kinds.join(", ")
                ),
            );
        }

        // Each CPU of the order, at its worker count, marked by its kind.
        let strip = below + 8.0;
        for (k, cpu) in result.plan.order.iter().enumerate() {
            Kind::of(&cpu.added).draw(&mut svg, x.at((k + 1) as f64), strip, 7.0);
        }
        svg.text(x.start - 6.0, strip + 4.0, TEXT - 2.0, Anchor::End, "added");
        svg.text(
            (x.start + x.end) / 2.0,
            strip + 24.0,
            TEXT - 1.0,
            Anchor::Middle,
            "workers k: one per CPU, the first k CPUs of the order",
        );
        svg.text(
            x.start,
            top - 10.0,
            TEXT - 1.0,
            Anchor::Middle,
            "speedup (×)",
        );

        let legend_y = legend(&mut svg, result, strip + 48.0);
        svg.set_height(legend_y);
        svg.finish()
    }
}

/// A step's speedup, a dot on its interval: filled where quotable, grey
/// and hollow where not.
fn step_mark(svg: &mut Svg, x: &Scale, y: &Scale, step: &StepStats) {
    let Some(speedup) = &step.speedup else {
        return;
    };
    let colour = if step.quotable { MEASURED } else { UNQUOTABLE };
    let at_x = x.at(step.workers as f64);
    // Smaller where the steps crowd (hundreds of CPUs), so each stays apart.
    let radius = ((x.at(1.0) - x.at(0.0)) / 2.0).clamp(1.5, 4.0);
    if let (Some(low), Some(high)) = (speedup.ci95_low, speedup.ci95_high) {
        let whisker = Paint::stroke(colour, 1.5);
        svg.line(at_x, y.at(low), at_x, y.at(high), whisker);
        for end in [low, high] {
            svg.line(at_x - radius, y.at(end), at_x + radius, y.at(end), whisker);
        }
    }
    let dot = match step.quotable {
        true => Paint::fill(MEASURED),
        false => Paint::fill("#FFFFFF").outlined(UNQUOTABLE, 1.5),
    };
    svg.circle(at_x, y.at(speedup.value), radius, dot);
}

/// The lines' and markers' legend, from `y` down; returns the y below it.
fn legend(svg: &mut Svg, result: &SweepResult, y: f64) -> f64 {
    let mut x = LEFT;
    let entry = |svg: &mut Svg, x: &mut f64, text: &str| {
        svg.text(*x + 26.0, y + 4.0, TEXT - 1.0, Anchor::Start, text);
        *x += 26.0 + super::text_width(text, TEXT - 1.0) + 18.0;
    };
    svg.line(x, y, x + 20.0, y, Paint::stroke(INK, 1.0).dashed());
    entry(svg, &mut x, "ideal (k)");
    if result.judged.ceiling_unavailable.is_none() {
        svg.line(x, y, x + 20.0, y, Paint::stroke(CEILING, 2.0));
        entry(svg, &mut x, "ceiling (the CPUs' own speeds summed)");
    }
    svg.line(x, y, x + 20.0, y, Paint::stroke(MEASURED, 1.5));
    svg.circle(x + 10.0, y, 4.0, Paint::fill(MEASURED));
    entry(svg, &mut x, "measured, 95 % interval");
    let y = y + 22.0;
    let mut x = LEFT;
    svg.text(x, y + 4.0, TEXT - 1.0, Anchor::Start, "added CPU:");
    x += 74.0;
    // A core in another node is named only where the sweep added one: most
    // machines have one node a package.
    let other_node = result
        .plan
        .order
        .iter()
        .any(|cpu| Kind::of(&cpu.added) == Kind::OtherNode);
    for kind in Kind::ALL
        .into_iter()
        .filter(|&kind| kind != Kind::OtherNode || other_node)
    {
        kind.draw(svg, x + 5.0, y, 9.0);
        svg.text(x + 14.0, y + 4.0, TEXT - 1.0, Anchor::Start, kind.name());
        x += 14.0 + super::text_width(kind.name(), TEXT - 1.0) + 18.0;
    }
    y + 20.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::CoreKind::Uniform;

    /// A new core in a node no earlier CPU is in has a marker of its own.
    #[test]
    fn a_core_in_another_node_is_a_kind_of_its_own() {
        let in_node = |node| Added::NewCore {
            class: Uniform,
            node,
        };
        assert_eq!(Kind::of(&in_node(None)), Kind::NewCore);
        assert_eq!(Kind::of(&in_node(Some(1))), Kind::OtherNode);
        assert_eq!(Kind::OtherNode.name(), "core in another node");
        assert_ne!(Kind::OtherNode.colour(), Kind::NewCore.colour());
    }
}
