//! The machine as lstopo draws it: packages holding cores holding hardware
//! threads (each labelled by its CPU number), the caches as bands over the
//! cores they serve, core classes coloured with a legend, and CPUs this
//! process may not run on drawn faint.
//!
//! Every figure that says where something ran draws the machine with
//! [`MachineLayout`] and puts its own [`CpuMark`]s on the CPUs ("arm A's
//! worker 0 ran here"). A machine wider than the room it is given wraps:
//! packages flow left to right into rows, and a package wider than the row
//! wraps its cores into lines, each with its own cache bands, so a
//! 256-CPU machine stays readable at a page's width.

use super::{Anchor, FAINT, INK, PALETTE, Paint, Svg, TEXT, text_width};
use crate::cpuset::CpuSet;
use crate::probe::{Cache, CoreKind, CpuEntry, cores_by_package};
use std::collections::{BTreeMap, BTreeSet};

/// One mark on a CPU: a coloured chip with a short label inside the CPU's
/// box. A CPU may carry several (arms that share it); they stack.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuMark {
    pub cpu: u32,
    pub colour: &'static str,
    /// A few characters: "A0" (arm A's worker 0), "3H".
    pub label: String,
}

/// What is drawn: the CPUs with their core, package, class and whether this
/// process may run there, and the caches over them (none where the document
/// saved none).
#[derive(Clone, Copy, Debug)]
pub struct Machine<'a> {
    pub cpus: &'a [CpuEntry],
    pub caches: &'a [Cache],
    /// The outer boxes' label: `None` for the packages the probe read
    /// ("Package 0"); a text where the CPUs' packages are not known and
    /// every CPU sits in package 0 (`pairs` knows only the published cores).
    pub outer_label: Option<&'a str>,
}

/// The size of a CPU number and of its box's padding.
const PU_TEXT: f64 = 10.0;
/// The size of a mark's label and of a cache's.
const SMALL: f64 = 8.5;
const PU_GAP: f64 = 2.0;
const PAD: f64 = 4.0;
const CACHE_HEIGHT: f64 = 14.0;
const CACHE_GAP: f64 = 2.0;
const PACKAGE_LABEL: f64 = 15.0;
const PACKAGE_GAP: f64 = 8.0;
const MARK_HEIGHT: f64 = 12.0;
/// The narrowest core: room for a cache label such as "L1d 48K".
const MIN_CORE_WIDTH: f64 = 46.0;
const LEGEND_ROW: f64 = 18.0;
/// A cache band's fill and outline.
const CACHE_FILL: &str = "#F3F3F3";
const CACHE_STROKE: &str = "#8C8C8C";

/// One core placed: its CPUs, its class and where it sits in its line.
#[derive(Debug)]
struct PlacedCore<'a> {
    cpus: Vec<&'a CpuEntry>,
    x: f64,
    width: f64,
}

/// One line of a package's cores, with the cache rows drawn over it.
#[derive(Debug)]
struct Line<'a> {
    cores: Vec<PlacedCore<'a>>,
    y: f64,
}

/// One package laid out at (x, y), relative to the machine's corner.
#[derive(Debug)]
struct PlacedPackage<'a> {
    id: usize,
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    /// The (level, type) of each cache row, top down: L3, L2, L1d, L1i.
    cache_rows: Vec<(u32, &'a str)>,
    lines: Vec<Line<'a>>,
}

/// A machine laid out within a width: where every package, core and CPU
/// goes, and how much room the drawing takes. Build it first to size a
/// figure, then [`MachineLayout::draw`] it.
#[derive(Debug)]
pub struct MachineLayout<'a> {
    machine: Machine<'a>,
    marks: BTreeMap<u32, Vec<&'a CpuMark>>,
    packages: Vec<PlacedPackage<'a>>,
    /// The class of each colour, in the legend's order.
    classes: Vec<CoreKind>,
    pu_width: f64,
    pu_height: f64,
    width: f64,
    /// The packages' height, legend left out.
    body_height: f64,
    legend: Vec<LegendEntry>,
    legend_height: f64,
}

/// One entry of the machine's legend: a swatch and its words.
#[derive(Debug)]
struct LegendEntry {
    fill: Option<String>,
    stroke: &'static str,
    dashed: bool,
    text: String,
    x: f64,
    y: f64,
}

