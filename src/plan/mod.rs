//! Plan: which CPUs each placement arm uses, from the topology.
//!
//! Both the gate and the study compare placements of the *same* kind of core:
//! a pair on one core's two hardware threads against a pair on two cores of
//! the same class and package. Mixing a performance core with an efficiency
//! core, or crossing packages, would measure something else.
//!
//! [`pairs`] plans the other question: which CPUs share a core at all;
//! [`latency`] orders every pair of CPUs in rounds of disjoint pairs;
//! [`hybrid`] plans baselines and shared work across core classes;
//! [`command`] plans a user's command under the arms (`run -- COMMAND`);
//! [`membind`] the nodes each arm's memory is bound to (`run --membind`).

mod arms;
pub mod command;
pub mod hybrid;
pub mod latency;
pub mod membind;
pub mod memory;
pub mod pairs;
mod scheme;
pub mod sweep;

pub use arms::{Arm, GateBaseline, Placement, arms_where};

use crate::probe::{CoreKind, Topology};
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One core's hardware threads that this process may use.
#[derive(Clone, Debug, PartialEq, Eq)]
struct UsableCore {
    class: CoreKind,
    package: usize,
    /// Allowed CPUs of this core, ascending.
    threads: Vec<u32>,
}

/// The cores of one (class, package) group, in order of their lowest CPU.
fn usable_cores(topology: &Topology) -> BTreeMap<(CoreKind, usize), Vec<UsableCore>> {
    let mut cores: BTreeMap<usize, UsableCore> = BTreeMap::new();
    for cpu in topology.cpus.iter().filter(|c| c.allowed) {
        cores
            .entry(cpu.core)
            .or_insert_with(|| UsableCore {
                class: cpu.class,
                package: cpu.package,
                threads: Vec::new(),
            })
            .threads
            .push(cpu.cpu);
    }
    let mut groups: BTreeMap<(CoreKind, usize), Vec<UsableCore>> = BTreeMap::new();
    for core in cores.into_values() {
        groups
            .entry((core.class, core.package))
            .or_default()
            .push(core);
    }
    for group in groups.values_mut() {
        group.sort_by_key(|c| c.threads[0]);
    }
    groups
}

/// The CPUs the gate compares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GatePairs {
    /// One core's two hardware threads.
    pub siblings: [u32; 2],
    /// The separate-cores pair older gates measured the siblings against
    /// (the first sibling and the first thread of another core); never
    /// chosen now: each worker is measured against its own CPU alone.
    #[serde(default)]
    pub separate: Option<[u32; 2]>,
    pub class: CoreKind,
    pub package: usize,
}

impl GatePairs {
    /// What the siblings are measured against: each worker against its own
    /// CPU alone, or in an older file what that file says.
    pub fn baseline(&self) -> GateBaseline {
        match self.separate {
            Some(_) => GateBaseline::SeparateCores,
            None => GateBaseline::EachAlone,
        }
    }

    /// The placement of one gate arm on these CPUs.
    pub fn placement(&self, arm: Arm) -> Placement {
        let [first, second] = self.siblings;
        let cpus: Vec<u32> = match arm {
            Arm::Siblings => self.siblings.to_vec(),
            Arm::Separate => self.separate.map_or_else(Vec::new, |pair| pair.to_vec()),
            Arm::SameCpu => vec![first, first],
            Arm::AloneSecond => vec![second],
            _ => vec![first],
        };
        Placement {
            arm,
            cpus: cpus.into_iter().map(Some).collect(),
            membind: None,
        }
    }
}

/// What the gate can measure on this topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GatePlan {
    Pairs(GatePairs),
    /// No core has two allowed hardware threads; the reason says whether SMT
    /// is off, absent, or hidden by the CPU affinity (cpuset).
    NoSmt {
        reason: String,
    },
    /// Which CPUs share a core is unknown (the reason names the missing
    /// files): no pair can be chosen, and no "no SMT" either.
    UnknownStructure {
        reason: String,
    },
}

