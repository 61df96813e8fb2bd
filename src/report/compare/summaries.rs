//! Each kind of saved document in one row: what its head says about its
//! host, and what it found.

use super::Summary;
use super::*;
use crate::judge::latency::LatencyClass;
use crate::judge::memory::LevelStatus;
use crate::saved::LatencyResult;
use crate::saved::MemoryResult;
use crate::units::bytes;

impl HostSummary {
    /// What `head` says about its host, with what its kind found.
    fn of_head(
        file: String,
        head: &DocumentHead,
        finding: Finding,
        counted: Counted,
    ) -> HostSummary {
        HostSummary {
            file,
            kind: head.kind,
            host: head.known_host().map(str::to_string),
            model: head.model.clone(),
            cores: head
                .topology
                .as_ref()
                .filter(|t| t.structure_unknown.is_none())
                .map(|t| t.cores),
            cpus: head.topology.as_ref().map(|t| t.cpus),
            // The CPUID signature: the summary's, or (a gate file from
            // before the gate saved its topology) the evidence's.
            hypervisor: match &head.topology {
                Some(topology) => topology.hypervisor.clone(),
                None => head.evidence.cpuid_hypervisor_signature.clone(),
            },
            complete: head.complete,
            finding,
            counted,
        }
    }
}

/// The names of the checks that failed.
fn failed<'a>(checks: impl IntoIterator<Item = &'a Check>) -> Vec<CheckName> {
    checks
        .into_iter()
        .filter(|c| c.status == CheckStatus::Failed)
        .map(|c| c.name)
        .collect()
}

/// A saved gate in one row.
impl Summary for GateResult {
    fn summary(&self, file: String) -> HostSummary {
        let gate = self;
        let finding = Finding::Gate {
            verdict: gate.verdict,
            penalty: GatePenalty::of(gate),
            failed_checks: failed(&gate.control),
        };
        HostSummary::of_head(file, &gate.head, finding, Counted::gate(Some(gate.verdict)))
    }
}

/// A saved `pairs` search in one row.
impl Summary for PairsResult {
    fn summary(&self, file: String) -> HostSummary {
        let pairs = self;
        let finding = Finding::Pairs {
            failed_checks: failed(pairs.control.iter().chain([&pairs.pinning])),
            map: SiblingMaps {
                what: "sibling maps",
                verdict: pairs.verdict,
                published: map_text(&pairs.map.published),
                measured: map_text(&pairs.map.measured),
            },
        };
        {
            HostSummary::of_head(
                file,
                &pairs.head,
                finding,
                Counted {
                    study: DocumentKind::Pairs,
                    label: "pairs map",
                    verdict: Some(pairs.verdict.as_str().into()),
                },
            )
        }
    }
}

/// A saved `latency` study in one row: its thread-sibling level, the map
/// `pairs` measures too.
impl Summary for LatencyResult {
    fn summary(&self, file: String) -> HostSummary {
        let latency = self;
        let smt = latency
            .judgement
            .levels
            .iter()
            .find(|l| l.level == LatencyClass::SmtSiblings);
        let finding = Finding::Pairs {
            failed_checks: failed(latency.control_check.iter().chain([&latency.pinning])),
            map: SiblingMaps {
                what: "sibling maps",
                verdict: latency.verdict,
                published: smt.map_or_else(String::new, |l| map_text(&l.map.published)),
                measured: smt.map_or_else(String::new, |l| map_text(&l.map.measured)),
            },
        };
        HostSummary::of_head(
            file,
            &latency.head,
            finding,
            Counted {
                study: DocumentKind::Latency,
                label: "latency map",
                verdict: Some(latency.verdict.as_str().into()),
            },
        )
    }
}

