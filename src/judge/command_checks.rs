//! The checks of the command study (`run -- COMMAND`, issue 24; the design
//! is in [`crate::plan::command`]) and whether its numbers may be quoted.
//!
//! Each arm's wall time is held to the CV bar, as the kernel's arms are.
//! Placement held (every thread of the tree on its arm's CPUs) comes from
//! each repetition's context-switch records ([`placement_held`]). Same work
//! (the tree's user-space instructions alike in every arm) needs user-space
//! instruction counts, which a repetition does not record yet: until it
//! does, [`same_work_unmeasured`] says so, unavailable with the reason,
//! never a silent pass.

use super::checks::{Check, CheckName, CheckStatus, cv_bar};
use super::command::{ArmResidency, CommandArmStats};
use crate::measure::command::CommandRep;

/// Each arm's CV bar: passed, failed (not quotable), or unavailable under
/// two kept repetitions; and, for an arm whose every measured repetition
/// failed (kept by `--ignore-failure`), a failed `repetitions ARM`: such an
/// arm has no number at all, which makes the study invalid.
pub fn arm_checks(arms: &[CommandArmStats], reps: &[CommandRep], bar: f64) -> Vec<Check> {
    let mut checks = Vec::new();
    for stats in arms {
        let name = CheckName::cv_bar_of(stats.arm);
        checks.push(match &stats.wall_s {
            Some(spread) => cv_bar(name, spread, bar),
            None => Check::unavailable(name, "fewer than 2 kept repetitions"),
        });
        let measured = reps.iter().filter(|r| r.arm == stats.arm && !r.warmup);
        let (failed, kept) = measured.fold((0, 0), |(failed, kept), rep| {
            if rep.failed {
                (failed + 1, kept)
            } else {
                (failed, kept + 1)
            }
        });
        if kept == 0 && failed > 0 {
            checks.push(Check::failed(
                CheckName::repetitions_of(stats.arm),
                format!("the command failed in every one of its {failed} measured repetitions: no number is left"),
            ));
        }
    }
    checks
}

/// Placement held over every arm: failed where a thread of the tree ran
/// outside its arm's CPUs (each such arm named, with the thread), else
/// unavailable where some repetition had no complete records, else passed.
pub fn placement_held(residency: &[ArmResidency]) -> Check {
    let of = |status: CheckStatus| -> Vec<String> {
        residency
            .iter()
            .filter(|arm| arm.held == status)
            .map(|arm| format!("{}: {}", arm.arm, arm.detail))
            .collect()
    };
    let (failed, unavailable) = (of(CheckStatus::Failed), of(CheckStatus::Unavailable));
    if !failed.is_empty() {
        Check::failed(CheckName::PlacementHeld, failed.join("; "))
    } else if !unavailable.is_empty() {
        Check::unavailable(CheckName::PlacementHeld, unavailable.join("; "))
    } else {
        Check::passed(
            CheckName::PlacementHeld,
            format!(
                "every thread of the tree ran only on its arm's CPUs, in {} repetitions",
                residency.iter().map(|arm| arm.judged).sum::<usize>()
            ),
        )
    }
}

/// Per arm with kept repetitions that ran beside other load on an SMT
/// sibling for more than `bar` of the tree's on-CPU time (see
/// [`super::command::arm_residency`]): a failed `other-load ARM` naming
/// them, which marks the arm not quotable ([`quotable`]) but leaves the
/// study valid: the number is still the command's, measured on a busy
/// machine. Arms without such repetitions get no check line; where the
/// siblings' records are unavailable, the residency table says why.
pub fn other_load(residency: &[ArmResidency], bar: f64) -> Vec<Check> {
    residency
        .iter()
        .filter(|arm| !arm.other_load_over_bar.is_empty())
        .map(|arm| {
            let rounds: Vec<String> = arm
                .other_load_over_bar
                .iter()
                .map(|over| format!("round {} {:.1} %", over.round, over.share * 100.0))
                .collect();
            Check::failed(
                CheckName::OtherLoad(arm.arm),
                format!(
                    "an SMT sibling ran other load beside the tree for more than the {:.2} % \
                     bar of its on-CPU time in {}: not quotable",
                    bar * 100.0,
                    rounds.join(", ")
                ),
            )
        })
        .collect()
}

