//! The figure of `pairs`: the measured sibling map drawn over the
//! published one, beside a CPU × CPU heatmap of the measured penalties.

use super::Figure;
use super::machine::{CpuMark, Machine, MachineLayout};
use super::{
    Anchor, FAINT, INK, PALETTE, Paint, Svg, TEXT, UNQUOTABLE, heading_lines, legend, ticks,
};
use crate::cpuset::CpuSet;
use crate::judge::gate::Interval;
use crate::judge::pairs::{CpuRelation, PairStatus};
use crate::plan::pairs::Contention;
use crate::probe::CpuEntry;
use crate::saved::PairsResult;
use crate::units::percent_change;
use std::collections::BTreeMap;

const MACHINE_WIDTH: f64 = 440.0;
/// The heatmap's side at most, and a cell's.
const HEATMAP_SIDE: f64 = 420.0;
const MAX_CELL: f64 = 24.0;
/// Room left of and above the heatmap for the CPU numbers.
const AXIS_ROOM: f64 = 30.0;
/// The sequential scale, light to dark blue (ColorBrewer's Blues, which
/// people with any common colour-vision deficiency read in order).
const SCALE: [(f64, [f64; 3]); 3] = [
    (0.0, [222.0, 235.0, 247.0]),
    (0.5, [107.0, 174.0, 214.0]),
    (1.0, [8.0, 48.0, 107.0]),
];
/// A cell of a CPU with itself: no pair.
pub(super) const DIAGONAL: &str = "#EEEEEE";
/// The outline of a published sibling pair's cell: orange, apart from
/// every blue of the scale.
pub(super) const PUBLISHED: &str = PALETTE[1];

/// How a CPU's measured siblings relate to its published ones: the colour
/// of its mark, and the letters after its measured group's number.
fn relation_style(relation: CpuRelation) -> (&'static str, &'static str) {
    match relation {
        CpuRelation::Agreed => (PALETTE[2], ""),
        CpuRelation::FakeSiblings => (PALETTE[5], "F"),
        CpuRelation::HiddenSiblings => (PALETTE[0], "H"),
        CpuRelation::FakeAndHiddenSiblings => (PALETTE[3], "FH"),
        CpuRelation::Inconclusive => (UNQUOTABLE, "?"),
    }
}

/// One measured pair's cell: its penalty, interval and outcome.
struct Cell {
    penalty: f64,
    ci95: Interval,
    outcome: Contention,
    comparison: usize,
}

/// The published cores (the machine's boxes) with each tested CPU marked
/// by its measured group and its relation (fake, hidden siblings), beside
/// the heatmap: each measured pair's penalty on a light-to-dark blue scale,
/// published siblings outlined, pairs inferred rather than measured marked,
/// cells never measured left blank.
impl Figure for PairsResult {
    fn figure(&self) -> String {
        let result = self;
        let map = &result.map;
        let tested: Vec<u32> = result.tested.iter().collect();
        let cpus = published_machine(result);
        let mut marks = Vec::new();
        for entry in &map.cpus {
            let group = map
                .measured
                .iter()
                .position(|group| group.contains(entry.cpu))
                .unwrap_or(0);
            let (colour, letters) = relation_style(entry.relation);
            marks.push(CpuMark {
                cpu: entry.cpu,
                colour,
                label: format!("{group}{letters}"),
            });
        }
        let machine = Machine {
            cpus: &cpus,
            caches: &[],
            outer_label: Some("tested CPUs in their published cores"),
        };
        let layout = MachineLayout::new(machine, &marks, MACHINE_WIDTH);

        let mut about = vec![
            format!(
                "units: % penalty, the probe's cost per byte beside the other CPU against alone \
             (median of the paired per-round ratios − 1); clock: {} (wall time)",
                result.clock.as_str()
            ),
            format!(
                "n = {} comparisons ({} of pairs) over {} tested CPUs; threshold {}; verdict {}",
                result.effort.comparisons,
                result.effort.pair_comparisons,
                tested.len(),
                percent_change(result.options.threshold),
                result.verdict.as_str()
            ),
        ];
        if let Some(why) = &map.published_unknown {
            about.push(format!(
                "published map unknown: {why}; each CPU drawn as its own core"
            ));
        }
        let cell = (HEATMAP_SIDE / tested.len().max(1) as f64).min(MAX_CELL);
        let heat_x = 10.0 + layout.width().max(300.0) + 20.0 + AXIS_ROOM;
        let scale_x = heat_x + cell * tested.len() as f64 + 20.0;
        // Room for the scale's labels, and for the heatmap's legend lines.
        let width = (scale_x + 110.0).max(heat_x + 520.0);
        let title = format!(
            "pairs on {}: the measured sibling map against the published one",
            result.head.host
        );
        let mut svg = Svg::new(width, 0.0, &title);
        let top = svg.heading(&heading_lines(&about, svg.width()));
        layout.draw(&mut svg, 10.0, top);

        let mut relations: Vec<CpuRelation> = map.cpus.iter().map(|e| e.relation).collect();
        relations.sort_by_key(|r| relation_order(*r));
        relations.dedup();
        let mut entries: Vec<(Option<&str>, String)> = vec![(
            None,
            "each tested CPU carries the number of its measured group (CPUs measured sharing a \
         core carry the same number); boxes are the published cores"
                .to_string(),
        )];
        entries.extend(relations.into_iter().map(|relation| {
            let (colour, letters) = relation_style(relation);
            let letters = if letters.is_empty() {
                String::new()
            } else {
                format!("{letters}: ")
            };
            (
                Some(colour),
                format!("{letters}{}", relation_words(relation)),
            )
        }));
        let left = legend(
            &mut svg,
            10.0,
            top + layout.height() + 10.0,
            layout.width().max(300.0),
            &entries,
        );

        let bottom = draw_heatmap(&mut svg, heat_x, top + AXIS_ROOM, cell, result);
        svg.set_height(left.max(bottom) + 10.0);
        svg.finish()
    }
}