/// A saved `hybrid` study in one row.
impl Summary for HybridResult {
    fn summary(&self, file: String) -> HostSummary {
        let hybrid = self;
        let finding = Finding::Hybrid {
            failed_checks: failed(&hybrid.judged.checks),
            valid: hybrid.judged.valid,
            hybrid: HybridSummary {
                classes: hybrid.judged.class_judgement.verdict,
                speeds: hybrid
                    .judged
                    .speed_classes
                    .iter()
                    .filter_map(|c| {
                        Some(format!("{} {:.2}", c.label, Fixed(c.speed.as_ref()?.value)))
                    })
                    .collect(),
                ceiling: hybrid.judged.ceiling,
                static_pinned_of_ceiling: of_ceiling(hybrid, Arm::StaticPinned),
                stealing_pinned_of_ceiling: of_ceiling(hybrid, Arm::StealingPinned),
            },
        };
        {
            HostSummary::of_head(
                file,
                &hybrid.head,
                finding,
                Counted {
                    study: DocumentKind::Hybrid,
                    label: "hybrid classes",
                    verdict: Some(hybrid.judged.class_judgement.verdict.as_str().into()),
                },
            )
        }
    }
}

/// A saved sweep in one row.
impl Summary for SweepResult {
    fn summary(&self, file: String) -> HostSummary {
        let sweep = self;
        let judged = &sweep.judged;
        let finding = Finding::Sweep {
            sweep: SweepSummary {
                order: sweep.plan.order_name.clone(),
                speedups: judged
                    .steps
                    .iter()
                    .filter_map(|s| Some((s.workers, s.speedup.as_ref()?.value)))
                    .collect(),
                efficiency: judged.steps.last().and_then(|s| s.efficiency),
                knees: judged
                    .knees
                    .iter()
                    .map(|k| {
                        let added: Vec<String> = k.added.iter().map(|a| a.describe()).collect();
                        let unclear = if k.clear { "" } else { " (unclear)" };
                        (k.workers, format!("{}{unclear}", added.join("; ")))
                    })
                    .collect(),
            },
            failed_checks: failed(&judged.checks),
            gated: sweep.gated,
            valid: judged.valid,
        };
        HostSummary::of_head(
            file,
            &sweep.head,
            finding,
            Counted::gate(sweep.gate.as_ref().map(|g| g.verdict)),
        )
    }
}

impl Counted {
    /// A gate's verdict, or a run's gate's ("not-run" when it skipped it).
    pub fn gate(verdict: Option<Verdict>) -> Counted {
        Counted {
            study: DocumentKind::Gate,
            label: "gate",
            verdict: Some(Verdict::word_of(verdict).to_string()),
        }
    }
}

/// A scheme's speedup as a fraction of the ceiling, where measured.
fn of_ceiling(hybrid: &HybridResult, arm: Arm) -> Option<f64> {
    hybrid
        .judged
        .schemes
        .iter()
        .find(|s| s.arm == arm)
        .and_then(|s| s.of_ceiling)
}

/// A saved run in one row.
impl Summary for RunResult {
    fn summary(&self, file: String) -> HostSummary {
        let run = self;
        let arms: Vec<ArmCost> = run
            .arms
            .iter()
            .filter_map(|a| {
                Some(ArmCost {
                    arm: a.name,
                    clock: a.clock,
                    cost: a.cost.clone()?,
                    quotable: a.quotable,
                })
            })
            .collect();
        let median = |arm: Arm| arms.iter().find(|a| a.arm == arm).map(|a| a.cost.median);
        let finding = Finding::Run(Box::new(RunFinding {
            gate: run.gate.as_ref().map(|g| (g.verdict, GatePenalty::of(g))),
            change_vs_one_per_core: median(Arm::OnePerCore)
                .zip(median(Arm::SiblingPacked))
                .map(|(base, packed)| packed / base - 1.0),
            arms,
            failed_checks: failed(&run.checks),
            gated: run.gated,
            valid: run.valid,
            command: None,
        }));
        {
            HostSummary::of_head(
                file,
                &run.head,
                finding,
                Counted::gate(run.gate.as_ref().map(|g| g.verdict)),
            )
        }
    }
}