/// Picks the gate's CPUs: the first core (by lowest CPU, class and
/// package in order) with two allowed threads. Each sibling's worker is
/// measured against its own CPU alone, so no second core is needed: a host
/// of one core of two threads (a typical small cloud instance) is measured
/// as any other.
pub fn gate_pairs(topology: &Topology) -> Result<GatePlan> {
    if let Some(reason) = &topology.summary.structure_unknown {
        return Ok(GatePlan::UnknownStructure {
            reason: reason.clone(),
        });
    }
    let groups = usable_cores(topology);
    let smt_core = groups.iter().find_map(|((class, package), cores)| {
        let core = cores.iter().find(|c| c.threads.len() >= 2)?;
        Some(GatePairs {
            siblings: [core.threads[0], core.threads[1]],
            separate: None,
            class: *class,
            package: *package,
        })
    });
    if let Some(pairs) = smt_core {
        return Ok(GatePlan::Pairs(pairs));
    }
    if topology.summary.smt == Some(true) {
        return Ok(GatePlan::NoSmt {
            reason: "SMT is hidden by the CPU affinity: no core has two allowed hardware threads \
                     (widen the cpuset or taskset to include both threads of a core)"
                .into(),
        });
    }
    let control = topology.environment.smt_control.as_deref();
    let reason = match control {
        Some("off") | Some("forceoff") => format!(
            "SMT is off (cpu/smt/control = {}): no core has two hardware threads; \
             enable it (echo on > /sys/devices/system/cpu/smt/control, or in firmware) to measure",
            control.unwrap_or_default()
        ),
        Some("notsupported") | Some("notimplemented") => {
            "SMT is absent: this CPU has one hardware thread per core".into()
        }
        _ => "SMT is absent: the kernel shows one hardware thread per core \
              (a VM's guest topology, SMT disabled in firmware, or a CPU without SMT)"
            .into(),
    };
    Ok(GatePlan::NoSmt { reason })
}

/// Largest even worker count that both one-per-core (N cores) and
/// sibling-packed (N/2 cores with two threads) can place within one class and
/// package, and within one NUMA node where a node has two such workers'
/// cores (so the default stays in a node, as [`run_arms`] places it);
/// `None` when no group has a core with two allowed threads.
pub fn default_workers(topology: &Topology) -> Option<usize> {
    let placeable = |cores: &[UsableCore]| {
        let smt_cores = cores.iter().filter(|c| c.threads.len() >= 2).count();
        Some((cores.len().min(2 * smt_cores)) & !1).filter(|n| *n >= 2)
    };
    let groups = usable_cores(topology);
    let nodes = topology.nodes_by_cpu();
    let within_a_node = groups
        .values()
        .flat_map(|cores| {
            topology
                .nodes
                .iter()
                .filter_map(|node| placeable(&cores_in_node(&nodes, cores, node.node)))
        })
        .max();
    within_a_node.or_else(|| groups.values().filter_map(|cores| placeable(cores)).max())
}

/// `run`'s arms where `--arms` is not given: one-per-core against
/// sibling-packed.
pub const DEFAULT_ARMS: [Arm; 2] = [Arm::OnePerCore, Arm::SiblingPacked];

/// `run`'s arms where `--arms` is not given and no core has two allowed
/// hardware threads: one-per-core against the time-sliced same-cpu control.
pub const NO_SMT_ARMS: [Arm; 2] = [Arm::OnePerCore, Arm::SameCpu];

/// What a study measures: its arms and workers per arm, and the note that
/// names the arms left out, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StudyArms {
    pub arms: Vec<Arm>,
    pub workers: usize,
    pub left_out: Option<String>,
}

