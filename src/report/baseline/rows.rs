//! What a document offers to a baseline comparison, one impl per kind of
//! document ([`Baselined`]): the rows that can be matched between two
//! documents of its kind, each with its kept repetitions; the verdicts it
//! reached, whose changes are findings of their own; and the facts that
//! say what it measured, whose differences make a comparison meaningless
//! (another workload, another clock) or are shown beside it (another
//! kernel, another tool version, which are often what is being tested).
//!
//! Every row's quantity is a cost, where more is worse: a cost per byte,
//! a wall time, a one-way latency, a cost ratio beside a load.

use crate::cpuset::CpuSet;
use crate::judge::arms::{ArmStats, measured};
use crate::judge::checks::{ExcludedRep, excluded_reps};
use crate::judge::command::wall_by_round;
use crate::judge::cost::rep_cost;
use crate::judge::hybrid::wall_ms;
use crate::measure::{ClockKind, RepSample};
use crate::plan::Arm;
use crate::plan::command::CommandArm;
use crate::plan::membind::Membind;
use crate::report::table::cpus_label;
use crate::saved::MemoryResult;
use crate::saved::{
    CommandResult, GateResult, HybridResult, LatencyResult, PairsResult, RunResult, SweepResult,
};
use crate::units::bytes;

/// One quantity of a document that can be matched with the same row of
/// another document of its kind.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// What the row is, the key it is matched by: "one-per-core", "step 2",
    /// "CPU 3 alone", "domain package".
    pub name: String,
    /// The CPUs it ran on, where it has a set of its own: shown, and a
    /// difference named, but never what rows are matched by.
    pub cpus: Option<String>,
    /// What its values are: "cost per byte (core cycles)", "wall time (ms)".
    pub quantity: String,
    /// The kept repetitions (a domain's pairs, for latency), each positive.
    pub values: Vec<f64>,
}

/// A fact about what a document measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Fact {
    /// "workload", "clock", "units", "threads".
    pub what: &'static str,
    pub value: String,
    /// Two documents that differ in it measured different things: the
    /// comparison is refused unless `--allow-different`.
    pub decisive: bool,
}

impl Fact {
    /// A fact whose difference refuses the comparison.
    fn decisive(what: &'static str, value: impl Into<String>) -> Fact {
        Fact {
            what,
            value: value.into(),
            decisive: true,
        }
    }

    /// A fact whose difference is shown beside the result.
    fn shown(what: &'static str, value: impl Into<String>) -> Fact {
        Fact {
            what,
            value: value.into(),
            decisive: false,
        }
    }
}

/// What a kind of document offers to a baseline comparison (see the
/// module's docs). A supertrait of `report::document::Document`, so every
/// kind has it.
pub trait Baselined {
    /// The rows that can be matched, in the document's order (none by
    /// default: a document that measured nothing to compare).
    fn baseline_rows(&self) -> Vec<Row> {
        Vec::new()
    }

