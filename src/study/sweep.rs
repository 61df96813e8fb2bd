//! `run --sweep`: thread-count scaling in topology order.
//!
//! Every round measures, back to back: each CPU of the largest step alone
//! (a pinned single-worker baseline of all the work, `hybrid`'s; the first
//! CPU's is step 1), then steps 2 and up, the same work shared by work
//! stealing among one pinned worker per CPU. Rounds interleave every step,
//! so drift hits every step alike and each ratio pairs by round.

use super::command::{RoundsOptions, run_rounds};
use super::run::{RunOutcome, gate_first};
use super::{LazyMeasure, Progress, Recorded, finished_head, head};
use crate::cpuset::CpuSet;
use crate::judge::command::{ArmResidency, arm_residency};
use crate::judge::gate::GateRule;
use crate::judge::sweep::judge_command_sweep;
use crate::judge::sweep::{SweepJudgement, SweepRules, judge_sweep};
use crate::judge::warnings::Warning;
use crate::measure::command::{CommandSample, Output};
use crate::measure::prepare::run_prepare;
use crate::measure::stop::StopSignal;
use crate::measure::tree::Ownership;
use crate::measure::{Measure, MeasureOptions, MeasurementSetup, RepSample};
use crate::plan::Placement;
use crate::plan::command::{CommandArm, CommandPlacement, substitute};
use crate::plan::hybrid::{Scheme, SharedWork, item_length};
use crate::plan::sweep::{SweepOrder, SweepPlan, items_per_worker, sweep_plan};
use crate::probe::Topology;
use crate::saved::{
    CommandSweep, DocumentHead, DocumentKind, GateResult, HybridWork, SweepOptions, SweepResult,
};
use crate::units::count;
use anyhow::Result;
use std::ffi::OsString;
use std::ops::ControlFlow;
use std::time::Instant;

/// What `run --sweep` was asked for, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepStudyOptions {
    pub rule: GateRule,
    pub skip_gate: bool,
    pub order: SweepOrder,
    /// The worker counts to measure; `None`: every count.
    pub steps: Option<Vec<usize>>,
    /// Measure every CPU of the largest step alone, for each step's
    /// ceiling; false with `--no-ceiling` (the first CPU alone only).
    pub per_cpu_baselines: bool,
    pub reps: usize,
    pub cv_bar: f64,
    pub tolerance: f64,
    pub strict: bool,
    /// `rep_length` is how long one worker's equal share of the largest
    /// step takes; the engine runs items ([`SweepStudyOptions::engine`]).
    pub measure: MeasureOptions,
    /// `run --sweep -- COMMAND`: the command swept instead of the kernel.
    pub command: Option<CommandSweepOptions>,
}

/// What `run --sweep -- COMMAND` runs, beside the sweep's options.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandSweepOptions {
    /// The command and its arguments, placeholders unreplaced.
    pub argv: Vec<OsString>,
    /// `--prepare`: run through `sh -c` before each repetition.
    pub prepare: Option<String>,
    /// `--leave-running`, `--prepare-timeout`.
    pub ownership: Ownership,
    pub output: Output,
    pub warmups: usize,
    pub ignore_failure: bool,
    /// `--max-seconds`: no round starts once this much has passed.
    pub max: Option<std::time::Duration>,
}

impl SweepStudyOptions {
    /// What both sweeps' judgements are asked for.
    fn rules(&self) -> SweepRules {
        SweepRules {
            cv_bar: self.cv_bar,
            tolerance: self.tolerance,
            strict: self.strict,
        }
    }

    /// Items in one worker's share of the largest step
    /// ([`items_per_worker`]).
    fn items_per_worker(&self) -> u64 {
        items_per_worker(self.measure.rep_length)
    }

    /// The engine's options: its passes calibrated to one item.
    pub fn engine(&self) -> MeasureOptions {
        MeasureOptions {
            rep_length: item_length(self.measure.rep_length, self.items_per_worker()),
            ..self.measure.clone()
        }
    }
}