/// The arms and workers a study can place on `topology`: `requested`
/// (`None`: [`DEFAULT_ARMS`]) and `workers` (`None`: [`default_workers`]).
/// Where no core has two allowed hardware threads, sibling-packed is left
/// out (the default arms become [`NO_SMT_ARMS`]) with a note, and the
/// default is two workers (one where only one core is allowed). `Err`: a
/// usage error that names a command line that works here.
pub fn study_arms(
    topology: &Topology,
    workers: Option<usize>,
    requested: Option<&[Arm]>,
) -> std::result::Result<StudyArms, String> {
    if let Some(why) = &topology.summary.structure_unknown {
        return arms_without_structure(why, workers, requested);
    }
    let groups = usable_cores(topology);
    let has_smt = groups
        .values()
        .flatten()
        .any(|core| core.threads.len() >= 2);
    if has_smt {
        let workers = workers
            .or_else(|| default_workers(topology))
            .ok_or_else(|| {
                "no class and package has two cores of which one has two allowed hardware threads, \
             so there is no default --workers; pass --workers N and --arms without \
             sibling-packed (e.g. `placement-study run --workers 2 --arms one-per-core,same-cpu`)"
                    .to_string()
            })?;
        if requested.is_none() && workers % 2 == 1 {
            return Err(format!(
                "--workers {workers}: sibling-packed, a default arm here, puts two workers on \
                 each core, so it needs an even number; use {} or \
                 `--arms one-per-core,same-cpu`",
                workers + 1
            ));
        }
        return Ok(StudyArms {
            arms: requested.unwrap_or(&DEFAULT_ARMS).to_vec(),
            workers,
            left_out: None,
        });
    }
    let largest = groups.values().map(Vec::len).max().unwrap_or(1);
    let workers = workers.unwrap_or(largest.clamp(1, 2));
    let why = "no core has two allowed hardware threads";
    let (arms, left_out) = match requested {
        None => (
            NO_SMT_ARMS.to_vec(),
            format!(
                "sibling-packed left out: {why}; one-per-core is compared with same-cpu \
                 (all {workers} workers on one CPU) instead"
            ),
        ),
        Some(arms) if arms.contains(&Arm::SiblingPacked) => (
            arms.iter()
                .copied()
                .filter(|&arm| arm != Arm::SiblingPacked)
                .collect(),
            format!("sibling-packed left out: {why}"),
        ),
        Some(arms) => {
            return Ok(StudyArms {
                arms: arms.to_vec(),
                workers,
                left_out: None,
            });
        }
    };
    if arms.is_empty() {
        return Err(format!(
            "--arms sibling-packed: {why} here, so it cannot be placed; \
             `placement-study run --workers {workers} --arms one-per-core,same-cpu` measures what can be"
        ));
    }
    Ok(StudyArms {
        arms,
        workers,
        left_out: Some(left_out),
    })
}

/// `run`'s arms where which CPUs share a core is unknown: the two that
/// need no core, unpinned against the time-sliced same-cpu control.
pub const UNKNOWN_STRUCTURE_ARMS: [Arm; 2] = [Arm::Unpinned, Arm::SameCpu];

/// The arms a study can place where which CPUs share a core is unknown
/// (`why`): one-per-core and sibling-packed would be placed on a guess, so
/// they are left out with a note, and two workers are the default.
fn arms_without_structure(
    why: &str,
    workers: Option<usize>,
    requested: Option<&[Arm]>,
) -> std::result::Result<StudyArms, String> {
    let workers = workers.unwrap_or(2);
    let needs_cores = |arm: &&Arm| matches!(arm, Arm::OnePerCore | Arm::SiblingPacked);
    let names = |arms: &[Arm]| {
        let names: Vec<String> = arms.iter().map(Arm::to_string).collect();
        names.join(",")
    };
    let (arms, left_out) = match requested {
        None => (
            UNKNOWN_STRUCTURE_ARMS.to_vec(),
            format!(
                "one-per-core and sibling-packed left out: which CPUs share a core is unknown \
                 ({why}); unpinned is compared with same-cpu instead"
            ),
        ),
        Some(requested) => {
            let (left_out, arms): (Vec<Arm>, Vec<Arm>) =
                requested.iter().partition(|arm| needs_cores(arm));
            if left_out.is_empty() {
                return Ok(StudyArms {
                    arms,
                    workers,
                    left_out: None,
                });
            }
            if arms.is_empty() {
                return Err(format!(
                    "--arms {}: which CPUs share a core is unknown here ({why}), so it cannot be \
                     placed; `placement-study run --workers {workers} --arms unpinned,same-cpu` \
                     measures what can be",
                    names(&left_out)
                ));
            }
            let note = format!(
                "{} left out: which CPUs share a core is unknown ({why})",
                names(&left_out)
            );
            (arms, note)
        }
    };
    Ok(StudyArms {
        arms,
        workers,
        left_out: Some(left_out),
    })
}

