//! The figure of `topology`: the probed machine, as lstopo draws it.

use super::Figure;
use super::machine::{Machine, MachineLayout};
use super::{Svg, TEXT, heading_lines, text_width};
use crate::saved::TopologyResult;
use crate::units::count;

/// The widest a machine is drawn: a page's width.
const WIDTH: f64 = 1000.0;

/// The probed machine: packages, cores, hardware threads, caches and core
/// classes. Nothing is measured, so its units and clock say so.
impl Figure for TopologyResult {
    fn figure(&self) -> String {
        let result = self;
        let machine = Machine {
            cpus: &result.cpus,
            caches: &result.caches,
            outer_label: None,
        };
        let layout = MachineLayout::new(machine, &[], WIDTH - 20.0);
        let summary = &result.summary;
        let title = match &result.head.model {
            Some(model) => format!("Topology of {}: {model}", result.head.host),
            None => format!("Topology of {}", result.head.host),
        };
        let title_width = text_width(&title, TEXT + 3.0);
        let mut svg = Svg::new(
            layout.width().max(560.0).max(title_width) + 20.0,
            0.0,
            &title,
        );
        let mut about = vec![
            format!(
                "{}, {}, {}, SMT {}; structure from {}",
                count(summary.packages, "package"),
                count(summary.cores, "core"),
                count(summary.cpus, "CPU"),
                summary.smt_word(),
                summary.structure_from
            ),
            format!(
                "units: none, nothing is measured (no clock); n = {} online CPUs, each a box \
             labelled by its CPU number; caches as bands over the cores they serve",
                summary.cpus
            ),
        ];
        if let Some(why) = &summary.structure_unknown {
            about.push(format!("which CPUs share a core is unknown: {why}"));
        }
        let top = svg.heading(&heading_lines(&about, svg.width()));
        layout.draw(&mut svg, 10.0, top);
        svg.set_height(top + layout.height() + 10.0);
        svg.finish()
    }
}
