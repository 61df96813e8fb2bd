//! Plan of the memory study: the cache ladder (its buffer sizes and the
//! CPU it runs on) and the NUMA cells (a CPU node i against a memory node
//! j, with the CPU that chases and the CPUs that stream).
//!
//! The ladder runs from [`SMALLEST_BYTES`] to at least
//! [`BEYOND_LARGEST`] times the largest cache published for the CPU, in
//! geometric steps (`steps_per_octave` sizes per doubling), each a whole
//! number of cache lines. Without a published cache size it ends at
//! [`UNPUBLISHED_TOP_BYTES`]. The line is the published coherency line
//! size of the CPU's first-level data cache, else [`DEFAULT_LINE_BYTES`].
//!
//! Each published cache of the ladder's CPU that two or more CPUs share
//! gets two pairs ([`sharing_plan`]): one inside the set, one across its
//! nearest edge, for `latency`'s probe to pass a line between.

use crate::cpuset::CpuSet;
use crate::probe::{CpuEntry, Topology};
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BTreeSet;

/// The ladder's first size: one base page.
pub const SMALLEST_BYTES: u64 = 4096;
/// The ladder ends at least this many times above the largest published
/// cache: a random chase over four times a cache misses it three times in
/// four even under random replacement.
pub const BEYOND_LARGEST: u64 = 4;
/// Where the ladder ends when the machine publishes no cache size.
pub const UNPUBLISHED_TOP_BYTES: u64 = 256 << 20;
/// The line size where none is published.
pub const DEFAULT_LINE_BYTES: u32 = 64;
/// Sizes per doubling by default: a step's size range is then a third of
/// an octave wide at best.
pub const STEPS_PER_OCTAVE: u32 = 3;

/// One cache the machine publishes for the ladder's CPU (data or unified;
/// instruction caches hold no data the chase could load).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PublishedCache {
    pub level: u32,
    /// "Data" or "Unified".
    pub kind: String,
    pub size_bytes: u64,
    /// The CPUs sharing this instance.
    pub cpus: CpuSet,
}

/// The cache ladder: one CPU, the line and the sizes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LadderPlan {
    pub cpu: u32,
    pub line_bytes: u32,
    /// Whether `line_bytes` was published (else [`DEFAULT_LINE_BYTES`]).
    pub line_published: bool,
    /// Ascending, each a multiple of `line_bytes`.
    pub sizes: Vec<u64>,
    /// The caches published for `cpu`, ascending by level.
    pub published: Vec<PublishedCache>,
    /// The allowed CPUs of `cpu`'s node (all allowed CPUs where no node is
    /// published), `cpu` among them: they first-touch the buffer and build
    /// the large chains in parallel, so the pages land on `cpu`'s node and
    /// the preparation takes a share of the time; only `cpu` chases.
    #[serde(default)]
    pub builders: CpuSet,
}

impl LadderPlan {
    /// The largest size: every NUMA cell's buffer has it too.
    pub fn top_bytes(&self) -> u64 {
        self.sizes.last().copied().unwrap_or(SMALLEST_BYTES)
    }
}

/// One NUMA cell: CPUs of node `cpu_node` reading memory of node
/// `memory_node`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NumaCell {
    pub cpu_node: u32,
    pub memory_node: u32,
    /// The CPU that chases (the node's first allowed CPU).
    pub cpu: u32,
    /// The CPUs that stream, one thread each.
    pub threads: CpuSet,
    /// `cpu_node`'s published distance to `memory_node` (10: its own).
    pub distance: Option<u32>,
}

/// Every cell of the matrix, and the buffer each memory node gets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NumaPlan {
    pub buffer_bytes: u64,
    /// Nodes with allowed CPUs, ascending.
    pub cpu_nodes: Vec<u32>,
    /// Nodes with memory, ascending.
    pub memory_nodes: Vec<u32>,
    /// Nodes with memory and no CPU (CXL, HBM): columns no CPU is local to.
    pub memory_only: Vec<u32>,
    /// Row by row (CPU node), then column (memory node).
    pub cells: Vec<NumaCell>,
}

