//! The placement study: the gate first (unless skipped), then the arms
//! interleaved per repetition, every worker counting itself, then the
//! validity checks that decide whether the numbers may be quoted.

use super::gate::gate_session;
use super::{LazyMeasure, Progress, Recorded, bound_nodes, finished_head, head};
use crate::exit::UsageError;
use crate::judge::arms::{arm_stats, measured, run_arm_checks};
use crate::judge::checks::{self, excluded_reps};
use crate::judge::gate::{GateRule, Verdict};
use crate::judge::validity::judge_run;
use crate::judge::warnings::Warning;
use crate::measure::{Measure, MeasureOptions};
use crate::plan::membind::{Membind, placement_cpus};
use crate::plan::{self, Arm, Placement};
use crate::probe::Topology;
use crate::saved::{DocumentKind, GateResult, RunOptions, RunResult};
use anyhow::Result;
use std::ops::ControlFlow;

/// The study's checked options (what `run` was asked for).
#[derive(Clone, Debug, PartialEq)]
pub struct StudyOptions {
    /// The gate's rule; the gate runs first unless `skip_gate`.
    pub rule: GateRule,
    pub skip_gate: bool,
    /// Workers per arm; `None`: see [`plan::study_arms`].
    pub workers: Option<usize>,
    /// The arms to run, in order (each a study arm, at least one); `None`:
    /// the default arms (see [`plan::study_arms`]).
    pub arms: Option<Vec<Arm>>,
    /// Measured repetitions per arm (after the warm-ups).
    pub reps: usize,
    /// CV above which an arm is not quotable (a fraction).
    pub cv_bar: f64,
    /// Relative tolerance of instructions per byte across samples.
    pub tolerance: f64,
    /// An arm over the CV bar invalidates the run.
    pub strict: bool,
    /// How each repetition is measured (the engine is started from it;
    /// saved in the result).
    pub measure: MeasureOptions,
    /// `--membind`: the nodes each arm's buffers are bound to (`None`:
    /// where the kernel puts them).
    pub membind: Option<Membind>,
}

/// How a study ended: `run`'s, or (`R` a [`crate::saved::CommandResult`])
/// `run -- COMMAND`'s.
#[derive(Debug)]
pub enum RunOutcome<R = RunResult> {
    /// The gate did not say physical (or was stopped): nothing was studied.
    StoppedAtGate(Box<GateResult>),
    /// The study ran (completely, or until a stop signal).
    Studied(Box<R>),
}

/// The gate a study runs first: `Continue` with its result (`None` with
/// `skip_gate`) when the study may go on, `Break` with it, marked, when it
/// did not say physical or a signal stopped it. Without SMT there is
/// nothing for the gate to prove: the arms that need siblings are left
/// out, and the rest are studied.
pub(super) fn gate_first<M: Measure>(
    topology: &Topology,
    rule: &GateRule,
    skip_gate: bool,
    measure: &mut LazyMeasure<'_, M>,
    progress: &mut dyn Progress,
) -> Result<ControlFlow<Box<GateResult>, Option<GateResult>>> {
    if skip_gate {
        return Ok(ControlFlow::Continue(None));
    }
    let mut gate = gate_session(topology, rule, measure, progress)?;
    let studied = matches!(gate.verdict, Verdict::Physical | Verdict::NoSmt);
    if !studied || !gate.head.complete {
        gate.run_stopped_at_gate = true;
        return Ok(ControlFlow::Break(Box::new(gate)));
    }
    Ok(ControlFlow::Continue(Some(gate)))
}

