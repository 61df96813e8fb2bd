//! Tests of hybrid's judgement on recorded samples.

use super::*;
use crate::measure::{
    ClockKind, CounterValues, CpuItems, HardwareCounters, ItemCounts, MeasurementSetup,
    SoftwareCounters, WorkerSample,
};
use crate::plan::Placement;
use crate::plan::hybrid::Scheme;
use crate::probe::ClassSource;

/// Items per repetition in these samples: 2 workers × 50.
const ITEMS: u64 = 100;

/// A worker that did `items` items on `cpu` at `per_ms` items per ms.
fn worker(worker: usize, cpu: u32, pinned: bool, items: u64, per_ms: f64) -> WorkerSample {
    let busy_ns = (items as f64 / per_ms * 1e6) as u64;
    WorkerSample {
        worker,
        pinned_cpu: pinned.then_some(cpu),
        cpu_start: cpu,
        cpu_end: cpu,
        bytes: items * 1000,
        busy_ns,
        tsc_ticks: busy_ns,
        barrier_wait_ns: 0,
        finish_ns: None,
        counters: CounterValues {
            task_clock_ns: busy_ns,
            time_enabled_ns: busy_ns,
            time_running_ns: busy_ns,
            ..CounterValues::default()
        },
        checksum: 0,
        items: Some(ItemCounts {
            items,
            stolen: 0,
            per_cpu: vec![CpuItems { cpu, items }],
        }),
        pages: None,
    }
}

fn rep(arm: Arm, round: usize, workers: Vec<WorkerSample>) -> RepSample {
    RepSample {
        arm,
        rep: round,
        warmup: false,
        wall_ns: workers.iter().map(|w| w.busy_ns).max().unwrap_or(0) + 50_000,
        workers,
        dispatcher_task_clock_ns: 0,
    }
}

/// Rounds on a 2-CPU machine whose CPU 1 runs at `slow` of CPU 0's
/// speed (1 item per ms), with a small wobble per round; stealing
/// splits the items in proportion to speed, as a perfect scheme would.
fn rounds_of(slow: f64, baseline_cpus: &[u32], rounds: usize) -> Vec<RepSample> {
    let speed = |cpu: u32, round: usize| {
        let wobble = 1.0 + 0.01 * ((round * 7 + cpu as usize * 3) % 5) as f64 / 4.0;
        if cpu == 0 {
            1.0 * wobble
        } else {
            slow * wobble
        }
    };
    let mut samples = Vec::new();
    for round in 0..rounds {
        for &cpu in baseline_cpus {
            let w = worker(0, cpu, true, ITEMS, speed(cpu, round));
            samples.push(rep(Arm::Baseline, round, vec![w]));
        }
        for (arm, pinned) in [
            (Arm::StaticPinned, true),
            (Arm::StealingPinned, true),
            (Arm::StaticUnpinned, false),
            (Arm::StealingUnpinned, false),
        ] {
            let (fast, slow_items) = match arm.scheme() {
                Some(Scheme::WorkStealing) => {
                    let fast = (ITEMS as f64 / (1.0 + slow)).round() as u64;
                    (fast, ITEMS - fast)
                }
                _ => (ITEMS / 2, ITEMS / 2),
            };
            let workers = vec![
                worker(0, 0, pinned, fast, speed(0, round)),
                worker(1, 1, pinned, slow_items, speed(1, round)),
            ];
            samples.push(rep(arm, round, workers));
        }
    }
    samples
}

fn plan(baseline_cpus: &[u32]) -> HybridPlan {
    HybridPlan {
        baseline_cpus: baseline_cpus.to_vec(),
        worker_cpus: vec![0, 1],
        schemes: SCHEME_ARMS
            .iter()
            .map(|&arm| Placement {
                arm,
                cpus: vec![Some(0), Some(1)],
                membind: None,
            })
            .collect(),
    }
}

fn uniform() -> Vec<CoreClass> {
    vec![CoreClass {
        name: CoreKind::Uniform,
        cpus: CpuSet::from_cpus([0, 1]),
        source: ClassSource::Uniform,
        detail: None,
    }]
}

fn setup() -> MeasurementSetup {
    MeasurementSetup {
        kernel: "mul".into(),
        kernel_description: String::new(),
        kernel_instructions_per_byte: 0.78125,
        kernel_port_bound_cycles_per_byte: 0.5,
        bytes_per_worker: 1000,
        buffer_bytes: 1000,
        passes: 1,
        clock: ClockKind::Tsc,
        tick_clock: ClockKind::Tsc,
        hardware_counters: HardwareCounters::Unavailable {
            reason: "none here".into(),
        },
        software_counters: SoftwareCounters::PerfEvents,
        tsc_hz: 1e9,
        tsc_hz_source: "stated".into(),
        warmups: 0,
    }
}

