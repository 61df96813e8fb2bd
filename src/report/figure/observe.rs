//! An observation as a figure: one swimlane per CPU over time, as perf
//! timechart draws a schedule. Lanes are grouped and banded by core class;
//! each thread has one colour (the first eight threads, most time on a CPU
//! first, take the palette; the rest are grey, and the legend says so); a
//! tick above a lane marks a thread arriving there from another CPU.
//!
//! A long recording has more stretches than the figure has pixels, so
//! what is under a pixel is aggregated ([`pieces`]): a thread's stretches
//! on one lane closer than a pixel are drawn as one, and what is still
//! narrower than a pixel fills its pixel column. A lane thus holds at most
//! one rectangle per thread per pixel column, and ticks at most one per
//! pixel column: 10,000 stretches stay readable and under 1 MB.

use super::Figure;
use super::{Anchor, FAINT, INK, PALETTE, Paint, Svg, TEXT, UNQUOTABLE, num, ticks};
use crate::judge::observe::{CpuResidency, ThreadStats};
use crate::probe::CoreKind;
use crate::report::trace::cpu_name;
use crate::saved::ObserveResult;
use crate::units::count;
use std::collections::BTreeSet;

const WIDTH: f64 = 960.0;
/// Room on the left for the lanes' names.
const PLOT_X: f64 = 140.0;
const PLOT_WIDTH: f64 = WIDTH - PLOT_X - 20.0;
const LANE_HEIGHT: f64 = 14.0;
const LANE_GAP: f64 = 4.0;
/// The row naming a class above its lanes.
const BAND_HEADER: f64 = 18.0;
/// The classes' bands, alternating: light enough to leave the threads'
/// colours as they are.
const BANDS: [&str; 2] = ["#F0F0F0", "#E2E8EE"];
/// Legend entries per row.
const LEGEND_COLUMNS: usize = 3;

/// Some of one thread's stretches on one lane, as drawn: from `start` to
/// `end`, in pixels from the plot's left edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    pub start: f64,
    pub end: f64,
}

/// Aggregates one thread's stretches on one lane, `(start, end)` in pixels
/// and in order of start, into what is drawn: stretches closer than a pixel
/// merge into one piece, and a piece still narrower than a pixel fills its
/// pixel column (so it shows, and two never share a column).
pub fn pieces(stretches: impl IntoIterator<Item = (f64, f64)>) -> Vec<Piece> {
    let mut merged: Vec<Piece> = Vec::new();
    for (start, end) in stretches {
        match merged.last_mut() {
            Some(last) if start - last.end < 1.0 => last.end = last.end.max(end),
            _ => merged.push(Piece { start, end }),
        }
    }
    for piece in &mut merged {
        if piece.end - piece.start < 1.0 {
            piece.start = piece.start.floor();
            piece.end = piece.start + 1.0;
        }
    }
    merged
}

/// The figure of `result`.
impl Figure for ObserveResult {
    fn figure(&self) -> String {
        let result = self;
        let judged = &result.judged;
        let stretches: usize = judged.threads.iter().map(|t| t.intervals.len()).sum();
        let mut svg = Svg::new(
            WIDTH,
            0.0,
            &format!("Observe on {}: where the threads ran", result.head.host),
        );
        let mut about = vec![
            "one lane per CPU, banded by core class; time in ms since the recording began \
         (CLOCK_MONOTONIC), from the kernel's context-switch records"
                .to_owned(),
            format!(
                "n = {}, {} ms wall, stretches on a CPU: {stretches}; a tick above a lane: a thread \
             arriving there ({})",
                count(judged.threads.len(), "thread"),
                num(judged.wall_ms),
                count(judged.migrations.len(), "migration"),
            ),
        ];
        if !judged.valid {
            about.push(format!(
                "INVALID, not to be quoted: {}",
                judged.problems.join("; ")
            ));
        }
        let top = svg.heading(&about);

        let end_ms = judged
            .threads
            .iter()
            .flat_map(|t| &t.intervals)
            .map(|i| i.end_ms)
            .fold(judged.wall_ms, f64::max);
        let end_ms = if end_ms > 0.0 { end_ms } else { 1.0 };
        let x_of = |ms: f64| ms.clamp(0.0, end_ms) / end_ms * PLOT_WIDTH;

        // Layout first: bands and lanes, so the grid goes under the lanes.
        let groups = class_groups(&judged.cpus);
        let mut lanes: Vec<(&CpuResidency, f64)> = Vec::new();
        let mut y = top;
        for (index, (class, cpus)) in groups.iter().enumerate() {
            let height = BAND_HEADER + cpus.len() as f64 * (LANE_HEIGHT + LANE_GAP);
            svg.rect(0.0, y, WIDTH, height, Paint::fill(BANDS[index % 2]));
            let name = format!("{class} ({})", count(cpus.len(), "CPU"));
            svg.text_styled(10.0, y + 13.0, TEXT - 1.0, Anchor::Start, true, &name);
            let mut lane_y = y + BAND_HEADER;
            for cpu in cpus {
                lanes.push((cpu, lane_y));
                lane_y += LANE_HEIGHT + LANE_GAP;
            }
            y += height;
        }
        let bottom = y;
        for tick in ticks(0.0, end_ms, 8) {
            let x = PLOT_X + x_of(tick);
            svg.line(x, top, x, bottom, Paint::stroke(FAINT, 1.0));
            svg.text(x, bottom + 14.0, TEXT - 2.0, Anchor::Middle, &num(tick));
        }
        for (cpu, lane_y) in &lanes {
            draw_lane(&mut svg, result, cpu, *lane_y, &x_of);
        }
        svg.text(
            PLOT_X + PLOT_WIDTH / 2.0,
            bottom + 30.0,
            TEXT - 1.0,
            Anchor::Middle,
            "ms since the recording began (CLOCK_MONOTONIC)",
        );
        let below = legend(&mut svg, &judged.threads, bottom + 48.0);
        svg.set_height(below);
        svg.finish()
    }
}