    /// The verdicts it reached, each named: ("gate", "physical"),
    /// ("class P", "measured"). A verdict that changed, appeared or
    /// vanished is a finding.
    fn verdicts(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// What it measured: workload, clock, units, threads.
    fn facts(&self) -> Vec<Fact> {
        Vec::new()
    }
}

/// Where a run's memory was placed: `--membind` as given, or the
/// kernel's default. Shown beside the result, never refusing it: binding
/// elsewhere is often what is being tested.
fn memory_policy(membind: Option<&Membind>) -> Fact {
    Fact::shown(
        "memory policy",
        membind.map_or_else(
            || "the kernel's default (first touch)".to_string(),
            |membind| format!("--membind {membind}"),
        ),
    )
}

/// The name of a clock's cost per byte.
fn cost_quantity(clock: ClockKind) -> String {
    format!("cost per byte ({})", clock.as_str())
}

/// A row per arm of a kernel study (gate, run): its kept costs per byte
/// among `samples`, on `clock`.
fn arm_rows(
    arms: &[ArmStats],
    samples: &[RepSample],
    excluded: &[ExcludedRep],
    clock: ClockKind,
) -> Vec<Row> {
    arms.iter()
        .map(|arm| Row {
            name: arm.name.to_string(),
            cpus: Some(cpus_label(&arm.cpus)),
            quantity: cost_quantity(clock),
            values: measured(samples, arm.name, excluded)
                .into_iter()
                .filter_map(|rep| rep_cost(rep, clock))
                .collect(),
        })
        .collect()
}

/// A study's validity as a verdict.
fn validity(valid: bool) -> (String, String) {
    let word = if valid { "valid" } else { "invalid" };
    ("validity".into(), word.into())
}

/// The kernel and clock a kernel study measured with.
fn kernel_facts(kernel: &str, clock: ClockKind) -> Vec<Fact> {
    vec![
        Fact::decisive("workload", format!("the {kernel} kernel")),
        Fact::decisive("clock", clock.as_str()),
    ]
}

impl Baselined for GateResult {
    fn baseline_rows(&self) -> Vec<Row> {
        let Some(clock) = self.setup.as_ref().map(|s| s.clock).or(self.clock) else {
            return Vec::new();
        };
        arm_rows(&self.arms, &self.samples, &self.excluded, clock)
    }

    fn verdicts(&self) -> Vec<(String, String)> {
        vec![("gate".into(), self.verdict.as_str().into())]
    }

    fn facts(&self) -> Vec<Fact> {
        match &self.setup {
            Some(setup) => kernel_facts(&setup.kernel, setup.clock),
            None => Vec::new(),
        }
    }
}

impl Baselined for RunResult {
    fn baseline_rows(&self) -> Vec<Row> {
        let clock = self.setup.clock;
        arm_rows(&self.arms, &self.samples, &self.excluded, clock)
    }

    fn verdicts(&self) -> Vec<(String, String)> {
        let mut verdicts = vec![validity(self.valid)];
        verdicts.extend(self.gate.iter().flat_map(Baselined::verdicts));
        verdicts
    }

    fn facts(&self) -> Vec<Fact> {
        let mut facts = kernel_facts(&self.setup.kernel, self.setup.clock);
        facts.push(Fact::decisive("workers", self.options.workers.to_string()));
        facts.push(memory_policy(self.options.membind.as_ref()));
        facts
    }
}

impl Baselined for CommandResult {
    fn baseline_rows(&self) -> Vec<Row> {
        let cpus = |arm: CommandArm| {
            self.plan
                .placements
                .iter()
                .find(|p| p.arm == arm)
                .map(|p| p.cpus.to_string())
        };
        self.arms
            .iter()
            .map(|arm| Row {
                name: arm.arm.to_string(),
                cpus: cpus(arm.arm),
                quantity: "wall time (s)".into(),
                values: wall_by_round(&self.reps, arm.arm)
                    .into_iter()
                    .map(|(_, wall)| wall)
                    .collect(),
            })
            .collect()
    }

    fn verdicts(&self) -> Vec<(String, String)> {
        let mut verdicts = vec![validity(self.valid)];
        verdicts.extend(self.gate.iter().flat_map(Baselined::verdicts));
        verdicts
    }

