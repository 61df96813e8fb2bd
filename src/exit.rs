//! Every exit status the tool uses, in one table. Scripts and sysadmins
//! depend on these (`placement-study gate -q && run-the-study`; a Slurm
//! health check on `gate`'s status), so they never change meaning. `main`
//! is the one place where an [`Outcome`] becomes a status; `--help` and the
//! man page quote [`EXIT_STATUSES`], each command's own rows in its own
//! `--help`.

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
    /// `--baseline`: a row's whole interval lies beyond the threshold, the
    /// worse way.
    Regressed,
    /// `--baseline` with `--fail-on inconclusive`: nothing regressed, but a
    /// row's interval reaches across the threshold.
    Undecided,
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
            | Outcome::Classes(ClassVerdict::Inconclusive)
            | Outcome::Undecided => 5,
            Outcome::InvalidRun => 6,
            Outcome::Regressed => 7,
            // As a shell reports a process its signal ended: 128 + the number.
            Outcome::Stopped(signal) => 128 + signal.signal_number() as u8,
            Outcome::Passthrough(status) => status,
        }
    }
}

/// Every command, by the name it is typed with: each has its own
/// statuses in [`EXIT_STATUSES`] and its own "Exit status" in `--help`.
pub const COMMANDS: [&str; 12] = [
    "topology",
    "snapshot",
    "gate",
    "pairs",
    "latency",
    "memory",
    "run",
    "hybrid",
    "observe",
    "report",
    "completions",
    "man",
];

/// The commands that measure: they catch SIGINT and SIGTERM, write what
/// they measured and exit 128 + the signal's number.
const MEASURING: &[&str] = &["gate", "pairs", "latency", "run", "hybrid", "observe"];

/// One status's meaning for the commands it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusRow {
    pub status: u8,
    /// The commands that exit with it meaning this.
    pub commands: &'static [&'static str],
    pub meaning: &'static str,
}

const fn row(status: u8, commands: &'static [&'static str], meaning: &'static str) -> StatusRow {
    StatusRow {
        status,
        commands,
        meaning,
    }
}

/// Every status with its meaning for each command, in order of status: the
/// one table that the top-level `--help`, each command's `--help` and (a
/// test keeps them in step) the man page's EXIT STATUS list.
pub const EXIT_STATUSES: &[StatusRow] = &[
    row(
        0,
        &["topology", "snapshot", "report", "completions", "man"],
        "success",
    ),
    row(0, &["gate"], "physical (SMT siblings slow each other)"),
    row(0, &["run"], "a valid run"),
    row(
        0,
        &["pairs"],
        "the measured and published sibling maps agree",
    ),
    row(
        0,
        &["latency"],
        "the measured domains agree with the published ones at every level",
    ),
    row(
        0,
        &["memory"],
        "the ladder's steps agree with the published cache sizes and the latency ratios with the published node distances",
    ),
    row(
        0,
        &["hybrid"],
        "a valid study whose measured classes agree with the published ones",
    ),
    row(
        0,
        &["observe"],
        "with --pid or --kernel, a valid observation",
    ),
    row(
        ERROR,
        &COMMANDS,
        "error (unreadable input, failed measurement, unwritable output)",
    ),
    row(
        USAGE,
        &COMMANDS,
        "usage: an unknown option or an option value out of range",
    ),
    row(USAGE, &["run"], "or arms this machine cannot place"),
    row(
        3,
        &["gate"],
        "virtual (the affinity mask moved nothing physical)",
    ),
    row(
        3,
        &["run"],
        "stopped at its gate, which said virtual (the affinity mask moved nothing physical)",
    ),
    row(3, &["pairs"], "the maps differ (fake or hidden siblings)"),
    row(
        3,
        &["latency"],
        "the domains differ at some level (fake or hidden pairs)",
    ),
    row(
        3,
        &["memory"],
        "the caches or the distances differ (a fake or hidden cache level, a distance the latencies do not bear out)",
    ),
    row(
        3,
        &["hybrid"],
        "the measured core classes differ from the published ones",
    ),
    row(
        4,
        &["gate"],
        "no-smt (no core has two allowed hardware threads; run studies the arms it can place there)",
    ),
    row(
        5,
        &["gate"],
        "inconclusive (the interval straddles the threshold, or which CPUs share a core is unknown)",
    ),
    row(
        5,
        &["run"],
        "stopped at its gate, which said inconclusive (the interval straddles the threshold, or which CPUs share a core is unknown)",
    ),
    row(
        5,
        &["pairs"],
        "inconclusive (a pair undecided, the control failed, or the time budget ran out)",
    ),
    row(
        5,
        &["latency"],
        "inconclusive (a pair not measured, the control or pinning failed)",
    ),
    row(
        5,
        &["memory"],
        "inconclusive (a level beyond the ladder, a buffer that did not land on its node)",
    ),
    row(5, &["hybrid"], "a baseline CPU without a measured round"),
    row(
        5,
        &["report"],
        "with --baseline and --fail-on inconclusive: no row regressed, but one is inconclusive",
    ),
    row(
        5,
        &["gate", "pairs", "latency", "run", "hybrid"],
        "or, with --baseline NAME and --fail-on inconclusive, a row against it inconclusive",
    ),
    row(
        6,
        &["run", "hybrid"],
        "invalid (pinning, multiplexing or invariance failed; an arm, step or class kept no repetition; with --strict, an arm over the CV bar)",
    ),
    row(
        6,
        &["observe"],
        "with --pid or --kernel, invalid (residency and task-clock differ by more than 1 %, or records were lost)",
    ),
    row(
        7,
        &["gate", "pairs", "latency", "run", "hybrid", "report"],
        "with --baseline: a row regressed (its whole 95 % interval beyond the threshold)",
    ),
    row(
        130,
        MEASURING,
        "stopped by SIGINT (Ctrl-C); the results so far are written, marked incomplete",
    ),
    row(
        143,
        MEASURING,
        "stopped by SIGTERM; the results so far are written, marked incomplete",
    ),
];

