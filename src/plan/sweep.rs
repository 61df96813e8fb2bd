//! `run --sweep` plans: the order CPUs are added in, what each one is, and
//! the steps (step k: k workers on the first k CPUs of the order).
//!
//! The kernel sweep shares one fixed amount of work among a step's workers
//! by work stealing, `hybrid`'s machinery ([`super::hybrid`]), so a step's
//! wall time against step 1's is its speedup.

use super::{Arm, Placement};
use crate::probe::{CoreKind, Topology};
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

/// Items in one worker's share of the largest step when that share is to
/// take `share`: one item a millisecond (the shortest [`super::hybrid`]
/// allows, so handing one out stays far below the invariance tolerance),
/// at least `hybrid`'s 50 and at most 1000.
///
/// Why finer than `hybrid`'s 50: a step ends when its slowest worker
/// finishes its last item, half an item after the others on average, and
/// a CPU's marginal gain is a difference of two speedups, so that tail
/// is multiplied by the step's speedup. With 50 items a share, a guest's
/// second vCPU at 0.44 of the first read a gain 0.39 (the finish gap 10-17
/// ms of a 730 ms step, about 5 % of the gain); with an item a millisecond
/// the gap is one 2 ms item of the slow CPU at most.
pub fn items_per_worker(share: std::time::Duration) -> u64 {
    u64::try_from(share.as_millis())
        .unwrap_or(u64::MAX)
        .clamp(super::hybrid::ITEMS_PER_WORKER, 1000)
}

/// Which order the CPUs are added in (saved by its [`SweepOrder::name`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SweepOrder {
    /// One thread of each core of the fastest class, then the next class's
    /// cores, then the SMT siblings: the default.
    CoresFirst,
    /// Each core's every thread before the next core (classes fastest
    /// first): what packing siblings buys.
    SiblingsFirst,
    /// One thread of each core, taking packages and the NUMA nodes within
    /// them in turn, then the siblings: the cross-package and cross-node
    /// costs early.
    Spread,
    /// The CPUs as listed.
    List(Vec<u32>),
}

impl SweepOrder {
    /// The name as typed and saved ("cores-first", or the CPU list).
    pub fn name(&self) -> String {
        match self {
            SweepOrder::CoresFirst => "cores-first".into(),
            SweepOrder::SiblingsFirst => "siblings-first".into(),
            SweepOrder::Spread => "spread".into(),
            SweepOrder::List(cpus) => cpus
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

/// What a CPU adds to the CPUs before it in the order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Added {
    /// The first CPU: the baseline of every speedup.
    First { class: CoreKind },
    /// A core none of the earlier CPUs is on, in a package one of them is
    /// in; `node`: the NUMA node it is in, where none of the earlier CPUs
    /// is in that node (absent, and not written, otherwise).
    NewCore {
        class: CoreKind,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<u32>,
    },
    /// A hardware thread of a core an earlier CPU (`of`) is on.
    SmtSibling { class: CoreKind, of: u32 },
    /// A core in a package none of the earlier CPUs is in.
    OtherPackage { class: CoreKind, package: usize },
}

impl Added {
    /// "new performance core", "SMT sibling of CPU 0", …
    pub fn describe(&self) -> String {
        match self {
            Added::First { class } => format!("first CPU ({class})"),
            Added::NewCore { class, node: None } => format!("new {class} core"),
            Added::NewCore {
                class,
                node: Some(node),
            } => format!("new {class} core, a CPU in another node (node {node})"),
            Added::SmtSibling { of, .. } => format!("SMT sibling of CPU {of}"),
            Added::OtherPackage { class, package } => {
                format!("{class} core in package {package}")
            }
        }
    }
}

/// One CPU of the order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SweepCpu {
    pub cpu: u32,
    pub added: Added,
}

/// Where a sweep measures.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SweepPlan {
    /// The order's name: cores-first, siblings-first, spread, or the list.
    pub order_name: String,
    /// The CPUs in the order they are added.
    pub order: Vec<SweepCpu>,
    /// The steps measured: worker counts, ascending, starting at 1.
    #[schemars(inner(range(min = 1)))]
    pub steps: Vec<usize>,
    /// Every CPU of the largest step is measured alone, so each step has a
    /// ceiling; false with `--no-ceiling`, which measures the first CPU
    /// alone only (step 1).
    #[serde(default = "every_cpu_alone_by_default")]
    pub per_cpu_baselines: bool,
}

