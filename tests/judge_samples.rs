//! The judge on recorded samples (fixtures/samples/): the gate's verdicts,
//! the exclusions, the validity checks and the control, each from the saved
//! record format, so these tests also prove that format deserialises.
//!
//! Fixtures (two warm-ups, then interleaved repetitions; `same-cpu` is the
//! control arm, measured in the first five):
//! * gate-physical.json: bare metal with a PMU, siblings 35–40 % dearer.
//! * gate-virtual.json: a VM without PMU (TSC clock), siblings 0.63 against
//!   separate cores at a noisy 0.63–0.77 ticks per byte.
//! * gate-excluded.json: as physical, with siblings rep 5 multiplexed and
//!   separate rep 9 migrated.
//! * run-invariant.json / run-ipb-spread.json: a 4-worker study, instructions
//!   per byte identical / 1e-3 higher in the sibling-packed arm.
//! * run-no-pmu.json: this machine's case, TSC only, no instructions.
//! * gate-straddle.json, cv-two-percent.json, control.json: plain costs.

use placement_study::judge::batches::{Batching, Evidence, Next, Side};
use placement_study::judge::checks::{
    CheckName, CheckStatus, ExcludedRep, excluded_reps, invariance, multiplexing, pinning,
};
use placement_study::judge::cost::rep_cost;
use placement_study::judge::gate::{GateRule, PairedCosts, Verdict, control_check, paired_costs};
use placement_study::judge::stats::spread;
use placement_study::measure::{ClockKind, RepSample};
use placement_study::plan::Arm;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// Two batches of six to seven rounds: what the fixtures' fifteen paired
/// repetitions allow.
const RULE: GateRule = GateRule {
    threshold: 0.15,
    min_reps: 6,
    max_reps: 7,
    batching: Batching {
        batches: 2,
        max_batches: 2,
        gap: std::time::Duration::ZERO,
    },
};

const DEFAULT_TOLERANCE: f64 = 1e-4;
/// What the kernel of the recorded samples retires per byte: 9 instructions
/// per 16 bytes.
const RECORDED_INSTRUCTIONS_PER_BYTE: f64 = 0.5625;

