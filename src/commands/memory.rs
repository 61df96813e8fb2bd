//! `placement-study memory`: the cache ladder and the NUMA matrix against
//! the published cache sizes and node distances.

use super::shared::{Outputs, Source, unless_stopped};
use crate::exit::Outcome;
use crate::report::document::Document;
use crate::saved::MemoryOptions;
use crate::study::memory::memory_study;
use anyhow::Result;

pub struct MemoryCommand {
    pub source: Source,
    pub study: MemoryOptions,
    pub outputs: Outputs,
    /// Print only the verdict word.
    pub quiet: bool,
}

pub fn run(command: &MemoryCommand) -> Result<Outcome> {
    let topology = command.source.probe_to_measure()?;
    let result = memory_study(&topology, &command.study)?;
    command
        .outputs
        .emit_verdict(command.quiet, result.verdict.as_str(), &result)?;
    Ok(unless_stopped(result.head.complete, result.outcome()))
}
