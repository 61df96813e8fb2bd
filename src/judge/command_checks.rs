//! The checks of the command study (`run -- COMMAND`, issue 24; the design
//! is in [`crate::plan::command`]) and whether its numbers may be quoted.
//!
//! Each arm's wall time is held to the CV bar, as the kernel's arms are.
//! Placement held (every thread of the tree on its arm's CPUs) comes from
//! each repetition's context-switch records ([`placement_held`]). Same work
//! ([`same_work`]): the tree's user-space instructions, each arm's median
//! against the baseline arm's, agree within `--tolerance`
//! ([`SAME_WORK_TOLERANCE`] by default); unavailable, with the reason,
//! where no PMU counts or perf refused. Multiplexing ([`multiplexing`]):
//! the tree's hardware counters ran all their enabled time; a multiplexed
//! count is left out of the same-work medians, never scaled.

use super::checks::{
    Check, CheckName, CheckStatus, MULTIPLEXING_CAUSES, cv_bar, name_offenders, nothing_kept,
};
use super::command::{ArmResidency, CommandArmStats, multiplexing_offence};
use super::stats::significant;
use crate::measure::command::{CommandRep, TreeHardware};
use crate::plan::command::{CommandArm, CommandPlacement};
use crate::plan::membind::nodes_phrase;

/// `--tolerance` of the command study: how far an arm's median user-space
/// instructions may move from the baseline arm's. A deterministic
/// single-threaded program repeats its user-space instructions within about
/// 0.01 % (the dynamic loader, the environment and address-space
/// randomisation move a few thousand; gzip and a shell loop on the arm64
/// guest's one exactly counting vCPU repeat within 0.002 %); a multithreaded one moves more where
/// its threads wait by spinning a while before they sleep (glibc's adaptive
/// mutexes, work queues, a garbage collector's timing), about 0.1 %; a
/// program that spin-waits in earnest (OpenMP's default wait policy)
/// retires several percent to several times more when a placement slows
/// it. 1 % passes the first two and catches the third. The kernel study's
/// invariance check keeps its own, far tighter, default (its kernel
/// retires a constant per byte by construction).
pub const SAME_WORK_TOLERANCE: f64 = 0.01;

