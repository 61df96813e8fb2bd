//! Plan of `run -- COMMAND` (issue 24): the placement arms as CPU sets given
//! to a user's command and its whole process tree.
//!
//! # Design of the command study
//!
//! The kernel study (`run` without a COMMAND) places its own workers one
//! thread per CPU. A user's command places nothing: it is given a CPU *set*
//! (its affinity, set on the held child before its exec, so every thread
//! and child it makes inherits it) and its threads run where the scheduler
//! puts them within that set. One module per layer, as for every study:
//!
//! * `plan::command` (here): the arms as CPU sets ([`command_plan`]) from
//!   the probed [`Topology`] and `--threads T`, and the `{threads}` /
//!   `{cpus}` substitution in the command's arguments ([`substitute`]);
//! * `measure::command`: one repetition, the command run once in one arm
//!   (fork, affinity, stdin from `/dev/null`, output discarded or
//!   inherited, wall time, the tree's task-clock, context switches and
//!   migrations by perf `inherit`, or the children's rusage where perf is
//!   refused; a non-zero exit is an error with the last lines of stderr),
//!   the tree's context-switch records (as `observe`'s recorder opens
//!   them) and CPU-wide ones of the arm's SMT siblings, and `CommandRep`,
//!   one repetition as the judge and the document see it; and, where a PMU
//!   counts, the tree's user-space cycles and instructions (`inherit`, one
//!   pair per core PMU the arm's CPUs belong to on a hybrid), each with its
//!   time enabled and running;
//! * `judge::command`: each arm's wall-time median, CV, min–max and n, and
//!   its ratio to the baseline arm paired by round with a 95 % interval
//!   (`judge::stats`, as for the kernel); `judge::command_checks`: each
//!   arm's CV bar, an arm left with no repetition, and whether the study
//!   may be quoted; placement held (every thread of the tree only on its
//!   arm's CPUs, from the records) and SMT co-residency (the share of
//!   on-CPU time its CPU's sibling ran another thread of the tree, and
//!   something else); same work (each arm's median user-space
//!   instructions within `--tolerance` of the baseline arm's; failed, the
//!   arm named and marked, never dropped) and multiplexing (the tree's
//!   hardware counters ran all their enabled time), each unavailable with
//!   its reason where no PMU counts;
//! * `study::command`: the gate first (unless `--skip-gate`), then
//!   warm-ups and rounds that interleave every arm, `--prepare CMD` before
//!   each repetition, a stop keeping the finished rounds, a failure
//!   stopping the study unless ignored; and the document;
//! * `report::command`: the view, `--csv`, `--prom` and the `report A B` /
//!   fleet row, as the `Document` trait asks;
//! * `commands::run`: `run [OPTIONS] -- COMMAND [ARGS...]`, clap's
//!   `last = true` as `observe`'s COMMAND, dispatching to the command study
//!   when a COMMAND is given; the kernel study is unchanged.
//!
//! The saved document is a new kind, `DocumentKind::Command` (`"command"`;
//! `run --json` of a command), not an extension of `run`'s: its samples are
//! a tree's wall time and counters rather than a worker's passes, its arms
//! are CPU sets rather than per-worker CPUs, and it carries the command's
//! argv and exit statuses; a new kind keeps `run`'s schema as it is. It
//! shares `DocumentHead` (kind, host, machine, evidence), the gate result
//! and the checks (`judge::checks::Check`) with the others, and gets its
//! schema `schemas/command.schema.json`. Its body, after the head:
//!
//! * `options`: the command's argv as given (placeholders unreplaced;
//!   bytes that are not UTF-8 replaced by U+FFFD, as `observe` saves its
//!   command), `threads`, `arms`, `baseline`, `reps` (the rounds),
//!   `warmups`, `output`, `ignore_failure`,
//!   `tolerance`, `cv_bar`, `strict`, `prepare`, `skip_gate`, `threshold`
//!   (to do: `units`/`unit`);
//! * `plan`: [`CommandPlan`], each arm's CPU set (and with `--membind`
//!   the nodes its memory is bound to, [`crate::plan::membind`]);
//! * `gate`: the gate's result, or null with `--skip-gate` (marked
//!   UNGATED, as `run`);
//! * `reps`: every `CommandRep` (warm-ups and failures included, marked);
//! * `arms`: `judge::command::CommandArmStats` per arm;
//! * `checks`, `valid` and `warnings`; a stop signal shows as the head's
//!   `complete: false` and an incomplete warning, as for `run`.
//!
//! # The arms
//!
//! `one-per-core`, `sibling-packed` and `same-cpu` share one (class,
//! package) group, so they differ only in how the threads share cores;
//! `unpinned` is every allowed CPU, as the program ships; `class:N` is T
//! CPUs of the Nth core class (for hybrids), one thread of each core first.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

