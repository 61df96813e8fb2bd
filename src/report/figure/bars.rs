//! Horizontal bars with 95 % whiskers: one bar per arm, class or scheme,
//! the value at its end, and an axis from zero that names its unit.

use super::{Anchor, FAINT, INK, Paint, Svg, TEXT, UNQUOTABLE, text_width, ticks};

/// One bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    /// The 95 % interval, where one was measured.
    pub interval: Option<(f64, f64)>,
    /// Drawn grey and dashed when false (over its CV bar, or failed a
    /// check); the caller's legend says why.
    pub quotable: bool,
    pub colour: &'static str,
    /// The value as the text view gives it ("1.84×", "2213 ms").
    pub value_text: String,
}

const BAR_HEIGHT: f64 = 18.0;
const BAR_GAP: f64 = 8.0;

/// A value every bar is read against (a ceiling, a limit): a dashed line
/// across the bars, named at its top.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub value: f64,
    pub label: String,
}

/// Draws `bars` from (x, y) down, `width` wide in all: labels on the left,
/// bars from zero, whiskers, the value after each bar, and a labelled axis
/// below (`axis`: what the values are, their unit and clock). Returns the
/// y below the axis label.
pub fn horizontal_bars(svg: &mut Svg, x: f64, y: f64, width: f64, axis: &str, bars: &[Bar]) -> f64 {
    horizontal_bars_marked(svg, x, y, width, axis, bars, None)
}

/// [`horizontal_bars`], with `mark` drawn across them where given (the
/// scale reaches it), its label above the first bar.
pub fn horizontal_bars_marked(
    svg: &mut Svg,
    x: f64,
    y: f64,
    width: f64,
    axis: &str,
    bars: &[Bar],
    mark: Option<&Mark>,
) -> f64 {
    // The mark's label sits above the bars.
    let y = y + if mark.is_some() { TEXT + 6.0 } else { 0.0 };
    let label_width = bars
        .iter()
        .map(|b| text_width(&b.label, TEXT))
        .fold(0.0, f64::max)
        + 8.0;
    let value_room = bars
        .iter()
        .map(|b| text_width(&b.value_text, TEXT))
        .fold(0.0, f64::max)
        + 8.0;
    let plot_x = x + label_width;
    let plot_width = (width - label_width - value_room).max(40.0);
    let top = bars
        .iter()
        .map(|b| b.interval.map_or(b.value, |(_, high)| high.max(b.value)))
        .chain(mark.map(|m| m.value))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.05 } else { 1.0 };
    let at = |value: f64| plot_x + value.clamp(0.0, top) / top * plot_width;
    let bottom = y + bars.len() as f64 * (BAR_HEIGHT + BAR_GAP);

    let tick_values = ticks(0.0, top, 5);
    let step = match tick_values.as_slice() {
        [first, second, ..] => second - first,
        _ => top,
    };
    for tick in tick_values {
        svg.line(at(tick), y, at(tick), bottom, Paint::stroke(FAINT, 1.0));
        svg.text(
            at(tick),
            bottom + 14.0,
            TEXT - 2.0,
            Anchor::Middle,
            &tick_label(tick, step),
        );
    }
    for (i, bar) in bars.iter().enumerate() {
        let bar_y = y + i as f64 * (BAR_HEIGHT + BAR_GAP);
        let middle = bar_y + BAR_HEIGHT / 2.0;
        svg.text(plot_x - 6.0, middle + 4.0, TEXT, Anchor::End, &bar.label);
        let paint = match bar.quotable {
            true => Paint::fill(bar.colour),
            false => Paint::fill(UNQUOTABLE).outlined(INK, 1.0).dashed(),
        };
        svg.rect_with_tooltip(
            plot_x,
            bar_y,
            at(bar.value) - plot_x,
            BAR_HEIGHT,
            paint,
            &format!("{}: {}", bar.label, bar.value_text),
        );
        let mut end = at(bar.value);
        if let Some((low, high)) = bar.interval {
            let whisker = Paint::stroke(INK, 1.5);
            svg.line(at(low), middle, at(high), middle, whisker);
            svg.line(at(low), middle - 5.0, at(low), middle + 5.0, whisker);
            svg.line(at(high), middle - 5.0, at(high), middle + 5.0, whisker);
            end = end.max(at(high));
        }
        svg.text(
            end + 4.0,
            middle + 4.0,
            TEXT,
            Anchor::Start,
            &bar.value_text,
        );
    }
    if let Some(mark) = mark {
        let at_mark = at(mark.value);
        svg.line(
            at_mark,
            y - 4.0,
            at_mark,
            bottom,
            Paint::stroke(INK, 1.5).dashed(),
        );
        svg.text(at_mark, y - 8.0, TEXT - 1.0, Anchor::Middle, &mark.label);
    }
    svg.line(
        plot_x,
        bottom,
        plot_x + plot_width,
        bottom,
        Paint::stroke(INK, 1.0),
    );
    svg.text(
        plot_x + plot_width / 2.0,
        bottom + 30.0,
        TEXT - 1.0,
        Anchor::Middle,
        axis,
    );
    bottom + 40.0
}

