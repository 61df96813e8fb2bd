//! `placement-study hybrid`: core classes measured, and static shares
//! against work stealing across them.

use super::shared::{Outputs, Source, TerminalProgress, unless_stopped};
use crate::exit::Outcome;
use crate::measure::EngineSession;
use crate::report::document::Document;
use crate::study::LazyMeasure;
use crate::study::hybrid::{HybridStudyOptions, hybrid_study};
use anyhow::Result;

pub struct HybridCommand {
    pub source: Source,
    pub study: HybridStudyOptions,
    pub outputs: Outputs,
}

pub fn run(command: &HybridCommand) -> Result<Outcome> {
    let topology = command.source.probe_to_measure()?;
    let engine_options = command.study.engine();
    let mut engine = LazyMeasure::new(|| EngineSession::start(&engine_options, &topology));
    let result = hybrid_study(
        &topology,
        &command.study,
        &mut engine,
        &mut TerminalProgress::default(),
    )?;
    command.outputs.emit(&result)?;
    Ok(unless_stopped(result.head.complete, result.outcome()))
}