/// `--units N [--unit NAME]`: how much one run of the command processes
/// (bytes, requests, frames), so that each arm's cost is also given per
/// unit. The count is the user's word: nothing measures it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Units {
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub count: f64,
    /// Singular, as in "ns per byte"; "unit" when not named.
    #[schemars(length(min = 1))]
    pub name: String,
}

use super::{Arm, UsableCore, choose_cores, default_workers, usable_cores};
use crate::cpuset::CpuSet;
use crate::probe::{CoreKind, Topology};

/// An arm of the command study: one of the kernel study's placements, or
/// the CPUs of one core class. Saved as its name (`one-per-core`,
/// `class:1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum CommandArm {
    /// `one-per-core`, `sibling-packed`, `unpinned` or `same-cpu`.
    Placement(Arm),
    /// `class:N`: T CPUs of the Nth entry of `Topology::classes`.
    Class(usize),
    /// `step:K` of `run --sweep -- COMMAND`: the first K CPUs of the
    /// sweep's order, `{threads}` K (planned by the sweep, not by
    /// [`command_plan`]).
    Step(usize),
    /// `cpu:N` of `run --sweep -- COMMAND`: the command with `{threads}` 1
    /// alone on CPU N, a per-CPU baseline the sweep's ceiling adds up
    /// (planned by the sweep, as [`CommandArm::Step`]).
    Alone(u32),
    /// `cpus:LIST`: the CPUs listed, ranges joined by `+` (`cpus:0-3+8`),
    /// since `--arms` splits at commas.
    Cpus(CpuList),
    /// `node:N`: the allowed CPUs of NUMA node N.
    Node(u32),
    /// `cache:LEVEL:N` (`cache:L3:0`): the allowed CPUs sharing the Nth
    /// instance (by lowest CPU) of the data or unified cache of LEVEL.
    Cache { level: u32, index: usize },
}

/// The CPUs of a `cpus:LIST` arm, as a fixed mask so that an arm stays a
/// plain value (`Copy`, like every other arm's name): CPUs below
/// [`CpuList::LIMIT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuList([u64; 16]);

impl CpuList {
    /// CPU numbers a list may hold, as `--threads` allows at most.
    pub const LIMIT: u32 = 1024;

    /// The list as `cpus:` takes it (`0-3+8`, or `0-3,8` where no comma
    /// splits it): CPUs below [`CpuList::LIMIT`], not empty.
    pub fn parse(text: &str) -> Result<CpuList, String> {
        let set = crate::cpuset::parse_list(&text.replace('+', ","))?;
        if set.is_empty() {
            return Err("the list is empty".into());
        }
        if let Some(cpu) = set.iter().find(|&cpu| cpu >= CpuList::LIMIT) {
            return Err(format!("CPU {cpu} is above {}", CpuList::LIMIT - 1));
        }
        let mut words = [0u64; 16];
        for cpu in set.iter() {
            words[cpu as usize / 64] |= 1 << (cpu % 64);
        }
        Ok(CpuList(words))
    }

    pub fn cpus(&self) -> CpuSet {
        (0..CpuList::LIMIT)
            .filter(|&cpu| self.0[cpu as usize / 64] & (1 << (cpu % 64)) != 0)
            .collect()
    }
}

/// The arms where `--arms` is not given: as the kernel study's.
pub const DEFAULT_COMMAND_ARMS: [CommandArm; 2] = [
    CommandArm::Placement(Arm::OnePerCore),
    CommandArm::Placement(Arm::SiblingPacked),
];

impl fmt::Display for CommandArm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandArm::Placement(arm) => write!(f, "{arm}"),
            CommandArm::Class(index) => write!(f, "class:{index}"),
            CommandArm::Step(workers) => write!(f, "step:{workers}"),
            CommandArm::Alone(cpu) => write!(f, "cpu:{cpu}"),
            CommandArm::Cpus(list) => {
                write!(f, "cpus:{}", list.cpus().to_string().replace(',', "+"))
            }
            CommandArm::Node(node) => write!(f, "node:{node}"),
            CommandArm::Cache { level, index } => write!(f, "cache:L{level}:{index}"),
        }
    }
}

