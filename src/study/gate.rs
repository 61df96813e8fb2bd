//! The gate: does CPU affinity on this host move anything physical? Two
//! pinned workers on one core's two hardware threads against a baseline
//! (two workers on separate cores of the same class, or, on a host with one
//! core, one worker alone), interleaved, until the penalty's interval clears
//! the threshold either way; and a same-CPU control that proves pinning
//! works at all.

use super::{LazyMeasure, Progress, Recorded, head};
use crate::judge::arms::{arm_stats, measured};
use crate::judge::checks::excluded_reps;
use crate::judge::cost::rep_cost;
use crate::judge::gate::{self, Estimate, GateRule, Step, Verdict};
use crate::judge::warnings::Warning;
use crate::measure::Measure;
use crate::plan::{self, Arm, GateBaseline, GatePlan, Placement};
use crate::probe::Topology;
use crate::report;
use crate::saved::{DocumentKind, GateResult};
use anyhow::Result;

/// Runs the gate on `topology` and returns its whole result; the caller
/// renders it and turns the verdict into an exit status.
pub fn gate_session<M: Measure>(
    topology: &Topology,
    rule: &GateRule,
    measure: &mut LazyMeasure<'_, M>,
    progress: &mut dyn Progress,
) -> Result<GateResult> {
    let mut head = head(DocumentKind::Gate, topology);
    let mut warnings = Warning::about_machine(topology);
    let pairs = match plan::gate_pairs(topology)? {
        GatePlan::NoSmt { reason } => {
            return Ok(GateResult {
                head,
                run_stopped_at_gate: false,
                verdict: Verdict::NoSmt,
                baseline: None,
                sentence: report::gate::no_smt_sentence(&reason),
                penalty: None,
                penalty_of_medians: None,
                ci95: None,
                threshold: rule.threshold,
                reps: 0,
                clock: None,
                pairs: None,
                no_smt_reason: Some(reason),
                setup: None,
                arms: Vec::new(),
                control: None,
                excluded: Vec::new(),
                warnings,
                samples: Vec::new(),
            });
        }
        GatePlan::Pairs(pairs) => pairs,
    };
    let measure = measure.get()?;
    let setup = measure.setup().clone();
    let baseline = pairs.baseline();
    let siblings = pairs.placement(Arm::Siblings);
    let against = pairs.placement(baseline.arm());
    let same_cpu = pairs.placement(Arm::SameCpu);
    let alone = pairs.placement(Arm::Alone);
    // The control: both workers on one CPU against one worker alone there.
    let mut control: Vec<&Placement> = vec![&same_cpu];
    if baseline != GateBaseline::Alone {
        control.push(&alone);
    }
    let every_arm: Vec<&Placement> = [&siblings, &against]
        .into_iter()
        .chain(control.iter().copied())
        .collect();

    let mut recorded = Recorded::default();
    for warmup in 0..setup.warmups {
        progress.update(&format!("gate: warm-up {}/{}", warmup + 1, setup.warmups));
        if !recorded.measure_round(measure, &every_arm, warmup, true)? {
            break;
        }
    }
    let mut decision: (Verdict, Option<Estimate>) = (Verdict::Inconclusive, None);
    let mut rep = 0;
    while recorded.stopped.is_none() && rep < rule.max_reps {
        let index = setup.warmups + rep;
        // ABAB: both arms see the same drift; the control only needs a few.
        let round = if rep < rule.min_reps {
            &every_arm[..]
        } else {
            &every_arm[..2]
        };
        if !recorded.measure_round(measure, round, index, false)? {
            break;
        }
        rep += 1;
        // Pairs stay aligned by repetition: an excluded rep drops its partner.
        let paired = gate::paired_costs(
            &recorded.samples,
            Arm::Siblings,
            baseline.arm(),
            setup.clock,
        );
        let (step, estimate) = gate::decide(rule, &paired.treated, &paired.baseline);
        progress.update(&format!(
            "gate: repetition {rep}/{} (at most){}",
            rule.max_reps,
            estimate
                .as_ref()
                .map(|e| format!(", penalty {:+.1} %", e.penalty * 100.0))
                .unwrap_or_default()
        ));
        decision = (Verdict::Inconclusive, estimate);
        if let Step::Decided(verdict) = step {
            decision.0 = verdict;
            break;
        }
    }
    progress.done();

    let samples = recorded.samples;
    let excluded = excluded_reps(&samples);
    let (decided, estimate) = decision;
    let measured_of = |p: &Placement| measured(&samples, p.arm, &excluded);
    let arms = every_arm
        .iter()
        .map(|p| arm_stats(p, &measured_of(p), &setup))
        .collect();
    // A time-sliced thread's own cycle counter stops while it waits, so the
    // control is judged on the tick clock, which every sample records.
    let tick_costs = |p: &Placement| -> Vec<f64> {
        measured_of(p)
            .into_iter()
            .filter_map(|r| rep_cost(r, setup.tick_clock))
            .collect()
    };
    let control = gate::control_check(
        &tick_costs(&same_cpu),
        &tick_costs(&alone),
        setup.tick_clock,
    );
    let verdict = gate::final_verdict(decided, &control, recorded.stopped.is_some());
    let sentence = match recorded.stopped {
        Some(signal) => report::gate::stopped_sentence(signal, rep, rule.max_reps),
        None => report::gate::sentence(
            verdict,
            baseline,
            estimate.as_ref(),
            rule.threshold,
            &control,
        ),
    };
    if let Some(signal) = recorded.stopped {
        head.complete = false;
        warnings.insert(0, Warning::Incomplete(signal));
    }
    Ok(GateResult {
        head,
        run_stopped_at_gate: false,
        verdict,
        baseline: Some(baseline),
        sentence,
        penalty: estimate.as_ref().map(|e| e.penalty),
        penalty_of_medians: estimate.as_ref().map(|e| e.penalty_of_medians),
        ci95: estimate.as_ref().map(|e| e.ci95.clone()),
        threshold: rule.threshold,
        reps: estimate.as_ref().map_or(0, |e| e.reps),
        clock: Some(setup.clock),
        pairs: Some(pairs),
        no_smt_reason: None,
        setup: Some(setup),
        arms,
        control: Some(control),
        excluded,
        warnings,
        samples,
    })
}
