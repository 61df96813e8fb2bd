//! The command study's repetitions (`run -- COMMAND`, issue 24; the design
//! is in [`crate::plan::command`]): warm-ups, then rounds that run every
//! arm once each, in order, so drift hits every arm alike and each arm's
//! repetition can be paired with the others' of the same round.
//!
//! A stop signal (SIGINT, SIGTERM) ends the study after the rounds already
//! finished: the round it interrupted is dropped whole, as the kernel
//! study does, so every arm keeps the same rounds. A repetition whose
//! command fails stops the study with its error, unless `ignore_failure`
//! keeps it, marked.
//!
//! To do: the gate first (unless `--skip-gate`), `--prepare CMD` before
//! each repetition, the judge's statistics and checks, and the document.

use anyhow::Result;

use super::Progress;
use crate::measure::command::{CommandFailed, CommandRep, CommandSample};
use crate::measure::stop::{self, StopSignal};
use crate::plan::command::CommandPlacement;

/// How many rounds, and what a failed command does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundsOptions {
    pub warmups: usize,
    /// Measured rounds after the warm-ups.
    pub rounds: usize,
    /// Keep a failed repetition (marked) rather than stop.
    pub ignore_failure: bool,
}

/// The repetitions measured, and the signal that stopped them, if one did.
#[derive(Debug, Default)]
pub struct CommandRounds {
    pub reps: Vec<CommandRep>,
    pub stopped: Option<StopSignal>,
}

/// Runs `options.warmups + options.rounds` rounds of `placements` with
/// `run_once` (the measurement of one repetition in one arm; the live one
/// is [`crate::measure::command::run_once`] with the arm's argv).
pub fn run_rounds(
    placements: &[CommandPlacement],
    options: RoundsOptions,
    progress: &mut dyn Progress,
    mut run_once: impl FnMut(&CommandPlacement) -> Result<CommandSample>,
) -> Result<CommandRounds> {
    let mut recorded = CommandRounds::default();
    'rounds: for round in 0..options.warmups + options.rounds {
        let warmup = round < options.warmups;
        progress.update(&if warmup {
            format!("run: warm-up {}/{}", round + 1, options.warmups)
        } else {
            format!(
                "run: round {}/{}",
                round + 1 - options.warmups,
                options.rounds
            )
        });
        let kept = recorded.reps.len();
        for placement in placements {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuset::CpuSet;
    use crate::measure::command::{PlacementRecords, TreeCounterSource};
    use crate::measure::recording::CommandEnd;
    use crate::plan::Arm;
    use crate::plan::command::CommandArm;

    struct Quiet;

    impl Progress for Quiet {
        fn update(&mut self, _: &str) {}
        fn done(&mut self) {}
    }

    fn placements() -> Vec<CommandPlacement> {
        [Arm::OnePerCore, Arm::SameCpu]
            .into_iter()
            .map(|arm| CommandPlacement {
                arm: CommandArm::Placement(arm),
                cpus: CpuSet::from_cpus([0]),
            })
            .collect()
    }

    fn sample(code: i32) -> CommandSample {
        CommandSample {
            wall_ns: 1_000,
            task_clock_ns: 900,
            context_switches: 1,
            migrations: Some(0),
            counters: TreeCounterSource::PerfInherit,
            end: CommandEnd::Exited { code },
            placement: PlacementRecords::Unavailable {
                reason: "not recorded".into(),
            },
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
        };
        let rounds = run_rounds(&placements(), options, &mut Quiet, |_| Ok(sample(0))).unwrap();
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
        };
        let error =
            run_rounds(&placements(), options, &mut Quiet, |_| Err(failing(1))).unwrap_err();
        assert!(
            error.to_string().contains("exited with status 1"),
            "{error}"
        );

        options.ignore_failure = true;
        let rounds = run_rounds(&placements(), options, &mut Quiet, |_| Err(failing(1))).unwrap();
        assert_eq!(rounds.reps.len(), 4);
        assert!(rounds.reps.iter().all(|r| r.failed));
    }

    #[test]
    fn an_error_that_is_not_the_commands_always_stops() {
        let options = RoundsOptions {
            warmups: 0,
            rounds: 1,
            ignore_failure: true,
        };
        let error = run_rounds(&placements(), options, &mut Quiet, |_| {
            Err(anyhow::anyhow!("fork for COMMAND: out of memory"))
        })
        .unwrap_err();
        assert!(error.to_string().contains("fork"), "{error}");
    }
}