impl std::str::FromStr for CommandArm {
    type Err = String;

    fn from_str(text: &str) -> Result<CommandArm, String> {
        if let Some(index) = text.strip_prefix("class:") {
            return index.parse().map(CommandArm::Class).map_err(|_| {
                format!("arm '{text}': a class is `class:N`, N a class's index from 0 (see `placement-study topology`)")
            });
        }
        if let Some(workers) = text.strip_prefix("step:") {
            return workers
                .parse()
                .map(CommandArm::Step)
                .map_err(|_| format!("arm '{text}': a sweep's step is `step:K`, K its CPU count"));
        }
        if let Some(list) = text.strip_prefix("cpus:") {
            return CpuList::parse(list).map(CommandArm::Cpus).map_err(|why| {
                format!("arm '{text}': {why}; a CPU list is `cpus:LIST`, ranges joined by +, such as cpus:0-3+8")
            });
        }
        if let Some(node) = text.strip_prefix("node:") {
            return node.parse().map(CommandArm::Node).map_err(|_| {
                format!("arm '{text}': a node is `node:N`, N a NUMA node's number (see `placement-study topology`)")
            });
        }
        if let Some(cache) = text.strip_prefix("cache:") {
            return cache_arm(cache).ok_or_else(|| {
                format!("arm '{text}': a cache is `cache:LEVEL:N`, such as cache:L3:0 (the first L3 by lowest CPU)")
            });
        }
        if let Some(cpu) = text.strip_prefix("cpu:") {
            return cpu.parse().map(CommandArm::Alone).map_err(|_| {
                format!("arm '{text}': a sweep's CPU alone is `cpu:N`, N the CPU's number")
            });
        }
        match text.parse::<Arm>() {
            Ok(arm) if super::RUN_ARMS.contains(&arm) => Ok(CommandArm::Placement(arm)),
            _ => Err(format!(
                "unknown arm '{text}' for a command: use one-per-core, sibling-packed, \
                 unpinned, same-cpu, class:N, cpus:LIST, node:N or cache:LEVEL:N"
            )),
        }
    }
}

/// `L3:0` (or `3:0`) of `cache:L3:0`.
fn cache_arm(text: &str) -> Option<CommandArm> {
    let (level, index) = text.split_once(':')?;
    let level = level.strip_prefix(['L', 'l']).unwrap_or(level);
    Some(CommandArm::Cache {
        level: level.parse().ok().filter(|l| (1..=9).contains(l))?,
        index: index.parse().ok()?,
    })
}

impl From<CommandArm> for String {
    fn from(arm: CommandArm) -> String {
        arm.to_string()
    }
}

/// Written by hand: serde saves the arm as its name (`into = "String"`),
/// and the schema says which names those are, as [`fmt::Display`] writes
/// them.
impl schemars::JsonSchema for CommandArm {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CommandArm".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let placements: Vec<&str> = super::RUN_ARMS.iter().map(|arm| arm.as_str()).collect();
        let pattern = format!(
            "^({}|class:[0-9]+|step:[0-9]+|cpu:[0-9]+|cpus:[0-9]+(-[0-9]+)?([+][0-9]+(-[0-9]+)?)*|node:[0-9]+|cache:L[1-9]:[0-9]+)$",
            placements.join("|")
        );
        schemars::json_schema!({
            "description": "An arm: one of the kernel study's placements given as a CPU set, or class:N, T CPUs of the Nth core class, or (in a `run --sweep -- COMMAND` document) step:K, the first K CPUs of the sweep's order with {threads} K, and cpu:N, CPU N alone with {threads} 1; or a domain: cpus:LIST (ranges joined by +), node:N (the CPUs of NUMA node N), cache:LN:I (the CPUs sharing the Ith cache of level N).",
            "type": "string",
            "pattern": pattern,
        })
    }
}

impl TryFrom<String> for CommandArm {
    type Error = String;

    fn try_from(text: String) -> Result<CommandArm, String> {
        text.parse()
    }
}

