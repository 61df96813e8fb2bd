//! `placement-study pairs`: the measured sibling map against the published one.

use super::{Outputs, Source, TerminalProgress, to_json};
use crate::exit::Outcome;
use crate::measure::{EngineSession, stop};
use crate::report;
use crate::saved::write_stdout;
use crate::study::LazyMeasure;
use crate::study::pairs::{PairsStudyOptions, pairs_study};
use anyhow::Result;

pub struct PairsCommand {
    pub source: Source,
    pub study: PairsStudyOptions,
    pub outputs: Outputs,
    /// Print only the verdict word.
    pub quiet: bool,
}

pub fn run(command: &PairsCommand) -> Result<Outcome> {
    let topology = command.source.probe_to_measure()?;
    let mut engine = LazyMeasure::new(|| EngineSession::start(&command.study.measure, &topology));
    let result = pairs_study(
        &topology,
        &command.study,
        &mut engine,
        &mut TerminalProgress::default(),
    )?;
    if command.quiet {
        write_stdout(&format!("{}\n", result.verdict.as_str()))?;
    } else {
        command.outputs.write(
            &report::pairs::render(&result),
            || to_json(&result),
            || report::csv::comparisons(&result.comparisons),
        )?;
    }
    Ok(match stop::stop_signal() {
        Some(signal) if !result.complete => Outcome::Stopped(signal),
        _ => Outcome::Map(result.verdict),
    })
}