/// Draws `machine` at (x, y) within `width`, with `marks` on its CPUs;
/// returns the height used (its class legend included).
pub fn draw_machine(
    svg: &mut Svg,
    x: f64,
    y: f64,
    width: f64,
    machine: Machine<'_>,
    marks: &[CpuMark],
) -> f64 {
    let layout = MachineLayout::new(machine, marks, width);
    layout.draw(svg, x, y);
    layout.height()
}

impl<'a> MachineLayout<'a> {
    /// Lays `machine` out within `width`, room left in each CPU's box for
    /// the most `marks` any one CPU carries.
    pub fn new(machine: Machine<'a>, marks: &'a [CpuMark], width: f64) -> MachineLayout<'a> {
        let mut by_cpu: BTreeMap<u32, Vec<&CpuMark>> = BTreeMap::new();
        for mark in marks {
            by_cpu.entry(mark.cpu).or_default().push(mark);
        }
        let slots = by_cpu.values().map(Vec::len).max().unwrap_or(0);
        let widest_number = machine
            .cpus
            .iter()
            .map(|c| text_width(&c.cpu.to_string(), PU_TEXT))
            .fold(0.0, f64::max);
        let widest_mark = marks
            .iter()
            .map(|m| text_width(&m.label, SMALL))
            .fold(0.0, f64::max);
        let pu_width = (widest_number.max(widest_mark) + 6.0).max(20.0);
        let pu_height = 17.0 + slots as f64 * (MARK_HEIGHT + 1.0);
        let classes: Vec<CoreKind> = machine
            .cpus
            .iter()
            .map(|c| c.class)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();

