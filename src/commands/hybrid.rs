//! `placement-study hybrid`: core classes measured, and static shares
//! against work stealing across them.

use super::baseline::NamedBaselines;
use super::shared::{Outputs, Source, TerminalProgress, unless_stopped};
use crate::exit::Outcome;
use crate::measure::EngineSession;
use crate::report::document::Document;
use crate::saved::DocumentKind;
use crate::study::LazyMeasure;
use crate::study::host_name;
use crate::study::hybrid::{HybridStudyOptions, hybrid_study};
use anyhow::Result;

pub struct HybridCommand {
    pub source: Source,
    pub study: HybridStudyOptions,
    pub outputs: Outputs,
    /// `--save-baseline`, `--baseline NAME`.
    pub named: NamedBaselines,
}

pub fn run(command: &HybridCommand) -> Result<Outcome> {
    command
        .named
        .check_before(&host_name(), &[DocumentKind::Hybrid])?;
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
    let outcome = command
        .named
        .after(&result, &command.outputs, false, result.outcome())?;
    Ok(unless_stopped(result.head.complete, outcome))
}
