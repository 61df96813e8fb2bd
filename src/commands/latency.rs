//! `placement-study latency`: the core-to-core latency matrix, its domains
//! against the published ones.

use super::baseline::NamedBaselines;
use super::shared::{Outputs, Source, TerminalProgress, unless_stopped};
use crate::exit::Outcome;
use crate::report::document::Document;
use crate::saved::DocumentKind;
use crate::study::host_name;
use crate::study::latency::{LatencyStudyOptions, latency_study};
use anyhow::Result;

pub struct LatencyCommand {
    pub source: Source,
    pub study: LatencyStudyOptions,
    pub outputs: Outputs,
    /// Print only the verdict word.
    pub quiet: bool,
    /// `--save-baseline`, `--baseline NAME`.
    pub named: NamedBaselines,
}

pub fn run(command: &LatencyCommand) -> Result<Outcome> {
    command
        .named
        .check_before(&host_name(), &[DocumentKind::Latency])?;
    let topology = command.source.probe_to_measure()?;
    let result = latency_study(&topology, &command.study, &mut TerminalProgress::default())?;
    command
        .outputs
        .emit_verdict(command.quiet, result.verdict.as_str(), &result)?;
    let outcome =
        command
            .named
            .after(&result, &command.outputs, command.quiet, result.outcome())?;
    Ok(unless_stopped(result.head.complete, outcome))
}
