//! The command study (`run -- COMMAND`, issue 24; the design is in
//! [`crate::plan::command`]): the gate first (unless `--skip-gate`, as the
//! kernel study), the arms planned as CPU sets, then warm-ups and rounds
//! that run every arm once each, in order, so drift hits every arm alike
//! and each arm's repetition can be paired with the others' of the same
//! round; `--prepare` runs before each repetition. The judge's statistics
//! and checks make the document.
//!
//! A stop signal (SIGINT, SIGTERM) ends the study after the rounds already
//! finished: the round it interrupted is dropped whole, as the kernel
//! study does, so every arm keeps the same rounds. A repetition whose
//! command fails stops the study with its error, unless `ignore_failure`
//! keeps it, marked.

use std::ffi::OsString;
use std::ops::ControlFlow;

use anyhow::Result;

use super::run::{RunOutcome, gate_first};
use super::{LazyMeasure, Progress, bound_nodes, finished_head, head};
use crate::exit::UsageError;
use crate::judge::command::command_arm_stats;
use crate::judge::command::{ArmResidency, arm_residency};
use crate::judge::command_checks::{
    arm_checks, command_valid, membind_set, multiplexing, other_load, placement_held, same_work,
};
use crate::judge::gate::GateRule;
use crate::judge::warnings::Warning;
use crate::measure::command::{CommandFailed, CommandRep, CommandSample, Output};
use crate::measure::prepare::run_prepare;
use crate::measure::stop::{self, StopSignal};
use crate::measure::tree::Ownership;
use crate::measure::{Measure, MeasureOptions};
use crate::plan::Arm;
use crate::plan::command::{
    CommandArm, CommandPlacement, Units, command_plan, default_command_arms, substitute,
};
use crate::plan::membind::Membind;
use crate::probe::Topology;
use crate::saved::{CommandOptions, CommandResult, DocumentKind};
use crate::units::count;

/// The command study's checked options (what `run -- COMMAND` was asked
/// for).
#[derive(Clone, Debug, PartialEq)]
pub struct CommandStudyOptions {
    /// The command and its arguments, placeholders unreplaced.
    pub argv: Vec<OsString>,
    /// `--threads`; `None`: [`crate::plan::command::default_threads`].
    pub threads: Option<usize>,
    /// `--arms`; `None`: one-per-core and sibling-packed, or one-per-core
    /// and same-cpu where no core has two allowed hardware threads.
    pub arms: Option<Vec<CommandArm>>,
    /// `--baseline-arm`; `None`: one-per-core where it runs, else the first arm.
    pub baseline: Option<CommandArm>,
    /// `--prepare`: run through `sh -c` before each repetition.
    pub prepare: Option<String>,
    /// `--leave-running`, `--prepare-timeout`.
    pub ownership: Ownership,
    pub output: Output,
    /// `--units N --unit NAME`: each arm's cost is also given per unit.
    pub units: Option<Units>,
    pub rounds: RoundsOptions,
    /// The gate's rule; the gate runs first unless `skip_gate`.
    pub rule: GateRule,
    pub skip_gate: bool,
    pub cv_bar: f64,
    pub tolerance: f64,
    pub strict: bool,
    /// How the gate's repetitions are measured (its engine is started only
    /// when the gate runs).
    pub measure: MeasureOptions,
    /// `--membind`: the nodes each arm's command is bound to (`None`:
    /// where the kernel puts its memory).
    pub membind: Option<Membind>,
}