    fn facts(&self) -> Vec<Fact> {
        let units = self.options.units.as_ref().map_or_else(
            || "none".to_string(),
            |units| format!("{} {}", units.count, units.name),
        );
        vec![
            Fact::decisive("workload", format!("`{}`", self.options.command_text())),
            Fact::decisive("units", units),
            Fact::decisive("threads", self.plan.threads.to_string()),
            Fact::decisive("clock", "wall time"),
            memory_policy(self.options.membind.as_ref()),
        ]
    }
}

impl Baselined for SweepResult {
    fn baseline_rows(&self) -> Vec<Row> {
        let first = self.plan.order.first().map(|c| c.cpu);
        let steps = self.judged.steps.iter().map(|step| {
            let k = step.workers;
            let values: Vec<f64> = match &self.command {
                Some(command) => wall_by_round(&command.reps, CommandArm::Step(k))
                    .into_iter()
                    .map(|(_, wall)| wall * 1e3)
                    .collect(),
                None => {
                    let arm = if k == 1 {
                        Arm::Baseline
                    } else {
                        Arm::StealingPinned
                    };
                    // Kept as the judgement keeps them: each sample unless it
                    // broke a rule itself (several share an arm and a round).
                    self.samples
                        .iter()
                        .filter(|rep| rep.arm == arm && !rep.warmup)
                        .filter(|rep| excluded_reps(std::slice::from_ref(*rep)).is_empty())
                        .filter(|rep| match k {
                            1 => rep.workers.first().and_then(|w| w.pinned_cpu) == first,
                            k => rep.workers.len() == k,
                        })
                        .map(wall_ms)
                        .collect()
                }
            };
            Row {
                name: format!("step {k}"),
                cpus: Some(CpuSet::from_iter(step.cpus.iter().copied()).to_string()),
                quantity: "wall time (ms)".into(),
                values,
            }
        });
        steps.collect()
    }

    fn verdicts(&self) -> Vec<(String, String)> {
        let mut verdicts = vec![validity(self.judged.valid)];
        let knees: Vec<String> = self
            .judged
            .knees
            .iter()
            .filter(|knee| knee.clear)
            .map(|knee| format!("step {}", knee.workers))
            .collect();
        let knees = if knees.is_empty() {
            "none".to_string()
        } else {
            knees.join(", ")
        };
        verdicts.push(("knees".into(), knees));
        verdicts.extend(self.gate.iter().flat_map(Baselined::verdicts));
        verdicts
    }

    fn facts(&self) -> Vec<Fact> {
        let mut facts = vec![
            Fact::decisive(
                "workload",
                match &self.command {
                    Some(_) => format!("`{}`", self.workload()),
                    None => format!("the {} kernel", self.workload()),
                },
            ),
            Fact::decisive("clock", "wall time"),
            Fact::shown("order", self.plan.order_name.clone()),
        ];
        if let Some(work) = &self.work {
            facts.push(Fact::decisive("work", format!("{} items", work.items)));
        }
        facts
    }
}

impl Baselined for HybridResult {
    fn baseline_rows(&self) -> Vec<Row> {
        let judged = &self.judged;
        let baselines = judged.baselines.iter().map(|baseline| Row {
            name: format!("CPU {} alone", baseline.cpu),
            cpus: Some(baseline.cpu.to_string()),
            quantity: "wall time (ms)".into(),
            values: measured(&self.samples, Arm::Baseline, &baseline.excluded)
                .into_iter()
                .filter(|rep| rep.workers.first().and_then(|w| w.pinned_cpu) == Some(baseline.cpu))
                .map(wall_ms)
                .collect(),
        });
        let schemes = judged.schemes.iter().map(|scheme| Row {
            name: scheme.arm.to_string(),
            cpus: None,
            quantity: "wall time (ms)".into(),
            values: measured(&self.samples, scheme.arm, &judged.excluded)
                .into_iter()
                .map(wall_ms)
                .collect(),
        });
        baselines.chain(schemes).collect()
    }

    fn verdicts(&self) -> Vec<(String, String)> {
        let judged = &self.judged;
        let mut verdicts = vec![
            validity(judged.valid),
            (
                "classes".into(),
                judged.class_judgement.verdict.as_str().into(),
            ),
        ];
        verdicts.extend(judged.speed_classes.iter().map(|class| {
            (
                format!("class {}", class.label),
                format!("CPUs {}", class.measured_cpus),
            )
        }));
        verdicts
    }