const RULES: HybridRules = HybridRules {
    every_cpu: true,
    cv_bar: 0.05,
    tolerance: 1e-4,
    strict: false,
};

#[test]
fn a_throttled_cpu_is_a_measured_class_the_machine_does_not_publish() {
    let samples = rounds_of(0.46, &[0, 1], 11);
    let judged = judge_hybrid(&samples, &plan(&[0, 1]), &setup(), &uniform(), &RULES, &[]);
    assert_eq!(judged.class_judgement.verdict, ClassVerdict::Differ);
    assert_eq!(
        judged.class_judgement.measured,
        [CpuSet::from_cpus([0]), CpuSet::from_cpus([1])]
    );
    let slow = &judged.speed_classes[1];
    let slowdown = slow.slowdown.as_ref().unwrap();
    assert!((slowdown.value - 1.0 / 0.46).abs() < 0.02, "{slowdown:?}");
    assert!(slowdown.ci95_low.unwrap() > 2.0);
    let ceiling = judged.ceiling.unwrap();
    assert!((ceiling - 1.46).abs() < 0.01, "{ceiling}");

    let scheme = |arm: Arm| judged.schemes.iter().find(|s| s.arm == arm).unwrap();
    // Static: the slow CPU's half decides; the fast one idles over half the time.
    let static_pinned = scheme(Arm::StaticPinned);
    let fast_idle = static_pinned.classes[0].idle.as_ref().unwrap().median;
    assert!(fast_idle > 0.5, "{fast_idle}");
    assert!(static_pinned.of_ceiling.unwrap() < 0.7);
    // Stealing: busy times equal, items in proportion to speed.
    let stealing = scheme(Arm::StealingPinned);
    assert!(stealing.of_ceiling.unwrap() > 0.95);
    let ratio = &stealing.work_ratios[0];
    assert!(ratio.difference.abs() < 0.05, "{ratio:?}");
    assert!((stealing.classes[0].items.unwrap() - 0.685).abs() < 0.01);
    // Unpinned workers belong to the class they did most items on; the
    // work ratio is the pinned scheme's alone.
    let unpinned = scheme(Arm::StaticUnpinned);
    assert!(unpinned.classes[0].idle.as_ref().unwrap().median > 0.5);
    assert!(scheme(Arm::StealingUnpinned).work_ratios.is_empty());
    assert!(judged.valid);
}

/// Nothing measured is never valid: a scheme and a baseline CPU with
/// every round gone fail their `repetitions` checks and the study is
/// invalid.
#[test]
fn a_scheme_or_baseline_without_a_kept_round_makes_the_study_invalid() {
    let mut samples = rounds_of(0.46, &[0, 1], 11);
    samples.retain(|rep| {
        rep.arm != Arm::StaticPinned
            && !(rep.arm == Arm::Baseline && rep.workers[0].pinned_cpu == Some(1))
    });
    let judged = judge_hybrid(&samples, &plan(&[0, 1]), &setup(), &uniform(), &RULES, &[]);
    assert!(!judged.valid);
    let failed: Vec<String> = judged
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Failed)
        .map(|c| c.name.to_string())
        .collect();
    assert_eq!(failed, ["repetitions cpu:1", "repetitions static-pinned"]);
}

#[test]
fn one_baseline_per_published_class_trusts_the_published_classes() {
    let samples = rounds_of(0.46, &[0], 11);
    let rules = HybridRules {
        every_cpu: false,
        ..RULES
    };
    let judged = judge_hybrid(&samples, &plan(&[0]), &setup(), &uniform(), &rules, &[]);
    assert_eq!(judged.class_judgement.verdict, ClassVerdict::Agree);
    assert!(judged.class_judgement.notes[0].contains("--every-cpu"));
    assert_eq!(judged.speed_classes.len(), 1);
    assert_eq!(judged.speed_classes[0].cpus, CpuSet::from_cpus([0, 1]));
    assert_eq!(judged.ceiling, Some(2.0));
}

#[test]
fn a_favoured_core_a_few_per_cent_faster_is_no_class() {
    let samples = rounds_of(0.97, &[0, 1], 11);
    let judged = judge_hybrid(&samples, &plan(&[0, 1]), &setup(), &uniform(), &RULES, &[]);
    assert_eq!(judged.class_judgement.verdict, ClassVerdict::Agree);
    assert_eq!(judged.speed_classes.len(), 1);
}