/// Sweeps saved before `--no-ceiling` measured every CPU alone.
fn every_cpu_alone_by_default() -> bool {
    true
}

impl SweepPlan {
    /// The CPUs of step `k`: the first `k` of the order.
    pub fn step_cpus(&self, k: usize) -> Vec<u32> {
        self.order.iter().take(k).map(|c| c.cpu).collect()
    }

    /// Step `k`'s placements, `k` 2 and up: work stealing with one worker
    /// pinned on each of its CPUs, then the same `k` workers left to the
    /// scheduler, as `hybrid`'s unpinned schemes are (anywhere this process
    /// may run). Step 1 is the first CPU's baseline,
    /// `hybrid`'s [`super::hybrid::HybridPlan::baseline`].
    pub fn step_placements(&self, k: usize) -> [Placement; 2] {
        [
            Placement {
                arm: Arm::StealingPinned,
                cpus: self.step_cpus(k).into_iter().map(Some).collect(),
                membind: None,
            },
            Placement {
                arm: Arm::StealingUnpinned,
                cpus: vec![None; k],
                membind: None,
            },
        ]
    }

    /// The CPUs that get a single-worker baseline: every CPU of the largest
    /// step (the ceiling adds up their speeds), or the first alone (step 1)
    /// without [`SweepPlan::per_cpu_baselines`].
    pub fn baseline_cpus(&self) -> Vec<u32> {
        match self.per_cpu_baselines {
            true => self.step_cpus(self.steps.last().copied().unwrap_or(1)),
            false => self.step_cpus(1),
        }
    }
}

/// Plans a sweep over the allowed CPUs of `topology` in `order`, measuring
/// `steps` (default: every count from 1 to all the order's CPUs), and every
/// CPU alone where `per_cpu_baselines` (the ceiling).
pub fn sweep_plan(
    topology: &Topology,
    order: &SweepOrder,
    steps: Option<&[usize]>,
    per_cpu_baselines: bool,
) -> Result<SweepPlan> {
    let cpus = ordered_cpus(topology, order)?;
    let steps = match steps {
        None => (1..=cpus.len()).collect(),
        Some(steps) => {
            let mut steps = steps.to_vec();
            steps.sort_unstable();
            steps.dedup();
            if let Some(&too_many) = steps.iter().find(|&&k| k > cpus.len()) {
                bail!(
                    "--steps {too_many}: the order has only {} CPUs; lower the step or widen \
                     --order and the affinity mask",
                    cpus.len()
                );
            }
            if steps.first() != Some(&1) {
                steps.insert(0, 1);
            }
            steps
        }
    };
    if cpus.len() < 2 || steps.len() < 2 {
        bail!(
            "a sweep needs two steps or more and two CPUs (it has {} allowed in its order); \
             widen the affinity mask (taskset) or --order",
            cpus.len()
        );
    }
    Ok(SweepPlan {
        order_name: order.name(),
        order: label(topology, &cpus),
        steps,
        per_cpu_baselines,
    })
}

/// Where a CPU goes in an order: sorted ascending, the first field first.
type OrderKey = (usize, usize, usize, usize, usize, u32);