/// Each arm's CV bar: passed, failed (not quotable), or unavailable under
/// two kept repetitions; and, for an arm that kept no repetition (each
/// failed and was kept by `--ignore-failure`, or none was measured), a
/// failed `repetitions ARM` ([`nothing_kept`]).
pub fn arm_checks(arms: &[CommandArmStats], reps: &[CommandRep], bar: f64) -> Vec<Check> {
    let mut checks = Vec::new();
    for stats in arms {
        let name = CheckName::cv_bar_of(stats.arm);
        checks.push(match &stats.wall_s {
            Some(spread) => cv_bar(name, spread, bar),
            None => Check::unavailable(name, "fewer than 2 kept repetitions"),
        });
        let measured = reps.iter().filter(|r| r.arm == stats.arm && !r.warmup);
        let (measured, failed) = measured.fold((0, 0), |(measured, failed), rep| {
            (measured + 1, failed + usize::from(rep.failed))
        });
        if measured == failed {
            checks.push(nothing_kept(
                CheckName::repetitions_of(stats.arm),
                measured,
                failed,
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

/// The kept repetitions: measured (no warm-up) and not failed.
fn kept(reps: &[CommandRep]) -> impl Iterator<Item = &CommandRep> {
    reps.iter().filter(|r| !r.warmup && !r.failed)
}

/// Why no kept repetition has hardware counts: the first one's reason.
fn uncounted(reps: &[CommandRep]) -> Option<&str> {
    kept(reps).find_map(|rep| match &rep.sample.hardware {
        TreeHardware::Unavailable { reason } => Some(reason.as_str()),
        TreeHardware::Counted { .. } => None,
    })
}

/// The tree's hardware counters never multiplexed: failed naming each
/// repetition whose counters ran less than their enabled time (its counts
/// are left out of the same-work check, never scaled; its wall time, the
/// cost, stands); unavailable where nothing was counted, with the reason.
pub fn multiplexing(reps: &[CommandRep]) -> Check {
    const NAME: CheckName = CheckName::Multiplexing;
    let counted: Vec<&CommandRep> = kept(reps)
        .filter(|rep| matches!(rep.sample.hardware, TreeHardware::Counted { .. }))
        .collect();
    if counted.is_empty() {
        let why = uncounted(reps).map_or_else(
            || "no kept repetitions".to_string(),
            |reason| format!("nothing to multiplex: {reason}"),
        );
        return Check::unavailable(NAME, why);
    }
    let offenders: Vec<String> = counted
        .iter()
        .filter_map(|rep| {
            let why = multiplexing_offence(&rep.sample.hardware)?;
            Some(format!("{} round {}: {why}", rep.arm, rep.round))
        })
        .collect();
    if offenders.is_empty() {
        return Check::passed(
            NAME,
            format!(
                "time enabled equals time running for the tree's hardware counters in all {} \
                 repetitions",
                counted.len()
            ),
        );
    }
    Check::failed(
        NAME,
        format!(
            "{} of {} repetitions' hardware counters were multiplexed (their counts are left out \
             of the same-work check, not scaled; their wall times stand): {}; the PMU could not \
             give the tree's events its counters all the time: {MULTIPLEXING_CAUSES}",
            offenders.len(),
            counted.len(),
            name_offenders(&offenders)
        ),
    )
}

/// A relative change as a signed percentage, to three decimals.
pub fn signed_percent(change: f64) -> String {
    format!("{:+.3} %", change * 100.0)
}

/// Whether an arm's user-space instructions moved by `change` (relative
/// to the baseline arm's) beyond `tolerance`: it did other work.
pub fn different_work(change: f64, tolerance: f64) -> bool {
    change.abs() > tolerance || !change.is_finite()
}

/// Same work: each arm's median user-space instructions (from `arms`,
/// [`CommandArmStats::user_instructions`]) within `tolerance` of the
/// baseline arm's. Failed naming every arm that moved and by how much: a
/// finding about the program (it spins while it waits, or takes another
/// path per placement), the arm's numbers marked, not dropped.
/// Unavailable, with the reason, where the baseline or an arm has no count
/// (no PMU, perf refused, every count multiplexed) and none moved.
pub fn same_work(
    reps: &[CommandRep],
    arms: &[CommandArmStats],
    baseline: CommandArm,
    tolerance: f64,
) -> Check {
    const NAME: CheckName = CheckName::SameWork;
    let base = arms
        .iter()
        .find(|stats| stats.arm == baseline)
        .and_then(|stats| stats.user_instructions);
    let Some(base) = base else {
        let why = match uncounted(reps) {
            Some(reason) => reason.to_string(),
            None if kept(reps).next().is_none() => "no kept repetitions".to_string(),
            None => format!(
                "no repetition of the baseline arm {baseline} counted the tree's user-space \
                 instructions all its enabled time (see multiplexing)"
            ),
        };
        return Check::unavailable(NAME, why);
    };
    let others: Vec<&CommandArmStats> = arms.iter().filter(|s| s.arm != baseline).collect();
    if others.is_empty() {
        return Check::unavailable(
            NAME,
            format!("only the baseline arm {baseline}: nothing to compare"),
        );
    }
    let figures = |value: f64| significant(value, 6);
    let tolerance_text = format!("±{}", signed_percent(tolerance).trim_start_matches('+'));
    let mut moved = Vec::new();
    let mut uncompared = Vec::new();
    let mut largest: Option<(CommandArm, f64)> = None;
    for stats in others {
        let (Some(change), Some(count)) = (stats.instructions_vs_baseline, stats.user_instructions)
        else {
            uncompared.push(stats.arm.to_string());
            continue;
        };
        if different_work(change, tolerance) {
            moved.push(format!(
                "{} {} ({})",
                stats.arm,
                signed_percent(change),
                figures(count)
            ));
        }
        if largest.is_none_or(|(_, most)| change.abs() > most.abs()) {
            largest = Some((stats.arm, change));
        }
    }
    if !moved.is_empty() {
        return Check::failed(
            NAME,
            format!(
                "the tree's user-space instructions moved beyond the tolerance ({tolerance_text}) \
                 against {baseline}'s {}: {}; a finding about the program (it spins while it \
                 waits, or takes another path per placement): the arm's cost is marked, not \
                 dropped",
                figures(base),
                moved.join("; ")
            ),
        );
    }
    if !uncompared.is_empty() {
        return Check::unavailable(
            NAME,
            format!(
                "no repetition counted the tree's user-space instructions all its enabled time in \
                 {} (see multiplexing)",
                uncompared.join(", ")
            ),
        );
    }
    let (arm, change) = largest.expect("an arm besides the baseline was compared");
    Check::passed(
        NAME,
        format!(
            "the tree's user-space instructions agree with {baseline}'s {} within \
             {tolerance_text} in every arm (largest move {} in {arm})",
            figures(base),
            signed_percent(change)
        ),
    )
}

/// `run --membind -- COMMAND`: what is known of where the command's memory
/// went. The policy was set in its process before each exec and read back
/// there (a refusal stops the study), and the command and its children
/// inherit it; but the pages it touched are its own, gone when it exits,
/// and it may set another policy itself: so this says unavailable, naming
/// each arm's nodes. `None` when no arm binds its memory.
pub fn membind_set(placements: &[CommandPlacement]) -> Option<Check> {
    let arms: Vec<String> = placements
        .iter()
        .filter_map(|p| {
            Some(format!(
                "{} on {}",
                p.arm,
                nodes_phrase(p.membind.as_deref()?)
            ))
        })
        .collect();
    (!arms.is_empty()).then(|| {
        Check::unavailable(
            CheckName::Membind,
            format!(
                "MPOL_BIND was set and read back in the command's process before each exec \
                 ({}); where its pages went is not located: they are the command's own, gone \
                 when it exits, and it may set another policy itself",
                arms.join(", ")
            ),
        )
    })
}

/// The checks that make a command study's numbers unquotable: a failed
/// check that breaks what every number claims (placement held, an arm left
/// with no repetition), and, with `strict`, a CV bar not passed or other
/// load beside an arm. A failed
/// same-work check marks the numbers but leaves them valid: it is a
/// finding about the program (it spins, or takes another path per
/// placement), not a fault of the measurement. Nor does a failed
/// multiplexing check: it touches only the counts the same-work check
/// leaves out, not the wall time, which is the cost.
pub fn invalidating(checks: &[Check], strict: bool) -> Vec<&Check> {
    checks
        .iter()
        .filter(|check| match check.name {
            CheckName::CvBar(_)
            | CheckName::ClassCvBar(_)
            | CheckName::DomainCvBar(_)
            | CheckName::StepCvBar(_)
            | CheckName::OtherLoad(_) => strict && check.status != CheckStatus::Passed,
            CheckName::SameWork | CheckName::Multiplexing => false,
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
pub fn quotable(checks: &[Check], arm: CommandArm) -> bool {
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
            user_instructions: None,
            instructions_vs_baseline: None,
        }
    }

    /// Two kept repetitions of each of `arms`: numbers to judge.
    fn kept_reps(arms: &[CommandArm]) -> Vec<CommandRep> {
        let kept = |arm, round| CommandRep {
            arm,
            round,
            warmup: false,
            failed: false,
            sample: CommandSample::of_wall(1),
        };
        arms.iter()
            .flat_map(|&arm| [kept(arm, 1), kept(arm, 2)])
            .collect()
    }

    #[test]
    fn each_arm_gets_its_cv_bar_and_strict_makes_a_noisy_arm_invalid() {
        let one = CommandArm::Placement(Arm::OnePerCore);
        let class = CommandArm::Class(1);
        let mut checks = arm_checks(
            &[stats(one, Some(0.005)), stats(class, Some(0.05))],
            &kept_reps(&[one, class]),
            0.01,
        );
        assert_eq!(checks[0].status, CheckStatus::Passed);
        assert_eq!(checks[1].name.to_string(), "cv-bar class:1");
        assert_eq!(checks[1].status, CheckStatus::Failed);
        assert!(quotable(&checks, one) && !quotable(&checks, class));
        checks.push(Check::unavailable(CheckName::SameWork, "no PMU"));
        assert!(command_valid(&checks, false));
        assert!(!command_valid(&checks, true));
        // A domain arm's noise, too, is for --strict alone.
        let node = CommandArm::Node(0);
        let noisy = arm_checks(&[stats(node, Some(0.05))], &kept_reps(&[node]), 0.01);
        assert_eq!(noisy[0].name.to_string(), "cv-bar node:0");
        assert!(command_valid(&noisy, false) && !command_valid(&noisy, true));
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
            &kept_reps(&[one, packed]),
            0.01,
        );
        checks.extend(other);
        assert!(quotable(&checks, one) && !quotable(&checks, packed));
        // Marked, as a noisy arm is: invalid only with --strict.
        assert!(command_valid(&checks, false) && !command_valid(&checks, true));
    }

    #[test]
    fn an_arm_whose_every_repetition_failed_has_no_number_and_invalidates() {
        use crate::measure::command::CommandSample;
        use crate::measure::recording::CommandEnd;
        let same = CommandArm::Placement(Arm::SameCpu);
        let rep = |round, failed| CommandRep {
            arm: same,
            round,
            warmup: round == 0,
            failed,
            sample: CommandSample {
                end: CommandEnd::Exited {
                    code: i32::from(failed),
                },
                ..CommandSample::of_wall(1)
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
        let mut checks = vec![
            Check::failed(CheckName::SameWork, "class:1 +12 %"),
            Check::failed(CheckName::Multiplexing, "one-per-core round 2"),
        ];
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

    use crate::judge::command::command_arm_stats;
    use crate::measure::GroupTimes;
    use crate::measure::command::{CommandSample, EventCount, PmuCounts};

    const ONE: CommandArm = CommandArm::Placement(Arm::OnePerCore);
    const PACKED: CommandArm = CommandArm::Placement(Arm::SiblingPacked);

    /// A kept repetition of `arm` whose tree retired `instructions` in user
    /// space, on PMUs `(name, share of the instructions, running ns)`, each
    /// enabled 1000 ns.
    fn counted(
        arm: CommandArm,
        round: usize,
        instructions: u64,
        pmus: &[(&str, u64, u64)],
    ) -> CommandRep {
        let count = |count, running| EventCount {
            count,
            times: GroupTimes {
                time_enabled_ns: 1000,
                time_running_ns: running,
            },
        };
        let pmus = pmus
            .iter()
            .map(|&(name, percent, running)| PmuCounts {
                pmu: (!name.is_empty()).then(|| name.to_string()),
                cycles: count(2 * instructions * percent / 100, running),
                user_instructions: count(instructions * percent / 100, running),
            })
            .collect();
        rep(arm, round, TreeHardware::Counted { pmus })
    }

    /// The same on a machine with one core PMU, never multiplexed.
    fn counted_once(arm: CommandArm, round: usize, instructions: u64) -> CommandRep {
        counted(arm, round, instructions, &[("", 100, 1000)])
    }

    fn rep(arm: CommandArm, round: usize, hardware: TreeHardware) -> CommandRep {
        CommandRep {
            arm,
            round,
            warmup: false,
            failed: false,
            sample: CommandSample {
                hardware,
                ..CommandSample::of_wall(1_000_000)
            },
        }
    }

    fn same_work_of(reps: &[CommandRep], tolerance: f64) -> Check {
        let stats = command_arm_stats(reps, &[ONE, PACKED], ONE, None);
        same_work(reps, &stats, ONE, tolerance)
    }

    #[test]
    fn the_same_work_within_the_tolerance_passes() {
        let reps = [
            counted_once(ONE, 1, 10_000_000),
            counted_once(PACKED, 1, 10_000_400),
            counted_once(ONE, 2, 10_000_200),
            counted_once(PACKED, 2, 10_000_600),
        ];
        let check = same_work_of(&reps, 1e-4);
        assert_eq!(check.status, CheckStatus::Passed, "{}", check.detail);
        assert!(
            check.detail.contains("within ±0.010 %")
                && check
                    .detail
                    .ends_with("(largest move +0.004 % in sibling-packed)"),
            "{}",
            check.detail
        );
        assert_eq!(multiplexing(&reps).status, CheckStatus::Passed);
    }

    /// An arm whose instructions moved fails the check, named with how
    /// much; its numbers are marked (the stats keep the change), not
    /// dropped, and the study stays valid.
    #[test]
    fn an_arm_whose_instructions_moved_fails_by_name_and_is_kept() {
        let reps = [
            counted_once(ONE, 1, 10_000_000),
            counted_once(PACKED, 1, 10_500_000),
            counted_once(ONE, 2, 10_000_000),
            counted_once(PACKED, 2, 10_300_000),
        ];
        let stats = command_arm_stats(&reps, &[ONE, PACKED], ONE, None);
        let check = same_work(&reps, &stats, ONE, SAME_WORK_TOLERANCE);
        assert_eq!(check.status, CheckStatus::Failed);
        assert!(
            check
                .detail
                .contains("beyond the tolerance (±1.000 %) against one-per-core's 10000000: sibling-packed +4.000 % (10400000)"),
            "{}",
            check.detail
        );
        assert!(
            stats[1].wall_s.is_some()
                && stats[1]
                    .instructions_vs_baseline
                    .is_some_and(|c| (c - 0.04).abs() < 1e-9)
        );
        assert!(command_valid(&[check], true));
    }

    #[test]
    fn without_a_pmu_same_work_and_multiplexing_are_unavailable_with_the_reason() {
        let reason =
            "no hardware PMU counts here (perf_event_open for cycles: No such file or directory)";
        let uncounted = |arm, round| {
            rep(
                arm,
                round,
                TreeHardware::Unavailable {
                    reason: reason.into(),
                },
            )
        };
        let reps = [uncounted(ONE, 1), uncounted(PACKED, 1)];
        let check = same_work_of(&reps, SAME_WORK_TOLERANCE);
        assert_eq!(check.status, CheckStatus::Unavailable);
        assert_eq!(check.detail, reason);
        let check = multiplexing(&reps);
        assert_eq!(check.status, CheckStatus::Unavailable);
        assert!(check.detail.ends_with(reason), "{}", check.detail);
    }

    /// A repetition whose counters ran part of their enabled time fails
    /// the multiplexing check, named; its count is left out of the
    /// same-work medians, not scaled.
    #[test]
    fn a_multiplexed_repetition_is_named_and_its_count_left_out() {
        let reps = [
            counted_once(ONE, 1, 10_000_000),
            counted_once(PACKED, 1, 10_000_000),
            counted_once(ONE, 2, 10_000_000),
            counted(PACKED, 2, 6_000_000, &[("", 100, 600)]),
        ];
        let check = multiplexing(&reps);
        assert_eq!(check.status, CheckStatus::Failed);
        assert!(
            check.detail.starts_with(
                "1 of 4 repetitions' hardware counters were multiplexed (their counts are left \
                 out of the same-work check, not scaled; their wall times stand): sibling-packed \
                 round 2: cycles counted 600 ns of 1000 ns enabled, user-space instructions \
                 counted 600 ns of 1000 ns enabled;"
            ),
            "{}",
            check.detail
        );
        assert_eq!(
            same_work_of(&reps, SAME_WORK_TOLERANCE).status,
            CheckStatus::Passed
        );
        // Every count of an arm multiplexed: that arm is not compared.
        let check = same_work_of(&[reps[0].clone(), reps[3].clone()], SAME_WORK_TOLERANCE);
        assert_eq!(check.status, CheckStatus::Unavailable, "{}", check.detail);
        assert!(
            check.detail.contains("in sibling-packed"),
            "{}",
            check.detail
        );
    }

    /// On a hybrid each core PMU counts while the tree is on its CPUs: the
    /// running times together cover the enabled time, and the counts sum.
    #[test]
    fn a_hybrids_pmus_together_count_all_the_time() {
        let split = counted(
            PACKED,
            1,
            10_000_000,
            &[("cpu_core", 70, 700), ("cpu_atom", 30, 300)],
        );
        assert_eq!(multiplexing_offence(&split.sample.hardware), None);
        assert_eq!(split.sample.hardware.user_instructions(), Some(10_000_000));
        let short = counted(
            PACKED,
            1,
            10_000_000,
            &[("cpu_core", 70, 600), ("cpu_atom", 30, 300)],
        );
        assert_eq!(
            multiplexing_offence(&short.sample.hardware).as_deref(),
            Some(
                "cycles counted 900 ns of 1000 ns enabled, user-space instructions counted 900 ns of 1000 ns enabled"
            )
        );
        let reps = [counted_once(ONE, 1, 10_000_000), split];
        assert_eq!(
            same_work_of(&reps, SAME_WORK_TOLERANCE).status,
            CheckStatus::Passed
        );
    }

    #[test]
    fn the_new_check_names_round_trip() {
        for name in [
            "cv-bar class:3",
            "placement-held",
            "same-work",
            "cv-bar same-cpu",
            "cv-bar step:2",
            "repetitions step:4",
            "other-load step:3",
            "cv-bar cpu:5",
            "repetitions cpu:12",
            "other-load cpu:1",
            "membind",
        ] {
            let parsed: CheckName = name.parse().unwrap();
            assert_eq!(parsed.to_string(), name);
        }
        assert!("cv-bar class:x".parse::<CheckName>().is_err());
        assert!("cv-bar cpu:-1".parse::<CheckName>().is_err());
    }

    #[test]
    fn a_commands_membind_says_what_was_set_and_what_is_not_located() {
        let placement = |arm, membind: Option<Vec<u32>>| CommandPlacement {
            arm,
            cpus: crate::cpuset::CpuSet::from_cpus([0]),
            membind,
        };
        assert_eq!(membind_set(&[placement(CommandArm::Node(0), None)]), None);
        let check = membind_set(&[
            placement(CommandArm::Node(0), Some(vec![0])),
            placement(CommandArm::Node(1), Some(vec![0, 1])),
        ])
        .unwrap();
        assert_eq!(check.status, CheckStatus::Unavailable);
        assert!(
            check.detail.contains(
                "(node:0 on node 0, node:1 on nodes 0-1); where its pages went is not located"
            ),
            "{}",
            check.detail
        );
        // Not located is not failed: the study stays valid.
        assert!(command_valid(&[check], true));
    }
}