        let packages = cores_by_package(machine.cpus);
        let core_height = pu_height + 2.0 * PAD;
        let mut placed = Vec::new();
        let (mut x, mut y, mut row_height, mut used_width) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for (id, cores) in packages {
            let package_cpus = CpuSet::from_cpus(cores.values().flatten().map(|c| c.cpu));
            let cache_rows = cache_rows(machine.caches, &package_cpus);
            let line_height =
                cache_rows.len() as f64 * (CACHE_HEIGHT + CACHE_GAP) + core_height + PAD;
            let inner = (width - 2.0 * PAD).max(MIN_CORE_WIDTH);
            let mut lines: Vec<Line> = Vec::new();
            let mut line = Vec::new();
            let mut line_x = PAD;
            let mut widest = 0.0f64;
            for cpus in cores.into_values() {
                let core_width = (cpus.len() as f64 * (pu_width + PU_GAP) - PU_GAP + 2.0 * PAD)
                    .max(MIN_CORE_WIDTH);
                if !line.is_empty() && line_x + core_width > inner + PAD {
                    widest = widest.max(line_x - PU_GAP);
                    lines.push(Line {
                        cores: std::mem::take(&mut line),
                        y: 0.0,
                    });
                    line_x = PAD;
                }
                line.push(PlacedCore {
                    cpus,
                    x: line_x,
                    width: core_width,
                });
                line_x += core_width + PU_GAP;
            }
            widest = widest.max(line_x - PU_GAP);
            lines.push(Line {
                cores: line,
                y: 0.0,
            });
            for (index, line) in lines.iter_mut().enumerate() {
                line.y = PACKAGE_LABEL + index as f64 * line_height;
            }
            let package_width = widest + PAD;
            let package_height = PACKAGE_LABEL + lines.len() as f64 * line_height;
            if x > 0.0 && x + package_width > width {
                x = 0.0;
                y += row_height + PACKAGE_GAP;
                row_height = 0.0;
            }
            placed.push(PlacedPackage {
                id,
                x,
                y,
                width: package_width,
                height: package_height,
                cache_rows,
                lines,
            });
            used_width = used_width.max(x + package_width);
            row_height = row_height.max(package_height);
            x += package_width + PACKAGE_GAP;
        }
        let body_height = if placed.is_empty() {
            TEXT + 4.0
        } else {
            y + row_height
        };
        let mut layout = MachineLayout {
            machine,
            marks: by_cpu,
            packages: placed,
            classes,
            pu_width,
            pu_height,
            width: used_width.max(200.0).min(width.max(200.0)),
            body_height,
            legend: Vec::new(),
            legend_height: 0.0,
        };
        layout.lay_out_legend(width);
        layout
    }

    /// How wide the drawing is, its legend included (at most the width it
    /// was given).
    pub fn width(&self) -> f64 {
        self.width
    }

    /// How high the drawing is, its legend included.
    pub fn height(&self) -> f64 {
        self.body_height + self.legend_height
    }

    /// The fill of a core of `class`: its palette colour, lightened so the
    /// CPU numbers over it stay readable.
    fn class_colour(&self, class: CoreKind) -> &'static str {
        let index = self.classes.iter().position(|c| *c == class).unwrap_or(0);
        PALETTE[index % PALETTE.len()]
    }

    /// The legend under the machine: each class (unless the machine has
    /// one kind of core), and the faint CPUs where there are any.
    fn lay_out_legend(&mut self, width: f64) {
        let mut entries = Vec::new();
        let named_classes = self.classes.len() > 1 || self.classes != [CoreKind::Uniform];
        if named_classes {
            for &class in &self.classes {
                let cpus = CpuSet::from_cpus(
                    self.machine
                        .cpus
                        .iter()
                        .filter(|c| c.class == class)
                        .map(|c| c.cpu),
                );
                let colour = self.class_colour(class);
                entries.push(LegendEntry {
                    fill: Some(tint(colour, 0.25)),
                    stroke: colour,
                    dashed: false,
                    text: format!("{class} cores (CPUs {cpus})"),
                    x: 0.0,
                    y: 0.0,
                });
            }
        }
        if self.machine.cpus.iter().any(|c| !c.allowed) {
            entries.push(LegendEntry {
                fill: None,
                stroke: FAINT,
                dashed: true,
                text: "faint: CPUs this process may not run on".into(),
                x: 0.0,
                y: 0.0,
            });
        }
        let (mut x, mut y) = (0.0, self.body_height + 8.0);
        for entry in &mut entries {
            let entry_width = 18.0 + text_width(&entry.text, TEXT - 1.0) + 14.0;
            if x > 0.0 && x + entry_width > width {
                x = 0.0;
                y += LEGEND_ROW;
            }
            entry.x = x;
            entry.y = y;
            x += entry_width;
            self.width = self.width.max(x.min(width));
        }
        self.legend_height = if entries.is_empty() {
            0.0
        } else {
            y + LEGEND_ROW - self.body_height
        };
        self.legend = entries;
    }

    /// Draws the machine with its top left corner at (x, y).
    pub fn draw(&self, svg: &mut Svg, x: f64, y: f64) {
        if self.packages.is_empty() {
            svg.text(x, y + TEXT, TEXT, Anchor::Start, "no CPUs in the document");
        }
        for package in &self.packages {
            self.draw_package(svg, x + package.x, y + package.y, package);
        }
        for entry in &self.legend {
            let mut paint = match &entry.fill {
                Some(fill) => Paint::fill(fill).outlined(entry.stroke, 1.2),
                None => Paint::stroke(entry.stroke, 1.2),
            };
            if entry.dashed {
                paint = paint.dashed();
            }
            svg.rect(x + entry.x, y + entry.y, 12.0, 12.0, paint);
            svg.text(
                x + entry.x + 18.0,
                y + entry.y + 10.5,
                TEXT - 1.0,
                Anchor::Start,
                &entry.text,
            );
        }
    }

    fn draw_package(&self, svg: &mut Svg, x: f64, y: f64, package: &PlacedPackage<'_>) {
        svg.rect(x, y, package.width, package.height, Paint::stroke(INK, 1.2));
        let label = match self.machine.outer_label {
            Some(label) => label.to_owned(),
            None => format!("Package {}", package.id),
        };
        svg.text_styled(x + PAD, y + 11.5, TEXT - 1.0, Anchor::Start, true, &label);
        for line in &package.lines {
            let line_y = y + line.y;
            for (row, (level, kind)) in package.cache_rows.iter().enumerate() {
                let band_y = line_y + row as f64 * (CACHE_HEIGHT + CACHE_GAP);
                for cache in self.machine.caches {
                    if cache.level == *level && cache.kind == *kind {
                        draw_cache(svg, x, band_y, line, cache);
                    }
                }
            }
            let core_y = line_y + package.cache_rows.len() as f64 * (CACHE_HEIGHT + CACHE_GAP);
            for core in &line.cores {
                self.draw_core(svg, x + core.x, core_y, core);
            }
        }
    }

    fn draw_core(&self, svg: &mut Svg, x: f64, y: f64, core: &PlacedCore<'_>) {
        let Some(first) = core.cpus.first() else {
            return;
        };
        let allowed = core.cpus.iter().any(|c| c.allowed);
        let colour = self.class_colour(first.class);
        let fill = tint(colour, 0.25);
        let paint = match allowed {
            true => Paint::fill(&fill).outlined(colour, 1.2),
            false => Paint::stroke(FAINT, 1.2).dashed(),
        };
        let cpus = CpuSet::from_cpus(core.cpus.iter().map(|c| c.cpu));
        svg.rect_with_tooltip(
            x,
            y,
            core.width,
            self.pu_height + 2.0 * PAD,
            paint,
            &format!("core {} ({} core), CPUs {cpus}", first.core, first.class),
        );
        let threads_width = core.cpus.len() as f64 * (self.pu_width + PU_GAP) - PU_GAP;
        let mut pu_x = x + (core.width - threads_width) / 2.0;
        for cpu in &core.cpus {
            self.draw_pu(svg, pu_x, y + PAD, cpu);
            pu_x += self.pu_width + PU_GAP;
        }
    }

    fn draw_pu(&self, svg: &mut Svg, x: f64, y: f64, cpu: &CpuEntry) {
        let paint = match cpu.allowed {
            true => Paint::fill("#FFFFFF").outlined(INK, 0.8),
            false => Paint::stroke(FAINT, 0.8).dashed(),
        };
        svg.rect(x, y, self.pu_width, self.pu_height, paint);
        let colour = if cpu.allowed { INK } else { FAINT };
        svg.text_in(
            x + self.pu_width / 2.0,
            y + 12.5,
            PU_TEXT,
            Anchor::Middle,
            colour,
            &cpu.cpu.to_string(),
        );
        let marks = self.marks.get(&cpu.cpu).map_or(&[][..], Vec::as_slice);
        for (slot, mark) in marks.iter().enumerate() {
            let chip_y = y + 16.0 + slot as f64 * (MARK_HEIGHT + 1.0);
            svg.rect_with_tooltip(
                x + 1.5,
                chip_y,
                self.pu_width - 3.0,
                MARK_HEIGHT,
                Paint::fill(mark.colour),
                &format!("CPU {}: {}", cpu.cpu, mark.label),
            );
            svg.text_in(
                x + self.pu_width / 2.0,
                chip_y + 9.5,
                SMALL,
                Anchor::Middle,
                readable_on(mark.colour),
                &mark.label,
            );
        }
    }
}