/// One arm's CPU set: the command's affinity in that arm.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommandPlacement {
    pub arm: CommandArm,
    pub cpus: CpuSet,
    /// `run --membind`: the NUMA nodes the command's memory is bound to
    /// (MPOL_BIND, set in its process before the exec); absent (not
    /// written) without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub membind: Option<Vec<u32>>,
}

/// Every arm of a command study, and the thread count `{threads}` stands for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommandPlan {
    #[schemars(range(min = 1))]
    pub threads: usize,
    /// The class and package that one-per-core, sibling-packed and same-cpu
    /// share.
    pub class: CoreKind,
    pub package: usize,
    /// The NUMA node they share; absent (not written) on a machine without
    /// nodes, and where no node has the cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
    /// Why the arms span NUMA nodes (a warning of the run, saved with its
    /// words), where the machine has several and no node has the cores.
    #[serde(skip)]
    pub spans_nodes: Option<String>,
    pub placements: Vec<CommandPlacement>,
}

/// The arms where `--arms` is not given: [`DEFAULT_COMMAND_ARMS`], or,
/// where no core has two allowed hardware threads, one-per-core against
/// same-cpu, with the note saying sibling-packed was left out.
pub fn default_command_arms(topology: &Topology) -> (Vec<CommandArm>, Option<String>) {
    let has_smt = usable_cores(topology)
        .values()
        .flatten()
        .any(|core| core.threads.len() >= 2);
    if has_smt {
        return (DEFAULT_COMMAND_ARMS.to_vec(), None);
    }
    let arms = vec![
        CommandArm::Placement(Arm::OnePerCore),
        CommandArm::Placement(Arm::SameCpu),
    ];
    let note = "sibling-packed left out: no core has two allowed hardware threads; one-per-core \
                is compared with same-cpu (the whole command on one CPU) instead";
    (arms, Some(note.to_string()))
}

/// `--threads` where it is not given: the largest T that one-per-core and
/// sibling-packed can both place ([`default_workers`]); where no core has
/// two allowed threads, the cores of the largest (class, package) group,
/// which one-per-core can place.
pub fn default_threads(topology: &Topology) -> usize {
    default_workers(topology).unwrap_or_else(|| {
        usable_cores(topology)
            .values()
            .map(Vec::len)
            .max()
            .unwrap_or(1)
    })
}

/// Plans `arms` for a command of `threads` threads (`None`:
/// [`default_threads`]). Each arm asks only for what it uses; an arm that
/// cannot be placed is an error naming it and what would fit.
pub fn command_plan(
    topology: &Topology,
    threads: Option<usize>,
    arms: &[CommandArm],
) -> Result<CommandPlan> {
    let threads = threads.unwrap_or_else(|| default_threads(topology));
    if threads == 0 {
        bail!("--threads must be at least 1");
    }
    let wants = |arm: Arm| arms.contains(&CommandArm::Placement(arm));
    let packed = wants(Arm::SiblingPacked);
    if packed && threads % 2 != 0 {
        bail!(
            "--threads {threads}: sibling-packed puts two threads on each core, so it needs an \
             even number; use {} or drop sibling-packed from --arms",
            threads + 1
        );
    }
    let needed_cores = if wants(Arm::OnePerCore) { threads } else { 1 };
    let groups = usable_cores(topology);
    let fits = |cores: &Vec<UsableCore>| {
        let smt_cores = cores.iter().filter(|c| c.threads.len() >= 2).count();
        cores.len() >= needed_cores && (!packed || smt_cores >= threads / 2)
    };
    let Some(chosen) = choose_cores(topology, &groups, needed_cores, fits) else {
        let largest = groups.values().map(Vec::len).max().unwrap_or(0);
        if packed {
            bail!(
                "--threads {threads}: no class and package has {needed_cores} cores of which {} have \
                 two allowed hardware threads (largest group: {largest} cores); lower --threads \
                 or drop sibling-packed from --arms",
                threads / 2
            );
        }
        bail!(
            "--threads {threads}: no class and package has {needed_cores} allowed cores \
             (largest group: {largest}); lower --threads or drop one-per-core from --arms"
        );
    };
    let cores = &chosen.cores;
    let placements = arms
        .iter()
        .map(|&arm| {
            let cpus = match arm {
                CommandArm::Placement(Arm::OnePerCore) => {
                    cores.iter().take(threads).map(|c| c.threads[0]).collect()
                }
                CommandArm::Placement(Arm::SiblingPacked) => cores
                    .iter()
                    .filter(|c| c.threads.len() >= 2)
                    .take(threads / 2)
                    .flat_map(|c| [c.threads[0], c.threads[1]])
                    .collect(),
                CommandArm::Placement(Arm::Unpinned) => topology
                    .cpus
                    .iter()
                    .filter(|c| c.allowed)
                    .map(|c| c.cpu)
                    .collect(),
                CommandArm::Placement(Arm::SameCpu) => CpuSet::from_cpus([cores[0].threads[0]]),
                CommandArm::Placement(other) => {
                    bail!("arm '{other}' belongs to the gate or another study, not to a command")
                }
                CommandArm::Class(index) => class_cpus(topology, index, threads)?,
                CommandArm::Cpus(_) | CommandArm::Node(_) | CommandArm::Cache { .. } => {
                    domain_cpus(topology, arm)?
                }
                CommandArm::Step(_) | CommandArm::Alone(_) => {
                    bail!("arm '{arm}' is a sweep's: `run --sweep -- COMMAND` plans it")
                }
            };
            Ok(CommandPlacement {
                arm,
                cpus,
                membind: None,
            })
        })
        .collect::<Result<_>>()?;
    Ok(CommandPlan {
        threads,
        class: chosen.class,
        package: chosen.package,
        node: chosen.node,
        spans_nodes: chosen.spans_nodes,
        placements,
    })
}

