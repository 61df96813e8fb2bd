//! Figures: every saved document drawn as one SVG (`--svg FILE` on each
//! study, `report FILE --svg OUT`), and the pieces every figure is made of.
//!
//! A figure is text written in the order it is drawn: coordinates with one
//! decimal, colours from one palette, no timestamps, no random or counted
//! identifiers, so the same document gives the same bytes on every machine
//! (the golden tests compare them). Text is SVG `<text>` in the viewer's
//! sans-serif font: nothing is measured with a font library, so widths are
//! estimated ([`text_width`]) and layouts leave room.
//!
//! Every figure carries its title, and a line that names its units, its
//! clock and its n ([`Svg::heading`]).
//!
//! The charts are drawn with these pieces rather than `plotters`: its SVG
//! backend alone (no font library) builds and repeats its bytes, but it
//! writes a bare 400 × 300 chart in 21 kB (a line per mesh step), rescales
//! text sizes (15 becomes 12.096774193548388), has no tooltips, and would
//! give the line charts a second look beside [`bars`] without sparing the
//! markers and legends they draw anyway.

/// `--svg`: the document drawn as one SVG figure; each kind's in
/// `report::figure::<kind>`.
pub trait Figure {
    fn figure(&self) -> String;
}

pub mod bars;
pub mod baseline;
pub mod command;
pub mod gate;
pub mod hybrid;
pub mod latency;
pub mod machine;
pub mod memory;
pub mod observe;
pub mod pairs;
pub mod run;
pub mod sweep;
pub mod topology;

use crate::escape::one_line;
use std::fmt::Write;

/// The Okabe–Ito palette: eight colours that stay apart for people with the
/// common colour-vision deficiencies (and in greyscale, mostly). Series
/// take them in order.
pub const PALETTE: [&str; 8] = [
    "#0072B2", // blue
    "#E69F00", // orange
    "#009E73", // bluish green
    "#CC79A7", // reddish purple
    "#56B4E9", // sky blue
    "#D55E00", // vermillion
    "#F0E442", // yellow
    "#000000", // black
];

/// Text and axes.
pub const INK: &str = "#222222";
/// Grid lines, outlines of what is only context.
pub const FAINT: &str = "#C8C8C8";
/// What is drawn but may not be quoted (an arm over its CV bar, an
/// invalid study): grey, and hatched where it is an area.
pub const UNQUOTABLE: &str = "#9A9A9A";

/// The body text's size, in user units (pixels at 100 %).
pub const TEXT: f64 = 12.0;

/// Where a text's x is: its start, middle or end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    fn name(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// How a shape is painted: its fill, its outline, and whether the outline
/// is dashed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paint<'a> {
    pub fill: Option<&'a str>,
    pub stroke: Option<&'a str>,
    pub stroke_width: f64,
    pub dashed: bool,
}

