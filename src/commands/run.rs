//! `placement-study run`: the placement study.

use super::{Outputs, Source, TerminalProgress, unless_stopped};
use crate::exit::Outcome;
use crate::measure::EngineSession;
use crate::report;
use crate::report::document::Document;
use crate::study::LazyMeasure;
use crate::study::run::{RunOutcome, StudyOptions, run_study};
use anyhow::Result;

pub struct RunCommand {
    pub source: Source,
    pub study: StudyOptions,
    pub outputs: Outputs,
}

pub fn run(command: &RunCommand) -> Result<Outcome> {
    let topology = command.source.probe_to_measure()?;
    let mut engine = LazyMeasure::new(|| EngineSession::start(&command.study.measure, &topology));
    let outcome = run_study(
        &topology,
        &command.study,
        &mut engine,
        &mut TerminalProgress::default(),
    )?;
    match outcome {
        RunOutcome::StoppedAtGate(gate) => {
            let stopped_here = format!(
                "{}run: stopped at the gate ({}): the study would measure nothing physical here; \
                 --skip-gate runs it anyway, marked UNGATED\n",
                report::gate::render(&gate, &command.outputs.view()),
                gate.verdict.as_str()
            );
            // Run metrics (the gate says it stopped a run), so a textfile
            // folder's run.prom keeps its kind whatever the verdict; the
            // gate's document is the saved result: it says why nothing
            // else was measured.
            command
                .outputs
                .emit_as(&stopped_here, gate.as_ref(), &gate)?;
            Ok(unless_stopped(gate.head.complete, gate.outcome()))
        }
        RunOutcome::Studied(result) => {
            command.outputs.emit(result.as_ref())?;
            Ok(unless_stopped(result.head.complete, result.outcome()))
        }
    }
}