/// The allowed CPUs in `order`: each CPU with its core, class rank and
/// package, sorted as the order says.
fn ordered_cpus(topology: &Topology, order: &SweepOrder) -> Result<Vec<u32>> {
    let allowed: Vec<_> = topology.cpus.iter().filter(|c| c.allowed).collect();
    let rank = |class: CoreKind| {
        topology
            .classes
            .iter()
            .position(|c| c.name == class)
            .unwrap_or(usize::MAX)
    };
    // A CPU's thread index within its core: 0 for the core's first.
    let thread = |cpu: &crate::probe::CpuEntry| {
        allowed
            .iter()
            .filter(|c| c.core == cpu.core && c.cpu < cpu.cpu)
            .count()
    };
    // A core's place among the cores of one class in its package and NUMA
    // node (the package, on a machine without nodes): the i-th core of
    // each node before the (i+1)-th of any.
    let nodes = topology.nodes_by_cpu();
    let node = |cpu: &crate::probe::CpuEntry| nodes.get(&cpu.cpu).copied();
    let place_in_node = |cpu: &crate::probe::CpuEntry| {
        let mut cores: Vec<usize> = allowed
            .iter()
            .filter(|c| c.package == cpu.package && c.class == cpu.class && node(c) == node(cpu))
            .map(|c| c.core)
            .collect();
        cores.sort_unstable();
        cores.dedup();
        cores.iter().position(|&c| c == cpu.core).unwrap_or(0)
    };
    // The node's place among the nodes of its package: each package's first
    // node, then each package's second, …
    let node_in_package = |cpu: &crate::probe::CpuEntry| {
        let mut nodes: Vec<Option<u32>> = allowed
            .iter()
            .filter(|c| c.package == cpu.package)
            .map(|c| node(c))
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes.iter().position(|&n| n == node(cpu)).unwrap_or(0)
    };
    if let SweepOrder::List(list) = order {
        for (i, &cpu) in list.iter().enumerate() {
            if !allowed.iter().any(|c| c.cpu == cpu) {
                bail!(
                    "--order {}: CPU {cpu} is not one this process may use; list allowed CPUs \
                     (see `placement-study topology`)",
                    order.name()
                );
            }
            if list[..i].contains(&cpu) {
                bail!(
                    "--order {}: CPU {cpu} is listed twice; name each CPU once",
                    order.name()
                );
            }
        }
    }
    let mut keyed: Vec<(OrderKey, u32)> = allowed
        .iter()
        .filter_map(|c| {
            let key = match order {
                SweepOrder::CoresFirst => (thread(c), rank(c.class), c.core, 0, 0, c.cpu),
                SweepOrder::SiblingsFirst => (rank(c.class), c.core, thread(c), 0, 0, c.cpu),
                SweepOrder::Spread => (
                    thread(c),
                    rank(c.class),
                    place_in_node(c),
                    node_in_package(c),
                    c.package,
                    c.cpu,
                ),
                SweepOrder::List(list) => {
                    (list.iter().position(|&l| l == c.cpu)?, 0, 0, 0, 0, c.cpu)
                }
            };
            Some((key, c.cpu))
        })
        .collect();
    keyed.sort_unstable();
    Ok(keyed.into_iter().map(|(_, cpu)| cpu).collect())
}