impl<'a> Paint<'a> {
    /// Filled with `colour`, no outline.
    pub fn fill(colour: &'a str) -> Paint<'a> {
        Paint {
            fill: Some(colour),
            stroke: None,
            stroke_width: 0.0,
            dashed: false,
        }
    }

    /// An outline of `colour`, `width` wide, not filled.
    pub fn stroke(colour: &'a str, width: f64) -> Paint<'a> {
        Paint {
            fill: None,
            stroke: Some(colour),
            stroke_width: width,
            dashed: false,
        }
    }

    /// The same, with an outline of `colour` `width` wide.
    pub fn outlined(self, colour: &'a str, width: f64) -> Paint<'a> {
        Paint {
            stroke: Some(colour),
            stroke_width: width,
            ..self
        }
    }

    /// The same, its outline dashed.
    pub fn dashed(self) -> Paint<'a> {
        Paint {
            dashed: true,
            ..self
        }
    }

    fn attributes(&self) -> String {
        let mut out = format!(" fill=\"{}\"", self.fill.unwrap_or("none"));
        if let Some(stroke) = self.stroke {
            let _ = write!(
                out,
                " stroke=\"{stroke}\" stroke-width=\"{}\"",
                num(self.stroke_width)
            );
            if self.dashed {
                out.push_str(" stroke-dasharray=\"4 3\"");
            }
        }
        out
    }
}

/// One SVG document being drawn: shapes and text appended in order.
#[derive(Debug)]
pub struct Svg {
    width: f64,
    height: f64,
    title: String,
    body: String,
}

impl Svg {
    /// An empty figure `width` × `height` user units, titled `title` (its
    /// `<title>`, what a screen reader and a browser tab show).
    pub fn new(width: f64, height: f64, title: &str) -> Svg {
        Svg {
            width,
            height,
            title: title.to_owned(),
            body: String::new(),
        }
    }

    pub fn width(&self) -> f64 {
        self.width
    }

    /// Grows the figure to `height` where what it holds needs more room.
    pub fn set_height(&mut self, height: f64) {
        self.height = height;
    }

    /// The title in bold at the top left, cut with "…" where it would run
    /// past the figure's right edge (a long COMMAND; the `<title>` keeps it
    /// whole), then one smaller line per entry of `about` (units, clock,
    /// n, what is marked); returns the y below them, where the drawing
    /// starts.
    pub fn heading(&mut self, about: &[String]) -> f64 {
        let size = TEXT + 3.0;
        let columns = ((self.width - 20.0) / text_width("m", size)).max(1.0) as usize;
        let title = one_line(&self.title, columns);
        self.text_styled(10.0, 20.0, size, Anchor::Start, true, &title);
        let mut y = 20.0;
        for line in about {
            y += TEXT + 4.0;
            self.text(10.0, y, TEXT - 1.0, Anchor::Start, line);
        }
        y + 14.0
    }

    pub fn rect(&mut self, x: f64, y: f64, width: f64, height: f64, paint: Paint<'_>) {
        let _ = writeln!(
            self.body,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"{}/>",
            num(x),
            num(y),
            num(width.max(0.0)),
            num(height.max(0.0)),
            paint.attributes()
        );
    }

    /// A rectangle that shows `tooltip` when pointed at (a `<title>`
    /// child): the exact value behind a bar or a cell.
    pub fn rect_with_tooltip(
        &mut self,
        x: f64,
        y: f64,
        width: f64,
        height: f64,
        paint: Paint<'_>,
        tooltip: &str,
    ) {
        let _ = writeln!(
            self.body,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"{}><title>{}</title></rect>",
            num(x),
            num(y),
            num(width.max(0.0)),
            num(height.max(0.0)),
            paint.attributes(),
            xml_text(tooltip)
        );
    }

    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, paint: Paint<'_>) {
        let _ = writeln!(
            self.body,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"{}/>",
            num(x1),
            num(y1),
            num(x2),
            num(y2),
            paint.attributes()
        );
    }

    /// A line through `points`, in order.
    pub fn polyline(&mut self, points: &[(f64, f64)], paint: Paint<'_>) {
        self.through("polyline", points, paint);
    }

    /// A closed shape through `points`: a marker (triangle, diamond).
    pub fn polygon(&mut self, points: &[(f64, f64)], paint: Paint<'_>) {
        self.through("polygon", points, paint);
    }

    /// An element `tag` (`polyline`, `polygon`) through `points`.
    fn through(&mut self, tag: &str, points: &[(f64, f64)], paint: Paint<'_>) {
        let points: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{},{}", num(*x), num(*y)))
            .collect();
        let _ = writeln!(
            self.body,
            "<{tag} points=\"{}\"{}/>",
            points.join(" "),
            paint.attributes()
        );
    }

    pub fn circle(&mut self, x: f64, y: f64, radius: f64, paint: Paint<'_>) {
        let _ = writeln!(
            self.body,
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\"{}/>",
            num(x),
            num(y),
            num(radius),
            paint.attributes()
        );
    }

    /// `text` in the ink colour, `size` high, its baseline at `y`.
    pub fn text(&mut self, x: f64, y: f64, size: f64, anchor: Anchor, text: &str) {
        self.text_styled(x, y, size, anchor, false, text);
    }

    /// `text` in `colour` (a faint CPU's number, a label on a dark chip).
    pub fn text_in(&mut self, x: f64, y: f64, size: f64, anchor: Anchor, colour: &str, text: &str) {
        let _ = writeln!(
            self.body,
            "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{}\" fill=\"{colour}\">{}</text>",
            num(x),
            num(y),
            num(size),
            anchor.name(),
            xml_text(text)
        );
    }

    /// The same, in bold where `bold`.
    pub fn text_styled(
        &mut self,
        x: f64,
        y: f64,
        size: f64,
        anchor: Anchor,
        bold: bool,
        text: &str,
    ) {
        let weight = if bold { " font-weight=\"bold\"" } else { "" };
        let _ = writeln!(
            self.body,
            "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{}\"{weight}>{}</text>",
            num(x),
            num(y),
            num(size),
            anchor.name(),
            xml_text(text)
        );
    }

    /// The document: the XML declaration, the `<svg>` element sized to the
    /// figure, its title, a white background and everything drawn.
    pub fn finish(self) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
             viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" fill=\"{INK}\">\n\
             <title>{title}</title>\n\
             <rect width=\"{w}\" height=\"{h}\" fill=\"#FFFFFF\"/>\n\
             {body}</svg>\n",
            w = num(self.width),
            h = num(self.height),
            title = xml_text(&self.title),
            body = self.body,
        )
    }
}