/// What one round costs, in units of one worker's share of the largest
/// step (`rep_length`): every baseline does all of the work alone (the
/// largest step's count of shares), step k its work in 1/k of that, once
/// pinned and once unpinned.
pub fn round_cost(plan: &SweepPlan) -> f64 {
    let largest = plan.steps.last().copied().unwrap_or(1) as f64;
    let baselines = plan.baseline_cpus().len() as f64 * largest;
    let steps: f64 = plan
        .steps
        .iter()
        .filter(|&&k| k > 1)
        .map(|&k| 2.0 * largest / k as f64)
        .sum();
    baselines + steps
}

/// The planned steps and the gate's result (`None` with `--skip-gate`)
/// a sweep goes on with.
type PlannedAndGated = (SweepPlan, Option<GateResult>);

/// Both sweeps' start: the steps planned from `--order` and `--steps` (a
/// usage error where they cannot be), then the gate unless skipped;
/// `Break` with the gate's result where it stops the study.
fn planned_and_gated<M: Measure>(
    topology: &Topology,
    options: &SweepStudyOptions,
    gate_measure: &mut LazyMeasure<'_, M>,
    progress: &mut dyn Progress,
) -> Result<ControlFlow<Box<GateResult>, PlannedAndGated>> {
    let plan = sweep_plan(
        topology,
        &options.order,
        options.steps.as_deref(),
        options.per_cpu_baselines,
    )
    .map_err(|e| crate::exit::UsageError(format!("{e:#}")))?;
    let gated = gate_first(
        topology,
        &options.rule,
        options.skip_gate,
        gate_measure,
        progress,
    )?;
    Ok(gated.map_continue(|gate| (plan, gate)))
}

/// Runs the sweep on the CPUs of `topology` this process may use: the
/// gate first (unless skipped) on `gate_measure`, started from the
/// options' own repetition length, then the sweep on `measure`, started
/// from [`SweepStudyOptions::engine`].
pub fn sweep_study<M: Measure>(
    topology: &Topology,
    options: &SweepStudyOptions,
    gate_measure: &mut LazyMeasure<'_, M>,
    measure: &mut LazyMeasure<'_, M>,
    progress: &mut dyn Progress,
) -> Result<RunOutcome<SweepResult>> {
    let (plan, gate) = match planned_and_gated(topology, options, gate_measure, progress)? {
        ControlFlow::Continue(planned) => planned,
        ControlFlow::Break(gate) => return Ok(RunOutcome::StoppedAtGate(gate)),
    };
    let head = head(DocumentKind::Sweep, topology);
    let measure = measure.get()?;
    let setup = measure.setup().clone();
    let largest = plan.steps.last().copied().unwrap_or(1);
    let items = options.items_per_worker() * largest as u64;
    let parts = round_parts(&plan, items);
    let round_s = round_cost(&plan) * options.measure.rep_length.as_secs_f64();
    let total = setup.warmups + options.reps;

    let mut recorded = Recorded::default();
    let began = Instant::now();
    for index in 0..total {
        let warmup = index < setup.warmups;
        let eta = match index {
            0 => format!(
                ", about {:.0} s in all ({} of {} and {}, {:.1} s each)",
                round_s * total as f64,
                count(total, "round"),
                count(plan.baseline_cpus().len(), "baseline"),
                count(plan.steps.len() - 1, "step"),
                round_s
            ),
            done => super::time_left(began, done, total),
        };
        progress.update(&if warmup {
            format!("sweep: warm-up round {}/{}{eta}", index + 1, setup.warmups)
        } else {
            format!(
                "sweep: round {}/{}{eta}",
                index + 1 - setup.warmups,
                options.reps
            )
        });
        if !recorded.measure_shared_round(measure, &parts, index, warmup)? {
            break;
        }
    }
    progress.done();

    let judged = judge_sweep(&recorded.samples, &plan, &setup, &options.rules());
    let mut warnings = Warning::about_machine(topology);
    warnings.extend(Warning::about_setup(&setup));
    let finished = Finished {
        head,
        stopped: recorded.stopped,
        warnings,
        gate,
        plan,
        judged,
    };
    Ok(finished.into_document(SweepParts {
        options: SweepOptions {
            reps: options.reps,
            warmups: setup.warmups,
            rep_ms: u64::try_from(options.measure.rep_length.as_millis()).unwrap_or(u64::MAX),
            kernel: Some(options.measure.kernel.clone()),
            cv_bar: options.cv_bar,
            tolerance: options.tolerance,
            strict: options.strict,
            skip_gate: options.skip_gate,
        },
        work: Some(HybridWork {
            items,
            passes_per_item: setup.passes,
            item_bytes: setup.bytes_per_worker,
        }),
        setup: Some(setup),
        command: None,
        samples: recorded.samples,
    }))
}

