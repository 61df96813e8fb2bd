//! `placement-study gate`: does CPU affinity on this host move anything
//! physical? Two pinned workers on one core's two hardware threads against
//! two on separate cores of the same class, interleaved, until the penalty's
//! confidence interval clears the threshold either way.

use crate::cli::{GateArgs, GateRuleArgs, MeasureArgs};
use crate::commands::measuring::{self, progress, progress_done};
use crate::judge::arms::{arm_stats, measured};
use crate::judge::checks::{CheckStatus, excluded_reps};
use crate::judge::gate::{self, Estimate, GateRule, Step, Verdict};
use crate::measure::{Placement, RepSample, stop};
use crate::plan::{self, GatePlan};
use crate::probe::Topology;
use crate::report;
use crate::results::{GateResult, RESULT_SCHEMA_VERSION};
use anyhow::{Result, bail};

pub const SIBLINGS: &str = "siblings";
pub const SEPARATE: &str = "separate";
pub const SAME_CPU: &str = "same-cpu";
pub const ALONE: &str = "alone";

pub fn run(args: &GateArgs) -> Result<i32> {
    let topology = crate::commands::topology::probe_from(&args.source)?;
    let result = measure(&topology, &args.measure, &args.rule)?;
    if args.quiet {
        println!("{}", result.verdict.as_str());
    } else if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print!("{}", report::gate::render(&result));
    }
    Ok(result.verdict.exit_code())
}

fn validate(rule: &GateRuleArgs) -> Result<GateRule> {
    if !(rule.threshold > 0.0 && rule.threshold.is_finite()) {
        bail!(
            "--threshold {}: must be a positive fraction such as 0.15",
            rule.threshold
        );
    }
    if rule.min_reps < 3 {
        bail!(
            "--min-reps {}: an interval needs at least 3 repetitions",
            rule.min_reps
        );
    }
    if rule.max_reps < rule.min_reps {
        bail!(
            "--max-reps {} is below --min-reps {}",
            rule.max_reps,
            rule.min_reps
        );
    }
    Ok(GateRule {
        threshold: rule.threshold,
        min_reps: rule.min_reps,
        max_reps: rule.max_reps,
    })
}