/// The cache rows over a package's cores, top down as lstopo draws them:
/// the highest level first, and within a level unified, data, then
/// instruction caches.
fn cache_rows<'a>(caches: &'a [Cache], package: &CpuSet) -> Vec<(u32, &'a str)> {
    let order = |kind: &str| match kind {
        "Unified" => 0,
        "Data" => 1,
        "Instruction" => 2,
        _ => 3,
    };
    let rows: BTreeSet<(std::cmp::Reverse<u32>, u8, &str)> = caches
        .iter()
        .filter(|cache| !cache.cpus.intersection(package).is_empty())
        .map(|cache| {
            (
                std::cmp::Reverse(cache.level),
                order(&cache.kind),
                cache.kind.as_str(),
            )
        })
        .collect();
    rows.into_iter()
        .map(|(level, _, kind)| (level.0, kind))
        .collect()
}

/// One cache as bands over the cores of `line` it serves: one band per run
/// of neighbouring cores, labelled where the label fits.
fn draw_cache(svg: &mut Svg, package_x: f64, y: f64, line: &Line<'_>, cache: &Cache) {
    let serves = |core: &PlacedCore<'_>| core.cpus.iter().any(|c| cache.cpus.contains(c.cpu));
    let mut index = 0;
    while index < line.cores.len() {
        if !serves(&line.cores[index]) {
            index += 1;
            continue;
        }
        let first = &line.cores[index];
        while index + 1 < line.cores.len() && serves(&line.cores[index + 1]) {
            index += 1;
        }
        let last = &line.cores[index];
        index += 1;
        let x = package_x + first.x;
        let width = last.x + last.width - first.x;
        let (long, short) = cache_labels(cache);
        svg.rect_with_tooltip(
            x,
            y,
            width,
            CACHE_HEIGHT,
            Paint::fill(CACHE_FILL).outlined(CACHE_STROKE, 0.8),
            &format!(
                "{long} ({}), CPUs {}",
                cache.kind.to_lowercase(),
                cache.cpus
            ),
        );
        let label = [long, short]
            .into_iter()
            .find(|label| text_width(label, SMALL) + 4.0 <= width);
        if let Some(label) = label {
            svg.text(x + width / 2.0, y + 10.0, SMALL, Anchor::Middle, &label);
        }
    }
}

