//! The checks of the command study (`run -- COMMAND`, issue 24; the design
//! is in [`crate::plan::command`]) and whether its numbers may be quoted.
//!
//! Each arm's wall time is held to the CV bar, as the kernel's arms are.
//! Placement held (every thread of the tree on its arm's CPUs) and same
//! work (the tree's user-space instructions alike in every arm) need the
//! tree's context-switch records and user-space instruction counts, which
//! a repetition does not record yet: until it does, [`unmeasured_checks`]
//! says so, unavailable with the reason, never a silent pass. A check
//! measured later takes the place of its unavailable one, by its name.

use super::checks::{Check, CheckName, CheckStatus, cv_bar};
use super::command::CommandArmStats;

/// Each arm's CV bar: passed, failed (not quotable), or unavailable under
/// two kept repetitions.
pub fn arm_checks(arms: &[CommandArmStats], bar: f64) -> Vec<Check> {
    arms.iter()
        .map(|stats| {
            let name = CheckName::cv_bar_of(stats.arm);
            match &stats.wall_s {
                Some(spread) => cv_bar(name, spread, bar),
                None => Check::unavailable(name, "fewer than 2 kept repetitions"),
            }
        })
        .collect()
}

/// The checks no repetition measures yet, unavailable with the reason.
pub fn unmeasured_checks() -> Vec<Check> {
    vec![
        Check::unavailable(
            CheckName::PlacementHeld,
            "not measured: this build does not record the tree's context switches, so where \
             its threads ran within the arm is not known; each arm's CPUs were set before exec",
        ),
        Check::unavailable(
            CheckName::SameWork,
            "not measured: this build does not count the tree's user-space instructions",
        ),
    ]
}

/// The checks that make a command study's numbers unquotable: a failed
/// check that breaks what every number claims (placement held), and, with
/// `strict`, a CV bar not passed. A failed same-work check marks the
/// numbers but leaves them valid: it is a finding about the program (it
/// spins, or takes another path per placement), not a fault of the
/// measurement.
pub fn invalidating(checks: &[Check], strict: bool) -> Vec<&Check> {
    checks
        .iter()
        .filter(|check| match check.name {
            CheckName::CvBar(_) | CheckName::ClassCvBar(_) => {
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

/// Is `arm`'s wall time quotable (its CV-bar check passed)?
pub fn quotable(checks: &[Check], arm: crate::plan::command::CommandArm) -> bool {
    let name = CheckName::cv_bar_of(arm);
    checks
        .iter()
        .any(|c| c.name == name && c.status == CheckStatus::Passed)
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
        let mut checks = arm_checks(&[stats(one, Some(0.005)), stats(class, Some(0.05))], 0.01);
        assert_eq!(checks[0].status, CheckStatus::Passed);
        assert_eq!(checks[1].name.to_string(), "cv-bar class:1");
        assert_eq!(checks[1].status, CheckStatus::Failed);
        assert!(quotable(&checks, one) && !quotable(&checks, class));
        checks.extend(unmeasured_checks());
        assert!(command_valid(&checks, false));
        assert!(!command_valid(&checks, true));
    }

    #[test]
    fn a_failed_placement_invalidates_but_different_work_only_marks() {
        let mut checks = vec![Check::failed(CheckName::SameWork, "class:1 +12 %")];
        assert!(command_valid(&checks, true));
        checks.push(Check::failed(CheckName::PlacementHeld, "moved"));
        assert!(!command_valid(&checks, false));
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
