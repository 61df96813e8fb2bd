//! `placement-study gate`: the SMT co-location gate and its verdict.

use super::{Outputs, Source, TerminalProgress, to_json};
use crate::exit::Outcome;
use crate::judge::gate::GateRule;
use crate::measure::{EngineSession, MeasureOptions, stop};
use crate::report;
use crate::saved::{GateResult, write_stdout};
use crate::study::LazyMeasure;
use crate::study::gate::gate_session;
use anyhow::Result;

pub struct GateCommand {
    pub source: Source,
    pub measure: MeasureOptions,
    pub rule: GateRule,
    pub outputs: Outputs,
    /// Print only the verdict word.
    pub quiet: bool,
}

pub fn run(command: &GateCommand) -> Result<Outcome> {
    let topology = command.source.probe_to_measure()?;
    let mut engine = LazyMeasure::new(|| EngineSession::start(&command.measure, &topology));
    let result = gate_session(
        &topology,
        &command.rule,
        &mut engine,
        &mut TerminalProgress::default(),
    )?;
    if command.quiet {
        write_stdout(&format!("{}\n", result.verdict.as_str()))?;
    } else {
        command.outputs.write(
            &report::gate::render(&result),
            || to_json(&result),
            || report::csv::samples(&result.samples),
        )?;
    }
    Ok(gate_outcome(&result))
}

/// The verdict, or the signal that stopped the gate before one.
pub fn gate_outcome(result: &GateResult) -> Outcome {
    match stop::stop_signal() {
        Some(signal) if !result.complete => Outcome::Stopped(signal),
        _ => Outcome::Verdict(result.verdict),
    }
}
