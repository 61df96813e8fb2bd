//! `placement-study observe`: where Linux ran a workload, per CPU, core
//! and class.

use super::shared::{Outputs, Source, TerminalProgress, unless_stopped};
use crate::exit::Outcome;
use crate::measure::recorder::{ObserveTarget, PerfRecorder};
use crate::measure::stop::{self, StopNotice};
use crate::measure::tree::become_subreaper;
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
    if matches!(command.study.target, ObserveTarget::Command(_)) {
        // Every process the command leaves behind comes back to this one.
        become_subreaper()?;
        stop::set_notice(StopNotice::Following);
    } else {
        stop::set_notice(StopNotice::Recording);
    }
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