/// The legend's order of relations: agreed first, undecided last.
fn relation_order(relation: CpuRelation) -> usize {
    match relation {
        CpuRelation::Agreed => 0,
        CpuRelation::FakeSiblings => 1,
        CpuRelation::HiddenSiblings => 2,
        CpuRelation::FakeAndHiddenSiblings => 3,
        CpuRelation::Inconclusive => 4,
    }
}

fn relation_words(relation: CpuRelation) -> &'static str {
    match relation {
        CpuRelation::Agreed => "agreed: measured siblings are the published ones",
        CpuRelation::FakeSiblings => "fake siblings: published, but measured apart",
        CpuRelation::HiddenSiblings => "hidden siblings: measured sharing, but not published",
        CpuRelation::FakeAndHiddenSiblings => "fake and hidden siblings",
        CpuRelation::Inconclusive => "inconclusive: some of its pairs undecided",
    }
}

/// The tested CPUs as a machine of their published cores: the document
/// saves the groups, not the packages or classes, so one box holds them.
fn published_machine(result: &PairsResult) -> Vec<CpuEntry> {
    let map = &result.map;
    result
        .tested
        .iter()
        .map(|cpu| {
            let (core, siblings) = match &map.published_unknown {
                None => map
                    .published
                    .iter()
                    .enumerate()
                    .find(|(_, group)| group.contains(cpu))
                    .map(|(index, group)| (index, group.clone()))
                    .unwrap_or((map.published.len() + cpu as usize, CpuSet::from_cpus([cpu]))),
                Some(_) => (cpu as usize, CpuSet::from_cpus([cpu])),
            };
            CpuEntry::on_core(cpu, core, 0, siblings)
        })
        .collect()
}

/// Each pair measured by a comparison of exactly two workers, lower CPU
/// first: the last such comparison's penalty.
fn measured_cells(result: &PairsResult) -> BTreeMap<(u32, u32), Cell> {
    let mut cells = BTreeMap::new();
    for record in &result.comparisons {
        let comparison = &record.comparison;
        let (Some(other), 1, Some(estimate)) = (
            comparison.against.first(),
            comparison.against.len(),
            &record.estimate,
        ) else {
            continue;
        };
        let probe = comparison.probe;
        cells.insert(
            (probe.min(other), probe.max(other)),
            Cell {
                penalty: estimate.penalty,
                ci95: estimate.ci95.clone(),
                outcome: record.outcome,
                comparison: record.index,
            },
        );
    }
    cells
}