/// A tick's label, with as many decimals as the ticks' `step` needs to
/// tell them apart: 0, 0.02, 0.04 (not 0, 0.0, 0.0), 0, 0.5, 1, and 0, 20,
/// 40; "0" and whole ticks without needless decimals.
fn tick_label(value: f64, step: f64) -> String {
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10().floor()).max(0.0) as usize
    } else {
        0
    };
    let label = format!("{value:.decimals$}");
    match label.split_once('.') {
        Some((whole, part)) if part.bytes().all(|b| b == b'0') => whole.to_owned(),
        _ => label,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(label: &str, value: f64, quotable: bool) -> Bar {
        Bar {
            label: label.into(),
            value,
            interval: Some((value * 0.9, value * 1.1)),
            quotable,
            colour: super::super::PALETTE[0],
            value_text: format!("{value} ms"),
        }
    }

    /// The longer bar reaches further right; an unquotable one is grey and
    /// dashed; each has its whisker and its value.
    #[test]
    fn bars_are_scaled_from_zero_and_marked_when_not_quotable() {
        let mut svg = Svg::new(400.0, 200.0, "bars");
        let below = horizontal_bars(
            &mut svg,
            10.0,
            10.0,
            380.0,
            "wall time, ms (CLOCK_MONOTONIC)",
            &[
                bar("one-per-core", 100.0, true),
                bar("same-cpu", 200.0, false),
            ],
        );
        assert!(below > 10.0 + 2.0 * BAR_HEIGHT);
        let out = svg.finish();
        assert_eq!(
            out.matches("<title>").count(),
            3,
            "the figure's and each bar's"
        );
        assert!(
            out.contains("fill=\"#9A9A9A\" stroke=\"#222222\" stroke-width=\"1\" stroke-dasharray")
        );
        assert!(out.contains(">200 ms<") && out.contains(">100 ms<"));
        assert!(out.contains("wall time, ms (CLOCK_MONOTONIC)"));
    }

    /// Ticks under 0.1 keep the decimals that tell them apart.
    #[test]
    fn tick_labels_take_their_decimals_from_the_step() {
        let labels = |top: f64| -> Vec<String> {
            let values = ticks(0.0, top, 5);
            let step = values[1] - values[0];
            values.iter().map(|v| tick_label(*v, step)).collect()
        };
        assert_eq!(labels(0.09), ["0", "0.02", "0.04", "0.06", "0.08"]);
        assert_eq!(labels(1.2), ["0", "0.5", "1"]);
        assert_eq!(labels(250.0), ["0", "50", "100", "150", "200", "250"]);
    }

    /// A mark beyond every bar widens the scale to reach it, and is named.
    #[test]
    fn a_mark_is_drawn_across_the_bars() {
        let draw = |mark: Option<&Mark>| {
            let mut svg = Svg::new(400.0, 200.0, "bars");
            let bars = [bar("stealing", 1.0, true)];
            horizontal_bars_marked(&mut svg, 10.0, 10.0, 380.0, "speedup", &bars, mark);
            svg.finish()
        };
        let ceiling = Mark {
            value: 2.0,
            label: "ceiling 2.00×".into(),
        };
        let marked = draw(Some(&ceiling));
        assert!(marked.contains(">ceiling 2.00×<"));
        assert!(marked.contains("stroke-dasharray"));
        assert_ne!(marked, draw(None));
    }
}
