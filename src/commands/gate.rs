//! `placement-study gate`: the SMT co-location gate and its verdict.

use super::baseline::NamedBaselines;
use super::shared::{Outputs, Source, TerminalProgress, unless_stopped};
use crate::exit::Outcome;
use crate::judge::gate::GateRule;
use crate::measure::{EngineSession, MeasureOptions};
use crate::report::document::Document;
use crate::saved::DocumentKind;
use crate::study::LazyMeasure;
use crate::study::gate::gate_session;
use crate::study::host_name;
use anyhow::Result;

pub struct GateCommand {
    pub source: Source,
    pub measure: MeasureOptions,
    pub rule: GateRule,
    pub outputs: Outputs,
    /// Print only the verdict word.
    pub quiet: bool,
    /// `--save-baseline`, `--baseline NAME`.
    pub named: NamedBaselines,
}

pub fn run(command: &GateCommand) -> Result<Outcome> {
    command
        .named
        .check_before(&host_name(), &[DocumentKind::Gate])?;
    let topology = command.source.probe_to_measure()?;
    let mut engine = LazyMeasure::new(|| EngineSession::start(&command.measure, &topology));
    let result = gate_session(
        &topology,
        &command.rule,
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
