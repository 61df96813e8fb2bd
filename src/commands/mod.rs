//! One module per subcommand, each a few dozen lines: checked options →
//! probe → study → render → [`Outcome`]. The options come from
//! [`crate::options`]; no command sees a clap type.

pub mod baseline;
pub mod completions;
pub mod gate;
pub mod hybrid;
pub mod latency;
pub mod man;
pub mod memory;
pub mod observe;
pub mod pairs;
pub mod report;
pub mod run;
pub mod snapshot;
pub mod topology;

mod shared;

use crate::exit::Outcome;
use anyhow::Result;
pub use shared::{Outputs, Source, TerminalProgress, unless_stopped};

/// A subcommand with its checked options.
pub enum Command {
    Topology(topology::TopologyCommand),
    Snapshot(snapshot::SnapshotCommand),
    Gate(gate::GateCommand),
    Pairs(pairs::PairsCommand),
    Latency(latency::LatencyCommand),
    Memory(memory::MemoryCommand),
    Run(run::RunCommand),
    Hybrid(hybrid::HybridCommand),
    Observe(observe::ObserveCommand),
    Report(report::ReportCommand),
    Completions(completions::CompletionsCommand),
    /// `man`: it takes no options.
    Man,
}

/// Runs one subcommand to its outcome (a verdict as success under
/// `--exit-zero`).
pub fn dispatch(command: Command) -> Result<Outcome> {
    let exit_zero = match &command {
        Command::Topology(command) => command.outputs.exit_zero,
        Command::Gate(command) => command.outputs.exit_zero,
        Command::Pairs(command) => command.outputs.exit_zero,
        Command::Latency(command) => command.outputs.exit_zero,
        Command::Memory(command) => command.outputs.exit_zero,
        Command::Hybrid(command) => command.outputs.exit_zero,
        Command::Report(command) => command.outputs.exit_zero,
        _ => false,
    };
    let outcome = match command {
        Command::Topology(command) => topology::run(&command),
        Command::Snapshot(command) => snapshot::run(&command),
        Command::Gate(command) => gate::run(&command),
        Command::Pairs(command) => pairs::run(&command),
        Command::Latency(command) => latency::run(&command),
        Command::Memory(command) => memory::run(&command),
        Command::Run(command) => run::run(&command),
        Command::Hybrid(command) => hybrid::run(&command),
        Command::Observe(command) => observe::run(&command),
        Command::Report(command) => report::run(&command),
        Command::Completions(command) => completions::run(&command),
        Command::Man => man::run(),
    }?;
    Ok(match outcome {
        Outcome::Verdict(_) | Outcome::Map(_) | Outcome::Classes(_) | Outcome::InvalidRun
            if exit_zero =>
        {
            Outcome::Success
        }
        outcome => outcome,
    })
}