/// Pairs decided without a comparison of their own, lower CPU first, and
/// whether they share: apart because a set holding one of them measured
/// apart from the other (group testing), or sharing (or apart) through
/// the groups' other pairs.
fn inferred_pairs(
    result: &PairsResult,
    cells: &BTreeMap<(u32, u32), Cell>,
) -> BTreeMap<(u32, u32), bool> {
    let mut inferred = BTreeMap::new();
    for record in &result.comparisons {
        let comparison = &record.comparison;
        if comparison.against.len() < 2 || record.outcome != Contention::Apart {
            continue;
        }
        for other in comparison.against.iter() {
            let probe = comparison.probe;
            inferred.insert((probe.min(other), probe.max(other)), false);
        }
    }
    for finding in &result.map.pairs {
        let [a, b] = finding.cpus;
        let shares = match finding.measured {
            PairStatus::Shares => true,
            PairStatus::Apart => false,
            PairStatus::Inconclusive | PairStatus::NotMeasured => continue,
        };
        if finding.comparison.is_none() {
            inferred.insert((a.min(b), a.max(b)), shares);
        }
    }
    inferred.retain(|pair, _| !cells.contains_key(pair));
    inferred
}

/// `t` in 0..=1 on the light-to-dark blue scale (`latency`'s heatmap
/// shares it).
pub(super) fn scale_colour(t: f64) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (mut low, mut high) = (SCALE[0], SCALE[SCALE.len() - 1]);
    for pair in SCALE.windows(2) {
        if t >= pair[0].0 && t <= pair[1].0 {
            (low, high) = (pair[0], pair[1]);
            break;
        }
    }
    let along = (t - low.0) / (high.0 - low.0);
    let channel = |i: usize| (low.1[i] + (high.1[i] - low.1[i]) * along).round() as u8;
    format!("#{:02X}{:02X}{:02X}", channel(0), channel(1), channel(2))
}

/// The CPU numbers above and left of a heatmap whose top left corner is
/// (x, y), one `cell` per CPU, thinned out where cells are too small.
pub(super) fn axis_numbers(svg: &mut Svg, x: f64, y: f64, cell: f64, cpus: &[u32]) {
    let step = (14.0 / cell).ceil().max(1.0) as usize;
    for (i, cpu) in cpus.iter().enumerate().step_by(step) {
        let middle = i as f64 * cell + cell / 2.0;
        svg.text(x + middle, y - 4.0, 8.5, Anchor::Middle, &cpu.to_string());
        svg.text(
            x - 4.0,
            y + middle + 3.0,
            8.5,
            Anchor::End,
            &cpu.to_string(),
        );
    }
}

/// The scale bar, 14 wide and `height` high from (x, y): the darkest blue
/// at the top.
pub(super) fn scale_bar(svg: &mut Svg, x: f64, y: f64, height: f64) {
    let steps = 40;
    for i in 0..steps {
        let t = 1.0 - (i as f64 + 0.5) / steps as f64;
        let step_height = height / steps as f64;
        svg.rect(
            x,
            y + i as f64 * step_height,
            14.0,
            step_height + 0.2,
            Paint::fill(&scale_colour(t)),
        );
    }
    svg.rect(x, y, 14.0, height, Paint::stroke(INK, 0.8));
}

