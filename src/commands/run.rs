//! `placement-study run`: the placement study.

use super::{Outputs, Source, TerminalProgress, unless_stopped};
use crate::exit::Outcome;
use crate::measure::EngineSession;
use crate::report;
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
            // Run metrics, so a textfile folder's run.prom keeps its kind
            // whatever the verdict; the gate's document is the saved
            // result: it says why nothing else was measured.
            command
                .outputs
                .write_metrics(|| report::prom::run_stopped_at_gate(&gate))?;
            command
                .outputs
                .write(&stopped_here, &gate, || report::csv::samples(&gate.samples))?;
            Ok(unless_stopped(
                gate.complete,
                Outcome::Verdict(gate.verdict),
            ))
        }
        RunOutcome::Studied(result) => {
            command
                .outputs
                .write_metrics(|| report::prom::run(&result))?;
            command.outputs.write(
                &report::run::render(&result, &command.outputs.view()),
                &result,
                || report::csv::samples(&result.samples),
            )?;
            let judged = if result.valid {
                Outcome::Success
            } else {
                Outcome::InvalidRun
            };
            Ok(unless_stopped(result.complete, judged))
        }
    }
}