/// Plans the ladder on `cpu` (`None`: the first allowed CPU) with
/// `steps_per_octave` sizes per doubling.
pub fn ladder_plan(
    topology: &Topology,
    cpu: Option<u32>,
    steps_per_octave: u32,
) -> Result<LadderPlan> {
    if !(1..=16).contains(&steps_per_octave) {
        bail!("{steps_per_octave} sizes per doubling: give 1 to 16");
    }
    let allowed: Vec<u32> = topology
        .cpus
        .iter()
        .filter(|c| c.allowed)
        .map(|c| c.cpu)
        .collect();
    let cpu = match cpu {
        Some(cpu) if allowed.contains(&cpu) => cpu,
        Some(cpu) => bail!(
            "CPU {cpu} is not among this process's allowed CPUs ({}); name one of them",
            CpuSet::from_cpus(allowed.iter().copied())
        ),
        None => match allowed.first() {
            Some(&cpu) => cpu,
            None => bail!("no allowed CPU to run the cache ladder on"),
        },
    };
    let data = |kind: &str| kind != "Instruction";
    let mine = topology
        .caches
        .iter()
        .filter(|c| data(&c.kind) && c.cpus.contains(cpu));
    let mut published: Vec<PublishedCache> = mine
        .clone()
        .filter_map(|c| {
            Some(PublishedCache {
                level: c.level,
                kind: c.kind.clone(),
                size_bytes: c.size_bytes?,
                cpus: c.cpus.clone(),
            })
        })
        .collect();
    published.sort_by_key(|c| (c.level, c.size_bytes));
    let line = mine.min_by_key(|c| c.level).and_then(|c| c.line_bytes);
    let line_bytes = line
        .filter(|l| l.is_power_of_two() && *l >= 8)
        .unwrap_or(DEFAULT_LINE_BYTES);
    let largest = published.iter().map(|c| c.size_bytes).max();
    let node = topology.node_of(cpu);
    let builders = CpuSet::from_cpus(
        allowed
            .iter()
            .copied()
            .filter(|&c| topology.node_of(c) == node),
    );
    Ok(LadderPlan {
        cpu,
        line_bytes,
        line_published: line == Some(line_bytes),
        sizes: ladder_sizes(largest, u64::from(line_bytes), steps_per_octave),
        published,
        builders,
    })
}

/// The ladder's sizes: [`SMALLEST_BYTES`] × 2^(k / `steps_per_octave`),
/// rounded to whole lines, up to the first at or above [`BEYOND_LARGEST`]
/// × `largest` (or [`UNPUBLISHED_TOP_BYTES`]).
pub fn ladder_sizes(largest: Option<u64>, line_bytes: u64, steps_per_octave: u32) -> Vec<u64> {
    let top = largest.map_or(UNPUBLISHED_TOP_BYTES, |l| {
        l.saturating_mul(BEYOND_LARGEST).max(SMALLEST_BYTES)
    });
    let mut sizes = Vec::new();
    for k in 0.. {
        let exact = SMALLEST_BYTES as f64 * 2f64.powf(f64::from(k) / f64::from(steps_per_octave));
        let size = ((exact / line_bytes as f64).round() as u64).max(1) * line_bytes;
        if sizes.last() != Some(&size) {
            sizes.push(size);
        }
        if size >= top {
            break;
        }
    }
    sizes
}

