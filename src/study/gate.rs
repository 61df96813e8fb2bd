//! The gate: does CPU affinity on this host move anything physical? Two
//! pinned workers on one core's two hardware threads, each against one
//! worker alone on its own CPU, interleaved round by round, until what both
//! workers pay clears the threshold either way; and a same-CPU control that
//! proves pinning works at all.

use super::{LazyMeasure, Progress, Recorded, head};
use crate::judge::arms::{arm_stats, measured};
use crate::judge::batches::{self, Evidence, Next};
use crate::judge::checks::{CheckStatus, excluded_reps};
use crate::judge::cost::rep_cost;
use crate::judge::gate::{self, CONTROL_ATTEMPTS, GateRule, Verdict, WorkerPenalty};
use crate::judge::warnings::Warning;
use crate::measure::{Measure, RepSample};
use crate::plan::{self, Arm, GatePlan, Placement};
use crate::probe::Topology;
use crate::saved::{DocumentHead, DocumentKind, GateResult};
use anyhow::Result;

/// A gate that measured nothing: its verdict and why.
struct Unmeasured {
    verdict: Verdict,
    sentence: String,
    no_smt_reason: Option<String>,
}

impl Unmeasured {
    fn result(self, head: DocumentHead, rule: &GateRule, warnings: Vec<Warning>) -> GateResult {
        GateResult {
            head,
            run_stopped_at_gate: false,
            verdict: self.verdict,
            baseline: None,
            sentence: self.sentence,
            penalty: None,
            penalty_of_medians: None,
            ci95: None,
            mean_based: None,
            threshold: rule.threshold,
            reps: 0,
            clock: None,
            pairs: None,
            no_smt_reason: self.no_smt_reason,
            setup: None,
            arms: Vec::new(),
            control: None,
            control_attempts: Vec::new(),
            batches: Vec::new(),
            workers: Vec::new(),
            slow_cpu: None,
            noise: None,
            excluded: Vec::new(),
            warnings,
            samples: Vec::new(),
        }
    }
}