/// The CPUs grouped by class, classes in their order (fastest first),
/// CPUs ascending within each.
fn class_groups(cpus: &[CpuResidency]) -> Vec<(CoreKind, Vec<&CpuResidency>)> {
    let classes: BTreeSet<CoreKind> = cpus.iter().map(|c| c.class).collect();
    classes
        .into_iter()
        .map(|class| {
            let mut members: Vec<&CpuResidency> =
                cpus.iter().filter(|c| c.class == class).collect();
            members.sort_by_key(|c| c.cpu);
            (class, members)
        })
        .collect()
}

/// A thread's colour: its place in the document's order (most time on a
/// CPU first) in the palette, grey beyond it.
fn colour(index: usize) -> &'static str {
    PALETTE.get(index).copied().unwrap_or(UNQUOTABLE)
}

/// One CPU's lane at `lane_y`: its name, a white strip (its residency as
/// a tooltip), each thread's aggregated stretches in its colour, and a
/// tick per pixel column where a thread arrived from another CPU.
fn draw_lane(
    svg: &mut Svg,
    result: &ObserveResult,
    cpu: &CpuResidency,
    lane_y: f64,
    x_of: &dyn Fn(f64) -> f64,
) {
    let judged = &result.judged;
    svg.text(
        PLOT_X - 6.0,
        lane_y + LANE_HEIGHT - 3.0,
        TEXT - 1.0,
        Anchor::End,
        &format!("CPU {}", cpu.cpu),
    );
    svg.rect_with_tooltip(
        PLOT_X,
        lane_y,
        PLOT_WIDTH,
        LANE_HEIGHT,
        Paint::fill("#FFFFFF").outlined(FAINT, 0.5),
        &format!(
            "{}: {} ms of the followed threads",
            cpu_name(cpu),
            num(cpu.ms)
        ),
    );
    for (index, thread) in judged.threads.iter().enumerate() {
        let here = thread
            .intervals
            .iter()
            .filter(|i| i.cpu == cpu.cpu)
            .map(|i| (x_of(i.start_ms), x_of(i.end_ms)));
        for piece in pieces(here) {
            svg.rect(
                PLOT_X + piece.start,
                lane_y,
                piece.end - piece.start,
                LANE_HEIGHT,
                Paint::fill(colour(index)),
            );
        }
    }
    let columns: BTreeSet<i64> = judged
        .migrations
        .iter()
        .filter(|m| m.to_cpu == cpu.cpu)
        .map(|m| x_of(m.time_ms).floor() as i64)
        .collect();
    for column in columns {
        let x = PLOT_X + column as f64 + 0.5;
        svg.line(x, lane_y - 3.0, x, lane_y + 4.0, Paint::stroke(INK, 1.0));
    }
}