/// The study's arms, all placed within one class and package, and within
/// one NUMA node where one has the cores.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunPlan {
    pub class: CoreKind,
    pub package: usize,
    /// The NUMA node every pinned worker is in; absent (not written) on a
    /// machine without nodes, and where no node has the cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
    /// Why the arms span NUMA nodes, where the machine has several and no
    /// node has the cores (a warning of the run; saved with its words).
    #[serde(skip)]
    pub spans_nodes: Option<String>,
    pub placements: Vec<Placement>,
}

/// The cores of `cores` (one class and package) in NUMA node `node`, by
/// their first thread's node in `nodes` ([`Topology::nodes_by_cpu`]).
fn cores_in_node(nodes: &BTreeMap<u32, u32>, cores: &[UsableCore], node: u32) -> Vec<UsableCore> {
    cores
        .iter()
        .filter(|core| nodes.get(&core.threads[0]) == Some(&node))
        .cloned()
        .collect()
}

/// The cores a study's arms are placed on: one class and package, and
/// one NUMA node where one has the cores.
struct ChosenCores {
    class: CoreKind,
    package: usize,
    /// In order of their lowest CPU.
    cores: Vec<UsableCore>,
    /// The node they are all in; `None` without nodes, or where they span.
    node: Option<u32>,
    /// Why they span nodes, where the machine has several.
    spans_nodes: Option<String>,
}

/// The first (class, package) group with a NUMA node whose cores `fit`,
/// narrowed to that node; else the first group whose cores fit, with why
/// its cores span nodes where the machine has several. `needed_cores` is
/// what the arms need, for that note; `None` when no group fits.
fn choose_cores(
    topology: &Topology,
    groups: &BTreeMap<(CoreKind, usize), Vec<UsableCore>>,
    needed_cores: usize,
    fits: impl Fn(&Vec<UsableCore>) -> bool,
) -> Option<ChosenCores> {
    let nodes = topology.nodes_by_cpu();
    for (&(class, package), cores) in groups {
        for node in &topology.nodes {
            let within = cores_in_node(&nodes, cores, node.node);
            if fits(&within) {
                return Some(ChosenCores {
                    class,
                    package,
                    cores: within,
                    node: Some(node.node),
                    spans_nodes: None,
                });
            }
        }
    }
    let (&(class, package), cores) = groups.iter().find(|(_, cores)| fits(cores))?;
    let spans_nodes = (topology.nodes.len() > 1).then(|| {
        format!(
            "the arms span NUMA nodes: no node of package {package} has the {needed_cores} \
             cores they need, so their workers' memory is not all local (lower the worker \
             count to fit one node)"
        )
    });
    Some(ChosenCores {
        class,
        package,
        cores: cores.clone(),
        node: None,
        spans_nodes,
    })
}

