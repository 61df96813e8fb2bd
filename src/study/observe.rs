//! `observe`: where Linux ran a workload nobody pinned. One recording
//! (a command, a running process, or the built-in kernel), judged into
//! residency, migrations and settling, and checked against task-clock.

use std::time::Duration;

use anyhow::Result;

use super::{Progress, head};
use crate::judge::observe::judge_observation;
use crate::judge::warnings::Warning;
use crate::measure::recorder::{ObserveTarget, Record, RecordOptions};
use crate::probe::Topology;
use crate::saved::{DocumentHead, DocumentKind, ObserveMode, ObserveOptions, ObserveResult};

/// `observe`'s checked options.
#[derive(Clone, Debug, PartialEq)]
pub struct ObserveStudyOptions {
    pub target: ObserveTarget,
    /// `--seconds`.
    pub duration: Option<Duration>,
    /// `--interval`, ms.
    pub interval_ms: Option<f64>,
    /// Count cycles for the busy frequency.
    pub cycles: bool,
    /// `--leave-running`: a command's outlivers are named, not stopped.
    pub leave_running: bool,
}

/// Records the target on every CPU of `topology`, and judges it.
pub fn observe_study<R: Record>(
    topology: &Topology,
    options: &ObserveStudyOptions,
    recorder: &mut R,
    progress: &mut dyn Progress,
) -> Result<ObserveResult> {
    let head = head(DocumentKind::Observe, topology);
    let mut elapsed = |so_far: Duration| {
        progress.update(&match options.duration {
            Some(total) => format!(
                "observe: {:.0} s of {:.0} s",
                so_far.as_secs_f64(),
                total.as_secs_f64()
            ),
            None => format!("observe: {:.0} s (Ctrl-C ends it)", so_far.as_secs_f64()),
        })
    };
    let recorded = recorder.record(
        &RecordOptions {
            target: options.target.clone(),
            duration: options.duration,
            cpus: topology.cpus.iter().map(|c| c.cpu).collect(),
            core_pmus: topology.environment.core_pmus.clone(),
            cycles: options.cycles,
            leave_running: options.leave_running,
        },
        &mut elapsed,
    );
    progress.done();
    let recording = recorded?;
    let judged = judge_observation(&recording, &topology.cpus, options.interval_ms);
    let saved_options = saved_options(options);
    Ok(ObserveResult {
        head: DocumentHead {
            complete: !recording.stopped,
            ..head
        },
        sentence: crate::judge::sentences::observe::sentence(&saved_options.target_text(), &judged),
        options: saved_options,
        classes: topology.classes.clone(),
        command_end: recording.command,
        exit_status: recording.command.map(|end| end.shell_status()),
        cycles_unavailable: recording.cycles_unavailable.clone(),
        outlivers: recording.outlivers.clone(),
        judged,
        warnings: Warning::about_machine(topology),
    })
}

fn saved_options(options: &ObserveStudyOptions) -> ObserveOptions {
    let mut saved = ObserveOptions {
        mode: ObserveMode::Command,
        command: None,
        pid: None,
        kernel: None,
        threads: None,
        seconds: options.duration.map(|d| d.as_secs_f64()),
        interval_ms: options.interval_ms,
        cycles: options.cycles,
    };
    match &options.target {
        ObserveTarget::Command(argv) => {
            saved.command = Some(argv.iter().map(|a| a.to_string_lossy().into()).collect());
        }
        ObserveTarget::Pid(pid) => {
            saved.mode = ObserveMode::Pid;
            saved.pid = Some(*pid);
        }
        ObserveTarget::Kernel { kernel, threads } => {
            saved.mode = ObserveMode::Kernel;
            saved.kernel = Some(kernel.clone());
            saved.threads = Some(*threads);
        }
    }
    saved
}