/// A cache's label with its size ("L1d 48K", "L3 12M") and without ("L1d").
fn cache_labels(cache: &Cache) -> (String, String) {
    let kind = match cache.kind.as_str() {
        "Data" => "d",
        "Instruction" => "i",
        _ => "",
    };
    let short = format!("L{}{kind}", cache.level);
    let long = match cache.size_bytes {
        Some(bytes) if bytes >= 1 << 20 && bytes % (1 << 20) == 0 => {
            format!("{short} {}M", bytes >> 20)
        }
        Some(bytes) if bytes >= 1 << 10 => format!("{short} {}K", bytes >> 10),
        Some(bytes) => format!("{short} {bytes}B"),
        None => short.clone(),
    };
    (long, short)
}

/// `colour` (`#RRGGBB`) mixed with white: `share` of the colour.
pub fn tint(colour: &str, share: f64) -> String {
    let [r, g, b] = rgb(colour);
    let mix = |c: u8| (255.0 - (255.0 - c as f64) * share).round() as u8;
    format!("#{:02X}{:02X}{:02X}", mix(r), mix(g), mix(b))
}

/// Black or white, whichever reads better on `colour` (`#RRGGBB`).
pub fn readable_on(colour: &str) -> &'static str {
    let [r, g, b] = rgb(colour);
    let luminance = 0.299 * r as f64 + 0.587 * g as f64 + 0.114 * b as f64;
    if luminance > 140.0 {
        "#000000"
    } else {
        "#FFFFFF"
    }
}