/// The allowed CPUs of a domain arm (`cpus:LIST`, `node:N`,
/// `cache:LEVEL:N`); an arm naming no such domain, or one with no allowed
/// CPU, is an error naming it and what this machine has.
pub fn domain_cpus(topology: &Topology, arm: CommandArm) -> Result<CpuSet> {
    let (cpus, what) = match arm {
        CommandArm::Cpus(list) => (list.cpus(), format!("CPUs {}", list.cpus())),
        CommandArm::Node(node) => {
            let Some(found) = topology.nodes.iter().find(|n| n.node == node) else {
                let nodes: Vec<String> =
                    topology.nodes.iter().map(|n| n.node.to_string()).collect();
                bail!(
                    "arm 'node:{node}': this machine has {}; see `placement-study topology`",
                    match nodes.len() {
                        0 => "no NUMA node".to_string(),
                        1 => format!("node {} only", nodes[0]),
                        _ => format!("nodes {}", nodes.join(", ")),
                    }
                );
            };
            (found.cpus.clone(), format!("node {node}"))
        }
        CommandArm::Cache { level, index } => {
            let instances: Vec<&CpuSet> = topology
                .caches
                .iter()
                .filter(|c| c.level == level && c.kind != "Instruction")
                .map(|c| &c.cpus)
                .collect();
            let Some(found) = instances.get(index) else {
                bail!(
                    "arm 'cache:L{level}:{index}': this machine publishes {} L{level} cache{}{}; \
                     see `placement-study topology`",
                    instances.len(),
                    if instances.len() == 1 { "" } else { "s" },
                    match instances.len() {
                        0 => String::new(),
                        n => format!(" (cache:L{level}:0 to cache:L{level}:{})", n - 1),
                    }
                );
            };
            (
                (*found).clone(),
                format!("L{level} #{index} (CPUs {found})"),
            )
        }
        other => bail!("arm '{other}' is not a domain"),
    };
    let allowed: CpuSet = cpus
        .iter()
        .filter(|&cpu| topology.cpus.iter().any(|c| c.cpu == cpu && c.allowed))
        .collect();
    if allowed.is_empty() {
        bail!(
            "arm '{arm}': {what} has no CPU this process may use (allowed: {}); name another",
            topology
                .cpus
                .iter()
                .filter(|c| c.allowed)
                .map(|c| c.cpu)
                .collect::<CpuSet>()
        );
    }
    Ok(allowed)
}