fn fixture<T: DeserializeOwned>(name: &str) -> T {
    let path = format!("{}/fixtures/samples/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn samples(name: &str) -> Vec<RepSample> {
    fixture(name)
}

/// The measured TSC costs of one arm, as the control is judged on.
fn tsc_costs(reps: &[RepSample], arm: Arm) -> Vec<f64> {
    reps.iter()
        .filter(|rep| rep.arm == arm && !rep.warmup)
        .filter_map(|rep| rep_cost(rep, ClockKind::Tsc))
        .collect()
}

/// Replays the gate's loop: the paired rounds one at a time, as the
/// command measures them, until the batches decide; the verdict, how many
/// rounds it took, and the evidence.
fn decided(paired: &PairedCosts) -> (Option<Verdict>, usize, Evidence) {
    let mut evidence = Evidence::default();
    let mut so_far = PairedCosts::default();
    for (n, rep) in paired.reps.iter().enumerate() {
        so_far.treated.push(paired.treated[n]);
        so_far.baseline.push(paired.baseline[n]);
        so_far.reps.push(*rep);
        if let (Some(t), Some(b)) = (paired.treated_spread.get(n), paired.baseline_spread.get(n)) {
            so_far.treated_spread.push(*t);
            so_far.baseline_spread.push(*b);
        }
        if let Next::Decided(verdict) =
            evidence.round_measured(&RULE, *rep, std::slice::from_ref(&so_far))
        {
            return (Some(verdict), n + 1, evidence);
        }
    }
    (None, paired.reps.len(), evidence)
}

#[test]
fn a_35_to_40_percent_penalty_is_physical() {
    let reps = samples("gate-physical.json");
    let paired = paired_costs(&reps, Arm::Siblings, Arm::Separate, ClockKind::CoreCycles);
    assert_eq!(paired.reps, (2..17).collect::<Vec<_>>());
    let (verdict, rounds, evidence) = decided(&paired);
    assert_eq!((verdict, rounds), (Some(Verdict::Physical), 12));
    let estimate = evidence
        .pooled(&RULE, std::slice::from_ref(&paired))
        .unwrap();
    assert!((0.35..=0.40).contains(&estimate.penalty), "{estimate:?}");
    assert!(
        estimate.ci95.low > 0.34 && estimate.ci95.high < 0.41,
        "{estimate:?}"
    );
    assert_eq!(estimate.reps, 12);
    let old = estimate.mean_based.unwrap();
    assert!((old.penalty - estimate.penalty).abs() < 0.01, "{old:?}");

    assert_eq!(pinning(&reps).status, CheckStatus::Passed);
    assert_eq!(multiplexing(&reps).status, CheckStatus::Passed);
    assert!(excluded_reps(&reps).is_empty());
}

#[test]
fn noisy_costs_without_a_penalty_are_virtual() {
    let reps = samples("gate-virtual.json");
    let paired = paired_costs(&reps, Arm::Siblings, Arm::Separate, ClockKind::Tsc);
    let siblings = spread(&paired.treated).unwrap();
    let separate = spread(&paired.baseline).unwrap();
    assert!((0.628..0.632).contains(&siblings.median));
    assert!(separate.min >= 0.63 && separate.max <= 0.77, "{separate:?}");

    // Siblings are cheaper here: a negative penalty, still virtual.
    let (verdict, rounds, evidence) = decided(&paired);
    assert_eq!(verdict, Some(Verdict::Virtual));
    assert!(rounds >= 2 * RULE.min_reps);
    assert!(
        evidence
            .pooled(&RULE, std::slice::from_ref(&paired))
            .unwrap()
            .penalty
            < 0.0
    );

    // No PMU: the checks say they cannot tell, instead of passing.
    assert_eq!(multiplexing(&reps).status, CheckStatus::Unavailable);
}

#[derive(Deserialize)]
struct GateCosts {
    siblings: Vec<f64>,
    separate: Vec<f64>,
}

#[test]
fn an_interval_straddling_the_threshold_buys_a_batch_then_is_inconclusive() {
    let costs: GateCosts = fixture("gate-straddle.json");
    let paired = PairedCosts {
        reps: (0..costs.siblings.len()).collect(),
        treated: costs.siblings,
        baseline: costs.separate,
        ..PairedCosts::default()
    };
    let (verdict, rounds, evidence) = decided(&paired);
    assert_eq!((verdict, rounds), (Some(Verdict::Inconclusive), 14));
    for batch in &evidence.batches {
        let interval = &batch.estimate.as_ref().unwrap().ci95;
        assert!(interval.low < RULE.threshold && interval.high >= RULE.threshold);
        assert_eq!(batch.side, Some(Side::Straddles));
    }
}

#[test]
fn multiplexed_and_migrated_reps_are_excluded_and_reported() {
    let reps = samples("gate-excluded.json");
    let excluded = excluded_reps(&reps);
    assert_eq!(excluded.len(), 2, "{excluded:?}");
    let ExcludedRep { arm, rep, why } = &excluded[0];
    assert_eq!((arm.as_str(), *rep), ("siblings", 5));
    assert!(
        why.starts_with("worker 1 counted ") && why.contains(" ns enabled"),
        "{why}"
    );
    assert_eq!(
        excluded[1],
        ExcludedRep {
            arm: Arm::Separate,
            rep: 9,
            why: "worker 0 pinned to 0 ran on 3, migrated 1 time".into()
        }
    );

    // Both halves of each affected pair leave the statistics.
    let paired = paired_costs(&reps, Arm::Siblings, Arm::Separate, ClockKind::CoreCycles);
    assert_eq!(paired.reps.len(), 13);
    assert!(!paired.reps.contains(&5) && !paired.reps.contains(&9));
    let (verdict, rounds, evidence) = decided(&paired);
    assert_eq!((verdict, rounds), (Some(Verdict::Physical), 12));
    assert_eq!(
        evidence
            .pooled(&RULE, std::slice::from_ref(&paired))
            .unwrap()
            .reps,
        12
    );

    let multiplexed = multiplexing(&reps);
    assert_eq!(multiplexed.status, CheckStatus::Failed);
    assert!(
        multiplexed
            .detail
            .contains("arm siblings rep 5 worker 1 counted")
    );
    let pinned = pinning(&reps);
    assert_eq!(pinned.status, CheckStatus::Failed);
    assert_eq!(
        pinned.detail,
        "a thread moved: arm separate rep 9 worker 0 pinned to 0 ran on 3, migrated 1 time"
    );
}

#[test]
fn an_instructions_per_byte_spread_of_1e_3_fails_invariance() {
    let (check, spread) = invariance(
        &samples("run-ipb-spread.json"),
        DEFAULT_TOLERANCE,
        RECORDED_INSTRUCTIONS_PER_BYTE,
        None,
    );
    assert_eq!(check.status, CheckStatus::Failed);
    let spread = spread.unwrap();
    assert!((spread - 1e-3).abs() < 1e-5, "{spread}");
    assert!(
        check.detail.starts_with(
            "instructions per byte vary by 0.000999481 between arms/reps: \
             the counters were not on the workers"
        ),
        "{}",
        check.detail
    );
    assert!(
        check
            .detail
            .contains("highest 0.563062 in arm sibling-packed")
    );
}

#[test]
fn identical_instructions_per_byte_pass_invariance() {
    let reps = samples("run-invariant.json");
    let (check, spread) = invariance(
        &reps,
        DEFAULT_TOLERANCE,
        RECORDED_INSTRUCTIONS_PER_BYTE,
        None,
    );
    assert_eq!((check.status, spread), (CheckStatus::Passed, Some(0.0)));
    assert_eq!(pinning(&reps).status, CheckStatus::Passed);
    assert_eq!(multiplexing(&reps).status, CheckStatus::Passed);
}

#[test]
fn counts_off_the_kernels_constant_by_the_same_amount_everywhere_fail_invariance() {
    // Identical everywhere, but a third more than the kernel retires: every
    // counter counted something besides its worker's kernel.
    let reps = samples("run-invariant.json");
    let (check, spread) = invariance(&reps, DEFAULT_TOLERANCE, 0.421875, None);
    assert_eq!((check.status, spread), (CheckStatus::Failed, Some(0.0)));
    assert!(
        check.detail.starts_with(
            "instructions per byte read 0.562500 where the kernel retires 0.421875 by construction (+33.3333 % in arm"
        ),
        "{}",
        check.detail
    );
}

#[test]
fn without_a_pmu_invariance_is_unavailable_and_costs_use_the_tsc() {
    let reps = samples("run-no-pmu.json");
    let (check, spread) = invariance(
        &reps,
        DEFAULT_TOLERANCE,
        RECORDED_INSTRUCTIONS_PER_BYTE,
        None,
    );
    assert_eq!(check.status, CheckStatus::Unavailable);
    assert_eq!(check.detail, "instructions were not counted");
    assert_eq!(spread, None);
    assert_eq!(pinning(&reps).status, CheckStatus::Passed);
    let measured = reps.iter().find(|rep| !rep.warmup).unwrap();
    assert_eq!(rep_cost(measured, ClockKind::CoreCycles), None);
    assert!(rep_cost(measured, ClockKind::Tsc).is_some());
}

#[test]
fn a_cv_of_2_percent_fails_a_1_percent_bar() {
    let costs: Vec<f64> = fixture("cv-two-percent.json");
    let noisy = spread(&costs).unwrap();
    assert!((0.02..0.022).contains(&noisy.cv), "{noisy:?}");
    let check =
        placement_study::judge::checks::cv_bar(CheckName::CvBar(Arm::SiblingPacked), &noisy, 0.01);
    assert_eq!(check.status, CheckStatus::Failed);
    assert!(check.detail.ends_with("not quotable"));
    assert_eq!(
        placement_study::judge::checks::cv_bar(CheckName::CvBar(Arm::SiblingPacked), &noisy, 0.03)
            .status,
        CheckStatus::Passed
    );
}

#[derive(Deserialize)]
struct ControlCosts {
    separate: Vec<f64>,
    same_cpu_pinned: Vec<f64>,
    same_cpu_parallel: Vec<f64>,
}

#[test]
fn the_control_passes_at_twice_the_cost_and_fails_at_the_same_cost() {
    let costs: ControlCosts = fixture("control.json");
    assert_eq!(
        control_check(&costs.same_cpu_pinned, &costs.separate, ClockKind::Tsc).status,
        CheckStatus::Passed
    );
    let parallel = control_check(&costs.same_cpu_parallel, &costs.separate, ClockKind::Tsc);
    assert_eq!(parallel.status, CheckStatus::Failed);
    assert!(
        parallel
            .detail
            .starts_with("pinning is not working at all: ")
    );
}

#[test]
fn the_control_is_judged_on_tsc_because_core_cycles_miss_the_wait() {
    let reps = samples("gate-physical.json");
    let control = control_check(
        &tsc_costs(&reps, Arm::SameCpu),
        &tsc_costs(&reps, Arm::Alone),
        ClockKind::Tsc,
    );
    assert_eq!(control.status, CheckStatus::Passed, "{}", control.detail);

    // The same repetitions in core cycles: each time-sliced worker's own
    // counter stopped while it waited, so working pinning would look broken.
    let cycles = |arm: Arm| -> Vec<f64> {
        reps.iter()
            .filter(|rep| rep.arm == arm && !rep.warmup)
            .filter_map(|rep| rep_cost(rep, ClockKind::CoreCycles))
            .collect()
    };
    assert_eq!(
        control_check(&cycles(Arm::SameCpu), &cycles(Arm::Alone), ClockKind::Tsc).status,
        CheckStatus::Failed
    );
}

/// A COMMAND sweep recorded on this project's 2-vCPU guest (xz -1
/// -T{threads}, 10 rounds, each CPU alone with -T1 for the ceiling): its
/// saved repetitions and residency judge to the saved steps, CPU speeds,
/// knees and validity again.
#[test]
fn a_recorded_command_sweep_judges_to_its_saved_curve() {
    use placement_study::judge::sweep::{SweepRules, judge_command_sweep};
    use placement_study::saved::SavedDocument;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/results/sweep-vm-command-xz.json");
    let SavedDocument::Sweep(sweep) = placement_study::saved::load(&path).unwrap() else {
        panic!("a sweep fixture");
    };
    let command = sweep.command.as_ref().unwrap();
    let rules = SweepRules {
        cv_bar: sweep.options.cv_bar,
        tolerance: sweep.options.tolerance,
        strict: sweep.options.strict,
    };
    let judged = judge_command_sweep(&command.reps, &sweep.plan, &command.residency, &rules);
    assert_eq!(judged.steps, sweep.judged.steps);
    assert_eq!(judged.cpu_speeds, sweep.judged.cpu_speeds);
    assert_eq!(judged.knees, sweep.judged.knees);
    assert_eq!(judged.valid, sweep.judged.valid);
    let step2 = &judged.steps[1];
    let speedup = step2.speedup.as_ref().unwrap();
    assert!(speedup.value > 1.5 && speedup.value < 2.0, "{speedup:?}");
    assert_eq!(step2.wall_ms.as_ref().unwrap().reps, 10);
    // Two CPUs alike alone: a ceiling near 2, the speedup under it.
    let ceiling = step2.ceiling.unwrap();
    assert!(ceiling > 1.8 && ceiling < 2.2, "{ceiling}");
    assert!(step2.efficiency.unwrap() < 1.0);
}
