//! NUMA nodes from `/sys/devices/system/node`, as `numactl -H` shows them:
//! each node's CPUs (`nodeN/cpulist`, or the `cpumap` mask where an old
//! kernel has no list), its memory (`nodeN/meminfo`'s `MemTotal`) and its
//! distances to the others (`nodeN/distance`, one value per online node, in
//! node order). `online`, `has_cpu` and `has_memory` say which nodes the
//! kernel counts and which of them have CPUs and memory.
//!
//! A package is not a node: AMD EPYC in NPS2/NPS4 and Intel with sub-NUMA
//! clustering put several nodes in one package, and a CXL expander or HBM
//! is a node with memory and no CPU. A machine (or snapshot) without the
//! folder has no nodes, which is no error; files that contradict each
//! other become notes naming the CPUs or nodes, never a guess.

use crate::cpuset::{CpuSet, excerpt, numbered_cpu};
use crate::probe::model::NumaNode;
use crate::probe::sysfs::{SetFiles, SetForm, SysfsRoot};
use anyhow::{Result, anyhow};
use std::collections::BTreeMap;

/// The node folder, relative to the root.
pub const NODE_DIR: &str = "sys/devices/system/node";

/// The node-wide files read: which nodes are online, and which of them
/// have CPUs and memory.
pub const NODE_SET_FILES: [&str; 3] = ["online", "has_cpu", "has_memory"];

/// Each node's files read (the snapshot copies these).
pub const PER_NODE_FILES: [&str; 4] = ["cpulist", "cpumap", "distance", "meminfo"];

/// A node's CPU set: the list, else the mask.
const NODE_CPU_FILES: [(&str, SetForm); 2] =
    [("cpulist", SetForm::List), ("cpumap", SetForm::Mask)];

/// The nodes read, and what in their files disagrees.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeMap {
    /// Ascending by node number; empty without node files.
    pub nodes: Vec<NumaNode>,
    /// One line per disagreement, naming the CPUs or nodes.
    pub notes: Vec<String>,
}

/// Reads the NUMA nodes under `root`; `online` (the online CPUs) is what
/// a CPU in no node is looked for in.
pub fn read_nodes(root: &SysfsRoot, online: &CpuSet) -> Result<NodeMap> {
    let names = root.list_dir(NODE_DIR)?;
    let mut folders = Vec::new();
    for name in names.iter() {
        if let Some(node) = node_number(root, name)? {
            folders.push(node);
        }
    }
    folders.sort_unstable();
    let [online_nodes, has_cpu, has_memory] =
        NODE_SET_FILES.map(|file| read_node_list(root, &format!("{NODE_DIR}/{file}")));
    let (online_nodes, has_cpu, has_memory) = (online_nodes?, has_cpu?, has_memory?);
    let mut notes = Vec::new();
    // A node folder the `online` list leaves out is an offline node; an
    // online node without a folder cannot be read and is said so.
    if let Some(listed) = &online_nodes {
        let missing: Vec<u32> = listed
            .iter()
            .copied()
            .filter(|node| folders.binary_search(node).is_err())
            .collect();
        if !missing.is_empty() {
            notes.push(format!(
                "{} lists node{} {} but {} no folder",
                root.name(&format!("{NODE_DIR}/online")),
                plural(missing.len()),
                join(&missing),
                if missing.len() == 1 {
                    "it has"
                } else {
                    "they have"
                }
            ));
        }
        folders.retain(|node| listed.binary_search(node).is_ok());
    }
    let mut cpu_files = SetFiles::new(&NODE_CPU_FILES);
    let mut nodes = Vec::with_capacity(folders.len());
    for &node in &folders {
        let dir = format!("{NODE_DIR}/node{node}");
        root.list_dir(&dir)?;
        let cpus = match cpu_files.read(root, &dir)? {
            Some((_, cpus)) => cpus,
            None => CpuSet::default(),
        };
        let meminfo = format!("{dir}/meminfo");
        let memory_kib = match root.read_value(&meminfo)? {
            Some(text) => Some(mem_total_kib(&text).map_err(|why| {
                anyhow!(
                    "{}: expected a 'MemTotal: N kB' line: {why}",
                    root.name(&meminfo)
                )
            })?),
            None => None,
        };
        let distance = format!("{dir}/distance");
        let distances = match root.read_value(&distance)? {
            Some(text) => parse_distances(&text).map_err(|why| {
                anyhow!(
                    "{}: expected distances like '10 21': {why}",
                    root.name(&distance)
                )
            })?,
            None => Vec::new(),
        };
        nodes.push(NumaNode {
            node,
            cpus,
            memory_kib,
            distances,
        });
    }
    notes.extend(distance_notes(&nodes));
    notes.extend(presence_notes(
        &nodes,
        has_cpu.as_deref(),
        has_memory.as_deref(),
    ));
    notes.extend(cpu_notes(&nodes, online));
    Ok(NodeMap { nodes, notes })
}

