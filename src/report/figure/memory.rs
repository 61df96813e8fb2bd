//! The figure of `memory`: the cache ladder, ns per load against buffer
//! size, both on log scales, each published cache level a dashed vertical
//! line (labelled agreed, FAKE or undecided) and each plateau a band.

use super::Figure;
use super::{Anchor, FAINT, INK, PALETTE, Paint, Svg, TEXT, heading_lines};
use crate::judge::memory::{Latency, LevelStatus};
use crate::saved::MemoryResult;
use crate::units::{bytes, nanos};

/// The plot's width and height.
const PLOT_WIDTH: f64 = 560.0;
const PLOT_HEIGHT: f64 = 300.0;
/// Room left of the plot for the latency axis, below it for sizes.
const LEFT: f64 = 70.0;
const BELOW: f64 = 40.0;

/// The ladder plot with the published levels marked.
impl Figure for MemoryResult {
    fn figure(&self) -> String {
        let sizes = &self.ladder_judgement.sizes;
        let about = vec![
            format!(
                "units: ns per dependent load (the 10th percentile of each size's samples), clock \
                 {}; buffer size on a log scale, latency on a log scale",
                self.ladder.clock
            ),
            format!(
                "n = {} sizes on CPU {}; caches {}; NUMA distances {}",
                sizes.len(),
                self.ladder.cpu,
                self.ladder_judgement.verdict.as_str(),
                self.numa_judgement.verdict.as_str()
            ),
        ];
        let title = format!(
            "memory on {}: the cache ladder against the published levels",
            self.head.host
        );
        let mut svg = Svg::new(LEFT + PLOT_WIDTH + 40.0, 0.0, &title);
        let top = svg.heading(&heading_lines(&about, svg.width())) + 10.0;
        let (x0, y0) = (LEFT, top);
        svg.rect(x0, y0, PLOT_WIDTH, PLOT_HEIGHT, Paint::stroke(FAINT, 1.0));
        let log_range = |values: &mut dyn Iterator<Item = f64>| {
            let (low, high) =
                values.fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
            (low.max(f64::MIN_POSITIVE).ln(), high.max(low * 2.0).ln())
        };
        let published = self
            .ladder_judgement
            .levels
            .iter()
            .map(|l| l.size_bytes as f64);
        let (x_low, x_high) =
            log_range(&mut sizes.iter().map(|s| s.size_bytes as f64).chain(published));
        // The translation ladder (one line per page), where it was measured.
        let translation: Vec<(f64, f64)> = self
            .ladder
            .translation
            .iter()
            .filter_map(|p| Some((p.size_bytes as f64, Latency::of(&p.ns_per_load)?.ns)))
            .collect();
        let (y_low, y_high) = log_range(
            &mut sizes
                .iter()
                .map(|s| s.latency.ns)
                .chain(translation.iter().map(|&(_, ns)| ns)),
        );
        let x_at = |v: f64| x0 + (v.ln() - x_low) / (x_high - x_low).max(f64::EPSILON) * PLOT_WIDTH;
        let y_at = |v: f64| {
            y0 + PLOT_HEIGHT - (v.ln() - y_low) / (y_high - y_low).max(f64::EPSILON) * PLOT_HEIGHT
        };
        for plateau in &self.ladder_judgement.plateaus {
            let (a, b) = (
                x_at(plateau.first_bytes as f64),
                x_at(plateau.last_bytes as f64),
            );
            let (hi, lo) = (y_at(plateau.high_ns), y_at(plateau.low_ns));
            svg.rect(
                a,
                hi,
                (b - a).max(2.0),
                (lo - hi).max(2.0),
                Paint::fill("#E8EEF6"),
            );
        }
        for level in &self.ladder_judgement.levels {
            let x = x_at(level.size_bytes as f64);
            let (colour, word) = match level.status {
                LevelStatus::Agreed => (PALETTE[2], "agreed"),
                LevelStatus::Fake => (PALETTE[5], "FAKE"),
                LevelStatus::Undecided => (FAINT, "undecided"),
                LevelStatus::TlbStep => (FAINT, "TLB's step too"),
            };
            svg.line(x, y0, x, y0 + PLOT_HEIGHT, Paint::stroke(colour, 1.5));
            let label = format!("L{} {} {word}", level.level, bytes(level.size_bytes));
            // A label near the right edge runs leftwards, inside the plot.
            match x > x0 + PLOT_WIDTH * 0.7 {
                true => svg.text(x - 3.0, y0 + 12.0, TEXT - 2.0, Anchor::End, &label),
                false => svg.text(x + 3.0, y0 + 12.0, TEXT - 2.0, Anchor::Start, &label),
            }
        }
        let points: Vec<(f64, f64)> = sizes
            .iter()
            .map(|s| (x_at(s.size_bytes as f64), y_at(s.latency.ns)))
            .collect();
        let dashed: Vec<(f64, f64)> = translation
            .iter()
            .map(|&(size, ns)| (x_at(size), y_at(ns)))
            .collect();
        svg.polyline(&dashed, Paint::stroke(PALETTE[0], 1.2).dashed());
        svg.polyline(&points, Paint::stroke(INK, 1.5));
        for &(x, y) in &points {
            svg.circle(x, y, 2.0, Paint::fill(INK));
        }
        if let (Some(first), Some(last)) = (sizes.first(), sizes.last()) {
            let bottom = y0 + PLOT_HEIGHT + 14.0;
            svg.text(
                x0,
                bottom,
                TEXT - 2.0,
                Anchor::Start,
                &bytes(first.size_bytes),
            );
            let right = x0 + PLOT_WIDTH;
            svg.text(
                right,
                bottom,
                TEXT - 2.0,
                Anchor::End,
                &bytes(last.size_bytes),
            );
            let (low, high) = (y_low.exp(), y_high.exp());
            svg.text(
                x0 - 4.0,
                y0 + PLOT_HEIGHT,
                TEXT - 2.0,
                Anchor::End,
                &nanos(low),
            );
            svg.text(x0 - 4.0, y0 + 10.0, TEXT - 2.0, Anchor::End, &nanos(high));
        }
        let mut notes = vec![
            "shaded: each plateau's sizes and latency range; vertical lines: the published cache \
             levels",
        ];
        if !translation.is_empty() {
            notes.push(
                "dashed: the translation ladder, one line per 4 KiB page over the same spans",
            );
        }
        for (row, note) in notes.iter().enumerate() {
            svg.text(
                x0,
                y0 + PLOT_HEIGHT + BELOW - 6.0 + 14.0 * row as f64,
                TEXT - 1.0,
                Anchor::Start,
                note,
            );
        }
        svg.set_height(y0 + PLOT_HEIGHT + BELOW + 14.0 * notes.len() as f64);
        svg.finish()
    }
}