/// The threads' colours, [`LEGEND_COLUMNS`] to a row from `y` down; the
/// threads past the palette as one grey entry. Returns the y below it.
fn legend(svg: &mut Svg, threads: &[ThreadStats], y: f64) -> f64 {
    let mut entries: Vec<(&str, String)> = threads
        .iter()
        .take(PALETTE.len())
        .enumerate()
        .map(|(index, t)| {
            (
                colour(index),
                format!(
                    "{} {} (pid {}): {} ms",
                    t.comm,
                    t.tid,
                    t.pid,
                    num(t.on_cpu_ms)
                ),
            )
        })
        .collect();
    let rest = threads.len().saturating_sub(PALETTE.len());
    if rest > 0 {
        entries.push((
            UNQUOTABLE,
            format!(
                "grey: {} past the palette's {} colours",
                count(rest, "thread"),
                PALETTE.len()
            ),
        ));
    }
    let column_width = (WIDTH - 20.0) / LEGEND_COLUMNS as f64;
    for (index, (fill, label)) in entries.iter().enumerate() {
        let x = 10.0 + (index % LEGEND_COLUMNS) as f64 * column_width;
        let row_y = y + (index / LEGEND_COLUMNS) as f64 * (TEXT + 8.0);
        svg.rect(x, row_y - 10.0, 12.0, 12.0, Paint::fill(fill));
        svg.text(x + 18.0, row_y, TEXT - 1.0, Anchor::Start, label);
    }
    y + entries.len().div_ceil(LEGEND_COLUMNS) as f64 * (TEXT + 8.0) + 4.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::observe::{Migration, OnCpu};

    const KERNEL_VM: &str = include_str!("../../../fixtures/results/observe-kernel-vm.json");

    fn kernel_vm() -> ObserveResult {
        serde_json::from_str(KERNEL_VM).unwrap()
    }

    #[test]
    fn stretches_closer_than_a_pixel_merge_and_the_rest_fill_a_column() {
        let drawn = pieces([
            (0.2, 0.4),
            (0.9, 1.1),
            (5.0, 9.0),
            (9.5, 12.0),
            (20.3, 20.5),
        ]);
        assert_eq!(
            drawn,
            [
                Piece {
                    start: 0.0,
                    end: 1.0
                },
                Piece {
                    start: 5.0,
                    end: 12.0
                },
                Piece {
                    start: 20.0,
                    end: 21.0
                },
            ]
        );
    }

    /// `result` with its threads replaced by `threads` threads taking
    /// turns on its CPUs, `count` stretches in all over 5 s, each thread
    /// moving at every stretch.
    fn crowded(count: usize, threads: u32) -> ObserveResult {
        let mut result = kernel_vm();
        let cpus: Vec<u32> = result.judged.cpus.iter().map(|c| c.cpu).collect();
        let judged = &mut result.judged;
        judged.wall_ms = count as f64 * 0.5;
        judged.threads = (0..threads)
            .map(|n| {
                let mut thread = judged.threads[0].clone();
                thread.tid = 2000 + n;
                thread.intervals.clear();
                thread
            })
            .collect();
        judged.migrations.clear();
        for i in 0..count {
            let thread = &mut judged.threads[i % threads as usize];
            let cpu = cpus[(i / threads as usize) % cpus.len()];
            let start_ms = i as f64 * 0.5;
            if let Some(last) = thread.intervals.last() {
                judged.migrations.push(Migration {
                    time_ms: start_ms,
                    tid: thread.tid,
                    comm: thread.comm.clone(),
                    from_cpu: last.cpu,
                    to_cpu: cpu,
                    from_class: CoreKind::Uniform,
                    to_class: CoreKind::Uniform,
                });
            }
            thread.intervals.push(OnCpu {
                cpu,
                start_ms,
                end_ms: start_ms + 0.3,
            });
        }
        result
    }

    #[test]
    fn ten_thousand_stretches_stay_under_a_megabyte_and_parse() {
        // Twelve threads: each one's stretches on a lane about 2 pixels
        // apart, so each is drawn, a pixel wide.
        let result = crowded(10_000, 12);
        let svg = (result).figure();
        assert!(svg.len() < 1_000_000, "{} bytes", svg.len());
        roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("not XML: {e}"));
        assert!(svg.contains("grey: 4 threads past the palette&apos;s 8 colours"));
        assert_eq!((result).figure(), svg, "the same document, the same bytes");
        // Two threads: each one's stretches on a lane a third of a pixel
        // apart, merged into one piece per thread and lane.
        let svg = crowded(10_000, 2).figure();
        let rects = svg.matches("<rect ").count();
        assert!(rects < 20, "{rects} rectangles for 10,000 stretches");
        roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("not XML: {e}"));
    }

    #[test]
    fn the_figure_names_its_clock_its_n_and_its_classes() {
        let svg = kernel_vm().figure();
        assert!(svg.contains("CLOCK_MONOTONIC"));
        assert!(svg.contains("n = 2 threads, 509.8 ms wall, stretches on a CPU: 136"));
        assert!(svg.contains(">uniform (2 CPUs)</text>"));
        assert!(svg.contains(">mul worker 1249 (pid "));
    }
}