/// Plans every cell: each node with allowed CPUs against each node with
/// memory, `threads` streaming CPUs per cell (`None`: one per core of the
/// CPU node), on buffers of `buffer_bytes`. A machine that publishes no
/// node has no cell.
pub fn numa_plan(
    topology: &Topology,
    threads: Option<usize>,
    buffer_bytes: u64,
) -> Result<NumaPlan> {
    if threads == Some(0) {
        bail!("0 streaming threads: give at least 1");
    }
    let allowed = |cpu: u32| topology.cpus.iter().any(|c| c.cpu == cpu && c.allowed);
    let cpu_nodes: Vec<(u32, Vec<u32>)> = topology
        .nodes
        .iter()
        .map(|n| (n.node, n.cpus.iter().filter(|&c| allowed(c)).collect()))
        .filter(|(_, cpus): &(u32, Vec<u32>)| !cpus.is_empty())
        .collect();
    let memory_nodes: Vec<u32> = topology
        .nodes
        .iter()
        .filter(|n| n.memory_kib.is_none_or(|kib| kib > 0))
        .map(|n| n.node)
        .collect();
    let memory_only = topology
        .nodes
        .iter()
        .filter(|n| n.cpus.is_empty() && memory_nodes.contains(&n.node))
        .map(|n| n.node)
        .collect();
    let position = |node: u32| topology.nodes.iter().position(|n| n.node == node);
    let mut cells = Vec::new();
    for (cpu_node, cpus) in &cpu_nodes {
        let streaming = one_per_core(topology, cpus);
        let wanted = threads.unwrap_or(streaming.len());
        if wanted > cpus.len() {
            bail!(
                "{wanted} streaming threads: node {cpu_node} has {} allowed CPUs ({}); \
                 give at most {}",
                cpus.len(),
                CpuSet::from_cpus(cpus.iter().copied()),
                cpus.len()
            );
        }
        // One thread per core first, then the cores' further threads.
        let rest = cpus.iter().filter(|c| !streaming.contains(c));
        let chosen = streaming.iter().chain(rest).copied().take(wanted);
        let threads = CpuSet::from_cpus(chosen);
        for &memory_node in &memory_nodes {
            let distance = position(*cpu_node)
                .zip(position(memory_node))
                .and_then(|(row, column)| topology.nodes[row].distances.get(column).copied());
            cells.push(NumaCell {
                cpu_node: *cpu_node,
                memory_node,
                cpu: cpus[0],
                threads: threads.clone(),
                distance,
            });
        }
    }
    Ok(NumaPlan {
        buffer_bytes,
        cpu_nodes: cpu_nodes.iter().map(|(node, _)| *node).collect(),
        memory_nodes,
        memory_only,
        cells,
    })
}

/// A published cache the ladder's CPU shares with other CPUs, and the two
/// pairs its sharing is measured on, the ladder's CPU first in each: two
/// CPUs of the set should see each other's lines faster than two across
/// its edge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SharingPlan {
    pub level: u32,
    /// "Data" or "Unified".
    pub kind: String,
    /// The CPUs the machine says share it.
    pub cpus: CpuSet,
    /// The ladder's CPU and another allowed CPU of `cpus`: one on another
    /// core, sharing no lower level with it, where there is one (so that
    /// the pair meets in this level, not in a lower one); `None`: no
    /// other allowed CPU shares it.
    pub inside: Option<[u32; 2]>,
    /// The ladder's CPU and the nearest allowed CPU outside `cpus`: one
    /// sharing the next published level with it, else of its node, else
    /// of its package; `None`: every allowed CPU shares it, so nothing
    /// can be compared.
    pub outside: Option<[u32; 2]>,
}

