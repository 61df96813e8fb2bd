//! The command study's statistics (`run -- COMMAND`, issue 24; the design
//! is in [`crate::plan::command`]): each arm's wall time as median, CV,
//! min–max and n ([`Spread`]), and each arm's cost against the baseline arm
//! paired by round, with its 95 % interval, as the kernel study's.
//!
//! Warm-ups and failed repetitions (kept by `--ignore-failure`) are out of
//! every statistic; a round counts in a pairing only where both arms have a
//! kept repetition in it.
//!
//! To do: the checks (placement held, SMT co-residency, same work, the CV
//! bar and multiplexing) as `judge::checks` gives them for the kernel.

use serde::{Deserialize, Serialize};

use super::stats::{Interval, Spread, penalty_centre, penalty_ci95, spread};
use crate::measure::command::CommandRep;
use crate::plan::command::CommandArm;

/// One arm's wall time, in seconds, over its kept repetitions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommandArmStats {
    pub arm: CommandArm,
    /// `None` with fewer than two kept repetitions.
    pub wall_s: Option<Spread>,
    /// This arm's cost against the baseline's, paired by round (0.3: 30 %
    /// slower); `None` for the baseline itself and with too few pairs.
    pub vs_baseline: Option<f64>,
    pub vs_baseline_ci95: Option<Interval>,
}

/// The kept repetitions' wall times of `arm`, by round.
fn wall_by_round(reps: &[CommandRep], arm: CommandArm) -> Vec<(usize, f64)> {
    reps.iter()
        .filter(|r| r.arm == arm && !r.warmup && !r.failed)
        .map(|r| (r.round, r.sample.wall_ns as f64 / 1e9))
        .collect()
}

/// The statistics of every arm in `arms`, each against `baseline`.
pub fn command_arm_stats(
    reps: &[CommandRep],
    arms: &[CommandArm],
    baseline: CommandArm,
) -> Vec<CommandArmStats> {
    let base = wall_by_round(reps, baseline);
    arms.iter()
        .map(|&arm| {
            let walls = wall_by_round(reps, arm);
            let values: Vec<f64> = walls.iter().map(|(_, wall)| *wall).collect();
            let (treated, paired): (Vec<f64>, Vec<f64>) = walls
                .iter()
                .filter_map(|(round, wall)| {
                    let base = base.iter().find(|(r, _)| r == round)?;
                    Some((*wall, base.1))
                })
                .unzip();
            let compared = arm != baseline;
            CommandArmStats {
                arm,
                wall_s: spread(&values),
                vs_baseline: compared
                    .then(|| penalty_centre(&treated, &paired))
                    .flatten(),
                vs_baseline_ci95: compared.then(|| penalty_ci95(&treated, &paired)).flatten(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::command::{CommandSample, PlacementRecords, TreeCounterSource};
    use crate::measure::recording::CommandEnd;
    use crate::plan::Arm;

    const ONE: CommandArm = CommandArm::Placement(Arm::OnePerCore);
    const SAME: CommandArm = CommandArm::Placement(Arm::SameCpu);

    fn rep(arm: CommandArm, round: usize, wall_ms: u64) -> CommandRep {
        CommandRep {
            arm,
            round,
            warmup: round == 0,
            failed: false,
            sample: CommandSample {
                wall_ns: wall_ms * 1_000_000,
                task_clock_ns: 0,
                context_switches: 0,
                migrations: Some(0),
                counters: TreeCounterSource::PerfInherit,
                end: CommandEnd::Exited { code: 0 },
                placement: PlacementRecords::Unavailable {
                    reason: "not recorded".into(),
                },
            },
        }
    }

    #[test]
    fn arms_get_their_spread_and_the_paired_ratio_without_warm_ups_or_failures() {
        let mut reps = vec![rep(ONE, 0, 900), rep(SAME, 0, 100)];
        for (round, base) in [(1, 100), (2, 102), (3, 98), (4, 101)] {
            reps.push(rep(ONE, round, base));
            reps.push(rep(SAME, round, base * 2));
        }
        let mut failed = rep(SAME, 5, 10_000);
        failed.failed = true;
        reps.push(failed);
        let stats = command_arm_stats(&reps, &[ONE, SAME], ONE);
        let one = stats[0].wall_s.as_ref().unwrap();
        assert_eq!(one.reps, 4);
        assert!((one.median - 0.1005).abs() < 1e-9, "{one:?}");
        assert_eq!(stats[0].vs_baseline, None);
        let ratio = stats[1].vs_baseline.unwrap();
        assert!(
            (ratio - 1.0).abs() < 1e-9,
            "same-cpu is twice the cost: {ratio}"
        );
        let interval = stats[1].vs_baseline_ci95.as_ref().unwrap();
        assert!(
            interval.low <= ratio && ratio <= interval.high,
            "{interval:?}"
        );
        assert_eq!(stats[1].wall_s.as_ref().unwrap().reps, 4);
    }
}