/// What `observe -- COMMAND` exits with instead of the table's statuses.
pub const PASSTHROUGH: &str = "observe -- COMMAND exits with COMMAND's own status (128 + N when signal N ended it), as time and perf stat do; its report says whether the observation was valid";

/// The statuses `command` exits with, each with its meanings there, in
/// order.
pub fn statuses_of(command: &str) -> Vec<(u8, Vec<&'static str>)> {
    let mut statuses: Vec<(u8, Vec<&'static str>)> = Vec::new();
    for row in EXIT_STATUSES
        .iter()
        .filter(|row| row.commands.contains(&command))
    {
        match statuses.last_mut() {
            Some((status, meanings)) if *status == row.status => meanings.push(row.meaning),
            _ => statuses.push((row.status, vec![row.meaning])),
        }
    }
    statuses
}

/// [`EXIT_STATUSES`] as the lines of the top-level `--help`'s "Exit
/// status" section: each status's meanings, each under the commands it
/// is theirs ("gate: physical (…)"), the ones of every command bare.
pub fn help_text() -> String {
    let mut lines: Vec<(u8, Vec<String>)> = Vec::new();
    for row in EXIT_STATUSES {
        let meaning = if row.commands.len() == COMMANDS.len() {
            row.meaning.to_owned()
        } else {
            format!("{}: {}", row.commands.join(", "), row.meaning)
        };
        match lines.last_mut() {
            Some((status, meanings)) if *status == row.status => meanings.push(meaning),
            _ => lines.push((row.status, vec![meaning])),
        }
    }
    let mut text = String::from("Exit status (each command's --help lists its own):\n");
    for (status, meanings) in lines {
        text.push_str(&format!("  {status:>3}  {}\n", meanings.join("; ")));
    }
    text.push_str(&format!("  {PASSTHROUGH}\n"));
    text
}

/// `command`'s own "Exit status" section of its `--help`: only the
/// statuses it exits with, in its own words.
pub fn help_text_of(command: &str) -> String {
    let mut text = String::from("Exit status:\n");
    for (status, meanings) in statuses_of(command) {
        text.push_str(&format!("  {status:>3}  {}\n", meanings.join("; ")));
    }
    if command == "observe" {
        text.push_str(&format!("  {PASSTHROUGH}\n"));
    }
    if !MEASURING.contains(&command) {
        text.push_str(
            "  A signal ends it as it ends any program (the shell reports 128 + the signal's number).\n",
        );
    }
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
            Outcome::Regressed,
            Outcome::Undecided,
            Outcome::Stopped(StopSignal::Interrupt),
            Outcome::Stopped(StopSignal::Terminate),
        ];
        let statuses: Vec<u8> = outcomes.iter().map(|o| o.exit_status()).collect();
        assert_eq!(statuses, [0, 0, 3, 4, 5, 6, 7, 5, 130, 143]);
        for status in statuses {
            assert!(EXIT_STATUSES.iter().any(|row| row.status == status));
        }
    }

    /// Every row names known commands, and every command has a success, an
    /// error and a usage status.
    #[test]
    fn every_command_has_its_statuses() {
        for row in EXIT_STATUSES {
            assert!(row.commands.iter().all(|c| COMMANDS.contains(c)), "{row:?}");
        }
        for command in COMMANDS {
            let statuses: Vec<u8> = statuses_of(command).iter().map(|(s, _)| *s).collect();
            assert_eq!(statuses[..3], [0, ERROR, USAGE], "{command}");
            assert!(statuses.is_sorted(), "{command}: {statuses:?}");
        }
    }
}