/// A saved command study in one row, as a run: its gate, its checks and
/// validity, and sibling-packed against one-per-core where both ran. Its
/// arms' costs are wall seconds of the command, not a kernel's cost per
/// byte on a clock, so they stay out of the kernel's arm columns.
impl Summary for CommandResult {
    fn summary(&self, file: String) -> HostSummary {
        let study = self;
        let median = |arm: Arm| {
            study
                .arms
                .iter()
                .find(|a| a.arm == CommandArm::Placement(arm))
                .and_then(|a| a.wall_s.as_ref().map(|s| s.median))
        };
        let finding = Finding::Run(Box::new(RunFinding {
            gate: study.gate.as_ref().map(|g| (g.verdict, GatePenalty::of(g))),
            change_vs_one_per_core: median(Arm::OnePerCore)
                .zip(median(Arm::SiblingPacked))
                .map(|(base, packed)| packed / base - 1.0),
            arms: Vec::new(),
            failed_checks: failed(&study.checks),
            gated: study.gated,
            valid: study.valid,
            command: Some(command_line(study)),
        }));
        HostSummary::of_head(
            file,
            &study.head,
            finding,
            Counted::gate(study.gate.as_ref().map(|g| g.verdict)),
        )
    }
}

/// The most of a command a row shows.
const COMMAND_CHARS: usize = 40;

/// "`xz -T{threads} -c …`: same-cpu +110.3 %": a command study's command,
/// cut short, and each arm's wall time against the baseline's.
fn command_line(study: &CommandResult) -> String {
    let text = study.options.command_text();
    let mut shown: String = text.chars().take(COMMAND_CHARS).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    let ratios: Vec<String> = study
        .arms
        .iter()
        .filter_map(|a| Some(format!("{} {}", a.arm, percent_change(a.vs_baseline?))))
        .collect();
    if ratios.is_empty() {
        return format!("`{shown}`");
    }
    format!(
        "`{shown}`: {} vs {}",
        ratios.join(", "),
        study.options.baseline
    )
}

/// A saved topology in one row: the machine's shape.
impl Summary for TopologyResult {
    fn summary(&self, file: String) -> HostSummary {
        let topology = self;
        let shape = MachineShape::of(&topology.summary);
        let counted = Counted {
            study: DocumentKind::Topology,
            label: "topology",
            verdict: Some(shape.to_string()),
        };
        HostSummary::of_head(
            file,
            &topology.head,
            Finding::Topology { machine: shape },
            counted,
        )
    }
}

/// A saved observation in one row.
impl Summary for ObserveResult {
    fn summary(&self, file: String) -> HostSummary {
        let observe = self;
        let judged = &observe.judged;
        let finding = Finding::Observe {
            valid: judged.valid,
            observe: ObserveSummary {
                target: observe.options.target_text(),
                classes: judged
                    .classes
                    .iter()
                    .map(|c| format!("{} {:.1} %", c.class, Fixed(c.share * 100.0)))
                    .collect(),
                threads: judged.threads.len(),
                migrations: judged.migrations.len(),
                wall_ms: judged.wall_ms,
                reconciliation_difference: judged.reconciliation.difference,
                reconciled: judged.reconciliation.holds,
            },
        };
        {
            HostSummary::of_head(
                file,
                &observe.head,
                finding,
                Counted {
                    study: DocumentKind::Observe,
                    label: "observe",
                    verdict: Some(
                        if judged.reconciliation.holds {
                            "reconciled"
                        } else {
                            "not-reconciled"
                        }
                        .into(),
                    ),
                },
            )
        }
    }
}

/// A memory study reads as a map: the published cache levels against the
/// levels the ladder's steps bore out.
impl Summary for MemoryResult {
    fn summary(&self, file: String) -> HostSummary {
        let levels = &self.ladder_judgement.levels;
        let named = |keep: &dyn Fn(LevelStatus) -> bool| {
            levels
                .iter()
                .filter(|l| keep(l.status))
                .map(|l| format!("L{} {}", l.level, bytes(l.size_bytes)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let finding = Finding::Pairs {
            failed_checks: Vec::new(),
            map: SiblingMaps {
                what: "cache levels",
                verdict: self.verdict,
                published: named(&|_| true),
                measured: named(&|status| status == LevelStatus::Agreed),
            },
        };
        HostSummary::of_head(
            file,
            &self.head,
            finding,
            Counted {
                study: DocumentKind::Memory,
                label: "memory map",
                verdict: Some(self.verdict.as_str().into()),
            },
        )
    }
}