/// The sharing to measure: each cache of `ladder.published` whose CPU set
/// has two or more CPUs (the first of each level), with its pairs.
pub fn sharing_plan(topology: &Topology, ladder: &LadderPlan) -> Vec<SharingPlan> {
    let cpu = ladder.cpu;
    let me = topology.cpus.iter().find(|c| c.cpu == cpu);
    let node = topology.node_of(cpu);
    // The lowest published level `other` shares with the ladder's CPU
    // (`u32::MAX`: none).
    let shared_from = |other: u32| {
        ladder
            .published
            .iter()
            .filter(|cache| cache.cpus.contains(other))
            .map(|cache| cache.level)
            .min()
            .unwrap_or(u32::MAX)
    };
    let others: Vec<&CpuEntry> = topology
        .cpus
        .iter()
        .filter(|c| c.allowed && c.cpu != cpu)
        .collect();
    let mut plans: Vec<SharingPlan> = Vec::new();
    for cache in &ladder.published {
        if cache.cpus.len() < 2 || plans.iter().any(|p| p.level == cache.level) {
            continue;
        }
        let inside = others
            .iter()
            .filter(|c| cache.cpus.contains(c.cpu))
            .min_by_key(|c| {
                let same_core = me.is_some_and(|m| m.core == c.core);
                (same_core, Reverse(shared_from(c.cpu)), c.cpu)
            });
        let outside = others
            .iter()
            .filter(|c| !cache.cpus.contains(c.cpu))
            .min_by_key(|c| {
                let other_node = topology.node_of(c.cpu) != node;
                let other_package = me.is_some_and(|m| m.package != c.package);
                (shared_from(c.cpu), other_node, other_package, c.cpu)
            });
        plans.push(SharingPlan {
            level: cache.level,
            kind: cache.kind.clone(),
            cpus: cache.cpus.clone(),
            inside: inside.map(|c| [cpu, c.cpu]),
            outside: outside.map(|c| [cpu, c.cpu]),
        });
    }
    plans
}

