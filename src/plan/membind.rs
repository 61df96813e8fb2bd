//! `run --membind`: which NUMA nodes an arm's memory may come from, as
//! `numactl --membind` takes them. `local` binds each arm's memory to the
//! nodes of that arm's own CPUs; a node list (`0`, `0-1,3`) binds every
//! arm's to those nodes. The policy is the kernel's `MPOL_BIND`: pages are
//! allocated on the nodes named or not at all (never silently elsewhere).
//!
//! Here the policy is checked against the machine's nodes and resolved per
//! arm; `measure::mempolicy` sets it (on the kernel's buffers, or in a
//! command's process before its exec) and checks where pages landed.

use crate::cpuset::{CpuSet, parse_list};
use crate::probe::Topology;
use serde::{Deserialize, Serialize};
use std::fmt;

/// `--membind`: `local`, or the nodes every arm's memory is bound to.
/// Saved as the text given (`"local"`, `"0-1"`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Membind {
    /// Each arm's memory on the nodes of that arm's CPUs.
    Local,
    /// Every arm's memory on these nodes (ascending, at least one).
    Nodes(Vec<u32>),
}

impl std::str::FromStr for Membind {
    type Err = String;

    fn from_str(text: &str) -> Result<Membind, String> {
        if text == "local" {
            return Ok(Membind::Local);
        }
        let bad = || {
            format!(
                "--membind {}: give local (each arm's memory on its own CPUs' nodes) or a node \
                 list such as 0 or 0-1,3",
                crate::escape::escape_controls(text)
            )
        };
        let nodes = parse_list(text).map_err(|_| bad())?;
        if nodes.is_empty() {
            return Err(bad());
        }
        Ok(Membind::Nodes(nodes.cpus().to_vec()))
    }
}

impl fmt::Display for Membind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Membind::Local => f.write_str("local"),
            Membind::Nodes(nodes) => write!(f, "{}", node_list(nodes)),
        }
    }
}

impl From<Membind> for String {
    fn from(membind: Membind) -> String {
        membind.to_string()
    }
}

/// Written by hand: serde saves the policy as its text (`into = "String"`),
/// and the schema says which texts those are, as [`fmt::Display`] writes
/// them.
impl schemars::JsonSchema for Membind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Membind".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "`--membind` as given: local (each arm's memory on the nodes of its CPUs), or the nodes every arm's memory is bound to (a list such as 0 or 0-1,3).",
            "type": "string",
            "pattern": "^(local|[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)$",
        })
    }
}

impl TryFrom<String> for Membind {
    type Error = String;

    fn try_from(text: String) -> Result<Membind, String> {
        text.parse()
    }
}

/// Nodes in the kernel's list form (`0-1,3`).
pub fn node_list(nodes: &[u32]) -> String {
    CpuSet::from_cpus(nodes.iter().copied()).to_string()
}

/// "node 0" or "nodes 0-1,3", for a sentence.
pub fn nodes_phrase(nodes: &[u32]) -> String {
    match nodes {
        [node] => format!("node {node}"),
        _ => format!("nodes {}", node_list(nodes)),
    }
}

/// The nodes the memory of arm `arm` (running on `cpus`) is bound to
/// under `membind`. Refused, in one line naming the value and the fix: a
/// machine that publishes no node (a kernel without NUMA support), a node
/// it does not have, a node without memory, and with `local` a CPU in no
/// node. One node is no error: `local` is then that node.
pub fn arm_nodes(
    topology: &Topology,
    membind: &Membind,
    arm: &str,
    cpus: impl IntoIterator<Item = u32>,
) -> Result<Vec<u32>, String> {
    if topology.nodes.is_empty() {
        return Err(format!(
            "--membind {membind}: this machine publishes no NUMA node (no \
             /sys/devices/system/node: a kernel built without NUMA support); drop --membind"
        ));
    }
    let nodes: Vec<u32> = match membind {
        Membind::Nodes(nodes) => nodes.clone(),
        Membind::Local => {
            let by_cpu = topology.nodes_by_cpu();
            let mut nodes = Vec::new();
            for cpu in cpus {
                let Some(&node) = by_cpu.get(&cpu) else {
                    return Err(format!(
                        "--membind local: arm {arm} runs on CPU {cpu}, which no NUMA node lists; \
                         name the nodes instead (--membind {})",
                        node_list(&with_memory(topology))
                    ));
                };
                nodes.push(node);
            }
            CpuSet::from_cpus(nodes).cpus().to_vec()
        }
    };
    for &node in &nodes {
        let Some(found) = topology.nodes.iter().find(|n| n.node == node) else {
            let have: Vec<u32> = topology.nodes.iter().map(|n| n.node).collect();
            return Err(format!(
                "--membind {membind}: this machine has no node {node} (it has {}); see \
                 `placement-study topology`",
                match have.as_slice() {
                    [only] => format!("node {only} only"),
                    _ => nodes_phrase(&have),
                }
            ));
        };
        if found.memory_kib == Some(0) {
            let which = match membind {
                Membind::Local => format!("arm {arm} runs on node {node}, which"),
                Membind::Nodes(_) => format!("node {node}"),
            };
            return Err(format!(
                "--membind {membind}: {which} has no memory (CPUs alone); name nodes that have \
                 memory (--membind {})",
                node_list(&with_memory(topology))
            ));
        }
    }
    Ok(nodes)
}