/// Runs the gate on `topology` and returns its whole result (the caller
/// renders it and maps the verdict to an exit code).
pub fn measure(
    topology: &Topology,
    measure_args: &MeasureArgs,
    rule_args: &GateRuleArgs,
) -> Result<GateResult> {
    let rule = validate(rule_args)?;
    let evidence = measuring::evidence(topology);
    let warnings = report::warnings::machine_warnings(topology);
    let pairs = match plan::gate_pairs(topology)? {
        GatePlan::NoSmt { reason } => {
            return Ok(GateResult {
                schema_version: RESULT_SCHEMA_VERSION,
                kind: "gate".into(),
                tool_version: env!("CARGO_PKG_VERSION").into(),
                verdict: Verdict::NoSmt,
                sentence: format!("no sibling pair to measure: {reason}"),
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
                evidence,
                warnings,
                samples: Vec::new(),
            });
        }
        GatePlan::Pairs(pairs) => pairs,
    };
    let (engine, setup) = measuring::engine(measure_args, topology)?;
    let clock = engine.clock();
    let placement = |arm: &str, cpus: [u32; 2]| Placement {
        arm: arm.into(),
        cpus: cpus.iter().map(|c| Some(*c)).collect(),
    };
    let siblings = placement(SIBLINGS, pairs.siblings);
    let separate = placement(SEPARATE, pairs.separate);
    // The control: both workers on one CPU against one worker alone there.
    let same_cpu = placement(SAME_CPU, [pairs.siblings[0]; 2]);
    let alone = Placement {
        arm: ALONE.into(),
        cpus: vec![Some(pairs.siblings[0])],
    };

    stop::install_stop_handlers()?;
    // One repetition of `arm`, or the error a stop request ends the gate with.
    let run_rep = |arm: &Placement, index: usize, warmup: bool, done: usize| {
        engine.run_rep(arm, index, warmup)?.ok_or_else(|| {
            progress_done();
            let signal = stop::stop_signal().map_or("a stop signal", |s| s.name());
            anyhow::anyhow!("interrupted by {signal} after {done} repetitions: no verdict")
        })
    };
    let mut samples: Vec<RepSample> = Vec::new();
    for warmup in 0..measure_args.warmups {
        progress(&format!(
            "gate: warm-up {}/{}",
            warmup + 1,
            measure_args.warmups
        ));
        for arm in [&siblings, &separate, &same_cpu, &alone] {
            samples.push(run_rep(arm, warmup, true, 0)?);
        }
    }
    let mut outcome: Option<(Verdict, Option<Estimate>)> = None;
    for rep in 0..rule.max_reps {
        let index = measure_args.warmups + rep;
        // ABAB: both arms see the same drift; the control only needs a few.
        samples.push(run_rep(&siblings, index, false, rep)?);
        samples.push(run_rep(&separate, index, false, rep)?);
        if rep < rule.min_reps {
            samples.push(run_rep(&same_cpu, index, false, rep)?);
            samples.push(run_rep(&alone, index, false, rep)?);
        }
        // Pairs stay aligned by repetition: an excluded rep drops its partner.
        let paired = gate::paired_costs(&samples, SIBLINGS, SEPARATE, clock);
        let (step, estimate) = gate::decide(&rule, &paired.treated, &paired.baseline);
        progress(&format!(
            "gate: repetition {}/{} (at most){}",
            rep + 1,
            rule.max_reps,
            estimate
                .as_ref()
                .map(|e| format!(", penalty {}", report::units::percent_change(e.penalty)))
                .unwrap_or_default()
        ));
        if let Step::Decided(verdict) = step {
            outcome = Some((verdict, estimate));
            break;
        }
        outcome = Some((Verdict::Inconclusive, estimate));
    }
    progress_done();
    let excluded = excluded_reps(&samples);
    let (mut verdict, estimate) = outcome.unwrap_or((Verdict::Inconclusive, None));

    let measured_of = |p: &Placement| measured(&samples, &p.arm, &excluded);
    let arms: Vec<_> = [&siblings, &separate, &same_cpu, &alone]
        .into_iter()
        .map(|p| arm_stats(p, &measured_of(p), clock, setup.tsc_hz))
        .collect();
    let tsc_costs = |p: &Placement| -> Vec<f64> {
        measured_of(p)
            .into_iter()
            .filter_map(|r| crate::judge::cost::rep_cost(r, crate::measure::ClockKind::Tsc))
            .collect()
    };
    let control = gate::control_check(&tsc_costs(&same_cpu), &tsc_costs(&alone));
    // Without working pinning neither verdict means anything.
    let control_failed = control.status == CheckStatus::Failed;
    if control_failed {
        verdict = Verdict::Inconclusive;
    }
    let mut sentence = report::gate::sentence(verdict, estimate.as_ref(), rule.threshold);
    if control_failed {
        sentence = format!(
            "{sentence}; the same-CPU control failed: {}",
            control.detail
        );
    }
    Ok(GateResult {
        schema_version: RESULT_SCHEMA_VERSION,
        kind: "gate".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        verdict,
        sentence,
        penalty: estimate.as_ref().map(|e| e.penalty),
        penalty_of_medians: estimate.as_ref().map(|e| e.penalty_of_medians),
        ci95: estimate.as_ref().map(|e| e.ci95.clone()),
        threshold: rule.threshold,
        reps: estimate.as_ref().map(|e| e.reps).unwrap_or(0),
        clock: Some(clock),
        pairs: Some(pairs),
        no_smt_reason: None,
        setup: Some(setup),
        arms,
        control: Some(control),
        excluded,
        evidence,
        warnings,
        samples,
    })
}
