//! Every exit status the tool uses, in one table. Scripts and sysadmins
//! depend on these (`placement-study gate -q && run-the-study`; a Slurm
//! health check on `gate`'s status), so they never change meaning. `main`
//! is the one place where an [`Outcome`] becomes a status; `--help` and the
//! man page quote [`EXIT_STATUSES`].

use crate::judge::gate::Verdict;
use crate::judge::hybrid::ClassVerdict;
use crate::judge::pairs::MapVerdict;
use crate::measure::stop::StopSignal;

/// How a command ended, before it becomes an exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It did what was asked (`gate`: physical; `run`: a valid run).
    Success,
    /// The gate's verdict, from `gate`, or from `run` stopping at its gate.
    Verdict(Verdict),
    /// `pairs` and `latency`: the measured map against the published one.
    Map(MapVerdict),
    /// `hybrid`: a valid study; the measured classes against the published.
    Classes(ClassVerdict),
    /// `run` or `hybrid` measured, but a validity check failed.
    InvalidRun,
    /// A signal stopped it; what was measured was saved, marked incomplete.
    Stopped(StopSignal),
    /// `observe -- COMMAND`: the command's own status, passed through.
    Passthrough(u8),
}

/// Any error that is not an outcome: an unreadable file, a failed measurement.
pub const ERROR: u8 = 1;
/// A command line or option value that does not parse or is out of range.
pub const USAGE: u8 = 2;

/// A command line that parsed but asks for what this machine cannot do (an
/// arm it cannot place), found only once the machine is probed: exits
/// [`USAGE`], like a bad option. The message names a command that works.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

impl Outcome {
    /// A study's outcome: success where its numbers are valid, else an
    /// invalid run (exit 6).
    pub fn of_study(valid: bool) -> Outcome {
        if valid {
            Outcome::Success
        } else {
            Outcome::InvalidRun
        }
    }

    /// The process exit status.
    pub fn exit_status(self) -> u8 {
        match self {
            Outcome::Success
            | Outcome::Verdict(Verdict::Physical)
            | Outcome::Map(MapVerdict::Agree)
            | Outcome::Classes(ClassVerdict::Agree) => 0,
            Outcome::Verdict(Verdict::Virtual)
            | Outcome::Map(MapVerdict::Differ)
            | Outcome::Classes(ClassVerdict::Differ) => 3,
            Outcome::Verdict(Verdict::NoSmt) => 4,
            Outcome::Verdict(Verdict::Inconclusive)
            | Outcome::Map(MapVerdict::Inconclusive)
            | Outcome::Classes(ClassVerdict::Inconclusive) => 5,
            Outcome::InvalidRun => 6,
            // As a shell reports a process its signal ended: 128 + the number.
            Outcome::Stopped(signal) => 128 + signal.signal_number() as u8,
            Outcome::Passthrough(status) => status,
        }
    }
}

/// Every status with its meaning, in order: the table `--help` prints and
/// the man page's EXIT STATUS section lists (a test keeps them in step).
pub const EXIT_STATUSES: &[(u8, &str)] = &[
    (
        0,
        "success; gate: physical (SMT siblings slow each other); run: a valid run; pairs: the measured and published sibling maps agree; latency: the measured domains agree with the published ones at every level; hybrid: a valid study whose measured classes agree with the published ones; observe --pid or --kernel: a valid observation",
    ),
    (
        ERROR,
        "error (unreadable input, failed measurement, unwritable output)",
    ),
    (
        USAGE,
        "usage: an unknown option or an option value out of range, or run arms this machine cannot place",
    ),
    (
        3,
        "gate and run (stopped at its gate): virtual (the affinity mask moved nothing physical); pairs: the maps differ (fake or hidden siblings); latency: the domains differ at some level (fake or hidden pairs); hybrid: the measured core classes differ from the published ones",
    ),
    (
        4,
        "gate: no-smt (no core has two allowed hardware threads; run studies the arms it can place there)",
    ),
    (
        5,
        "gate and run (stopped at its gate): inconclusive (the interval straddles the threshold, or which CPUs share a core is unknown); pairs: inconclusive (a pair undecided, the control failed, or the time budget ran out); latency: inconclusive (a pair not measured, the control or pinning failed); hybrid: a baseline CPU without a measured round",
    ),
    (
        6,
        "run, hybrid: invalid (pinning, multiplexing or invariance failed; with --strict, an arm over the CV bar); observe --pid or --kernel: invalid (residency and task-clock differ by more than 1 %, or records were lost)",
    ),
    (
        130,
        "stopped by SIGINT (Ctrl-C); the results so far are written, marked incomplete",
    ),
    (
        143,
        "stopped by SIGTERM; the results so far are written, marked incomplete",
    ),
];

/// What `observe -- COMMAND` exits with instead of the table's statuses.
pub const PASSTHROUGH: &str = "observe -- COMMAND exits with COMMAND's own status (128 + N when signal N ended it), as time and perf stat do; its report says whether the observation was valid";

/// [`EXIT_STATUSES`] as the lines of `--help`'s "Exit status" section.
pub fn help_text() -> String {
    let mut text = String::from("Exit status:\n");
    for (status, meaning) in EXIT_STATUSES {
        text.push_str(&format!("  {status:>3}  {meaning}\n"));
    }
    text.push_str(&format!("  {PASSTHROUGH}\n"));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_has_a_documented_status() {
        let outcomes = [
            Outcome::Success,
            Outcome::Verdict(Verdict::Physical),
            Outcome::Verdict(Verdict::Virtual),
            Outcome::Verdict(Verdict::NoSmt),
            Outcome::Verdict(Verdict::Inconclusive),
            Outcome::InvalidRun,
            Outcome::Stopped(StopSignal::Interrupt),
            Outcome::Stopped(StopSignal::Terminate),
        ];
        let statuses: Vec<u8> = outcomes.iter().map(|o| o.exit_status()).collect();
        assert_eq!(statuses, [0, 0, 3, 4, 5, 6, 130, 143]);
        for status in statuses {
            assert!(EXIT_STATUSES.iter().any(|(s, _)| *s == status));
        }
    }
}