/// `N` from a `nodeN` folder name; `None` for the other entries (`online`,
/// `has_cpu`, `power`, …). Node numbers are written as CPU numbers are
/// (and the kernel keeps them below its CPU limit); an error past it.
fn node_number(root: &SysfsRoot, name: &str) -> Result<Option<u32>> {
    numbered_cpu(name, "node")
        .map_err(|why| anyhow!("{}: {why} (a corrupt snapshot?)", root.name(NODE_DIR)))
}

/// A node list file (`online`, `has_cpu`, `has_memory`: `0-3,8`), its
/// numbers ascending; `None` when absent. The kernel writes it as it
/// writes CPU lists, so the CPU list reader reads it.
fn read_node_list(root: &SysfsRoot, relative: &str) -> Result<Option<Vec<u32>>> {
    let set = root.read_cpuset(&[(relative, SetForm::List)])?;
    Ok(set.map(|set| set.iter().collect()))
}

/// `MemTotal` in KiB from a node's `meminfo` ("Node 0 MemTotal:  32585360 kB").
fn mem_total_kib(text: &str) -> Result<u64, String> {
    let line = text
        .lines()
        .find(|line| line.contains("MemTotal:"))
        .ok_or_else(|| format!("no MemTotal line in '{}'", excerpt(text)))?;
    let value = line
        .split_once("MemTotal:")
        .map(|(_, value)| value.trim())
        .unwrap_or_default();
    let digits = value.strip_suffix("kB").unwrap_or(value).trim();
    digits
        .parse()
        .map_err(|_| format!("'{}' is not a number of kB", excerpt(value)))
}

/// The numbers of a `distance` file ("10 21 21"), in node order.
fn parse_distances(text: &str) -> Result<Vec<u32>, String> {
    text.split_whitespace()
        .map(|word| {
            word.parse()
                .map_err(|_| format!("'{}' in '{}' is not a number", excerpt(word), excerpt(text)))
        })
        .collect()
}

/// A node whose distance file has not one value per node read.
fn distance_notes(nodes: &[NumaNode]) -> Vec<String> {
    nodes
        .iter()
        .filter(|node| !node.distances.is_empty() && node.distances.len() != nodes.len())
        .map(|node| {
            format!(
                "node {}'s distance file has {} value{} for {} nodes: its distances are shown as read",
                node.node,
                node.distances.len(),
                plural(node.distances.len()),
                nodes.len()
            )
        })
        .collect()
}

/// Where `has_cpu` or `has_memory` disagrees with a node's own files.
fn presence_notes(
    nodes: &[NumaNode],
    has_cpu: Option<&[u32]>,
    has_memory: Option<&[u32]>,
) -> Vec<String> {
    let mut notes = Vec::new();
    for node in nodes {
        let listed = |list: Option<&[u32]>| list.map(|list| list.binary_search(&node.node).is_ok());
        if let Some(listed) = listed(has_cpu) {
            if listed == node.cpus.is_empty() {
                notes.push(match listed {
                    true => format!("has_cpu lists node {}, but its cpulist is empty", node.node),
                    false => format!(
                        "has_cpu leaves out node {}, but its cpulist names CPUs {}",
                        node.node, node.cpus
                    ),
                });
            }
        }
        if let (Some(listed), Some(kib)) = (listed(has_memory), node.memory_kib) {
            if listed == (kib == 0) {
                notes.push(match listed {
                    true => format!(
                        "has_memory lists node {}, but its MemTotal is 0 kB",
                        node.node
                    ),
                    false => format!(
                        "has_memory leaves out node {}, but its MemTotal is {kib} kB",
                        node.node
                    ),
                });
            }
        }
    }
    notes
}