/// The check no repetition measures yet, unavailable with the reason.
pub fn same_work_unmeasured() -> Check {
    Check::unavailable(
        CheckName::SameWork,
        "not measured: this build does not count the tree's user-space instructions",
    )
}

/// The checks that make a command study's numbers unquotable: a failed
/// check that breaks what every number claims (placement held, an arm left
/// with no repetition), and, with `strict`, a CV bar not passed or other
/// load beside an arm. A failed
/// same-work check marks the numbers but leaves them valid: it is a
/// finding about the program (it spins, or takes another path per
/// placement), not a fault of the measurement.
pub fn invalidating(checks: &[Check], strict: bool) -> Vec<&Check> {
    checks
        .iter()
        .filter(|check| match check.name {
            CheckName::CvBar(_) | CheckName::ClassCvBar(_) | CheckName::OtherLoad(_) => {
                strict && check.status != CheckStatus::Passed
            }
            CheckName::SameWork => false,
            _ => check.status == CheckStatus::Failed,
        })
        .collect()
}

/// Whether a command study's numbers may be quoted: nothing
/// [`invalidating`].
pub fn command_valid(checks: &[Check], strict: bool) -> bool {
    invalidating(checks, strict).is_empty()
}

/// Is `arm`'s wall time quotable (its CV-bar check passed, and no
/// `other-load ARM` failed)?
pub fn quotable(checks: &[Check], arm: crate::plan::command::CommandArm) -> bool {
    let cv_bar = CheckName::cv_bar_of(arm);
    let passed = |name: CheckName| {
        checks
            .iter()
            .filter(|c| c.name == name)
            .all(|c| c.status == CheckStatus::Passed)
    };
    checks.iter().any(|c| c.name == cv_bar) && passed(cv_bar) && passed(CheckName::OtherLoad(arm))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::stats::Spread;
    use crate::plan::Arm;
    use crate::plan::command::CommandArm;

    fn stats(arm: CommandArm, cv: Option<f64>) -> CommandArmStats {
        CommandArmStats {
            arm,
            wall_s_per_unit: None,
            wall_s: cv.map(|cv| Spread {
                median: 1.0,
                cv,
                min: 0.9,
                max: 1.1,
                reps: 5,
            }),
            vs_baseline: None,
            vs_baseline_ci95: None,
        }
    }

    #[test]
    fn each_arm_gets_its_cv_bar_and_strict_makes_a_noisy_arm_invalid() {
        let one = CommandArm::Placement(Arm::OnePerCore);
        let class = CommandArm::Class(1);
        let mut checks = arm_checks(
            &[stats(one, Some(0.005)), stats(class, Some(0.05))],
            &[],
            0.01,
        );
        assert_eq!(checks[0].status, CheckStatus::Passed);
        assert_eq!(checks[1].name.to_string(), "cv-bar class:1");
        assert_eq!(checks[1].status, CheckStatus::Failed);
        assert!(quotable(&checks, one) && !quotable(&checks, class));
        checks.push(same_work_unmeasured());
        assert!(command_valid(&checks, false));
        assert!(!command_valid(&checks, true));
    }

    #[test]
    fn other_load_above_the_bar_marks_its_arm_not_quotable_and_leaves_the_study_valid() {
        use crate::judge::checks::CheckStatus;
        use crate::judge::command::RoundShare;
        let one = CommandArm::Placement(Arm::OnePerCore);
        let packed = CommandArm::Placement(Arm::SiblingPacked);
        let residency = |arm, over_bar: Vec<RoundShare>| ArmResidency {
            arm,
            judged: 5,
            unjudged: 0,
            held_share: Some(1.0),
            outside: Vec::new(),
            held: CheckStatus::Passed,
            detail: String::new(),
            co_residency: Some(0.0),
            other_load: Some(0.004),
            other_load_unavailable: None,
            other_load_over_bar: over_bar,
            unavailable: None,
        };
        let busy_round = vec![RoundShare {
            round: 3,
            share: 0.12,
        }];
        let other = other_load(
            &[residency(one, Vec::new()), residency(packed, busy_round)],
            0.01,
        );
        let [check] = &other[..] else {
            panic!("one check, for the arm beside other load: {other:?}")
        };
        assert_eq!(check.name.to_string(), "other-load sibling-packed");
        assert_eq!(check.status, CheckStatus::Failed);
        assert!(check.detail.contains("round 3 12.0 %"), "{}", check.detail);
        assert_eq!(
            "other-load sibling-packed".parse::<CheckName>(),
            Ok(check.name)
        );
        let mut checks = arm_checks(
            &[stats(one, Some(0.005)), stats(packed, Some(0.005))],
            &[],
            0.01,
        );
        checks.extend(other);
        assert!(quotable(&checks, one) && !quotable(&checks, packed));
        // Marked, as a noisy arm is: invalid only with --strict.
        assert!(command_valid(&checks, false) && !command_valid(&checks, true));
    }

    #[test]
    fn an_arm_whose_every_repetition_failed_has_no_number_and_invalidates() {
        use crate::measure::command::{CommandSample, PlacementRecords, TreeCounterSource};
        use crate::measure::recording::CommandEnd;
        let same = CommandArm::Placement(Arm::SameCpu);
        let rep = |round, failed| CommandRep {
            arm: same,
            round,
            warmup: round == 0,
            failed,
            sample: CommandSample {
                wall_ns: 1,
                task_clock_ns: 1,
                context_switches: 0,
                migrations: Some(0),
                counters: TreeCounterSource::PerfInherit,
                end: CommandEnd::Exited {
                    code: i32::from(failed),
                },
                placement: PlacementRecords::not_saved(),
            },
        };
        // A kept warm-up is no number either.
        let reps = [rep(0, false), rep(1, true), rep(2, true)];
        let checks = arm_checks(&[stats(same, None)], &reps, 0.01);
        assert_eq!(checks[1].name.to_string(), "repetitions same-cpu");
        assert_eq!(checks[1].status, CheckStatus::Failed);
        assert!(!command_valid(&checks, false));
        // One kept repetition: no failed check (its CV bar is unavailable).
        let reps = [rep(1, true), rep(2, false)];
        assert_eq!(arm_checks(&[stats(same, None)], &reps, 0.01).len(), 1);
    }

    #[test]
    fn a_failed_placement_invalidates_but_different_work_only_marks() {
        let mut checks = vec![Check::failed(CheckName::SameWork, "class:1 +12 %")];
        assert!(command_valid(&checks, true));
        checks.push(Check::failed(CheckName::PlacementHeld, "moved"));
        assert!(!command_valid(&checks, false));
    }

    /// Placement held over the arms: one arm with a thread outside fails
    /// the check and is named, whatever the others; one without records
    /// makes it unavailable; all held, passed.
    #[test]
    fn placement_held_names_the_arm_that_did_not_hold() {
        let residency = |arm, held, detail: &str| ArmResidency {
            arm,
            judged: 3,
            unjudged: 0,
            held_share: Some(1.0),
            outside: Vec::new(),
            held,
            detail: detail.into(),
            co_residency: Some(0.0),
            other_load: None,
            other_load_unavailable: None,
            other_load_over_bar: Vec::new(),
            unavailable: None,
        };
        let one = CommandArm::Placement(Arm::OnePerCore);
        let same = CommandArm::Placement(Arm::SameCpu);
        let held = residency(one, CheckStatus::Passed, "held");
        let moved = residency(same, CheckStatus::Failed, "thread 7 (sh) ran on CPU 1");
        let unknown = residency(same, CheckStatus::Unavailable, "no records");
        let check = placement_held(&[held.clone(), moved]);
        assert_eq!(check.status, CheckStatus::Failed);
        assert_eq!(check.detail, "same-cpu: thread 7 (sh) ran on CPU 1");
        assert_eq!(
            placement_held(&[held.clone(), unknown]).status,
            CheckStatus::Unavailable
        );
        let check = placement_held(&[held.clone(), held]);
        assert_eq!(check.status, CheckStatus::Passed);
        assert!(
            check.detail.ends_with("in 6 repetitions"),
            "{}",
            check.detail
        );
    }

    #[test]
    fn the_new_check_names_round_trip() {
        for name in [
            "cv-bar class:3",
            "placement-held",
            "same-work",
            "cv-bar same-cpu",
        ] {
            let parsed: CheckName = name.parse().unwrap();
            assert_eq!(parsed.to_string(), name);
        }
        assert!("cv-bar class:x".parse::<CheckName>().is_err());
    }
}