/// The heatmap from (x, y), one `cell` per CPU pair, with its axis
/// numbers, scale bar and legend; returns the y below it.
fn draw_heatmap(svg: &mut Svg, x: f64, y: f64, cell: f64, result: &PairsResult) -> f64 {
    let tested: Vec<u32> = result.tested.iter().collect();
    let cells = measured_cells(result);
    let inferred = inferred_pairs(result, &cells);
    let index: BTreeMap<u32, usize> = tested.iter().enumerate().map(|(i, c)| (*c, i)).collect();
    let side = cell * tested.len() as f64;
    let low = cells.values().map(|c| c.penalty).fold(0.0, f64::min);
    let high = cells
        .values()
        .map(|c| c.penalty)
        .fold(result.options.threshold, f64::max);
    let at = |value: f64| (value - low) / (high - low).max(f64::EPSILON);
    let cell_at = |a: u32, b: u32| (x + index[&b] as f64 * cell, y + index[&a] as f64 * cell);

    svg.text_styled(
        x,
        y - AXIS_ROOM + 2.0,
        TEXT - 1.0,
        Anchor::Start,
        true,
        "penalty of each measured pair, CPU × CPU",
    );
    axis_numbers(svg, x, y, cell, &tested);
    svg.rect(x, y, side, side, Paint::stroke(FAINT, 1.0));
    for cpu in &tested {
        let (cx, cy) = cell_at(*cpu, *cpu);
        svg.rect(cx, cy, cell, cell, Paint::fill(DIAGONAL));
    }
    for (&(a, b), measured) in &cells {
        let fill = scale_colour(at(measured.penalty));
        let tooltip = format!(
            "CPUs {a} and {b}: penalty {} (95 %: {} to {}), {} (comparison {})",
            percent_change(measured.penalty),
            percent_change(measured.ci95.low),
            percent_change(measured.ci95.high),
            measured.outcome.as_str(),
            measured.comparison
        );
        for (row, column) in [(a, b), (b, a)] {
            let (cx, cy) = cell_at(row, column);
            svg.rect_with_tooltip(cx, cy, cell, cell, Paint::fill(&fill), &tooltip);
        }
    }
    for (&(a, b), &shares) in &inferred {
        let radius = (cell * 0.22).max(1.2);
        let paint = match shares {
            true => Paint::fill(INK),
            false => Paint::stroke(INK, 1.0),
        };
        for (row, column) in [(a, b), (b, a)] {
            let (cx, cy) = cell_at(row, column);
            svg.circle(cx + cell / 2.0, cy + cell / 2.0, radius, paint);
        }
    }
    if result.map.published_unknown.is_none() {
        for group in &result.map.published {
            for a in group.iter() {
                for b in group.iter().filter(|b| *b != a) {
                    if index.contains_key(&a) && index.contains_key(&b) {
                        let (cx, cy) = cell_at(a, b);
                        svg.rect(cx, cy, cell, cell, Paint::stroke(PUBLISHED, 2.0));
                    }
                }
            }
        }
    }

    let scale_x = x + side + 20.0;
    let scale_height = side.max(140.0);
    scale_bar(svg, scale_x, y, scale_height);
    let level = |value: f64| y + scale_height * (1.0 - at(value));
    for tick in ticks(low, high, 4) {
        svg.line(
            scale_x + 14.0,
            level(tick),
            scale_x + 18.0,
            level(tick),
            Paint::stroke(INK, 1.0),
        );
        svg.text(
            scale_x + 20.0,
            level(tick) + 3.5,
            9.0,
            Anchor::Start,
            &percent_change(tick),
        );
    }
    let threshold = level(result.options.threshold);
    svg.line(
        scale_x - 3.0,
        threshold,
        scale_x + 17.0,
        threshold,
        Paint::stroke(INK, 2.0),
    );
    svg.text(
        scale_x + 20.0,
        threshold - 6.0,
        9.0,
        Anchor::Start,
        "threshold",
    );

    let below = y + side.max(scale_height) + 14.0;
    let mut legend_y = below;
    let mut legend_item = |svg: &mut Svg, draw: &dyn Fn(&mut Svg, f64, f64), text: &str| {
        draw(svg, x, legend_y);
        svg.text(x + 18.0, legend_y + 10.0, TEXT - 1.0, Anchor::Start, text);
        legend_y += 17.0;
    };
    legend_item(
        svg,
        &|svg, lx, ly| svg.rect(lx, ly, 12.0, 12.0, Paint::stroke(PUBLISHED, 2.0)),
        "outlined: published siblings",
    );
    legend_item(
        svg,
        &|svg, lx, ly| svg.circle(lx + 6.0, ly + 6.0, 3.0, Paint::fill(INK)),
        "inferred sharing: through a common sibling, not measured as a pair",
    );
    legend_item(
        svg,
        &|svg, lx, ly| svg.circle(lx + 6.0, ly + 6.0, 3.0, Paint::stroke(INK, 1.0)),
        "inferred apart: from a set measured apart (group testing) or the groups' other pairs",
    );
    legend_item(
        svg,
        &|svg, lx, ly| svg.rect(lx, ly, 12.0, 12.0, Paint::stroke(FAINT, 1.0)),
        "blank: not measured as a pair; grey: a CPU with itself",
    );
    legend_y
}