/// CPUs that several nodes list, and online CPUs that no node lists, each
/// a note naming them; none on a machine without nodes.
fn cpu_notes(nodes: &[NumaNode], online: &CpuSet) -> Vec<String> {
    if nodes.is_empty() {
        return Vec::new();
    }
    let mut listed_by: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for node in nodes {
        for cpu in node.cpus.iter() {
            listed_by.entry(cpu).or_default().push(node.node);
        }
    }
    // CPUs grouped by the nodes listing them, so a run of CPUs is one note.
    let mut by_nodes: BTreeMap<&[u32], Vec<u32>> = BTreeMap::new();
    for (cpu, listing) in &listed_by {
        if listing.len() > 1 {
            by_nodes.entry(listing).or_default().push(*cpu);
        }
    }
    let mut notes: Vec<String> = by_nodes
        .into_iter()
        .map(|(listing, cpus)| {
            format!(
                "CPU{} {} {} in the cpulist of nodes {}: node lists should not overlap; \
                 each CPU is counted in its lowest node",
                plural(cpus.len()),
                CpuSet::from_cpus(cpus.iter().copied()),
                if cpus.len() == 1 { "is" } else { "are" },
                join(listing)
            )
        })
        .collect();
    let in_none: Vec<u32> = online
        .iter()
        .filter(|cpu| !listed_by.contains_key(cpu))
        .collect();
    if !in_none.is_empty() {
        notes.push(format!(
            "online CPU{} {} {} in no node's cpulist",
            plural(in_none.len()),
            CpuSet::from_cpus(in_none.iter().copied()),
            if in_none.len() == 1 { "is" } else { "are" }
        ));
    }
    notes
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// "0, 1 and 3".
fn join(numbers: &[u32]) -> String {
    let words: Vec<String> = numbers.iter().map(u32::to_string).collect();
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => words.concat(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn node(node: u32, cpus: &[u32], memory_kib: Option<u64>) -> NumaNode {
        NumaNode {
            node,
            cpus: CpuSet::from_cpus(cpus.iter().copied()),
            memory_kib,
            distances: Vec::new(),
        }
    }

    /// Writes `files` (relative to the node folder) into a snapshot folder
    /// of CPUs 0-3 and reads its nodes.
    fn read(files: &[(&str, &str)]) -> Result<NodeMap> {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("sys/devices/system/cpu")).unwrap();
        for (path, text) in files {
            let path = dir.path().join(NODE_DIR).join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        let root = SysfsRoot::snapshot(dir.path()).unwrap();
        read_nodes(&root, &CpuSet::from_cpus(0..4))
    }

    #[test]
    fn mem_total_is_read_from_the_nodes_meminfo() {
        let text = "Node 0 MemTotal:       32585360 kB\nNode 0 MemFree:        1 kB\n";
        assert_eq!(mem_total_kib(text), Ok(32_585_360));
        assert_eq!(mem_total_kib("Node 1 MemTotal: 0 kB"), Ok(0));
        assert!(
            mem_total_kib("Node 0 MemFree: 1 kB")
                .unwrap_err()
                .contains("no MemTotal")
        );
        assert!(mem_total_kib("Node 0 MemTotal: lots kB").is_err());
    }

    #[test]
    fn distances_are_numbers_in_node_order() {
        assert_eq!(parse_distances("10 21 21 \n"), Ok(vec![10, 21, 21]));
        assert_eq!(parse_distances(""), Ok(vec![]));
        let bad = parse_distances("10 x1").unwrap_err();
        assert!(bad.contains("'x1'"), "{bad}");
    }

    #[test]
    fn node_folders_are_nodes_other_entries_are_not() {
        let root = SysfsRoot::live();
        assert_eq!(node_number(&root, "node12").unwrap(), Some(12));
        for other in ["online", "has_cpu", "node", "node01", "node+1", "possible"] {
            assert_eq!(node_number(&root, other).unwrap(), None, "{other}");
        }
        assert!(node_number(&root, "node99999999999").is_err());
    }

    #[test]
    fn no_node_folder_is_no_nodes() {
        assert_eq!(read(&[]).unwrap(), NodeMap::default());
    }

    /// The kernel's padding (`\n\0`), `(null)`, a mask where the list is
    /// absent, and a memory-only node with an empty list.
    #[test]
    fn odd_but_valid_files_read() {
        let map = read(&[
            ("online", "0-1\n\0"),
            ("has_cpu", "0\n"),
            ("has_memory", "0-1\n"),
            ("node0/cpumap", "0000000f\n\0"),
            ("node0/distance", "10 20\n"),
            ("node0/meminfo", "Node 0 MemTotal: 1024 kB\n"),
            ("node1/cpumap", "00000000\n"),
            ("node1/distance", "(null)"),
            ("node1/meminfo", "Node 1 MemTotal: 2048 kB\n\0"),
        ])
        .unwrap();
        assert_eq!(
            map.nodes,
            vec![
                NumaNode {
                    distances: vec![10, 20],
                    ..node(0, &[0, 1, 2, 3], Some(1024))
                },
                node(1, &[], Some(2048)),
            ]
        );
        assert!(map.notes.is_empty(), "{:?}", map.notes);
    }

    #[test]
    fn garbage_is_a_one_line_error_naming_the_file() {
        for (file, text, expected) in [
            ("node0/cpulist", "0-x", "node0/cpulist: expected a CPU list"),
            (
                "node0/distance",
                "10 ten",
                "node0/distance: expected distances",
            ),
            (
                "node0/meminfo",
                "MemTotal: many",
                "node0/meminfo: expected a 'MemTotal",
            ),
            ("online", "zero", "online: expected a CPU list"),
        ] {
            let error = format!("{:#}", read(&[(file, text)]).unwrap_err());
            assert!(error.contains(expected), "{file}: {error}");
            assert!(!error.contains('\n'), "{error}");
        }
    }

    #[test]
    fn overlapping_lists_and_cpus_in_no_node_are_noted_by_cpu() {
        let nodes = [node(0, &[0, 1, 2], None), node(1, &[1, 2], None)];
        assert_eq!(
            cpu_notes(&nodes, &CpuSet::from_cpus(0..5)),
            [
                "CPUs 1-2 are in the cpulist of nodes 0 and 1: node lists should not overlap; \
                 each CPU is counted in its lowest node",
                "online CPUs 3-4 are in no node's cpulist",
            ]
        );
        assert!(cpu_notes(&[], &CpuSet::from_cpus(0..5)).is_empty());
    }

    #[test]
    fn presence_lists_that_disagree_with_the_files_are_noted() {
        let nodes = [node(0, &[0], Some(0)), node(1, &[], Some(8))];
        assert_eq!(
            presence_notes(&nodes, Some(&[1]), Some(&[0])),
            [
                "has_cpu leaves out node 0, but its cpulist names CPUs 0",
                "has_memory lists node 0, but its MemTotal is 0 kB",
                "has_cpu lists node 1, but its cpulist is empty",
                "has_memory leaves out node 1, but its MemTotal is 8 kB",
            ]
        );
        assert!(presence_notes(&nodes, None, None).is_empty());
    }

    #[test]
    fn online_nodes_without_folders_and_short_distances_are_noted() {
        let map = read(&[
            ("online", "0,2"),
            ("node0/cpulist", "0-3"),
            ("node0/distance", "10"),
            ("node1/cpulist", ""),
        ])
        .unwrap();
        assert_eq!(map.nodes.len(), 1, "node 1 is offline: {:?}", map.nodes);
        assert_eq!(map.notes.len(), 1, "{:?}", map.notes);
        assert!(map.notes[0].ends_with("online lists node 2 but it has no folder"));
        let map = read(&[("node0/distance", "10"), ("node1/distance", "20 10")]).unwrap();
        assert_eq!(
            map.notes[0],
            "node 0's distance file has 1 value for 2 nodes: its distances are shown as read"
        );
    }
}