/// The nodes with memory (or none said to be memoryless).
fn with_memory(topology: &Topology) -> Vec<u32> {
    topology
        .nodes
        .iter()
        .filter(|n| n.memory_kib != Some(0))
        .map(|n| n.node)
        .collect()
}

/// The CPUs a kernel arm's workers run on: each pinned worker's CPU, and
/// for a worker left to the scheduler every allowed CPU.
pub fn placement_cpus(topology: &Topology, cpus: &[Option<u32>]) -> Vec<u32> {
    if cpus.iter().any(Option::is_none) {
        return topology
            .cpus
            .iter()
            .filter(|c| c.allowed)
            .map(|c| c.cpu)
            .collect();
    }
    cpus.iter().flatten().copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixture;

    #[test]
    fn membind_parses_local_and_node_lists_and_refuses_the_rest() {
        assert_eq!("local".parse(), Ok(Membind::Local));
        assert_eq!("0-1,3".parse(), Ok(Membind::Nodes(vec![0, 1, 3])));
        assert_eq!("1,0".parse::<Membind>().unwrap().to_string(), "0-1");
        for bad in ["", "LOCAL", "all", "0-", "1-0", "x"] {
            let error = bad.parse::<Membind>().unwrap_err();
            assert!(
                error.starts_with(&format!("--membind {bad}: give local")),
                "{error}"
            );
        }
        let saved = serde_json::to_string(&Membind::Nodes(vec![0, 2])).unwrap();
        assert_eq!(saved, "\"0,2\"");
        assert_eq!(
            serde_json::from_str::<Membind>(&saved).unwrap(),
            Membind::Nodes(vec![0, 2])
        );
        assert_eq!(serde_json::to_string(&Membind::Local).unwrap(), "\"local\"");
    }

    #[test]
    fn local_is_the_nodes_of_the_arms_cpus() {
        // Nodes 0-3: CPUs 0-7,32-39, 8-15,40-47, and so on.
        let epyc = fixture("epyc-7543-nps4");
        let nodes = |cpus: &[u32]| arm_nodes(&epyc, &Membind::Local, "arm", cpus.to_vec());
        assert_eq!(nodes(&[0, 1, 32]), Ok(vec![0]));
        assert_eq!(nodes(&[7, 8, 63]), Ok(vec![0, 1, 3]));
        // A memory-only node (CXL) may be named.
        let cxl = fixture("xeon-cxl-memory-node");
        assert_eq!(
            arm_nodes(&cxl, &Membind::Nodes(vec![1]), "arm", [0]),
            Ok(vec![1])
        );
        assert_eq!(
            arm_nodes(&cxl, &Membind::Local, "arm", [0, 23]),
            Ok(vec![0])
        );
    }

    #[test]
    fn unknown_nodes_memoryless_nodes_and_no_numa_are_refused_naming_the_fix() {
        let mut epyc = fixture("epyc-7543-nps4");
        let error = arm_nodes(&epyc, &Membind::Nodes(vec![0, 5]), "a", [0]).unwrap_err();
        assert_eq!(
            error,
            "--membind 0,5: this machine has no node 5 (it has nodes 0-3); see \
             `placement-study topology`"
        );
        epyc.nodes[1].memory_kib = Some(0);
        let error = arm_nodes(&epyc, &Membind::Local, "one-per-core", [8]).unwrap_err();
        assert_eq!(
            error,
            "--membind local: arm one-per-core runs on node 1, which has no memory (CPUs alone); \
             name nodes that have memory (--membind 0,2-3)"
        );
        let error = arm_nodes(&epyc, &Membind::Nodes(vec![1]), "a", [0]).unwrap_err();
        assert!(
            error.starts_with("--membind 1: node 1 has no memory"),
            "{error}"
        );
        let error = arm_nodes(&epyc, &Membind::Local, "a", [200]).unwrap_err();
        assert!(
            error.contains("CPU 200, which no NUMA node lists"),
            "{error}"
        );
        let guest = fixture("kvm-guest-2cpu");
        assert!(guest.nodes.is_empty());
        let error = arm_nodes(&guest, &Membind::Local, "a", [0]).unwrap_err();
        assert_eq!(
            error,
            "--membind local: this machine publishes no NUMA node (no /sys/devices/system/node: \
             a kernel built without NUMA support); drop --membind"
        );
    }

    #[test]
    fn one_node_is_trivially_local() {
        let cxl = fixture("xeon-cxl-memory-node");
        assert_eq!(arm_nodes(&cxl, &Membind::Local, "a", 0..24), Ok(vec![0]));
        let error = arm_nodes(&cxl, &Membind::Nodes(vec![2]), "a", [0]).unwrap_err();
        assert!(error.contains("(it has nodes 0-1)"), "{error}");
    }

    #[test]
    fn an_unpinned_worker_runs_on_every_allowed_cpu() {
        let epyc = fixture("epyc-7543-nps4");
        assert_eq!(placement_cpus(&epyc, &[Some(1), Some(9)]), [1, 9]);
        assert_eq!(placement_cpus(&epyc, &[None, None]).len(), 64);
    }
}
