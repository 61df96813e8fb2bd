//! Whether a run's numbers may be quoted at all: the one rule that `run`
//! applies and `report` re-derives from a saved file.

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
    /// `--membind`: a worker's buffer had pages off its arm's nodes.
    MemoryElsewhere,
    /// `--strict`, and these arms are over the CV bar.
    NotQuotable(Vec<Arm>),
    /// These arms, steps, classes or CPUs alone kept no repetition (each
    /// was excluded or failed, or none was measured): they have no number
    /// at all, and nothing measured is never valid.
    NothingMeasured(Vec<String>),
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
            InvalidReason::MemoryElsewhere => f.write_str(
                "a worker's buffer had pages off its arm's --membind nodes (membind failed)",
            ),
            InvalidReason::NotQuotable(arms) => {
                let names: Vec<&str> = arms.iter().map(|a| a.as_str()).collect();
                write!(f, "--strict and over the CV bar: {}", names.join(", "))
            }
            InvalidReason::NothingMeasured(subjects) => write!(
                f,
                "nothing measured, no number left: {}",
                subjects.join(", ")
            ),
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

/// Judges a run (or a `hybrid` study) from its checks. Pinning,
/// multiplexing and invariance failures always invalidate it; an arm whose
/// CV-bar check did not pass is "not quotable" and invalidates the run only
/// with `strict`, since its numbers are measured correctly, just not
/// precisely enough.
pub fn judge_run(checks: &[Check], strict: bool) -> Validity {
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
        (CheckName::Membind, InvalidReason::MemoryElsewhere),
    ] {
        if failed(name) {
            reasons.push(reason);
        }
    }
    let noisy: Vec<Arm> = checks
        .iter()
        .filter_map(|c| match c.name {
            CheckName::CvBar(arm) if c.status != CheckStatus::Passed => Some(arm),
            _ => None,
        })
        .collect();
    if strict && !noisy.is_empty() {
        reasons.push(InvalidReason::NotQuotable(noisy));
    }
    let emptied: Vec<String> = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Failed)
        .filter_map(|c| c.name.nothing_kept_subject())
        .collect();
    if !emptied.is_empty() {
        reasons.push(InvalidReason::NothingMeasured(emptied));
    }
    Validity { reasons }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_checks_invalidate_and_noise_only_under_strict() {
        let checks = [
            Check::passed(CheckName::CvBar(Arm::OnePerCore), ""),
            Check::failed(CheckName::CvBar(Arm::SiblingPacked), ""),
            Check::passed(CheckName::Pinning, ""),
            Check::failed(CheckName::Invariance, ""),
            Check::unavailable(CheckName::Multiplexing, ""),
        ];
        assert_eq!(
            judge_run(&checks, false).reasons,
            [InvalidReason::CountersNotOnWorkers]
        );
        assert_eq!(
            judge_run(&checks[..3], true).reasons,
            [InvalidReason::NotQuotable(vec![Arm::SiblingPacked])]
        );
        assert!(judge_run(&checks[..3], false).is_valid());
    }

    #[test]
    fn an_arm_with_every_repetition_excluded_invalidates_without_strict() {
        let checks = [
            Check::unavailable(
                CheckName::CvBar(Arm::SiblingPacked),
                "fewer than 2 measured repetitions",
            ),
            Check::failed(CheckName::Repetitions(Arm::SiblingPacked), ""),
        ];
        let validity = judge_run(&checks, false);
        assert_eq!(
            validity.reasons,
            [InvalidReason::NothingMeasured(vec![
                "sibling-packed".into()
            ])]
        );
        assert_eq!(
            validity.reasons[0].to_string(),
            "nothing measured, no number left: sibling-packed"
        );
        // Merely unquotable (under 2 repetitions, none excluded) is not invalid.
        assert!(judge_run(&checks[..1], false).is_valid());
    }
}