/// What both sweeps have once their rounds are over.
struct Finished {
    head: DocumentHead,
    stopped: Option<StopSignal>,
    warnings: Vec<Warning>,
    gate: Option<GateResult>,
    plan: SweepPlan,
    judged: SweepJudgement,
}

/// What a kernel sweep's document holds and a COMMAND sweep's does not,
/// or the other way round.
struct SweepParts {
    options: SweepOptions,
    work: Option<HybridWork>,
    setup: Option<MeasurementSetup>,
    command: Option<CommandSweep>,
    samples: Vec<RepSample>,
}

impl Finished {
    /// The sweep's document: incomplete where a stop signal ended the
    /// rounds, with its sentence from the judgement.
    fn into_document(self, parts: SweepParts) -> RunOutcome<SweepResult> {
        let mut warnings = self.warnings;
        RunOutcome::Studied(Box::new(SweepResult {
            head: finished_head(self.head, self.stopped, &mut warnings),
            sentence: crate::judge::sentences::sweep::sentence(&self.judged),
            options: parts.options,
            gated: self.gate.is_some(),
            gate: self.gate,
            work: parts.work,
            plan: self.plan,
            judged: self.judged,
            setup: parts.setup,
            command: parts.command,
            warnings,
            samples: parts.samples,
        }))
    }
}

/// Runs `run --sweep -- COMMAND` on the CPUs of `topology` this process
/// may use: the gate first (unless skipped), then warm-ups and rounds of
/// the command study's ([`run_rounds`]), each round running every arm
/// once, in the kernel sweep's order: step 1 (the command with `{threads}`
/// 1 on the first CPU of the order), every other CPU of the largest step
/// alone (`{threads}` 1, for the ceiling; none with `--no-ceiling`), then
/// step k, the command with `{threads}` k confined to the first k CPUs of
/// the order ([`judge_command_sweep`]). `run_once` runs an argv once on a
/// CPU set (the live one is [`crate::measure::command::run_once`]).
pub fn command_sweep_study<M: Measure>(
    topology: &Topology,
    options: &SweepStudyOptions,
    command: &CommandSweepOptions,
    gate_measure: &mut LazyMeasure<'_, M>,
    progress: &mut dyn Progress,
    mut run_once: impl FnMut(&[OsString], &CpuSet) -> Result<CommandSample>,
) -> Result<RunOutcome<SweepResult>> {
    let (plan, gate) = match planned_and_gated(topology, options, gate_measure, progress)? {
        ControlFlow::Continue(planned) => planned,
        ControlFlow::Break(gate) => return Ok(RunOutcome::StoppedAtGate(gate)),
    };
    let head = head(DocumentKind::Sweep, topology);
    let placements = command_placements(&plan);
    let rounds = RoundsOptions {
        warmups: command.warmups,
        rounds: options.reps,
        ignore_failure: command.ignore_failure,
        max: command.max,
    };
    let recorded = run_rounds(&placements, rounds, "sweep", progress, |placement| {
        if let Some(prepare) = &command.prepare {
            run_prepare(prepare, &command.ownership)?;
        }
        let argv = substitute(&command.argv, placement.cpus.len(), &placement.cpus);
        run_once(&argv, &placement.cpus)
    })?;
    let residency: Vec<ArmResidency> = placements
        .iter()
        .map(|placement| arm_residency(&recorded.reps, placement, &topology.cpus, options.cv_bar))
        .collect();
    let judged = judge_command_sweep(&recorded.reps, &plan, &residency, &options.rules());
    let finished = Finished {
        head,
        stopped: recorded.stopped,
        warnings: Warning::about_machine(topology),
        gate,
        plan,
        judged,
    };
    Ok(finished.into_document(SweepParts {
        options: SweepOptions {
            reps: options.reps,
            warmups: command.warmups,
            rep_ms: 0,
            kernel: None,
            cv_bar: options.cv_bar,
            tolerance: options.tolerance,
            strict: options.strict,
            skip_gate: options.skip_gate,
        },
        work: None,
        setup: None,
        command: Some(CommandSweep {
            argv: command
                .argv
                .iter()
                .map(|arg| arg.to_string_lossy().into_owned())
                .collect(),
            prepare: command.prepare.clone(),
            output: command.output.clone(),
            ignore_failure: command.ignore_failure,
            residency,
            reps: recorded.reps,
        }),
        samples: Vec::new(),
    }))
}

