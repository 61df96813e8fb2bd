//! `placement-study observe`: where Linux ran a workload, per CPU, core
//! and class.

use super::{Outputs, Source};
use crate::exit::Outcome;
use crate::measure::recorder::PerfRecorder;
use crate::measure::stop;
use crate::report;
use crate::study::observe::{ObserveStudyOptions, observe_study};
use anyhow::Result;

pub struct ObserveCommand {
    pub source: Source,
    pub study: ObserveStudyOptions,
    pub outputs: Outputs,
}

pub fn run(command: &ObserveCommand) -> Result<Outcome> {
    let topology = command.source.probe_to_measure()?;
    let result = observe_study(&topology, &command.study, &mut PerfRecorder)?;
    command
        .outputs
        .write_metrics(|| report::prom::observe(&result))?;
    command.outputs.write(
        &report::observe::render(&result, &command.outputs.view()),
        &result,
        || report::csv::observe(&result.judged),
    )?;
    Ok(match (result.exit_status, stop::stop_signal()) {
        // A command's own status, whatever it was: as `time` and `perf stat`.
        (Some(status), _) => Outcome::Passthrough(status),
        (None, Some(signal)) if !result.complete => Outcome::Stopped(signal),
        (None, _) if !result.judged.valid => Outcome::InvalidRun,
        (None, _) => Outcome::Success,
    })
}