/// What each CPU of `cpus` adds to the ones before it.
fn label(topology: &Topology, cpus: &[u32]) -> Vec<SweepCpu> {
    let entry = |cpu: u32| topology.cpus.iter().find(|c| c.cpu == cpu);
    let nodes = topology.nodes_by_cpu();
    let mut nodes_before = std::collections::BTreeSet::new();
    let mut before: Vec<&crate::probe::CpuEntry> = Vec::new();
    cpus.iter()
        .filter_map(|&cpu| entry(cpu))
        .map(|this| {
            let class = this.class;
            let added = if before.is_empty() {
                Added::First { class }
            } else if let Some(core_mate) = before.iter().find(|c| c.core == this.core) {
                Added::SmtSibling {
                    class,
                    of: core_mate.cpu,
                }
            } else if !before.iter().any(|c| c.package == this.package) {
                Added::OtherPackage {
                    class,
                    package: this.package,
                }
            } else {
                let node = nodes
                    .get(&this.cpu)
                    .copied()
                    .filter(|node| !nodes_before.contains(node));
                Added::NewCore { class, node }
            };
            nodes_before.extend(nodes.get(&this.cpu).copied());
            before.push(this);
            SweepCpu {
                cpu: this.cpu,
                added,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixture;

    fn order(plan: &SweepPlan) -> Vec<u32> {
        plan.order.iter().map(|c| c.cpu).collect()
    }

    /// An item a millisecond, between 50 and 1000 a share.
    #[test]
    fn a_share_is_an_item_a_millisecond_within_bounds() {
        let items = |ms| items_per_worker(std::time::Duration::from_millis(ms));
        assert_eq!(items(50), 50);
        assert_eq!(items(20), 50);
        assert_eq!(items(500), 500);
        assert_eq!(items(10_000), 1000);
    }

    /// P cores' first threads, then the E cores, then the P siblings.
    #[test]
    fn cores_first_takes_the_fastest_class_then_the_next_then_siblings() {
        let plan = sweep_plan(
            &fixture("alderlake-i5-12600K"),
            &SweepOrder::CoresFirst,
            None,
            true,
        )
        .unwrap();
        assert_eq!(
            order(&plan),
            [0, 2, 4, 6, 8, 10, 12, 13, 14, 15, 1, 3, 5, 7, 9, 11]
        );
        assert_eq!(plan.steps, (1..=16).collect::<Vec<_>>());
        use crate::probe::CoreKind::{Efficiency, Performance};
        assert_eq!(plan.order[0].added, Added::First { class: Performance });
        assert_eq!(
            plan.order[1].added,
            Added::NewCore {
                class: Performance,
                node: None
            }
        );
        assert_eq!(
            plan.order[6].added,
            Added::NewCore {
                class: Efficiency,
                node: None
            }
        );
        assert_eq!(
            plan.order[10].added,
            Added::SmtSibling {
                class: Performance,
                of: 0
            }
        );
    }

    #[test]
    fn siblings_first_fills_each_core_before_the_next() {
        let plan = sweep_plan(
            &fixture("alderlake-i5-12600K"),
            &SweepOrder::SiblingsFirst,
            Some(&[2, 4]),
            true,
        )
        .unwrap();
        assert_eq!(order(&plan)[..5], [0, 1, 2, 3, 4]);
        assert_eq!(plan.steps, [1, 2, 4], "step 1 is always measured");
        assert_eq!(plan.step_cpus(4), [0, 1, 2, 3]);
        assert_eq!(plan.baseline_cpus(), [0, 1, 2, 3]);
        let first_alone = SweepPlan {
            per_cpu_baselines: false,
            ..plan
        };
        assert_eq!(first_alone.baseline_cpus(), [0], "--no-ceiling");
    }

    /// Packages take turns, so the second CPU is in the other package.
    #[test]
    fn spread_alternates_packages() {
        let plan = sweep_plan(
            &fixture("server-2s-xeon-8462Y"),
            &SweepOrder::Spread,
            None,
            true,
        )
        .unwrap();
        assert_eq!(order(&plan)[..4], [0, 32, 1, 33]);
        assert!(matches!(
            plan.order[1].added,
            Added::OtherPackage { package: 1, .. }
        ));
        assert!(matches!(plan.order[2].added, Added::NewCore { .. }));
        assert!(matches!(
            plan.order[64].added,
            Added::SmtSibling { of: 0, .. }
        ));
    }

    /// With sub-NUMA clustering, packages and then the nodes within them
    /// take turns; a core in a node no earlier CPU is in says so.
    #[test]
    fn spread_alternates_packages_then_nodes() {
        let topology = fixture("server-2s-xeon-4314-snc2");
        let plan = sweep_plan(&topology, &SweepOrder::Spread, None, true).unwrap();
        let nodes: Vec<Option<u32>> = order(&plan)[..8]
            .iter()
            .map(|&cpu| topology.node_of(cpu))
            .collect();
        assert_eq!(
            nodes,
            [0, 2, 1, 3, 0, 2, 1, 3].map(Some),
            "{:?}",
            order(&plan)
        );
        assert_eq!(order(&plan)[..4], [0, 16, 8, 24]);
        assert!(matches!(
            plan.order[1].added,
            Added::OtherPackage { package: 1, .. }
        ));
        assert_eq!(
            plan.order[2].added.describe(),
            "new uniform core, a CPU in another node (node 1)"
        );
        assert!(matches!(
            plan.order[4].added,
            Added::NewCore { node: None, .. }
        ));
        let cores_first = sweep_plan(&topology, &SweepOrder::CoresFirst, None, true).unwrap();
        assert!(matches!(
            cores_first.order[8].added,
            Added::NewCore { node: Some(1), .. }
        ));
    }

    #[test]
    fn a_list_is_kept_in_its_order_and_checked() {
        let topology = fixture("alderlake-i5-12600K");
        let plan = sweep_plan(&topology, &SweepOrder::List(vec![12, 0, 1]), None, true).unwrap();
        assert_eq!(order(&plan), [12, 0, 1]);
        assert!(matches!(
            plan.order[2].added,
            Added::SmtSibling { of: 0, .. }
        ));
        let twice = sweep_plan(&topology, &SweepOrder::List(vec![0, 0]), None, true).unwrap_err();
        assert!(
            twice.to_string().contains("CPU 0 is listed twice"),
            "{twice}"
        );
        let absent = sweep_plan(&topology, &SweepOrder::List(vec![0, 99]), None, true).unwrap_err();
        assert!(absent.to_string().contains("CPU 99 is not one"), "{absent}");
        let too_many =
            sweep_plan(&topology, &SweepOrder::CoresFirst, Some(&[17]), true).unwrap_err();
        assert!(too_many.to_string().contains("--steps 17"), "{too_many}");
        let one = sweep_plan(&topology, &SweepOrder::List(vec![0]), None, true).unwrap_err();
        assert!(one.to_string().contains("two CPUs"), "{one}");
    }
}