/// A COMMAND sweep's arms in the order a round runs them: step 1, every
/// other CPU of [`SweepPlan::baseline_cpus`] alone, then steps 2 and up.
fn command_placements(plan: &SweepPlan) -> Vec<CommandPlacement> {
    let step = |k: usize| CommandPlacement {
        arm: CommandArm::Step(k),
        cpus: CpuSet::from_cpus(plan.step_cpus(k)),
        membind: None,
    };
    let alone = plan
        .baseline_cpus()
        .into_iter()
        .skip(1)
        .map(|cpu| CommandPlacement {
            arm: CommandArm::Alone(cpu),
            cpus: CpuSet::from_cpus([cpu]),
            membind: None,
        });
    let steps = plan.steps.iter().skip(1).map(|&k| step(k));
    std::iter::once(step(1)).chain(alone).chain(steps).collect()
}

/// One round, in order: every CPU's baseline (all `items` on one pinned
/// worker; the first CPU's is step 1), then steps 2 and up sharing the
/// same `items` by work stealing, each pinned and then unpinned.
fn round_parts(plan: &SweepPlan, items: u64) -> Vec<(Placement, SharedWork)> {
    let baselines = plan.baseline_cpus().into_iter().map(|cpu| {
        let work = SharedWork {
            items,
            scheme: Scheme::StaticShares,
        };
        (crate::plan::hybrid::HybridPlan::baseline(cpu), work)
    });
    let work = SharedWork {
        items,
        scheme: Scheme::WorkStealing,
    };
    let steps = plan
        .steps
        .iter()
        .filter(|&&k| k > 1)
        .flat_map(|&k| plan.step_placements(k))
        .map(move |placement| (placement, work));
    baselines.chain(steps).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Arm;
    use crate::plan::sweep::{Added, SweepCpu};
    use crate::probe::CoreKind::Uniform;

    /// Four CPUs, steps 1, 2 and 4: four baselines of all the work (four
    /// shares each), then step 2 in half of it and step 4 in a quarter.
    #[test]
    fn a_round_costs_every_baseline_and_every_step() {
        let cpu = |cpu| SweepCpu {
            cpu,
            added: Added::NewCore {
                class: Uniform,
                node: None,
            },
        };
        let plan = SweepPlan {
            order_name: "cores-first".into(),
            order: (0..4).map(cpu).collect(),
            steps: vec![1, 2, 4],
            per_cpu_baselines: true,
        };
        let first_alone = SweepPlan {
            per_cpu_baselines: false,
            ..plan.clone()
        };
        assert_eq!(round_cost(&first_alone), 4.0 + 2.0 * (2.0 + 1.0));
        assert_eq!(round_cost(&plan), 4.0 * 4.0 + 2.0 * (2.0 + 1.0));
        let parts = round_parts(&plan, 200);
        let arms: Vec<(Arm, usize)> = parts.iter().map(|(p, _)| (p.arm, p.cpus.len())).collect();
        assert_eq!(
            arms,
            [
                (Arm::Baseline, 1),
                (Arm::Baseline, 1),
                (Arm::Baseline, 1),
                (Arm::Baseline, 1),
                (Arm::StealingPinned, 2),
                (Arm::StealingUnpinned, 2),
                (Arm::StealingPinned, 4),
                (Arm::StealingUnpinned, 4),
            ]
        );
        assert!(parts.iter().all(|(_, work)| work.items == 200));
    }

    /// Each round runs step 1 then step 2, `{threads}` and `{cpus}` the
    /// step's, and the judgement reads each step's own repetitions.
    #[test]
    fn a_command_sweep_runs_each_step_with_its_threads_and_cpus() {
        use crate::judge::batches::Batching;
        use crate::study::Quiet;
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sysfs/kvm-guest-2cpu");
        let topology = crate::probe::probe(Some(root.as_path()), None).unwrap();
        let options = SweepStudyOptions {
            rule: GateRule {
                threshold: 0.15,
                min_reps: 6,
                max_reps: 12,
                batching: Batching {
                    batches: 1,
                    max_batches: 1,
                    gap: std::time::Duration::ZERO,
                },
            },
            skip_gate: true,
            order: SweepOrder::CoresFirst,
            steps: None,
            per_cpu_baselines: true,
            reps: 3,
            cv_bar: 0.05,
            tolerance: 1e-4,
            strict: false,
            measure: MeasureOptions {
                kernel: "mul".into(),
                rep_length: std::time::Duration::from_millis(50),
                warmups: 1,
                hardware_counters: false,
            },
            command: None,
        };
        let command = CommandSweepOptions {
            argv: ["xz", "-T{threads}", "--cpus={cpus}"]
                .iter()
                .map(Into::into)
                .collect(),
            prepare: None,
            ownership: Ownership::default(),
            output: Output::Discard,
            warmups: 1,
            ignore_failure: false,
            max: None,
        };
        let mut seen = Vec::new();
        let mut no_engine: LazyMeasure<'_, crate::measure::EngineSession> =
            LazyMeasure::new(|| anyhow::bail!("the command sweep started the engine"));
        let outcome = command_sweep_study(
            &topology,
            &options,
            &command,
            &mut no_engine,
            &mut Quiet,
            |argv, cpus| {
                seen.push(argv.to_vec());
                Ok(CommandSample::of_wall(2_000_000_000 / cpus.len() as u64))
            },
        )
        .unwrap();
        let RunOutcome::Studied(result) = outcome else {
            panic!("no gate was asked for");
        };
        assert_eq!(
            seen.len(),
            3 * (1 + 3),
            "two steps and CPU 1 alone, a warm-up and 3 rounds"
        );
        assert_eq!(seen[0], ["xz", "-T1", "--cpus=0"]);
        assert_eq!(seen[1], ["xz", "-T1", "--cpus=1"], "CPU 1 alone");
        assert_eq!(seen[2], ["xz", "-T2", "--cpus=0-1"]);
        let speedup = result.judged.steps[1].speedup.as_ref().unwrap().value;
        assert!((speedup - 2.0).abs() < 1e-9, "{speedup}");
        let swept = result.command.as_ref().unwrap();
        assert_eq!(swept.argv, ["xz", "-T{threads}", "--cpus={cpus}"]);
        assert_eq!(swept.reps[1].arm, CommandArm::Alone(1));
        assert_eq!(swept.reps[2].arm, CommandArm::Step(2));
        let ceiling = result.judged.steps[1].ceiling.unwrap();
        assert!(
            (ceiling - 2.0).abs() < 1e-9,
            "both CPUs alone alike: {ceiling}"
        );
        assert!(result.work.is_none() && result.setup.is_none());
        assert_eq!(result.workload(), "xz -T{threads} --cpus={cpus}");
    }
}
