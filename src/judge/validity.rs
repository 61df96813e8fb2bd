//! Whether a run's numbers may be quoted at all: the one rule that `run`
//! applies and `report` re-derives from a saved file.

use crate::judge::arms::ArmStats;
use crate::judge::checks::{Check, CheckName, CheckStatus};
use crate::plan::Arm;
use std::fmt;

/// Why a run is invalid. Each is a failed check that breaks what every
/// number claims; a noisy arm only counts under `--strict`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InvalidReason {
    /// A pinned thread left its CPU: its arm measured another placement.
    Moved,
    /// A counter group was time-shared: its counts cover part of the work.
    Multiplexed,
    /// Instructions per byte varied, or were off the kernel's constant: the
    /// counters were not on the workers.
    CountersNotOnWorkers,
    /// `--strict`, and these arms are over the CV bar.
    NotQuotable(Vec<Arm>),
}

impl fmt::Display for InvalidReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidReason::Moved => f.write_str("a thread moved off its CPU (pinning failed)"),
            InvalidReason::Multiplexed => {
                f.write_str("a counter group was multiplexed (its counts cover part of the work)")
            }
            InvalidReason::CountersNotOnWorkers => {
                f.write_str(
                "the counters were not on the workers (instructions per byte varied or were off the kernel's constant)",
            )
            }
            InvalidReason::NotQuotable(arms) => {
                let names: Vec<&str> = arms.iter().map(|a| a.as_str()).collect();
                write!(f, "--strict and over the CV bar: {}", names.join(", "))
            }
        }
    }
}

/// The verdict on a run: valid when no reason stands against it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Validity {
    pub reasons: Vec<InvalidReason>,
}

impl Validity {
    pub fn is_valid(&self) -> bool {
        self.reasons.is_empty()
    }
}

/// Judges a run from its checks and arms. Pinning, multiplexing and
/// invariance failures always invalidate it; an arm over the CV bar is
/// marked "not quotable" and invalidates the run only with `strict`,
/// since its numbers are measured correctly, just not precisely enough.
pub fn judge_run(checks: &[Check], arms: &[ArmStats], strict: bool) -> Validity {
    let failed = |name: CheckName| {
        checks
            .iter()
            .any(|c| c.name == name && c.status == CheckStatus::Failed)
    };
    let mut reasons = Vec::new();
    for (name, reason) in [
        (CheckName::Pinning, InvalidReason::Moved),
        (CheckName::Multiplexing, InvalidReason::Multiplexed),
        (CheckName::Invariance, InvalidReason::CountersNotOnWorkers),
    ] {
        if failed(name) {
            reasons.push(reason);
        }
    }
    let noisy: Vec<Arm> = arms
        .iter()
        .filter(|a| !a.quotable)
        .map(|a| a.name)
        .collect();
    if strict && !noisy.is_empty() {
        reasons.push(InvalidReason::NotQuotable(noisy));
    }
    Validity { reasons }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(name: Arm, quotable: bool) -> ArmStats {
        ArmStats {
            name,
            cpus: vec![Some(0)],
            clock: crate::measure::ClockKind::Tsc,
            cost: None,
            tsc_per_byte: None,
            instructions_per_byte: None,
            l1i_misses_per_kilo_instruction: None,
            effective_ghz: None,
            throughput_bytes_per_s: None,
            task_clock_ms: None,
            quotable,
            change_vs_one_per_core: None,
        }
    }

    #[test]
    fn failed_checks_invalidate_and_noise_only_under_strict() {
        let checks = [
            Check::passed(CheckName::Pinning, ""),
            Check::failed(CheckName::Invariance, ""),
            Check::unavailable(CheckName::Multiplexing, ""),
        ];
        let arms = [arm(Arm::OnePerCore, true), arm(Arm::SiblingPacked, false)];
        assert_eq!(
            judge_run(&checks, &arms, false).reasons,
            [InvalidReason::CountersNotOnWorkers]
        );
        assert_eq!(
            judge_run(&checks[..1], &arms, true).reasons,
            [InvalidReason::NotQuotable(vec![Arm::SiblingPacked])]
        );
        assert!(judge_run(&checks[..1], &arms, false).is_valid());
    }
}
