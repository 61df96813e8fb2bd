//! `placement-study observe`: where Linux ran a workload, per CPU, core
//! and class.

use super::{Outputs, Source, TerminalProgress, unless_stopped};
use crate::exit::Outcome;
use crate::measure::recorder::PerfRecorder;
use crate::report::document::Document;
use crate::study::observe::{ObserveStudyOptions, observe_study};
use anyhow::Result;

pub struct ObserveCommand {
    pub source: Source,
    pub study: ObserveStudyOptions,
    pub outputs: Outputs,
}

pub fn run(command: &ObserveCommand) -> Result<Outcome> {
    let topology = command.source.probe_to_measure()?;
    let result = observe_study(
        &topology,
        &command.study,
        &mut PerfRecorder,
        &mut TerminalProgress::default(),
    )?;
    command.outputs.write_trace(&result)?;
    command.outputs.emit(&result)?;
    // The command's own status comes first: an observed command that ran
    // to its end is complete whatever signal the observer saw.
    Ok(unless_stopped(result.head.complete, result.outcome()))
}