/// Draws a legend from (x, y) down within `width`: one entry per line, a
/// swatch of its colour (none where `None`) and its words, wrapped to the
/// width. Returns the y below it.
pub fn legend(
    svg: &mut Svg,
    x: f64,
    y: f64,
    width: f64,
    entries: &[(Option<&str>, String)],
) -> f64 {
    let size = TEXT - 1.0;
    let columns = ((width - 18.0) / text_width("m", size)).max(10.0) as usize;
    let mut y = y;
    for (colour, text) in entries {
        if let Some(colour) = colour {
            svg.rect(x, y, 12.0, 12.0, Paint::fill(colour));
        }
        for line in crate::units::wrap_words(text, columns, columns) {
            svg.text(x + 18.0, y + 10.5, size, Anchor::Start, &line);
            y += size + 5.0;
        }
        y += 2.0;
    }
    y
}

/// `lines` of a heading broken between words to fit `width` (at the size
/// [`Svg::heading`] writes them), so a long banner stays in the figure.
pub fn heading_lines(lines: &[String], width: f64) -> Vec<String> {
    let columns = ((width - 20.0) / text_width("m", TEXT - 1.0)).max(20.0) as usize;
    lines
        .iter()
        .flat_map(|line| crate::units::wrap_words(line, columns, columns))
        .collect()
}

/// A coordinate or size as written: one decimal, without a trailing ".0"
/// and never "-0", so the same value is always the same bytes.
pub fn num(value: f64) -> String {
    let tenths = (value * 10.0).round();
    if !tenths.is_finite() {
        return "0".into();
    }
    let tenths = tenths as i64;
    match (tenths / 10, (tenths % 10).abs()) {
        (whole, 0) => whole.to_string(),
        (0, part) if tenths < 0 => format!("-0.{part}"),
        (whole, part) => format!("{whole}.{part}"),
    }
}

/// `text` safe inside an XML element or attribute: the five characters XML
/// reserves escaped, and control characters (which XML 1.0 forbids) shown
/// as U+FFFD.
pub fn xml_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' => out.push(' '),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// About how wide `text` is at `size` in a sans-serif font: 0.6 of the
/// size per character, a little more than most fonts need, so labels laid
/// out with it do not collide.
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.6
}

/// A linear map from values (`low..=high`) to user units (`start..=end`;
/// `end` below `start` for a y axis, which grows downwards in SVG).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    pub low: f64,
    pub high: f64,
    pub start: f64,
    pub end: f64,
}

impl Scale {
    /// Where `value` is drawn; values outside the range are drawn at its
    /// edge, so a wild round stays inside the plot.
    pub fn at(&self, value: f64) -> f64 {
        let span = self.high - self.low;
        if span.is_nan() || span <= 0.0 || !value.is_finite() {
            return self.start;
        }
        let fraction = (value.clamp(self.low, self.high) - self.low) / span;
        self.start + fraction * (self.end - self.start)
    }

    /// About `count` round values inside the range ([`ticks`]).
    pub fn ticks(&self, count: usize) -> Vec<f64> {
        ticks(self.low, self.high, count)
    }
}

