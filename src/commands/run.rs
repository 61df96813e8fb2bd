//! `placement-study run`: the placement study of the built-in kernel, or
//! (`run -- COMMAND`) of a user's command.

use super::baseline::NamedBaselines;
use super::shared::{Outputs, Source, TerminalProgress, unless_stopped};
use crate::exit::Outcome;
use crate::measure::EngineSession;
use crate::measure::command::{Watched, run_once};
use crate::measure::stop::{self, StopNotice};
use crate::measure::tree::become_subreaper;
use crate::report::document::{Document, HumanView};
use crate::saved::DocumentKind;
use crate::study::LazyMeasure;
use crate::study::command::{CommandStudyOptions, command_study};
use crate::study::host_name;
use crate::study::run::{RunOutcome, StudyOptions, run_study};
use crate::study::sweep::{SweepStudyOptions, command_sweep_study, sweep_study};
use anyhow::Result;
use serde::Serialize;

/// Which study `run` makes.
pub enum RunStudy {
    /// The built-in kernel's workers.
    Kernel(StudyOptions),
    /// A user's command (`run -- COMMAND`).
    Command(Box<CommandStudyOptions>),
    /// The kernel's thread-count sweep (`run --sweep`).
    Sweep(SweepStudyOptions),
}

pub struct RunCommand {
    pub source: Source,
    pub study: RunStudy,
    pub outputs: Outputs,
    /// `--save-baseline`, `--baseline NAME`.
    pub named: NamedBaselines,
}

pub fn run(command: &RunCommand) -> Result<Outcome> {
    let kind = match &command.study {
        RunStudy::Kernel(_) => DocumentKind::Run,
        RunStudy::Command(_) => DocumentKind::Command,
        RunStudy::Sweep(_) => DocumentKind::Sweep,
    };
    command.named.check_before(&host_name(), &[kind])?;
    let topology = command.source.probe_to_measure()?;
    let runs_a_command = match &command.study {
        RunStudy::Kernel(_) => false,
        RunStudy::Command(_) => true,
        RunStudy::Sweep(study) => study.command.is_some(),
    };
    if runs_a_command {
        // Every process the command leaves behind comes back to this one.
        become_subreaper()?;
        stop::set_notice(StopNotice::CommandRounds);
    }
    let mut progress = TerminalProgress::default();
    match &command.study {
        RunStudy::Kernel(study) => {
            let mut engine = LazyMeasure::new(|| EngineSession::start(&study.measure, &topology));
            let outcome = run_study(&topology, study, &mut engine, &mut progress)?;
            emit(command, outcome)
        }
        RunStudy::Command(study) => {
            let mut engine = LazyMeasure::new(|| EngineSession::start(&study.measure, &topology));
            let outcome = command_study(
                &topology,
                study,
                &mut engine,
                &mut progress,
                |argv, placement| {
                    let cpus = &placement.cpus;
                    let watched = Watched::of(&topology, cpus);
                    let pmus = &topology.environment.core_pmus;
                    let leave = study.ownership.leave_running;
                    let membind = placement.membind.as_deref();
                    run_once(argv, cpus, membind, &watched, &study.output, pmus, leave)
                },
            )?;
            emit(command, outcome)
        }
        RunStudy::Sweep(study) => {
            // The gate's repetitions are the gate's length; the sweep's
            // engine runs items of a 50th of a share.
            let mut gate = LazyMeasure::new(|| EngineSession::start(&study.measure, &topology));
            if let Some(swept) = &study.command {
                let outcome = command_sweep_study(
                    &topology,
                    study,
                    swept,
                    &mut gate,
                    &mut progress,
                    |argv, cpus| {
                        let watched = Watched::of(&topology, cpus);
                        let pmus = &topology.environment.core_pmus;
                        let leave = swept.ownership.leave_running;
                        run_once(argv, cpus, None, &watched, &swept.output, pmus, leave)
                    },
                )?;
                return emit(command, outcome);
            }
            let engine_options = study.engine();
            let mut engine = LazyMeasure::new(|| EngineSession::start(&engine_options, &topology));
            let outcome = sweep_study(&topology, study, &mut gate, &mut engine, &mut progress)?;
            emit(command, outcome)
        }
    }
}

/// Writes what a study found, or the gate it stopped at, and its outcome.
/// A study that stopped at its gate is neither judged against a baseline
/// nor kept as one (its document is the gate's).
fn emit<R: Document + Serialize>(command: &RunCommand, outcome: RunOutcome<R>) -> Result<Outcome> {
    let outputs = &command.outputs;
    match outcome {
        RunOutcome::StoppedAtGate(gate) => {
            let stopped_here = format!(
                "{}run: stopped at the gate ({}): the study would measure nothing physical here; \
                 --skip-gate runs it anyway, marked UNGATED\n",
                gate.render(&outputs.view()),
                gate.verdict.as_str()
            );
            // Run metrics (the gate says it stopped a run), so a textfile
            // folder's run.prom keeps its kind whatever the verdict; the
            // gate's document is the saved result: it says why nothing
            // else was measured.
            outputs.emit_as(&stopped_here, gate.as_ref(), &gate)?;
            if !command.named.is_empty() {
                outputs.write_human(
                    "baseline: the study stopped at its gate, so it is neither judged against a \
                     baseline nor kept as one\n",
                )?;
            }
            Ok(unless_stopped(gate.head.complete, gate.outcome()))
        }
        RunOutcome::Studied(result) => {
            outputs.emit(result.as_ref())?;
            let outcome = command
                .named
                .after(result.as_ref(), outputs, false, result.outcome())?;
            Ok(unless_stopped(result.head().complete, outcome))
        }
    }
}