/// Rounds at the start of the first batch that measure the control arms
/// too (and each time a failed control is measured again): its check
/// compares medians, so a few rounds do.
const CONTROL_ROUNDS: usize = 5;

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
        GatePlan::Pairs(pairs) => pairs,
        GatePlan::NoSmt { reason } => {
            let sentence = crate::judge::sentences::gate::no_smt_sentence(&reason);
            let unmeasured = Unmeasured {
                verdict: Verdict::NoSmt,
                sentence,
                no_smt_reason: Some(reason),
            };
            return Ok(unmeasured.result(head, rule, warnings));
        }
        // Missing files are no evidence either way: inconclusive, the
        // status that asks for another look, never no-smt.
        GatePlan::UnknownStructure { reason } => {
            let unmeasured = Unmeasured {
                verdict: Verdict::Inconclusive,
                sentence: crate::judge::sentences::gate::unknown_structure_sentence(&reason),
                no_smt_reason: None,
            };
            return Ok(unmeasured.result(head, rule, warnings));
        }
    };
    let measure = measure.get()?;
    let setup = measure.setup().clone();
    let baseline = pairs.baseline();
    let siblings = pairs.placement(Arm::Siblings);
    let alone = pairs.placement(Arm::Alone);
    let alone_second = pairs.placement(Arm::AloneSecond);
    let same_cpu = pairs.placement(Arm::SameCpu);
    // The control: both workers on one CPU against one worker alone there.
    let control_arms: Vec<&Placement> = vec![&same_cpu, &alone];
    // Each round: the siblings, and each sibling's CPU alone; the control's
    // same-CPU arm in the first rounds only.
    let every_arm: Vec<&Placement> = vec![&siblings, &alone, &alone_second, &same_cpu];
    const ROUND_ARMS: usize = 3;

    let mut recorded = Recorded::default();
    for warmup in 0..setup.warmups {
        progress.update(&format!("gate: warm-up {}/{}", warmup + 1, setup.warmups));
        if !recorded.measure_round(measure, &every_arm, warmup, true)? {
            break;
        }
    }
    // Pairs stay aligned by repetition: an excluded rep drops its partner.
    let paired_of =
        |samples: &[RepSample]| gate::worker_paired_costs(samples, pairs.siblings, setup.clock);
    let mut evidence = Evidence::default();
    let mut decided = Verdict::Inconclusive;
    let mut index = setup.warmups;
    let total = rule.max_reps * rule.batching.max_batches;
    'batches: while recorded.stopped.is_none() {
        // ABAB: both arms see the same drift; the control only needs a few
        // rounds, at the start.
        let round = if index - setup.warmups < CONTROL_ROUNDS {
            &every_arm[..]
        } else {
            &every_arm[..ROUND_ARMS]
        };
        if !recorded.measure_round(measure, round, index, false)? {
            break;
        }
        let next = evidence.round_measured(rule, index, &paired_of(&recorded.samples));
        index += 1;
        progress.update(&format!(
            "gate: batch {}, repetition {}/{total} (at most){}",
            evidence.batches.len(),
            index - setup.warmups,
            evidence
                .batches
                .last()
                .and_then(|b| b.estimate.as_ref())
                .map(|e| format!(", penalty {:+.1} %", e.penalty * 100.0))
                .unwrap_or_default()
        ));
        match next {
            Next::Round => {}
            Next::Batch => {
                progress.update(&format!(
                    "gate: batch {} done, pausing {} ms",
                    evidence.batches.len(),
                    rule.batching.gap.as_millis()
                ));
                if !recorded.pause(measure, rule.batching.gap) {
                    break 'batches;
                }
            }
            Next::Decided(verdict) => {
                decided = verdict;
                break;
            }
        }
    }
    let paired = paired_of(&recorded.samples);
    let each = evidence.pooled_each(&paired);
    let estimate = batches::headline(rule, each.clone());
    let workers: Vec<WorkerPenalty> = pairs
        .siblings
        .iter()
        .zip(each)
        .map(|(&cpu, estimate)| WorkerPenalty { cpu, estimate })
        .collect();
    let batch_rounds: Vec<Vec<usize>> = evidence.batches.iter().map(|b| b.rounds.clone()).collect();
    let slow_cpu = gate::slow_cpu(
        &recorded.samples,
        pairs.siblings,
        setup.clock,
        &batch_rounds,
    );

    // A time-sliced thread's own cycle counter stops while it waits, so the
    // control is judged on the tick clock, which every sample records.
    let control_of = |samples: &[RepSample], rounds: &[usize]| {
        let excluded = excluded_reps(samples);
        let tick_costs = |p: &Placement| -> Vec<f64> {
            measured(samples, p.arm, &excluded)
                .into_iter()
                .filter(|r| rounds.contains(&r.rep))
                .filter_map(|r| rep_cost(r, setup.tick_clock))
                .collect()
        };
        gate::control_check(
            &tick_costs(&same_cpu),
            &tick_costs(&alone),
            setup.tick_clock,
        )
    };
    let first_rounds: Vec<usize> = (setup.warmups..index).collect();
    let mut control = control_of(&recorded.samples, &first_rounds);
    // A failed control is measured again before it may cost a verdict.
    let mut control_attempts = Vec::new();
    while control.status == CheckStatus::Failed
        && decided != Verdict::Inconclusive
        && control_attempts.len() + 1 < CONTROL_ATTEMPTS
        && recorded.pause(measure, rule.batching.gap)
    {
        progress.update(&format!(
            "gate: the control failed; measuring it again ({}/{})",
            control_attempts.len() + 2,
            CONTROL_ATTEMPTS
        ));
        let rounds: Vec<usize> = (index..index + CONTROL_ROUNDS).collect();
        for &rep in &rounds {
            if !recorded.measure_round(measure, &control_arms, rep, false)? {
                break;
            }
        }
        index += CONTROL_ROUNDS;
        if recorded.stopped.is_some() {
            break;
        }
        control_attempts.push(std::mem::replace(
            &mut control,
            control_of(&recorded.samples, &rounds),
        ));
    }
    progress.done();

    let samples = recorded.samples;
    let excluded = excluded_reps(&samples);
    let measured_of = |p: &Placement| measured(&samples, p.arm, &excluded);
    let arms = every_arm
        .iter()
        .map(|p| arm_stats(p, &measured_of(p), &setup))
        .collect();
    let verdict = gate::final_verdict(decided, &control, recorded.stopped.is_some());
    let sentence = match recorded.stopped {
        Some(signal) => {
            crate::judge::sentences::gate::stopped_sentence(signal, index - setup.warmups, total)
        }
        None => crate::judge::sentences::gate::sentence(
            verdict,
            baseline,
            estimate.as_ref(),
            &workers,
            &evidence.batches,
            rule.threshold,
            &control,
        ),
    };
    warnings.extend(Warning::about_setup(&setup));
    if let Some(signal) = recorded.stopped {
        head.complete = false;
        warnings.insert(0, Warning::Incomplete(signal));
    }
    let noise = evidence.noise();
    if let Some(noise) = noise.as_ref().filter(|n| n.is_high()) {
        warnings.push(Warning::NoisyHost(noise.clone()));
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
        mean_based: estimate.as_ref().and_then(|e| e.mean_based.clone()),
        threshold: rule.threshold,
        reps: estimate.as_ref().map_or(0, |e| e.reps),
        clock: Some(setup.clock),
        pairs: Some(pairs),
        no_smt_reason: None,
        setup: Some(setup),
        arms,
        control: Some(control),
        control_attempts,
        batches: evidence.batches,
        workers,
        slow_cpu,
        noise,
        excluded,
        warnings,
        samples,
    })
}