/// `threads` allowed CPUs of class `index`: one thread of each core first
/// (in order of the cores' lowest CPU), then the cores' further threads.
fn class_cpus(topology: &Topology, index: usize, threads: usize) -> Result<CpuSet> {
    let Some(class) = topology.classes.get(index) else {
        bail!(
            "arm 'class:{index}': this machine has {} core classes (class:0 to class:{}); \
             see `placement-study topology`",
            topology.classes.len(),
            topology.classes.len().saturating_sub(1)
        );
    };
    let cores: Vec<UsableCore> = usable_cores(topology)
        .into_iter()
        .filter(|((kind, _), _)| *kind == class.name)
        .flat_map(|(_, cores)| cores)
        .collect();
    let by_rank = (0..)
        .map_while(|rank| {
            let at_rank: Vec<u32> = cores
                .iter()
                .filter_map(|core| core.threads.get(rank).copied())
                .collect();
            (!at_rank.is_empty()).then_some(at_rank)
        })
        .flatten();
    let cpus: Vec<u32> = by_rank.take(threads).collect();
    if cpus.len() < threads {
        bail!(
            "arm 'class:{index}' ({}): --threads {threads}, but the class has {} allowed CPUs; \
             lower --threads or drop class:{index} from --arms",
            class.name,
            cpus.len()
        );
    }
    Ok(CpuSet::from_cpus(cpus))
}

/// Stands for the thread count in the command's arguments.
pub const THREADS_PLACEHOLDER: &str = "{threads}";
/// Stands for the arm's CPU list (`0-3,8`) in the command's arguments.
pub const CPUS_PLACEHOLDER: &str = "{cpus}";

/// Whether `{threads}` means anything for `arms`: same-cpu alone has no
/// thread count of its own to compare (T threads on one CPU is whatever T
/// was asked for), so the command would run with a number nothing else
/// measures. `Err`: the usage error with the fix.
pub fn check_placeholders(args: &[OsString], arms: &[CommandArm]) -> Result<(), String> {
    let same_cpu_alone = arms == [CommandArm::Placement(Arm::SameCpu)];
    if same_cpu_alone && args.iter().any(|a| contains(a, THREADS_PLACEHOLDER)) {
        return Err(format!(
            "{THREADS_PLACEHOLDER} with --arms same-cpu alone: nothing is compared at that thread \
             count; add an arm (e.g. `--arms one-per-core,same-cpu`) or write the number instead"
        ));
    }
    Ok(())
}

fn contains(arg: &OsStr, placeholder: &str) -> bool {
    arg.as_bytes()
        .windows(placeholder.len())
        .any(|window| window == placeholder.as_bytes())
}

/// The command's argv in one arm: every `{threads}` becomes `threads` and
/// every `{cpus}` the arm's CPU list, inside any argument (`-j{threads}`).
pub fn substitute(argv: &[OsString], threads: usize, cpus: &CpuSet) -> Vec<OsString> {
    let threads = threads.to_string();
    let cpus = cpus.to_string();
    argv.iter()
        .map(|arg| {
            let replaced = replace(arg.as_bytes(), THREADS_PLACEHOLDER, &threads);
            OsString::from_vec(replace(&replaced, CPUS_PLACEHOLDER, &cpus))
        })
        .collect()
}