/// Runs the command study on `topology`; see the module docs. `run_once`
/// runs the command's argv once in an arm, on its CPU set and with its
/// memory policy (the live one is [`crate::measure::command::run_once`]).
pub fn command_study<M: Measure>(
    topology: &Topology,
    options: &CommandStudyOptions,
    measure: &mut LazyMeasure<'_, M>,
    progress: &mut dyn Progress,
    mut run_once: impl FnMut(&[OsString], &CommandPlacement) -> Result<CommandSample>,
) -> Result<RunOutcome<CommandResult>> {
    let head = head(DocumentKind::Command, topology);
    let (arms, left_out) = match &options.arms {
        Some(arms) => (arms.clone(), None),
        None => default_command_arms(topology),
    };
    let mut plan =
        command_plan(topology, options.threads, &arms).map_err(|e| UsageError(format!("{e:#}")))?;
    if let Some(membind) = &options.membind {
        let arms: Vec<(String, Vec<u32>)> = plan
            .placements
            .iter()
            .map(|p| (p.arm.to_string(), p.cpus.cpus().to_vec()))
            .collect();
        let nodes = bound_nodes(topology, membind, &arms)?;
        for (placement, nodes) in plan.placements.iter_mut().zip(nodes) {
            placement.membind = Some(nodes);
        }
    }
    let baseline = match options.baseline {
        Some(baseline) if !arms.contains(&baseline) => {
            return Err(UsageError(format!(
                "--baseline-arm {baseline}: not one of the arms ({}); add it to --arms or name \
                 one of them",
                arms.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .into());
        }
        Some(baseline) => baseline,
        None if arms.contains(&CommandArm::Placement(Arm::OnePerCore)) => {
            CommandArm::Placement(Arm::OnePerCore)
        }
        None => arms[0],
    };
    let gate = match gate_first(
        topology,
        &options.rule,
        options.skip_gate,
        measure,
        progress,
    )? {
        ControlFlow::Continue(gate) => gate,
        ControlFlow::Break(gate) => return Ok(RunOutcome::StoppedAtGate(gate)),
    };
    let recorded = run_rounds(
        &plan.placements,
        options.rounds,
        "run",
        progress,
        |placement| {
            if let Some(prepare) = &options.prepare {
                run_prepare(prepare, &options.ownership)?;
            }
            let argv = substitute(&options.argv, plan.threads, &placement.cpus);
            run_once(&argv, placement)
        },
    )?;
    let stats = command_arm_stats(&recorded.reps, &arms, baseline, options.units.as_ref());
    let residency: Vec<ArmResidency> = plan
        .placements
        .iter()
        .map(|placement| arm_residency(&recorded.reps, placement, &topology.cpus, options.cv_bar))
        .collect();
    let mut checks = vec![
        placement_held(&residency),
        same_work(&recorded.reps, &stats, baseline, options.tolerance),
        multiplexing(&recorded.reps),
    ];
    checks.extend(arm_checks(&stats, &recorded.reps, options.cv_bar));
    checks.extend(other_load(&residency, options.cv_bar));
    checks.extend(membind_set(&plan.placements));
    let valid = command_valid(&checks, options.strict);
    let mut warnings = Warning::about_machine(topology);
    warnings.extend(left_out.map(Warning::ArmsLeftOut));
    warnings.extend(plan.spans_nodes.clone().map(Warning::ArmsSpanNodes));
    warnings.extend(
        recorded
            .cut_short
            .map(|(done, asked)| Warning::CutShort { done, asked }),
    );
    Ok(RunOutcome::Studied(Box::new(CommandResult {
        head: finished_head(head, recorded.stopped, &mut warnings),
        gated: gate.is_some(),
        gate,
        cpus: topology.cpus.clone(),
        options: CommandOptions {
            argv: options
                .argv
                .iter()
                .map(|arg| arg.to_string_lossy().into_owned())
                .collect(),
            threads: plan.threads,
            arms,
            baseline,
            reps: options.rounds.rounds,
            warmups: options.rounds.warmups,
            prepare: options.prepare.clone(),
            output: options.output.clone(),
            units: options.units.clone(),
            ignore_failure: options.rounds.ignore_failure,
            cv_bar: options.cv_bar,
            tolerance: options.tolerance,
            strict: options.strict,
            skip_gate: options.skip_gate,
            threshold: options.rule.threshold,
            membind: options.membind.clone(),
        },
        plan,
        reps: recorded.reps,
        arms: stats,
        residency,
        checks,
        valid,
        warnings,
    })))
}

/// How many rounds, and what a failed command does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundsOptions {
    pub warmups: usize,
    /// Measured rounds after the warm-ups.
    pub rounds: usize,
    /// Keep a failed repetition (marked) rather than stop.
    pub ignore_failure: bool,
    /// `--max-seconds`: no round starts once this much has passed.
    pub max: Option<std::time::Duration>,
}

/// The repetitions measured, the signal that stopped them, if one did,
/// and the rounds `--max-seconds` left out.
#[derive(Debug, Default)]
pub struct CommandRounds {
    pub reps: Vec<CommandRep>,
    pub stopped: Option<StopSignal>,
    /// `--max-seconds` was reached: the measured rounds done, of those
    /// asked for.
    pub cut_short: Option<(usize, usize)>,
}

/// Runs `options.warmups + options.rounds` rounds of `placements` with
/// `run_once` (the measurement of one repetition in one arm; the live one
/// is [`crate::measure::command::run_once`] with the arm's argv). The
/// progress line, led by `study`, says what a round runs until the first
/// round has shown what one costs, then the time left.
pub fn run_rounds(
    placements: &[CommandPlacement],
    options: RoundsOptions,
    study: &str,
    progress: &mut dyn Progress,
    mut run_once: impl FnMut(&CommandPlacement) -> Result<CommandSample>,
) -> Result<CommandRounds> {
    let mut recorded = CommandRounds::default();
    let total = options.warmups + options.rounds;
    let began = std::time::Instant::now();
    'rounds: for round in 0..total {
        let warmup = round < options.warmups;
        if let Some(max) = options.max
            && round > 0
            && began.elapsed() >= max
        {
            let done = round.saturating_sub(options.warmups);
            recorded.cut_short = Some((done, options.rounds));
            progress.note(&format!(
                "{study}: --max-seconds {} reached after {} of {}: the rest are not run",
                max.as_secs_f64(),
                count(done, "measured round"),
                options.rounds
            ));
            break;
        }
        let eta = match round {
            0 => format!(
                " ({} a round, {} in all; the time left follows from the first round)",
                count(placements.len(), "run"),
                count(total, "round")
            ),
            done => super::time_left(began, done, total),
        };
        progress.step(&if warmup {
            format!("{study}: warm-up {}/{}{eta}", round + 1, options.warmups)
        } else {
            format!(
                "{study}: round {}/{}{eta}",
                round + 1 - options.warmups,
                options.rounds
            )
        });
        let kept = recorded.reps.len();
        for placement in placements {
            let started = std::time::Instant::now();
            let result = run_once(placement);
            // A stop passed on to the command usually makes it fail: the
            // signal, not the failure, is what ended the round.
            if let Some(signal) = stop::stop_signal() {
                recorded.reps.truncate(kept);
                recorded.stopped = Some(signal);
                break 'rounds;
            }
            let (sample, failed) = match result {
                Ok(sample) => (sample, false),
                Err(error) => match error.downcast::<CommandFailed>() {
                    Ok(failed) if options.ignore_failure => (failed.sample, true),
                    Ok(failed) => return Err(failed.into()),
                    Err(error) => return Err(error),
                },
            };
            if recorded.reps.is_empty() {
                let first = started.elapsed();
                progress.note(&plan_line(
                    study,
                    first,
                    placements.len(),
                    total,
                    options.max,
                ));
            }
            for outliver in &sample.outlivers {
                progress.note(&format!(
                    "{study}: {} left {} (PID {}) running {} ms after it exited; {}",
                    placement.arm,
                    crate::escape::escape_controls(&outliver.name),
                    outliver.pid,
                    outliver.outlived_ms,
                    outliver.ended_by.describe()
                ));
            }
            recorded.reps.push(CommandRep {
                arm: placement.arm,
                round,
                warmup,
                failed,
                sample,
            });
        }
    }
    progress.done();
    Ok(recorded)
}