/// The first of `cpus` on each core, ascending.
fn one_per_core(topology: &Topology, cpus: &[u32]) -> Vec<u32> {
    let mut cores = BTreeSet::new();
    cpus.iter()
        .copied()
        .filter(|&cpu| {
            let core = topology.cpus.iter().find(|c| c.cpu == cpu).map(|c| c.core);
            cores.insert(core)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{Cache, fixture};

    fn cache(level: u32, kind: &str, size: u64, cpus: &[u32]) -> Cache {
        Cache {
            level,
            kind: kind.to_string(),
            size_bytes: Some(size),
            line_bytes: Some(64),
            ways: None,
            cpus: CpuSet::from_cpus(cpus.iter().copied()),
        }
    }

    #[test]
    fn sizes_are_geometric_whole_lines_past_four_times_the_largest() {
        let sizes = ladder_sizes(Some(1 << 20), 64, 3);
        assert_eq!(sizes[0], 4096);
        assert_eq!(sizes[3], 8192);
        assert!(sizes.iter().all(|s| s % 64 == 0));
        assert!(sizes.windows(2).all(|w| w[0] < w[1]));
        let last = *sizes.last().unwrap();
        assert!(
            last >= 4 << 20 && sizes[sizes.len() - 2] < 4 << 20,
            "{last}"
        );
        assert_eq!(
            *ladder_sizes(None, 64, 1).last().unwrap(),
            UNPUBLISHED_TOP_BYTES
        );
    }

    #[test]
    fn the_ladder_takes_its_cpus_data_caches_and_line() {
        let mut topology = fixture("server-2s-xeon-8462Y");
        topology.caches = vec![
            cache(1, "Data", 48 << 10, &[0]),
            cache(1, "Instruction", 32 << 10, &[0]),
            cache(2, "Unified", 2 << 20, &[0]),
            cache(3, "Unified", 32 << 20, &[0, 1, 2, 3]),
            cache(2, "Unified", 2 << 20, &[1]),
        ];
        let plan = ladder_plan(&topology, None, 3).unwrap();
        assert_eq!(plan.cpu, 0);
        assert_eq!(plan.line_bytes, 64);
        assert!(plan.line_published);
        let levels: Vec<u32> = plan.published.iter().map(|c| c.level).collect();
        assert_eq!(levels, [1, 2, 3]);
        assert!(plan.top_bytes() >= 128 << 20);
        let error = ladder_plan(&topology, Some(999), 3).unwrap_err();
        assert!(
            error.to_string().starts_with("CPU 999 is not among"),
            "{error}"
        );
    }

    #[test]
    fn sharing_pairs_meet_in_their_level_and_cross_its_nearest_edge() {
        // CPU 0's L1d and L2 are its core's (0 and its sibling 64), its L3
        // is package 0's (0-31 and 64-95).
        let topology = fixture("server-2s-xeon-8462Y");
        let ladder = ladder_plan(&topology, None, 3).unwrap();
        let plans = sharing_plan(&topology, &ladder);
        let pairs: Vec<String> = plans
            .iter()
            .map(|p| format!("L{} {}: {:?} {:?}", p.level, p.cpus, p.inside, p.outside))
            .collect();
        assert_eq!(
            pairs,
            [
                // The sibling inside, a core of the same L3 outside.
                "L1 0,64: Some([0, 64]) Some([0, 1])",
                "L2 0,64: Some([0, 64]) Some([0, 1])",
                // Another core inside (not the sibling, which meets in L1),
                // the other package outside.
                "L3 0-31,64-95: Some([0, 1]) Some([0, 32])",
            ]
        );
    }

    #[test]
    fn a_level_every_allowed_cpu_shares_has_no_outside_pair() {
        // This VM: L1d and L2 CPU 0's own, L3 CPUs 0-1, all of them.
        let mut topology = fixture("kvm-guest-2cpu");
        let ladder = ladder_plan(&topology, None, 3).unwrap();
        let plans = sharing_plan(&topology, &ladder);
        assert_eq!(plans.len(), 1, "{plans:?}");
        assert_eq!(
            (plans[0].level, plans[0].inside, plans[0].outside),
            (3, Some([0, 1]), None)
        );
        // CPU 1 not allowed: no pair inside either.
        topology.cpus[1].allowed = false;
        let ladder = ladder_plan(&topology, None, 3).unwrap();
        let plans = sharing_plan(&topology, &ladder);
        assert_eq!((plans[0].inside, plans[0].outside), (None, None));
    }

    #[test]
    fn cells_cross_cpu_nodes_with_memory_nodes() {
        let plan = numa_plan(&fixture("epyc-7543-nps4"), None, 1 << 20).unwrap();
        assert_eq!(plan.cpu_nodes, [0, 1, 2, 3]);
        assert_eq!(plan.memory_nodes, [0, 1, 2, 3]);
        assert!(plan.memory_only.is_empty());
        assert_eq!(plan.cells.len(), 16);
        let cell = &plan.cells[2];
        assert_eq!(
            (cell.cpu_node, cell.memory_node, cell.distance),
            (0, 2, Some(12))
        );
        assert_eq!(cell.cpu, 0);
        // Node 0 is CPUs 0-7 and their SMT siblings 32-39: one per core.
        assert_eq!(cell.threads.to_string(), "0-7");
        let two = numa_plan(&fixture("epyc-7543-nps4"), Some(10), 1 << 20).unwrap();
        assert_eq!(two.cells[0].threads.to_string(), "0-7,32-33");
        let error = numa_plan(&fixture("epyc-7543-nps4"), Some(17), 1 << 20).unwrap_err();
        assert_eq!(
            error.to_string(),
            "17 streaming threads: node 0 has 16 allowed CPUs (0-7,32-39); give at most 16"
        );
    }

    #[test]
    fn a_memory_only_node_is_a_column_of_its_own() {
        let plan = numa_plan(&fixture("xeon-cxl-memory-node"), None, 1 << 20).unwrap();
        assert_eq!(plan.cpu_nodes, [0]);
        assert_eq!(plan.memory_nodes, [0, 1]);
        assert_eq!(plan.memory_only, [1]);
        let far = &plan.cells[1];
        assert_eq!(
            (far.cpu_node, far.memory_node, far.distance),
            (0, 1, Some(21))
        );
    }
}