/// `text` with every `from` replaced by `to`, on bytes (an argument need
/// not be UTF-8).
fn replace(text: &[u8], from: &str, to: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if rest.starts_with(from.as_bytes()) {
            out.extend_from_slice(to.as_bytes());
            rest = &rest[from.len()..];
        } else {
            out.push(rest[0]);
            rest = &rest[1..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixture;

    fn arms(names: &str) -> Vec<CommandArm> {
        names.split(',').map(|n| n.parse().unwrap()).collect()
    }

    fn cpus(plan: &CommandPlan) -> Vec<String> {
        plan.placements.iter().map(|p| p.cpus.to_string()).collect()
    }

    #[test]
    fn smt_laptop_packs_siblings_and_spreads_one_per_core() {
        let laptop = fixture("laptop-i5-11300H");
        assert_eq!(default_threads(&laptop), 4);
        let plan = command_plan(
            &laptop,
            None,
            &arms("one-per-core,sibling-packed,same-cpu,unpinned"),
        )
        .unwrap();
        assert_eq!(plan.threads, 4);
        assert_eq!(cpus(&plan), ["0-3", "0-1,4-5", "0", "0-7"]);
    }

    #[test]
    fn odd_threads_with_sibling_packed_name_the_even_number() {
        let laptop = fixture("laptop-i5-11300H");
        let error = command_plan(&laptop, Some(3), &DEFAULT_COMMAND_ARMS)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("--threads 3") && error.contains("use 4"),
            "{error}"
        );
    }

    #[test]
    fn hybrid_classes_get_their_own_cpus_and_the_study_arms_stay_on_p_cores() {
        let alder = fixture("alderlake-i5-12600K");
        assert_eq!(default_threads(&alder), 6);
        let plan = command_plan(&alder, Some(4), &arms("one-per-core,class:0,class:1")).unwrap();
        assert_eq!(plan.class, CoreKind::Performance);
        let p_cores: Vec<u32> = alder.classes[0].cpus.iter().collect();
        let e_cores: Vec<u32> = alder.classes[1].cpus.iter().collect();
        let class_0: Vec<u32> = plan.placements[1].cpus.iter().collect();
        let class_1: Vec<u32> = plan.placements[2].cpus.iter().collect();
        assert_eq!(class_0.len(), 4);
        assert!(class_0.iter().all(|c| p_cores.contains(c)), "{class_0:?}");
        assert_eq!(class_1.len(), 4);
        assert!(class_1.iter().all(|c| e_cores.contains(c)), "{class_1:?}");
        // One thread of each P-core before any core's second thread.
        let cores: Vec<usize> = class_0
            .iter()
            .map(|&cpu| alder.cpus.iter().find(|c| c.cpu == cpu).unwrap().core)
            .collect();
        let mut distinct = cores.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "{cores:?}");
    }

    #[test]
    fn a_class_too_small_or_missing_is_an_error_naming_it() {
        let alder = fixture("alderlake-i5-12600K");
        let error = command_plan(&alder, Some(5), &arms("class:1"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("class:1") && error.contains("4 allowed CPUs"),
            "{error}"
        );
        let error = command_plan(&alder, Some(2), &arms("class:7"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("2 core classes"), "{error}");
    }

    #[test]
    fn without_smt_one_per_core_takes_every_core_and_packing_is_refused() {
        let guest = fixture("kvm-guest-2cpu");
        let (defaults, note) = default_command_arms(&guest);
        assert_eq!(defaults, arms("one-per-core,same-cpu"));
        assert!(note.unwrap().contains("sibling-packed left out"));
        assert_eq!(
            default_command_arms(&fixture("laptop-i5-11300H")),
            (DEFAULT_COMMAND_ARMS.to_vec(), None)
        );
        assert_eq!(default_threads(&guest), 2);
        let plan = command_plan(&guest, None, &arms("one-per-core,same-cpu")).unwrap();
        assert_eq!(cpus(&plan), ["0-1", "0"]);
        let error = command_plan(&guest, Some(2), &DEFAULT_COMMAND_ARMS)
            .unwrap_err()
            .to_string();
        assert!(error.contains("sibling-packed"), "{error}");
    }

    #[test]
    fn arm_names_round_trip_and_unknown_ones_list_the_choices() {
        for name in [
            "one-per-core",
            "sibling-packed",
            "unpinned",
            "same-cpu",
            "class:2",
        ] {
            let arm: CommandArm = name.parse().unwrap();
            assert_eq!(arm.to_string(), name);
            let json = serde_json::to_string(&arm).unwrap();
            assert_eq!(serde_json::from_str::<CommandArm>(&json).unwrap(), arm);
        }
        let error = "siblings".parse::<CommandArm>().unwrap_err();
        assert!(error.contains("class:N"), "{error}");
        let error = "class:x".parse::<CommandArm>().unwrap_err();
        assert!(error.contains("class:N"), "{error}");
    }

    #[test]
    fn placeholders_are_replaced_inside_arguments() {
        let argv: Vec<OsString> = ["xz", "-T{threads}", "--cpus={cpus}", "{threads}{threads}"]
            .iter()
            .map(Into::into)
            .collect();
        let cpus = CpuSet::from_cpus([0, 1, 2, 8]);
        let out = substitute(&argv, 4, &cpus);
        assert_eq!(out, ["xz", "-T4", "--cpus=0-2,8", "44"]);
    }

    #[test]
    fn threads_with_same_cpu_alone_is_refused() {
        let argv: Vec<OsString> = ["make", "-j{threads}"].iter().map(Into::into).collect();
        let error = check_placeholders(&argv, &arms("same-cpu")).unwrap_err();
        assert!(error.contains("same-cpu alone"), "{error}");
        assert!(check_placeholders(&argv, &arms("one-per-core,same-cpu")).is_ok());
    }
}