/// The plan said up front, once the first run has shown what one costs:
/// rounds × runs a round × the first run's time, and `--max-seconds`.
fn plan_line(
    study: &str,
    first: std::time::Duration,
    runs: usize,
    rounds: usize,
    max: Option<std::time::Duration>,
) -> String {
    let estimate = first.as_secs_f64() * (runs * rounds) as f64;
    let cap = max.map_or_else(
        || "; --max-seconds caps it".to_string(),
        |max| format!("; --max-seconds stops it after {} s", max.as_secs_f64()),
    );
    format!(
        "{study}: {} × {} × {:.3} s (the first run) ≈ {:.0} s in all{cap}",
        count(rounds, "round"),
        count(runs, "run"),
        first.as_secs_f64(),
        estimate
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuset::CpuSet;

    use crate::judge::checks::{CheckName, CheckStatus};
    use crate::measure::recording::CommandEnd;
    use crate::plan::Arm;
    use crate::plan::command::CommandArm;
    use crate::study::Quiet;

    fn placements() -> Vec<CommandPlacement> {
        [Arm::OnePerCore, Arm::SameCpu]
            .into_iter()
            .map(|arm| CommandPlacement {
                arm: CommandArm::Placement(arm),
                cpus: CpuSet::from_cpus([0]),
                membind: None,
            })
            .collect()
    }

    fn sample(code: i32) -> CommandSample {
        CommandSample {
            end: CommandEnd::Exited { code },
            ..CommandSample::of_wall(1_000)
        }
    }

    fn failing(code: i32) -> anyhow::Error {
        CommandFailed {
            program: "sh".into(),
            sample: sample(code),
            stderr_tail: String::new(),
        }
        .into()
    }

    #[test]
    fn rounds_interleave_every_arm_after_the_warm_ups() {
        let options = RoundsOptions {
            warmups: 1,
            rounds: 2,
            ignore_failure: false,
            max: None,
        };
        let rounds =
            run_rounds(&placements(), options, "run", &mut Quiet, |_| Ok(sample(0))).unwrap();
        let order: Vec<(String, usize, bool)> = rounds
            .reps
            .iter()
            .map(|r| (r.arm.to_string(), r.round, r.warmup))
            .collect();
        let expected: Vec<(String, usize, bool)> = [0, 1, 2]
            .into_iter()
            .flat_map(|round| {
                ["one-per-core", "same-cpu"].map(|arm| (arm.to_string(), round, round == 0))
            })
            .collect();
        assert_eq!(order, expected);
        assert!(rounds.stopped.is_none());
    }

    #[test]
    fn a_failed_command_stops_the_study_unless_failures_are_ignored() {
        let mut options = RoundsOptions {
            warmups: 0,
            rounds: 2,
            ignore_failure: false,
            max: None,
        };
        let error = run_rounds(&placements(), options, "run", &mut Quiet, |_| {
            Err(failing(1))
        })
        .unwrap_err();
        assert!(
            error.to_string().contains("exited with status 1"),
            "{error}"
        );

        options.ignore_failure = true;
        let rounds = run_rounds(&placements(), options, "run", &mut Quiet, |_| {
            Err(failing(1))
        })
        .unwrap();
        assert_eq!(rounds.reps.len(), 4);
        assert!(rounds.reps.iter().all(|r| r.failed));
    }

    #[test]
    fn an_error_that_is_not_the_commands_always_stops() {
        let options = RoundsOptions {
            warmups: 0,
            rounds: 1,
            ignore_failure: true,
            max: None,
        };
        let error = run_rounds(&placements(), options, "run", &mut Quiet, |_| {
            Err(anyhow::anyhow!("fork for COMMAND: out of memory"))
        })
        .unwrap_err();
        assert!(error.to_string().contains("fork"), "{error}");
    }

    fn two_cpu_guest() -> crate::probe::Topology {
        crate::probe::fixture("kvm-guest-2cpu")
    }

    fn options(arms: Option<Vec<CommandArm>>) -> CommandStudyOptions {
        let batching = crate::judge::batches::Batching {
            batches: 1,
            max_batches: 1,
            gap: std::time::Duration::ZERO,
        };
        CommandStudyOptions {
            argv: ["xz", "-T{threads}", "--cpus={cpus}"]
                .iter()
                .map(Into::into)
                .collect(),
            threads: None,
            arms,
            baseline: None,
            prepare: None,
            ownership: Ownership::default(),
            output: Output::Discard,
            units: None,
            rounds: RoundsOptions {
                warmups: 1,
                rounds: 3,
                ignore_failure: false,
                max: None,
            },
            rule: GateRule {
                threshold: 0.15,
                min_reps: 6,
                max_reps: 12,
                batching,
            },
            skip_gate: true,
            cv_bar: 0.01,
            tolerance: 1e-4,
            strict: false,
            measure: MeasureOptions {
                kernel: "mul".into(),
                rep_length: std::time::Duration::from_millis(50),
                warmups: 1,
                hardware_counters: false,
            },
            membind: None,
        }
    }

    /// Without the gate no engine is started: this one never is.
    fn no_engine<'a>() -> LazyMeasure<'a, crate::measure::EngineSession> {
        LazyMeasure::new(|| anyhow::bail!("the command study started the engine"))
    }

    #[test]
    fn the_study_substitutes_each_arms_cpus_and_judges_against_one_per_core() {
        let topology = two_cpu_guest();
        let mut seen = Vec::new();
        let outcome = command_study(
            &topology,
            &options(None),
            &mut no_engine(),
            &mut Quiet,
            |argv, placement| {
                seen.push(argv.to_vec());
                // The whole command on one CPU takes twice as long.
                Ok(CommandSample {
                    wall_ns: 2_000_000_000 / placement.cpus.len() as u64,
                    ..sample(0)
                })
            },
        )
        .unwrap();
        let RunOutcome::Studied(result) = outcome else {
            panic!("no gate was asked for");
        };
        // Without SMT: one-per-core against same-cpu, with the note.
        assert_eq!(
            result.options.arms,
            [
                CommandArm::Placement(Arm::OnePerCore),
                CommandArm::Placement(Arm::SameCpu)
            ]
        );
        assert!(
            result
                .warnings
                .iter()
                .any(|w| matches!(w, Warning::ArmsLeftOut(_)))
        );
        assert_eq!(seen.len(), 8);
        assert_eq!(seen[0], ["xz", "-T2", "--cpus=0-1"]);
        assert_eq!(seen[1], ["xz", "-T2", "--cpus=0"]);
        assert_eq!(result.options.argv, ["xz", "-T{threads}", "--cpus={cpus}"]);
        assert_eq!(
            result.options.baseline,
            CommandArm::Placement(Arm::OnePerCore)
        );
        assert!(!result.gated && result.head.complete && result.valid);
        let same_cpu = &result.arms[1];
        assert!(
            (same_cpu.vs_baseline.unwrap() - 1.0).abs() < 1e-9,
            "{same_cpu:?}"
        );
        assert_eq!(same_cpu.wall_s.as_ref().unwrap().reps, 3);
    }

    #[test]
    fn membind_reaches_each_arms_run_and_is_saved_and_a_bad_node_runs_nothing() {
        let mut topology = two_cpu_guest();
        topology.nodes = vec![crate::probe::NumaNode {
            node: 0,
            cpus: CpuSet::from_cpus([0, 1]),
            memory_kib: Some(1 << 20),
            distances: vec![10],
        }];
        let mut asked = options(Some(vec![CommandArm::Node(0)]));
        asked.membind = Some(Membind::Local);
        let mut bound = Vec::new();
        let outcome = command_study(&topology, &asked, &mut no_engine(), &mut Quiet, |_, p| {
            bound.push(p.membind.clone());
            Ok(sample(0))
        })
        .unwrap();
        let RunOutcome::Studied(result) = outcome else {
            panic!("no gate was asked for");
        };
        assert_eq!(bound, vec![Some(vec![0]); 4]);
        assert_eq!(result.options.membind, Some(Membind::Local));
        assert_eq!(result.plan.placements[0].membind, Some(vec![0]));
        let check = result.checks.iter().find(|c| c.name == CheckName::Membind);
        assert_eq!(check.unwrap().status, CheckStatus::Unavailable);

        asked.membind = Some(Membind::Nodes(vec![1]));
        let error = command_study(&topology, &asked, &mut no_engine(), &mut Quiet, |_, _| {
            panic!("a refused --membind must run nothing")
        })
        .unwrap_err();
        assert!(error.downcast_ref::<UsageError>().is_some(), "{error}");
        assert_eq!(
            error.to_string(),
            "--membind 1: this machine has no node 1 (it has node 0 only); see \
             `placement-study topology`"
        );
    }

    #[test]
    fn a_baseline_that_is_not_an_arm_is_a_usage_error() {
        let mut asked = options(Some(vec![CommandArm::Placement(Arm::OnePerCore)]));
        asked.baseline = Some(CommandArm::Placement(Arm::SameCpu));
        let error = command_study(
            &two_cpu_guest(),
            &asked,
            &mut no_engine(),
            &mut Quiet,
            |_, _| Ok(sample(0)),
        )
        .unwrap_err();
        assert!(error.downcast_ref::<UsageError>().is_some(), "{error}");
        assert!(
            error.to_string().contains("--baseline-arm same-cpu"),
            "{error}"
        );
    }
}
