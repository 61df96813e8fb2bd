//! `placement-study pairs`: the measured sibling map against the published one.

use super::baseline::NamedBaselines;
use super::shared::{Outputs, Source, TerminalProgress, unless_stopped};
use crate::exit::Outcome;
use crate::measure::EngineSession;
use crate::report::document::Document;
use crate::saved::DocumentKind;
use crate::study::LazyMeasure;
use crate::study::host_name;
use crate::study::pairs::{PairsStudyOptions, pairs_study};
use anyhow::Result;

pub struct PairsCommand {
    pub source: Source,
    pub study: PairsStudyOptions,
    pub outputs: Outputs,
    /// Print only the verdict word.
    pub quiet: bool,
    /// `--save-baseline`, `--baseline NAME`.
    pub named: NamedBaselines,
}

pub fn run(command: &PairsCommand) -> Result<Outcome> {
    command
        .named
        .check_before(&host_name(), &[DocumentKind::Pairs])?;
    let topology = command.source.probe_to_measure()?;
    let mut engine = LazyMeasure::new(|| EngineSession::start(&command.study.measure, &topology));
    let result = pairs_study(
        &topology,
        &command.study,
        &mut engine,
        &mut TerminalProgress::default(),
    )?;
    command
        .outputs
        .emit_verdict(command.quiet, result.verdict.as_str(), &result)?;
    let outcome =
        command
            .named
            .after(&result, &command.outputs, command.quiet, result.outcome())?;
    Ok(unless_stopped(result.head.complete, outcome))
}