#[test]
fn an_excluded_baseline_leaves_the_other_cpus_round_alone() {
    let mut samples = rounds_of(0.46, &[0, 1], 5);
    // Round 2's baseline on CPU 1 shared its CPU with another task.
    let shared = samples
        .iter_mut()
        .find(|r| r.arm == Arm::Baseline && r.rep == 2 && r.workers[0].cpu_start == 1)
        .unwrap();
    shared.workers[0].counters.task_clock_ns /= 2;
    let judged = judge_hybrid(&samples, &plan(&[0, 1]), &setup(), &uniform(), &RULES, &[]);
    let reps = |cpu: u32| {
        let b = judged.baselines.iter().find(|b| b.cpu == cpu).unwrap();
        (b.wall_ms.as_ref().unwrap().reps, b.excluded.len())
    };
    assert_eq!(reps(0), (5, 0));
    assert_eq!(reps(1), (4, 1));
}

#[test]
fn a_noisy_baseline_fails_its_cv_bar_and_only_strict_invalidates() {
    let samples = rounds_of(0.46, &[0, 1], 5);
    let tight = HybridRules {
        cv_bar: 0.0001,
        ..RULES
    };
    let judged = judge_hybrid(&samples, &plan(&[0, 1]), &setup(), &uniform(), &tight, &[]);
    let check = judged
        .checks
        .iter()
        .find(|c| c.name == CheckName::CvBar(Arm::Baseline))
        .unwrap();
    assert!(check.detail.contains("CPU 0"), "{}", check.detail);
    assert!(judged.valid);
    let strict = HybridRules {
        strict: true,
        ..tight
    };
    assert!(!judge_hybrid(&samples, &plan(&[0, 1]), &setup(), &uniform(), &strict, &[]).valid);
}

/// Twelve rounds of CPUs 0 and 1 judged as two batches of six.
fn judged_in_two_batches(samples: &[RepSample]) -> HybridJudgement {
    let batches = [(0..6).collect(), (6..12).collect()];
    judge_hybrid(
        samples,
        &plan(&[0, 1]),
        &setup(),
        &uniform(),
        &RULES,
        &batches,
    )
}

#[test]
fn batches_that_group_the_cpus_alike_keep_the_verdict() {
    let samples = rounds_of(0.46, &[0, 1], 12);
    let judged = judged_in_two_batches(&samples);
    let classes = &judged.class_judgement;
    assert_eq!(classes.verdict, ClassVerdict::Differ);
    assert!(classes.batches_agree());
    assert_eq!(classes.batches[1].rounds, (6..12).collect::<Vec<_>>());
    let noise = judged.noise.unwrap();
    assert_eq!((noise.noisy_rounds, noise.rounds), (0, 12));
    assert!(noise.baseline_drift.unwrap() < 0.01);
}

#[test]
fn a_slowdown_in_one_batch_only_is_inconclusive_not_a_class() {
    // CPU 1 ran at 46 % in the first batch (a neighbour's load), at full
    // speed in the second.
    let mut samples: Vec<RepSample> = rounds_of(0.46, &[0, 1], 6);
    samples.extend(
        rounds_of(1.0, &[0, 1], 12)
            .into_iter()
            .filter(|rep| rep.rep >= 6),
    );
    let judged = judged_in_two_batches(&samples);
    let classes = &judged.class_judgement;
    assert!(!classes.batches_agree());
    assert_eq!(classes.verdict, ClassVerdict::Inconclusive);
    assert!(
        classes.notes.last().unwrap().starts_with(
            "batches measured a pause apart group the CPUs differently (batch 1: 0 / 1; batch 2: 0-1)"
        ),
        "{:?}",
        classes.notes
    );
    assert!(judged.noise.unwrap().baseline_drift.unwrap() > 1.0);
}

#[test]
fn a_round_a_burst_spoiled_is_flagged_and_kept_out_of_the_baseline() {
    // In round 3 a burst on the host made CPU 0's baseline take twice as
    // long: the round is noise, not CPU 0's speed.
    let mut samples = rounds_of(0.46, &[0, 1], 12);
    let spoiled = samples
        .iter_mut()
        .find(|s| s.arm == Arm::Baseline && s.rep == 3 && s.workers[0].pinned_cpu == Some(0))
        .unwrap();
    spoiled.wall_ns *= 2;
    let judged = judged_in_two_batches(&samples);
    let noise = judged.noise.unwrap();
    assert_eq!((noise.noisy_rounds, noise.rounds), (1, 12));
    let cpu0 = &judged.baselines[0];
    assert_eq!(cpu0.excluded.len(), 1, "{:?}", cpu0.excluded);
    assert_eq!(cpu0.excluded[0].rep, 3);
    assert!(
        cpu0.excluded[0].why.starts_with("host noise: +"),
        "{}",
        cpu0.excluded[0].why
    );
    assert_eq!(cpu0.wall_ms.as_ref().unwrap().reps, 11);
    assert!(judged.baselines[1].excluded.is_empty());
    assert_eq!(judged.class_judgement.verdict, ClassVerdict::Differ);
}