/// Runs the study on `topology`; see the module docs.
pub fn run_study<M: Measure>(
    topology: &Topology,
    options: &StudyOptions,
    measure: &mut LazyMeasure<'_, M>,
    progress: &mut dyn Progress,
) -> Result<RunOutcome> {
    let head = head(DocumentKind::Run, topology);
    let chosen =
        plan::study_arms(topology, options.workers, options.arms.as_deref()).map_err(UsageError)?;
    let workers = chosen.workers;
    let mut run_plan = plan::run_arms(topology, workers, &chosen.arms)
        .map_err(|e| UsageError(format!("{e:#}")))?;
    if let Some(membind) = &options.membind {
        let arms: Vec<(String, Vec<u32>)> = run_plan
            .placements
            .iter()
            .map(|p| (p.arm.to_string(), placement_cpus(topology, &p.cpus)))
            .collect();
        let nodes = bound_nodes(topology, membind, &arms)?;
        for (placement, nodes) in run_plan.placements.iter_mut().zip(nodes) {
            placement.membind = Some(nodes);
        }
    }
    let gate = match gate_first(
        topology,
        &options.rule,
        options.skip_gate,
        measure,
        progress,
    )? {
        ControlFlow::Continue(gate) => gate,
        ControlFlow::Break(gate) => return Ok(RunOutcome::StoppedAtGate(gate)),
    };
    let measure = measure.get()?;
    let setup = measure.setup().clone();

    let mut recorded = Recorded::default();
    let placements: Vec<&Placement> = run_plan.placements.iter().collect();
    let total = setup.warmups + options.reps;
    for index in 0..total {
        let warmup = index < setup.warmups;
        progress.update(&if warmup {
            format!("run: warm-up {}/{}", index + 1, setup.warmups)
        } else {
            format!(
                "run: repetition {}/{}",
                index + 1 - setup.warmups,
                options.reps
            )
        });
        // Arms interleaved per repetition, so drift hits every arm alike.
        if !recorded.measure_round(measure, &placements, index, warmup)? {
            break;
        }
    }
    progress.done();

    let samples = recorded.samples;
    // One exclusion rule for gate and run: multiplexed or migrated
    // repetitions stay in the raw samples but out of every statistic.
    let excluded = excluded_reps(&samples);
    let (mut arms, kept): (Vec<_>, Vec<usize>) = run_plan
        .placements
        .iter()
        .map(|p| {
            let kept = measured(&samples, p.arm, &excluded);
            (arm_stats(p, &kept, &setup), kept.len())
        })
        .unzip();
    let mut all_checks = vec![checks::pinning(&samples), checks::multiplexing(&samples)];
    let (invariance, invariance_spread) = checks::invariance(
        &samples,
        options.tolerance,
        setup.kernel_instructions_per_byte,
        setup.why_instructions_uncounted(),
    );
    all_checks.push(invariance);
    all_checks.extend(checks::membind(&samples, &run_plan.placements));
    all_checks.extend(run_arm_checks(&mut arms, &kept, &excluded, options.cv_bar));
    let valid = judge_run(&all_checks, options.strict).is_valid();

    let mut warnings = Warning::about_machine(topology);
    warnings.extend(Warning::about_setup(&setup));
    warnings.extend(chosen.left_out.map(Warning::ArmsLeftOut));
    warnings.extend(run_plan.spans_nodes.clone().map(Warning::ArmsSpanNodes));
    Ok(RunOutcome::Studied(Box::new(RunResult {
        head: finished_head(head, recorded.stopped, &mut warnings),
        gated: gate.is_some(),
        gate,
        cpus: topology.cpus.clone(),
        options: RunOptions {
            workers,
            arms: chosen.arms,
            reps: options.reps,
            warmups: setup.warmups,
            rep_ms: u64::try_from(options.measure.rep_length.as_millis()).unwrap_or(u64::MAX),
            kernel: options.measure.kernel.clone(),
            cv_bar: options.cv_bar,
            tolerance: options.tolerance,
            strict: options.strict,
            skip_gate: options.skip_gate,
            threshold: options.rule.threshold,
            membind: options.membind.clone(),
        },
        setup,
        plan: run_plan,
        arms,
        checks: all_checks,
        excluded,
        invariance_spread,
        valid,
        warnings,
        samples,
    })))
}
