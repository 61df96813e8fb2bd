//! One module per subcommand: each wires probe → plan → measure → judge →
//! report together and returns the process exit code.

pub mod gate;
pub mod measuring;
pub mod report;
pub mod run;
pub mod snapshot;
pub mod topology;

use crate::cli::Command;
use anyhow::Result;

/// Runs one subcommand; `Ok` carries the exit status.
pub fn dispatch(command: &Command) -> Result<i32> {
    match command {
        Command::Topology(args) => topology::run(args),
        Command::Snapshot(args) => snapshot::run(args),
        Command::Gate(args) => gate::run(args),
        Command::Run(args) => run::run(args),
        Command::Report(args) => report::run(args),
    }
}
