//! The gate: does CPU affinity on this host move anything physical? Two
//! pinned workers on one core's two hardware threads against a baseline
//! (two workers on separate cores of the same class, or, on a host with one
//! core, one worker alone), interleaved, until the penalty's interval clears
//! the threshold either way; and a same-CPU control that proves pinning
//! works at all.

use super::{LazyMeasure, Progress, Recorded, head};
use crate::judge::arms::{arm_stats, measured};
use crate::judge::checks::{CheckStatus, excluded_reps};
use crate::judge::cost::rep_cost;
use crate::judge::gate::{self, Estimate, GateRule, Step, Verdict};
use crate::judge::warnings::Warning;
use crate::measure::Measure;
use crate::plan::{self, Arm, GateBaseline, GatePlan, Placement};
use crate::probe::Topology;
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
    let mut result = GateResult {
        head: head(DocumentKind::Gate, topology),
        run_stopped_at_gate: false,
        verdict: Verdict::NoSmt,
        baseline: None,
        sentence: String::new(),
        penalty: None,
        penalty_of_medians: None,
        ci95: None,
        threshold: rule.threshold,
        reps: 0,
        clock: None,
        pairs: None,
        no_smt_reason: None,
        setup: None,
        arms: Vec::new(),
        control: None,
        excluded: Vec::new(),
        warnings: Warning::about_machine(topology),
        samples: Vec::new(),
    };
    let pairs = match plan::gate_pairs(topology)? {
        GatePlan::NoSmt { reason } => {
            result.sentence = format!("no sibling pair to measure: {reason}");
            result.no_smt_reason = Some(reason);
            return Ok(result);
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
    let (mut verdict, estimate) = decision;
    let measured_of = |p: &Placement| measured(&samples, p.arm, &excluded);
    result.arms = every_arm
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
    // Without working pinning neither verdict means anything.
    let control_failed = control.status == CheckStatus::Failed;
    if control_failed {
        verdict = Verdict::Inconclusive;
    }
    let mut sentence = sentence(verdict, baseline, estimate.as_ref(), rule.threshold);
    if control_failed {
        sentence.push_str(&format!(
            "; the same-CPU control failed: {}",
            control.detail
        ));
    }
    if let Some(signal) = recorded.stopped {
        verdict = Verdict::Inconclusive;
        sentence = format!(
            "stopped by {} after {rep} repetitions of {}: no verdict",
            signal.name(),
            rule.max_reps
        );
        result.head.complete = false;
        result.warnings.insert(0, Warning::Incomplete(signal));
    }
    result.verdict = verdict;
    result.baseline = Some(baseline);
    result.sentence = sentence;
    result.penalty = estimate.as_ref().map(|e| e.penalty);
    result.penalty_of_medians = estimate.as_ref().map(|e| e.penalty_of_medians);
    result.ci95 = estimate.as_ref().map(|e| e.ci95.clone());
    result.reps = estimate.as_ref().map_or(0, |e| e.reps);
    result.clock = Some(setup.clock);
    result.pairs = Some(pairs);
    result.setup = Some(setup);
    result.control = Some(control);
    result.excluded = excluded;
    result.samples = samples;
    Ok(result)
}

/// The sentence a sysadmin reads first: the measured penalty with its
/// interval and what it means.
fn sentence(
    verdict: Verdict,
    baseline: GateBaseline,
    estimate: Option<&Estimate>,
    threshold: f64,
) -> String {
    let threshold_pct = format!("{:.0} %", threshold * 100.0);
    let Some(e) = estimate else {
        return format!(
            "no repetitions were measured; threshold {threshold_pct}: {}",
            verdict.as_str()
        );
    };
    let (amount, direction) = if e.penalty >= 0.0 {
        (e.penalty * 100.0, "more")
    } else {
        (-e.penalty * 100.0, "less")
    };
    let measured = format!(
        "two workers on one core's siblings cost {amount:.1} % [{:.1}, {:.1}] {direction} than {} \
         (paired over {} repetitions each; ratio of medians {:+.1} %); threshold {threshold_pct}",
        e.ci95.low * 100.0,
        e.ci95.high * 100.0,
        baseline.describe(),
        e.reps,
        e.penalty_of_medians * 100.0
    );
    let meaning = match verdict {
        Verdict::Physical => "placement is physical",
        Verdict::Virtual => {
            "placement is virtual: the affinity mask moved nothing physical (typical of a VM, \
             whose sibling map is fiction)"
        }
        Verdict::Inconclusive => {
            "inconclusive: the interval straddles the threshold; raise --max-reps, \
             lengthen --rep-ms, or quiet the machine (stop other load, pin the governor)"
        }
        Verdict::NoSmt => "no-smt",
    };
    format!("{measured}: {meaning}")
}