/// A plot's grid: a faint vertical line at each of about `x_ticks` of
/// `x`'s ticks from `top` to `bottom`, labelled below it (`label` writes a
/// tick), and the axis line along the bottom; the same for `y` where given
/// (horizontal lines, labelled on the left). Returns the y below the x
/// labels.
pub fn grid(
    svg: &mut Svg,
    (x, x_ticks): (&Scale, usize),
    y: Option<&Scale>,
    (top, bottom): (f64, f64),
    label: impl Fn(f64) -> String,
) -> f64 {
    for tick in x.ticks(x_ticks) {
        svg.line(
            x.at(tick),
            top,
            x.at(tick),
            bottom,
            Paint::stroke(FAINT, 1.0),
        );
        svg.text(
            x.at(tick),
            bottom + 14.0,
            TEXT - 2.0,
            Anchor::Middle,
            &label(tick),
        );
    }
    if let Some(y) = y {
        for tick in y.ticks(6) {
            svg.line(
                x.start,
                y.at(tick),
                x.end,
                y.at(tick),
                Paint::stroke(FAINT, 1.0),
            );
            svg.text(
                x.start - 6.0,
                y.at(tick) + 4.0,
                TEXT - 2.0,
                Anchor::End,
                &label(tick),
            );
        }
        svg.line(x.start, top, x.start, bottom, Paint::stroke(INK, 1.0));
    }
    svg.line(x.start, bottom, x.end, bottom, Paint::stroke(INK, 1.0));
    bottom + 16.0
}

/// Round tick values covering `low..=high`, about `count` of them: steps
/// of 1, 2 or 5 times a power of ten.
pub fn ticks(low: f64, high: f64, count: usize) -> Vec<f64> {
    if !(low.is_finite() && high.is_finite()) || high <= low || count == 0 {
        return vec![low];
    }
    let rough = (high - low) / count as f64;
    let power = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|step| *step >= rough)
        .unwrap_or(10.0 * power);
    let first = (low / step).ceil() as i64;
    let last = (high / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A title wider than the figure is cut with "…" where it is drawn,
    /// and kept whole in `<title>`.
    #[test]
    fn a_long_title_is_cut_to_the_figure() {
        let title = format!("Sweep of `{}` on vm", "x".repeat(200));
        let mut svg = Svg::new(300.0, 100.0, &title);
        svg.heading(&[]);
        let out = svg.finish();
        let drawn = out
            .split("font-weight=\"bold\">")
            .nth(1)
            .and_then(|rest| rest.split("</text>").next())
            .expect("the drawn title");
        assert!(drawn.ends_with('…'), "{drawn}");
        assert!(text_width(drawn, TEXT + 3.0) <= 300.0 - 20.0, "{drawn}");
        assert!(out.contains(&format!("<title>{}</title>", xml_text(&title))));
    }

    #[test]
    fn numbers_are_written_one_way() {
        assert_eq!(num(0.0), "0");
        assert_eq!(num(-0.01), "0");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(12.96), "13");
        assert_eq!(num(-0.5), "-0.5");
        assert_eq!(num(-3.25), "-3.3");
        assert_eq!(num(f64::NAN), "0");
    }

    #[test]
    fn text_is_escaped_for_xml() {
        assert_eq!(
            xml_text("a<b & \"c\" 'd'>\u{1b}"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;\u{FFFD}"
        );
    }

    #[test]
    fn ticks_are_round() {
        let tenths: Vec<String> = ticks(0.0, 1.0, 5).into_iter().map(num).collect();
        assert_eq!(tenths, ["0", "0.2", "0.4", "0.6", "0.8", "1"]);
        assert_eq!(ticks(0.0, 2100.0, 5), [0.0, 500.0, 1000.0, 1500.0, 2000.0]);
        assert_eq!(
            ticks(0.0, 2100.0, 4),
            [0.0, 1000.0, 2000.0],
            "steps of 1, 2 or 5"
        );
        assert_eq!(ticks(3.0, 3.0, 4), [3.0]);
    }

    #[test]
    fn a_scale_maps_linearly_and_keeps_wild_values_inside() {
        let y = Scale {
            low: 0.0,
            high: 4.0,
            start: 300.0,
            end: 100.0,
        };
        assert_eq!(y.at(0.0), 300.0);
        assert_eq!(y.at(1.0), 250.0);
        assert_eq!(y.at(9.0), 100.0, "clamped to the top");
        assert_eq!(y.at(f64::NAN), 300.0);
        assert_eq!(y.ticks(4), [0.0, 1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn a_figure_is_one_svg_element_with_its_title() {
        let mut svg = Svg::new(100.0, 50.0, "a <b> figure");
        svg.rect(1.0, 2.0, 3.0, 4.0, Paint::fill(PALETTE[0]));
        let out = svg.finish();
        assert!(out.starts_with("<?xml"));
        assert!(out.contains("<title>a &lt;b&gt; figure</title>"));
        assert!(out.contains("<rect x=\"1\" y=\"2\" width=\"3\" height=\"4\" fill=\"#0072B2\"/>"));
        assert!(out.ends_with("</svg>\n"));
    }
}