    fn facts(&self) -> Vec<Fact> {
        let mut facts = kernel_facts(&self.setup.kernel, self.setup.clock);
        facts.push(Fact::decisive("work", format!("{} items", self.work.items)));
        facts.push(Fact::decisive("workers", self.options.workers.to_string()));
        facts
    }
}

impl Baselined for LatencyResult {
    fn baseline_rows(&self) -> Vec<Row> {
        self.judgement
            .clusters
            .iter()
            .map(|cluster| Row {
                name: format!("domain {}", cluster.class.as_str()),
                cpus: Some(
                    cluster
                        .domains
                        .iter()
                        .map(|domain| format!("{{{domain}}}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                quantity: "one-way latency per pair (ns)".into(),
                values: cluster
                    .pairs
                    .iter()
                    .filter_map(|cpus| {
                        self.pairs
                            .iter()
                            .find(|pair| pair.cpus == *cpus && pair.inferred_from.is_none())
                            .and_then(|pair| pair.one_way_ns)
                    })
                    .collect(),
            })
            .collect()
    }

    fn verdicts(&self) -> Vec<(String, String)> {
        let mut verdicts = vec![("latency".into(), self.verdict.as_str().into())];
        verdicts.extend(self.judgement.levels.iter().map(|level| {
            (
                format!("level {}", level.level.as_str()),
                level.verdict.as_str().into(),
            )
        }));
        verdicts
    }

    fn facts(&self) -> Vec<Fact> {
        vec![
            Fact::decisive(
                "workload",
                format!(
                    "cache-line ping-pong, {} round trips a sample",
                    self.options.round_trips_per_sample
                ),
            ),
            Fact::decisive("clock", "wall time"),
            Fact::shown("CPUs measured", self.tested.to_string()),
        ]
    }
}

impl Baselined for PairsResult {
    fn baseline_rows(&self) -> Vec<Row> {
        self.comparisons
            .iter()
            .map(|record| Row {
                name: format!(
                    "CPU {} beside {{{}}}",
                    record.comparison.probe, record.comparison.against
                ),
                cpus: None,
                quantity: "cost beside the set / alone".into(),
                values: record
                    .loaded_costs
                    .iter()
                    .zip(&record.alone_costs)
                    .filter(|(_, alone)| **alone > 0.0)
                    .map(|(loaded, alone)| loaded / alone)
                    .collect(),
            })
            .collect()
    }

    fn verdicts(&self) -> Vec<(String, String)> {
        vec![
            ("sibling map".into(), self.verdict.as_str().into()),
            (
                "measured map".into(),
                crate::judge::pairs::map_text(&self.map.measured),
            ),
        ]
    }

    fn facts(&self) -> Vec<Fact> {
        let mut facts = kernel_facts(&self.options.kernel, self.clock);
        facts.push(Fact::shown("CPUs measured", self.tested.to_string()));
        facts
    }
}

/// A memory study's rows: each ladder size's and each NUMA cell's ns per
/// load, sample by sample; its verdicts: the caches' and the distances'.
impl Baselined for MemoryResult {
    fn baseline_rows(&self) -> Vec<Row> {
        let quantity = || "ns per load".to_string();
        let ladder = self.ladder.points.iter().map(|point| Row {
            name: format!("ladder {}", bytes(point.size_bytes)),
            cpus: Some(self.ladder.cpu.to_string()),
            quantity: quantity(),
            values: point.ns_per_load.clone(),
        });
        let cells = self.matrix.cells.iter().map(|cell| Row {
            name: format!("node {} to node {}", cell.cpu_node, cell.memory_node),
            cpus: Some(cell.threads.to_string()),
            quantity: quantity(),
            values: cell.ns_per_load.clone(),
        });
        ladder.chain(cells).collect()
    }

    fn verdicts(&self) -> Vec<(String, String)> {
        vec![
            ("caches".into(), self.caches_verdict().as_str().into()),
            (
                "NUMA distances".into(),
                self.numa_judgement.verdict.as_str().into(),
            ),
        ]
    }

    fn facts(&self) -> Vec<Fact> {
        vec![Fact::decisive("clock", self.ladder.clock.clone())]
    }
}