/// Builds the placements for the requested arms, all within one class and
/// package so the arms differ only in how the workers share cores. Each arm
/// asks only for what it uses: `one-per-core` N cores, `sibling-packed` N/2
/// cores with two allowed threads, `same-cpu` one CPU, `unpinned` nothing.
pub fn run_arms(topology: &Topology, workers: usize, arms: &[Arm]) -> Result<RunPlan> {
    if workers == 0 {
        bail!("--workers must be at least 1");
    }
    if let Some(arm) = arms.iter().find(|arm| !RUN_ARMS.contains(arm)) {
        bail!("arm '{arm}' belongs to the gate, not to the study");
    }
    let needs_pairs = arms.contains(&Arm::SiblingPacked);
    if needs_pairs && workers % 2 != 0 {
        bail!("--workers {workers}: sibling-packed needs an even number of workers");
    }
    let needed_cores = if arms.contains(&Arm::OnePerCore) {
        workers
    } else {
        1
    };
    let groups = usable_cores(topology);
    let fits = |cores: &Vec<UsableCore>| {
        let smt_cores = cores.iter().filter(|c| c.threads.len() >= 2).count();
        cores.len() >= needed_cores && (!needs_pairs || smt_cores >= workers / 2)
    };
    let Some(chosen) = choose_cores(topology, &groups, needed_cores, fits) else {
        let best = groups.values().map(|c| c.len()).max().unwrap_or(0);
        if needs_pairs {
            bail!(
                "--workers {workers}: no class and package has {needed_cores} cores of which {} have two \
                 allowed hardware threads (sibling-packed needs SMT; largest group: {best} cores); \
                 lower --workers or drop sibling-packed from --arms",
                workers / 2
            );
        }
        bail!(
            "--workers {workers}: no class and package has {needed_cores} allowed cores \
             (largest group: {best}); lower --workers or drop one-per-core from --arms"
        );
    };
    let cores = &chosen.cores;
    let one_per_core: Vec<u32> = cores.iter().take(workers).map(|c| c.threads[0]).collect();
    let packed: Vec<u32> = cores
        .iter()
        .filter(|c| c.threads.len() >= 2)
        .take(workers / 2)
        .flat_map(|c| [c.threads[0], c.threads[1]])
        .collect();
    let placements = arms
        .iter()
        .map(|&arm| {
            let cpus = match arm {
                Arm::OnePerCore => one_per_core.iter().map(|c| Some(*c)).collect(),
                Arm::SiblingPacked => packed.iter().map(|c| Some(*c)).collect(),
                Arm::Unpinned => vec![None; workers],
                _ => vec![Some(one_per_core[0]); workers],
            };
            Placement {
                arm,
                cpus,
                membind: None,
            }
        })
        .collect();
    Ok(RunPlan {
        class: chosen.class,
        package: chosen.package,
        node: chosen.node,
        spans_nodes: chosen.spans_nodes,
        placements,
    })
}

/// The arms a study (`run --arms`) may name.
pub const RUN_ARMS: [Arm; 4] = [
    Arm::OnePerCore,
    Arm::SiblingPacked,
    Arm::Unpinned,
    Arm::SameCpu,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixture;

    /// Sub-NUMA clustering: 8 workers fit one node (8 cores); 16 fit the
    /// package only, and the plan says its arms span nodes.
    #[test]
    fn arms_stay_within_one_node_where_one_has_the_cores() {
        let topology = fixture("server-2s-xeon-4314-snc2");
        let arms = [Arm::OnePerCore, Arm::SiblingPacked];
        let plan = run_arms(&topology, 8, &arms).unwrap();
        assert_eq!(
            (plan.package, plan.node, plan.spans_nodes),
            (0, Some(0), None)
        );
        for placement in &plan.placements {
            for cpu in placement.cpus.iter().flatten() {
                assert_eq!(topology.node_of(*cpu), Some(0), "{placement:?}");
            }
        }
        let plan = run_arms(&topology, 16, &arms).unwrap();
        assert_eq!((plan.package, plan.node), (0, None));
        let why = plan.spans_nodes.unwrap();
        assert!(
            why.contains("no node of package 0 has the 16 cores"),
            "{why}"
        );
    }

    /// A command's arms keep to one node as the kernel study's do.
    #[test]
    fn a_commands_arms_stay_within_one_node_too() {
        let topology = fixture("epyc-7543-nps4");
        let arms = [
            command::CommandArm::Placement(Arm::OnePerCore),
            command::CommandArm::Placement(Arm::SiblingPacked),
        ];
        let plan = command::command_plan(&topology, Some(8), &arms).unwrap();
        assert_eq!((plan.node, plan.spans_nodes), (Some(0), None));
        let plan = command::command_plan(&topology, Some(12), &arms).unwrap();
        assert_eq!(plan.node, None);
        assert!(plan.spans_nodes.is_some());
    }

    /// The default worker count fits one node where one node can hold it.
    #[test]
    fn the_default_workers_fit_one_node() {
        assert_eq!(
            default_workers(&fixture("server-2s-xeon-4314-snc2")),
            Some(8)
        );
        assert_eq!(default_workers(&fixture("epyc-7543-nps4")), Some(8));
        assert_eq!(default_workers(&fixture("server-2s-xeon-8462Y")), Some(32));
    }

    /// Without node files nothing changes and nothing is said.
    #[test]
    fn a_machine_without_nodes_is_planned_by_package() {
        let plan = run_arms(&fixture("laptop-i5-11300H"), 2, &[Arm::OnePerCore]).unwrap();
        assert_eq!((plan.node, plan.spans_nodes), (None, None));
    }
}
