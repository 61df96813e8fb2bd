//! The figure of `latency`: a CPU × CPU heatmap of one-way latencies on
//! the `pairs` heatmap's blue scale, with published thread siblings
//! outlined as `pairs` outlines them.
//!
//! The scale is logarithmic: a matrix can hold 20 ns siblings beside
//! millisecond time slices of stacked vCPUs, and a linear scale would
//! paint every transfer the same light blue.

use super::Figure;
use super::pairs::{DIAGONAL, PUBLISHED, axis_numbers, scale_bar, scale_colour};
use super::{Anchor, FAINT, INK, Paint, Svg, TEXT, heading_lines};
use crate::cpuset::cpu_pair;
use crate::judge::latency::PairLatency;
use crate::saved::LatencyResult;
use crate::units::nanos;
use std::collections::BTreeMap;

/// The heatmap's side at most, and a cell's.
const HEATMAP_SIDE: f64 = 480.0;
const MAX_CELL: f64 = 40.0;
/// Room left of and above the heatmap for the CPU numbers.
const AXIS_ROOM: f64 = 30.0;
/// A pair without progress within a sample's bound: darker than the
/// scale's darkest blue.
const NO_PROGRESS: &str = INK;

/// The heatmap, its scale bar and legend.
impl Figure for LatencyResult {
    fn figure(&self) -> String {
        let result = self;
        let tested: Vec<u32> = result.tested.iter().collect();
        let by_pair: BTreeMap<[u32; 2], &PairLatency> =
            result.pairs.iter().map(|p| (p.cpus, p)).collect();
        let latencies: Vec<f64> = result.pairs.iter().filter_map(|p| p.one_way_ns).collect();
        let low = latencies.iter().copied().fold(f64::INFINITY, f64::min);
        let high = latencies.iter().copied().fold(0.0, f64::max);
        let span = (high.ln() - low.ln()).max(f64::EPSILON);
        let at = |ns: f64| {
            if latencies.len() < 2 || !span.is_finite() {
                0.5
            } else {
                (ns.ln() - low.ln()) / span
            }
        };
        let about = vec![
            format!(
                "units: one-way latency (half a round trip of a cache line passed by \
             compare-and-swap), the 10th percentile of up to {} samples of {} round trips per \
             pair; clock: wall time; log scale",
                result.options.samples, result.options.round_trips_per_sample
            ),
            format!(
                "n = {} of {} pairs over {} tested CPUs; verdict {}",
                result.effort.pairs_measured,
                result.effort.all_pairs,
                tested.len(),
                result.verdict.as_str()
            ),
        ];
        let cell = (HEATMAP_SIDE / tested.len().max(1) as f64).min(MAX_CELL);
        let side = cell * tested.len() as f64;
        let x = 10.0 + AXIS_ROOM;
        let width = (x + side + 140.0).max(560.0);
        let title = format!(
            "latency on {}: one-way cache-line latency between CPUs",
            result.head.host
        );
        let mut svg = Svg::new(width, 0.0, &title);
        let y = svg.heading(&heading_lines(&about, svg.width())) + AXIS_ROOM;
        let index: BTreeMap<u32, usize> = tested.iter().enumerate().map(|(i, c)| (*c, i)).collect();
        let cell_at = |a: u32, b: u32| (x + index[&b] as f64 * cell, y + index[&a] as f64 * cell);

        axis_numbers(&mut svg, x, y, cell, &tested);
        svg.rect(x, y, side, side, Paint::stroke(FAINT, 1.0));
        for &a in &tested {
            for &b in &tested {
                let (cx, cy) = cell_at(a, b);
                if a == b {
                    svg.rect(cx, cy, cell, cell, Paint::fill(DIAGONAL));
                    continue;
                }
                let Some(pair) = by_pair.get(&cpu_pair(a, b)) else {
                    continue;
                };
                let (fill, shown) = match pair.one_way_ns {
                    Some(ns) => (scale_colour(at(ns)), nanos(ns)),
                    None => (NO_PROGRESS.to_string(), "no progress".to_string()),
                };
                let tooltip = format!(
                    "CPUs {a} and {b}: {shown} one-way, {} samples",
                    pair.samples
                );
                svg.rect_with_tooltip(cx, cy, cell, cell, Paint::fill(&fill), &tooltip);
            }
        }
        if let Some(smt) = result
            .published
            .unknown
            .is_none()
            .then_some(&result.published)
        {
            for group in &smt.smt_siblings {
                for a in group.iter() {
                    for b in group.iter().filter(|b| *b != a) {
                        let (cx, cy) = cell_at(a, b);
                        svg.rect(cx, cy, cell, cell, Paint::stroke(PUBLISHED, 2.0));
                    }
                }
            }
        }

        let scale_x = x + side + 20.0;
        let scale_height = side.max(140.0);
        scale_bar(&mut svg, scale_x, y, scale_height);
        if low.is_finite() {
            svg.text(scale_x + 20.0, y + 9.0, 9.0, Anchor::Start, &nanos(high));
            svg.text(
                scale_x + 20.0,
                y + scale_height,
                9.0,
                Anchor::Start,
                &nanos(low),
            );
        }
        let mut legend_y = y + side.max(scale_height) + 14.0;
        for (draw_outline, text) in [
            (true, "outlined: published thread siblings"),
            (
                false,
                "darkest: no progress within a sample's bound; grey: a CPU with itself; blank: not measured",
            ),
        ] {
            let paint = if draw_outline {
                Paint::stroke(PUBLISHED, 2.0)
            } else {
                Paint::fill(NO_PROGRESS)
            };
            svg.rect(x, legend_y, 12.0, 12.0, paint);
            svg.text(x + 18.0, legend_y + 10.0, TEXT - 1.0, Anchor::Start, text);
            legend_y += 17.0;
        }
        svg.set_height(legend_y + 10.0);
        svg.finish()
    }
}
