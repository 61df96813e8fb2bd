//! One module per subcommand, each a few dozen lines: checked options →
//! probe → study → render → [`Outcome`]. The options come from
//! [`crate::options`]; no command sees a clap type.

pub mod gate;
pub mod hybrid;
pub mod observe;
pub mod pairs;
pub mod report;
pub mod run;
pub mod snapshot;
pub mod topology;

use crate::exit::Outcome;
use crate::measure::stop;
use crate::probe::{self, CpuidSource, Topology};
use crate::saved::{OutputTarget, write_all_to, write_stdout};
use crate::study::Progress;
use anyhow::Result;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// A subcommand with its checked options.
pub enum Command {
    Topology(topology::TopologyCommand),
    Snapshot(snapshot::SnapshotCommand),
    Gate(gate::GateCommand),
    Pairs(pairs::PairsCommand),
    Run(run::RunCommand),
    Hybrid(hybrid::HybridCommand),
    Observe(observe::ObserveCommand),
    Report(report::ReportCommand),
}

/// Runs one subcommand to its outcome.
pub fn dispatch(command: Command) -> Result<Outcome> {
    match command {
        Command::Topology(command) => topology::run(&command),
        Command::Snapshot(command) => snapshot::run(&command),
        Command::Gate(command) => gate::run(&command),
        Command::Pairs(command) => pairs::run(&command),
        Command::Run(command) => run::run(&command),
        Command::Hybrid(command) => hybrid::run(&command),
        Command::Observe(command) => observe::run(&command),
        Command::Report(command) => report::run(&command),
    }
}

/// Where the machine's facts come from, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// A snapshot folder holding `sys/` and `proc/`; `None` for this machine.
    pub sysfs_root: Option<PathBuf>,
    /// Where CPUID comes from; `None` not to read it.
    pub cpuid: Option<CpuidSource>,
}

impl Source {
    /// Probes the machine this source describes.
    pub fn probe(&self) -> Result<Topology> {
        probe::probe(self.sysfs_root.as_deref(), self.cpuid.as_ref())
    }

    /// For a command that measures: installs the stop handlers first, so a
    /// signal during probing or calibration is not lost, then probes.
    pub fn probe_to_measure(&self) -> Result<Topology> {
        stop::install_stop_handlers()?;
        self.probe()
    }
}

/// The `--json` and `--csv` targets, checked before anything ran.
#[derive(Default)]
pub struct Outputs {
    pub json: Option<OutputTarget>,
    pub csv: Option<OutputTarget>,
}

impl Outputs {
    /// Writes the JSON and CSV renderings where they were asked for, then
    /// the human view: to stdout, or to stderr when stdout carries a file,
    /// so the two never mix.
    pub fn write(
        &self,
        human: &str,
        json: impl FnOnce() -> Result<String>,
        csv: impl FnOnce() -> String,
    ) -> Result<()> {
        if let Some(target) = &self.json {
            target.write(json()?.as_bytes())?;
        }
        if let Some(target) = &self.csv {
            target.write(csv().as_bytes())?;
        }
        if self.carry_stdout() {
            write_all_to(
                &mut std::io::stderr().lock(),
                human.as_bytes(),
                "standard error",
            )
        } else {
            write_stdout(human)
        }
    }

    /// For a command that ends in a verdict: with `-q` (`quiet`) only the
    /// verdict word, otherwise [`Outputs::write`].
    pub fn write_verdict(
        &self,
        quiet: bool,
        word: &str,
        human: &str,
        json: impl FnOnce() -> Result<String>,
        csv: impl FnOnce() -> String,
    ) -> Result<()> {
        if quiet {
            write_stdout(&format!("{word}\n"))
        } else {
            self.write(human, json, csv)
        }
    }

    /// Does a result file go to standard output?
    fn carry_stdout(&self) -> bool {
        [&self.json, &self.csv]
            .into_iter()
            .flatten()
            .any(OutputTarget::is_stdout)
    }
}

/// How a command that measured ended: the signal that stopped it, when
/// its result is incomplete; otherwise `outcome`.
pub fn unless_stopped(complete: bool, outcome: Outcome) -> Outcome {
    match stop::stop_signal() {
        Some(signal) if !complete => Outcome::Stopped(signal),
        _ => outcome,
    }
}

/// JSON as every command writes it: pretty, with a final newline.
pub fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// A progress line on stderr, redrawn in place, only when stderr is a
/// terminal (never in a log or a pipe).
pub struct TerminalProgress {
    enabled: bool,
}

impl Default for TerminalProgress {
    fn default() -> TerminalProgress {
        TerminalProgress {
            enabled: std::io::stderr().is_terminal(),
        }
    }
}

impl Progress for TerminalProgress {
    fn update(&mut self, message: &str) {
        if self.enabled {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "\r\x1b[2K{message}");
            let _ = stderr.flush();
        }
    }

    fn done(&mut self) {
        self.update("");
    }
}
