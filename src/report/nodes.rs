//! The topology view's NUMA nodes: each node's CPUs and memory, then the
//! distance matrix laid out as `numactl -H` lays it out.

use crate::probe::{NumaNode, Topology};
use crate::report::blocks::Blocks;
use crate::report::view::View;

/// The "NUMA nodes" section, its heading included; on a machine without
/// node files, a line that says so.
pub fn section(topology: &Topology, view: &View) -> Blocks {
    let mut out = Blocks::new();
    out.heading("NUMA nodes");
    if topology.nodes.is_empty() {
        out.fixed("  none: no NUMA node files (sys/devices/system/node)");
        return out;
    }
    let name_width = topology
        .nodes
        .iter()
        .map(|node| node.node.to_string().len())
        .max()
        .unwrap_or(1);
    for node in &topology.nodes {
        let cpus = if node.cpus.is_empty() {
            "no CPUs".to_string()
        } else {
            format!("CPUs {}", node.cpus)
        };
        let line = format!(
            "  node {:<name_width$}  memory {:>10}  {cpus}",
            node.node,
            memory(node.memory_kib),
        );
        out.line(line, 30 + name_width);
    }
    out.lines(distance_matrix(&topology.nodes, view.width), 4);
    out
}

/// The node's memory: "62.7 GiB", "512 MiB", "none" (0 kB), "unknown"
/// (no meminfo).
fn memory(kib: Option<u64>) -> String {
    match kib {
        None => "unknown".into(),
        Some(0) => "none".into(),
        Some(kib) if kib >= 1 << 20 => format!("{:.1} GiB", kib as f64 / f64::from(1 << 20)),
        Some(kib) if kib >= 1 << 10 => format!("{} MiB", kib >> 10),
        Some(kib) => format!("{kib} KiB"),
    }
}

/// "node distances:", a header row of node numbers and a row per node, as
/// `numactl -H` prints them; nothing where no node has a distance file.
/// A matrix wider than `width` (a machine of dozens of nodes) is left out
/// for a line naming its distinct distances: the JSON has every one.
fn distance_matrix(nodes: &[NumaNode], width: usize) -> Vec<String> {
    if nodes.iter().all(|node| node.distances.is_empty()) {
        return Vec::new();
    }
    let widest = nodes
        .iter()
        .map(|node| node.node)
        .chain(nodes.iter().flat_map(|node| node.distances.iter().copied()))
        .map(|n| n.to_string().len())
        .max()
        .unwrap_or(1)
        .max(3);
    let row = |label: String, cells: Vec<String>| {
        let cells: Vec<String> = cells.iter().map(|c| format!("{c:>widest$}")).collect();
        format!("  {label:<6}{}", cells.join(" "))
            .trim_end()
            .to_string()
    };
    if 8 + (widest + 1) * nodes.len() > width {
        let distinct: std::collections::BTreeSet<u32> = nodes
            .iter()
            .flat_map(|node| node.distances.iter().copied())
            .collect();
        let values: Vec<String> = distinct.iter().map(u32::to_string).collect();
        return vec![format!(
            "  node distances: {} x {} left out, wider than the view; its values are {} \
             (every one in --json, nodes[].distances)",
            nodes.len(),
            nodes.len(),
            values.join(", ")
        )];
    }
    let mut lines = vec!["  node distances:".to_string()];
    lines.push(row(
        "node".into(),
        nodes.iter().map(|node| node.node.to_string()).collect(),
    ));
    for node in nodes {
        lines.push(row(
            format!("{}:", node.node),
            node.distances.iter().map(u32::to_string).collect(),
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuset::CpuSet;

    fn node(node: u32, cpus: &[u32], memory_kib: Option<u64>, distances: &[u32]) -> NumaNode {
        NumaNode {
            node,
            cpus: CpuSet::from_cpus(cpus.iter().copied()),
            memory_kib,
            distances: distances.to_vec(),
        }
    }

    #[test]
    fn memory_reads_in_the_largest_whole_unit() {
        assert_eq!(memory(Some(32_585_360)), "31.1 GiB");
        assert_eq!(memory(Some(524_288)), "512 MiB");
        assert_eq!(memory(Some(12)), "12 KiB");
        assert_eq!(memory(Some(0)), "none");
        assert_eq!(memory(None), "unknown");
    }

    #[test]
    fn distances_are_laid_out_as_numactl_does() {
        let nodes = [
            node(0, &[0, 1], Some(1 << 20), &[10, 21]),
            node(2, &[], Some(0), &[21, 10]),
        ];
        assert_eq!(
            distance_matrix(&nodes, 80),
            [
                "  node distances:",
                "  node    0   2",
                "  0:     10  21",
                "  2:     21  10",
            ]
        );
        assert!(distance_matrix(&[node(0, &[0], None, &[])], 80).is_empty());
        assert_eq!(
            distance_matrix(&nodes, 14),
            [
                "  node distances: 2 x 2 left out, wider than the view; its values are 10, 21 \
              (every one in --json, nodes[].distances)"
            ]
        );
    }
}