/// The channels of `#RRGGBB`; black for anything else.
fn rgb(colour: &str) -> [u8; 3] {
    let channel = |at: usize| {
        colour
            .get(at..at + 2)
            .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            .unwrap_or(0)
    };
    [channel(1), channel(3), channel(5)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::CoreKind;

    /// `packages` × `cores` × `threads` CPUs of one kind, numbered package
    /// by package.
    fn cpus(packages: usize, cores: usize, threads: usize) -> Vec<CpuEntry> {
        let mut out = Vec::new();
        for package in 0..packages {
            for core in 0..cores {
                let first = ((package * cores + core) * threads) as u32;
                let siblings = CpuSet::from_cpus(first..first + threads as u32);
                for thread in 0..threads {
                    out.push(CpuEntry::on_core(
                        first + thread as u32,
                        package * cores + core,
                        package,
                        siblings.clone(),
                    ));
                }
            }
        }
        out
    }

    fn draw(machine: Machine<'_>, marks: &[CpuMark], width: f64) -> (String, f64) {
        let mut svg = Svg::new(width, 100.0, "machine");
        let height = draw_machine(&mut svg, 0.0, 0.0, width, machine, marks);
        (svg.finish(), height)
    }

    fn plain(cpus: &[CpuEntry]) -> Machine<'_> {
        Machine {
            cpus,
            caches: &[],
            outer_label: None,
        }
    }

    #[test]
    fn a_two_package_machine_draws_two_package_boxes() {
        let cpus = cpus(2, 2, 2);
        let (out, height) = draw(plain(&cpus), &[], 800.0);
        assert_eq!(out.matches(">Package ").count(), 2);
        assert!(out.contains(">Package 0<") && out.contains(">Package 1<"));
        assert_eq!(out.matches("<title>core ").count(), 4);
        for cpu in 0..8 {
            assert!(
                out.contains(&format!(">{cpu}</text>")),
                "CPU {cpu} labelled"
            );
        }
        assert!(height > 0.0);
        assert!(
            !out.contains("cores (CPUs"),
            "one kind of core: no class legend"
        );
    }

    #[test]
    fn marks_sit_on_their_cpus() {
        let cpus = cpus(1, 2, 2);
        let marks = [
            CpuMark {
                cpu: 2,
                colour: PALETTE[1],
                label: "A0".into(),
            },
            CpuMark {
                cpu: 2,
                colour: PALETTE[2],
                label: "B1".into(),
            },
        ];
        let (out, _) = draw(plain(&cpus), &marks, 800.0);
        assert!(out.contains("<title>CPU 2: A0</title>"));
        assert!(out.contains("<title>CPU 2: B1</title>"));
        assert_eq!(out.matches("<title>CPU ").count(), 2, "no other CPU marked");
        // The chips of CPU 2 lie inside its box: CPU 2 is the second core's
        // first thread, right of CPU 1's number.
        let x_of = |needle: &str| {
            let at = out.find(needle).unwrap();
            let line_start = out[..at].rfind("<rect x=\"").unwrap() + 9;
            out[line_start..]
                .split('"')
                .next()
                .unwrap()
                .parse::<f64>()
                .unwrap()
        };
        let number_x = |cpu: u32| {
            let needle = format!(">{cpu}</text>");
            let at = out.find(&needle).unwrap();
            let start = out[..at].rfind("<text x=\"").unwrap() + 9;
            out[start..]
                .split('"')
                .next()
                .unwrap()
                .parse::<f64>()
                .unwrap()
        };
        let chip = x_of("<title>CPU 2: A0");
        assert!(chip > number_x(1) && chip < number_x(2));
    }

    #[test]
    fn classes_are_coloured_with_a_legend_and_disallowed_cpus_faint() {
        let mut cpus = cpus(1, 3, 1);
        cpus[2].class = CoreKind::Efficiency;
        cpus[0].class = CoreKind::Performance;
        cpus[1].class = CoreKind::Performance;
        cpus[1].allowed = false;
        let (out, _) = draw(plain(&cpus), &[], 800.0);
        assert!(out.contains(">performance cores (CPUs 0-1)<"));
        assert!(out.contains(">efficiency cores (CPUs 2)<"));
        assert!(out.contains(&format!("stroke=\"{}\"", PALETTE[1])));
        assert!(out.contains(&format!("fill=\"{FAINT}\">1</text>")));
        assert!(out.contains("faint: CPUs this process may not run on"));
    }

    #[test]
    fn shared_caches_are_one_band_over_their_cores() {
        let cpus = cpus(1, 4, 2);
        let cache = |level, kind: &str, size, cpus: &str| Cache {
            level,
            kind: kind.into(),
            size_bytes: Some(size),
            line_bytes: Some(64),
            ways: None,
            cpus: crate::cpuset::parse_list(cpus).unwrap(),
        };
        let caches = vec![
            cache(3, "Unified", 12 << 20, "0-7"),
            cache(1, "Data", 48 << 10, "0-1"),
            cache(1, "Data", 48 << 10, "2-3"),
            cache(1, "Data", 48 << 10, "4-5"),
            cache(1, "Data", 48 << 10, "6-7"),
        ];
        let machine = Machine {
            cpus: &cpus,
            caches: &caches,
            outer_label: None,
        };
        let (out, _) = draw(machine, &[], 800.0);
        assert_eq!(out.matches(">L3 12M<").count(), 1);
        assert_eq!(out.matches(">L1d 48K<").count(), 4);
        let l3 = out.find("<title>L3 12M").unwrap();
        assert!(l3 < out.find("<title>L1d 48K").unwrap(), "L3 above L1");
    }

    #[test]
    fn a_wide_machine_wraps_into_rows() {
        let cpus = cpus(8, 8, 2);
        let (_, narrow) = draw(plain(&cpus), &[], 500.0);
        let (_, wide) = draw(plain(&cpus), &[], 5000.0);
        assert!(narrow > 3.0 * wide, "{narrow} against {wide}");
        let layout = MachineLayout::new(plain(&cpus), &[], 500.0);
        assert!(layout.width() <= 500.0);
    }

    #[test]
    fn the_same_machine_draws_the_same_bytes() {
        let cpus = cpus(2, 4, 2);
        assert_eq!(
            draw(plain(&cpus), &[], 600.0),
            draw(plain(&cpus), &[], 600.0)
        );
    }

    #[test]
    fn chips_take_a_readable_ink() {
        assert_eq!(readable_on("#F0E442"), "#000000");
        assert_eq!(readable_on("#0072B2"), "#FFFFFF");
        assert_eq!(tint("#000000", 0.25), "#BFBFBF");
    }
}
