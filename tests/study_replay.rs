//! The studies' decision loops on recorded samples, replayed through a
//! test-only [`Measure`]: the gate's adaptive loop (physical, virtual,
//! inconclusive, a failed control, exclusions, a stop signal, the one-core
//! baseline), the run's validity rule and `hybrid`'s rounds, on any
//! machine, without SMT or a PMU. The product has exactly one `Measure`:
//! the engine.
//!
//! Recorded samples are `fixtures/samples/*.json` (see `judge_samples.rs`);
//! synthetic ones are built here with a chosen cost per byte.

use anyhow::{Result, anyhow};
use placement_study::exit::{Outcome, UsageError};
use placement_study::judge::batches::{Batching, Side};
use placement_study::judge::checks::{CheckName, CheckStatus};
use placement_study::judge::gate::{GateRule, Verdict};
use placement_study::judge::hybrid::ClassVerdict;
use placement_study::judge::pairs::{CpuRelation, MapVerdict, PairRelation, map_text};
use placement_study::judge::validity::{InvalidReason, judge_run};
use placement_study::judge::warnings::Warning;
use placement_study::measure::mempolicy::PageNodes;
use placement_study::measure::stop::StopSignal;
use placement_study::measure::{
    ClockKind, CounterValues, GroupLayout, HardwareCounters, Measure, MeasureOptions,
    MeasurementSetup, RepOutcome, RepSample, SoftwareCounters, WorkerSample,
};
use placement_study::plan::hybrid::SharedWork;
use placement_study::plan::membind::Membind;
use placement_study::plan::pairs::{Contention, SearchKind};
use placement_study::plan::{Arm, GateBaseline, Placement};
use placement_study::probe::{Topology, probe};
use placement_study::report::document::HumanView;
use placement_study::report::view::View;
use placement_study::saved::{GateResult, RunResult};
use placement_study::saved::{HybridResult, PairsResult};
use placement_study::study::gate::gate_session;
use placement_study::study::hybrid::{HybridStudyOptions, hybrid_study};
use placement_study::study::pairs::{PairsStudyOptions, pairs_study};
use placement_study::study::run::{RunOutcome, StudyOptions, run_study};
use placement_study::study::{LazyMeasure, Progress};
use std::collections::HashMap;
use std::time::Duration;

/// Two batches of six or seven rounds: what the recorded fixtures' fifteen
/// repetitions allow. No pause: a replay has no host to wait for.
const RULE: GateRule = GateRule {
    threshold: 0.15,
    min_reps: 6,
    max_reps: 7,
    batching: Batching {
        batches: 2,
        max_batches: 2,
        gap: Duration::ZERO,
    },
};

/// Bytes per worker per repetition in synthetic samples.
const BYTES: u64 = 1 << 24;

/// Where a replayed repetition comes from: `None` when none was recorded.
type SampleSource = Box<dyn Fn(&Placement, usize, bool) -> Option<RepSample>>;

/// Replays samples: repetition `rep` of `arm` is whatever `source` says,
/// and after `stop_after` calls every call reports a SIGINT.
struct Replay {
    setup: MeasurementSetup,
    source: SampleSource,
    stop_after: Option<usize>,
    calls: usize,
    /// Every (arm, rep) asked for, in order.
    asked: Vec<(Arm, usize)>,
    /// Pauses asked for between batches, after how many calls each.
    pauses: Vec<usize>,
}

impl Measure for Replay {
    fn setup(&self) -> &MeasurementSetup {
        &self.setup
    }

    fn run_rep(&mut self, placement: &Placement, rep: usize, warmup: bool) -> Result<RepOutcome> {
        self.calls += 1;
        if self.stop_after.is_some_and(|n| self.calls > n) {
            return Ok(RepOutcome::Stopped(StopSignal::Interrupt));
        }
        self.asked.push((placement.arm, rep));
        (self.source)(placement, rep, warmup)
            .map(RepOutcome::Measured)
            .ok_or_else(|| anyhow!("no recorded sample for {} rep {rep}", placement.arm))
    }

    /// Recorded shared work replays like any repetition: what was shared
    /// is in the sample's item counts.
    fn run_shared(
        &mut self,
        placement: &Placement,
        _: &SharedWork,
        rep: usize,
        warmup: bool,
    ) -> Result<RepOutcome> {
        self.run_rep(placement, rep, warmup)
    }

    fn pause(&mut self, _: Duration) -> Option<StopSignal> {
        self.pauses.push(self.calls);
        None
    }
}

impl Replay {
    /// Replays a fixture file, looked up by arm and repetition. The
    /// recorded files predate the gate's per-worker baselines: they measured
    /// one worker alone only in the control's rounds, and the siblings
    /// against two workers on separate cores. Each sibling CPU alone is
    /// served as the recorded alone worker, or after the control's rounds
    /// as the separate arm's worker on the first sibling, pinned where the
    /// gate asks (a recorded host whose two sibling CPUs run alike).
    fn recorded(name: &str, clock: ClockKind) -> Replay {
        let path = format!("{}/fixtures/samples/{name}", env!("CARGO_MANIFEST_DIR"));
        let reps: Vec<RepSample> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let by_key: HashMap<(Arm, usize), RepSample> =
            reps.into_iter().map(|r| ((r.arm, r.rep), r)).collect();
        Replay::from_fn(clock, move |p, rep, _| match p.arm {
            Arm::Alone | Arm::AloneSecond => {
                let mut sample = by_key
                    .get(&(Arm::Alone, rep))
                    .or_else(|| by_key.get(&(Arm::Separate, rep)))?
                    .clone();
                sample.arm = p.arm;
                sample.workers.truncate(1);
                for (worker, cpu) in sample.workers.iter_mut().zip(&p.cpus) {
                    worker.pinned_cpu = *cpu;
                    worker.cpu_start = cpu.unwrap_or(0);
                    worker.cpu_end = cpu.unwrap_or(0);
                }
                Some(sample)
            }
            _ => by_key.get(&(p.arm, rep)).cloned(),
        })
    }

    /// Synthetic samples: each worker of arm `p` costs `cost(arm, rep)` TSC
    /// ticks per byte.
    fn synthetic(cost: impl Fn(Arm, usize) -> f64 + 'static) -> Replay {
        Replay::from_fn(ClockKind::Tsc, move |p, rep, warmup| {
            Some(sample(p, rep, warmup, cost(p.arm, rep)))
        })
    }

    fn from_fn(
        clock: ClockKind,
        source: impl Fn(&Placement, usize, bool) -> Option<RepSample> + 'static,
    ) -> Replay {
        Replay {
            setup: setup(clock),
            source: Box::new(source),
            stop_after: None,
            calls: 0,
            asked: Vec::new(),
            pauses: Vec::new(),
        }
    }
}

/// What the kernel of the recorded samples (`fixtures/samples/`) retires per
/// byte: 9 instructions per 16 bytes.
const RECORDED_INSTRUCTIONS_PER_BYTE: f64 = 0.5625;

fn setup(clock: ClockKind) -> MeasurementSetup {
    MeasurementSetup {
        kernel: "mul".into(),
        kernel_description: "replayed".into(),
        kernel_instructions_per_byte: RECORDED_INSTRUCTIONS_PER_BYTE,
        kernel_port_bound_cycles_per_byte: 0.625,
        bytes_per_worker: BYTES,
        buffer_bytes: 16384,
        passes: BYTES / 16384,
        clock,
        tick_clock: ClockKind::Tsc,
        hardware_counters: match clock {
            ClockKind::CoreCycles => HardwareCounters::Available {
                l1i_misses: true,
                events: Vec::new(),
                layout: GroupLayout::OneGroup,
                layout_reason: None,
            },
            _ => HardwareCounters::Unavailable {
                reason: "replayed without a PMU".into(),
            },
        },
        software_counters: SoftwareCounters::PerfEvents,
        tsc_hz: 2.5e9,
        tsc_hz_source: "replayed".into(),
        warmups: 2,
    }
}

/// A repetition whose every worker stayed on its CPU and cost `cost` TSC
/// ticks per byte (no PMU).
fn sample(placement: &Placement, rep: usize, warmup: bool, cost: f64) -> RepSample {
    sample_of_workers(placement, rep, warmup, |_| cost)
}

/// Like [`sample`], worker `i` costing `cost(i)`.
fn sample_of_workers(
    placement: &Placement,
    rep: usize,
    warmup: bool,
    cost: impl Fn(usize) -> f64,
) -> RepSample {
    let workers = placement
        .cpus
        .iter()
        .enumerate()
        .map(|(worker, cpu)| (worker, cpu, (cost(worker) * BYTES as f64) as u64))
        .map(|(worker, cpu, ticks)| WorkerSample {
            worker,
            pinned_cpu: *cpu,
            cpu_start: cpu.unwrap_or(0),
            cpu_end: cpu.unwrap_or(0),
            bytes: BYTES,
            busy_ns: ticks * 2 / 5,
            tsc_ticks: ticks,
            barrier_wait_ns: 1000,
            finish_ns: None,
            counters: CounterValues {
                task_clock_ns: ticks * 2 / 5,
                time_enabled_ns: ticks * 2 / 5,
                time_running_ns: ticks * 2 / 5,
                ..CounterValues::default()
            },
            checksum: 7,
            items: None,
            pages: None,
        })
        .collect::<Vec<_>>();
    RepSample {
        arm: placement.arm,
        rep,
        warmup,
        wall_ns: workers.iter().map(|w| w.busy_ns).max().unwrap_or(0),
        workers,
        dispatcher_task_clock_ns: 100,
    }
}

/// A deterministic ±`noise` pattern around `centre`.
fn around(centre: f64, noise: f64, rep: usize) -> f64 {
    let pattern = [0.0, 1.0, -1.0, 0.5, -0.5];
    centre * (1.0 + noise * pattern[rep % pattern.len()])
}

/// Costs of a working host: same-cpu about twice `alone`.
fn working_control(arm: Arm, rep: usize) -> Option<f64> {
    match arm {
        Arm::SameCpu => Some(around(2.0, 0.01, rep)),
        Arm::Alone | Arm::AloneSecond => Some(around(1.0, 0.01, rep)),
        _ => None,
    }
}

struct Quiet;

impl Progress for Quiet {
    fn update(&mut self, _message: &str) {}
    fn done(&mut self) {}
}

fn topology(name: &str) -> Topology {
    let root = format!("{}/fixtures/sysfs/{name}", env!("CARGO_MANIFEST_DIR"));
    probe(Some(root.as_ref()), None).unwrap()
}

/// One core of two threads: the two-core guest fixture with its second
/// core outside the affinity mask (a typical one-core cloud instance).
fn one_core_two_threads() -> Topology {
    let mut topology = topology("kvm-guest-claims-smt");
    for cpu in &mut topology.cpus {
        cpu.allowed = cpu.cpu < 2;
    }
    topology
}

fn gate(topology: &Topology, replay: Replay) -> (GateResult, Replay) {
    let mut measure = LazyMeasure::new(|| Ok(replay));
    let result = gate_session(topology, &RULE, &mut measure, &mut Quiet).unwrap();
    let replay = match measure.get() {
        Ok(replay) => std::mem::replace(replay, Replay::synthetic(|_, _| 1.0)),
        Err(e) => panic!("{e}"),
    };
    (result, replay)
}

#[test]
fn replayed_physical_gate_stops_after_two_agreeing_batches_with_a_passing_control() {
    let (result, replay) = gate(
        &topology("laptop-i5-11300H"),
        Replay::recorded("gate-physical.json", ClockKind::CoreCycles),
    );
    assert_eq!(result.verdict, Verdict::Physical, "{}", result.sentence);
    assert_eq!(result.baseline, Some(GateBaseline::EachAlone));
    assert_eq!(result.reps, 2 * RULE.min_reps);
    assert!(result.head.complete);
    let penalty = result.penalty.unwrap();
    assert!((0.35..=0.40).contains(&penalty), "{penalty}");
    assert!(result.mean_based.is_some());
    assert_eq!(result.control.unwrap().status, CheckStatus::Passed);
    assert!(result.control_attempts.is_empty());
    assert_eq!(result.batches.len(), 2);
    assert!(!result.noise.unwrap().is_high());
    // Two warm-up rounds of four arms, five rounds of four (with the
    // control), then rounds of three up to two batches of min_reps, one
    // pause between the batches.
    assert_eq!(
        replay.asked.len(),
        4 * (2 + 5) + 3 * (2 * RULE.min_reps - 5)
    );
    assert_eq!(replay.pauses, [4 * (2 + 5) + 3 * (RULE.min_reps - 5)]);
    assert_eq!(
        replay.asked[..4],
        [
            (Arm::Siblings, 0),
            (Arm::Alone, 0),
            (Arm::AloneSecond, 0),
            (Arm::SameCpu, 0),
        ]
    );
    assert_eq!(result.workers.len(), 2);
}

#[test]
fn replayed_virtual_gate_says_virtual() {
    let (result, _) = gate(
        &topology("kvm-guest-claims-smt"),
        Replay::recorded("gate-virtual.json", ClockKind::Tsc),
    );
    assert_eq!(result.verdict, Verdict::Virtual, "{}", result.sentence);
    assert!(result.penalty.unwrap() < 0.0);
    assert_eq!(result.clock, Some(ClockKind::Tsc));
}

#[test]
fn excluded_reps_are_listed_and_dropped_with_their_partner() {
    let (result, _) = gate(
        &topology("laptop-i5-11300H"),
        Replay::recorded("gate-excluded.json", ClockKind::CoreCycles),
    );
    let excluded: Vec<(Arm, usize)> = result.excluded.iter().map(|e| (e.arm, e.rep)).collect();
    // The recorded separate arm's rep 9 serves both alone arms there.
    assert_eq!(
        excluded,
        [(Arm::Siblings, 5), (Arm::Alone, 9), (Arm::AloneSecond, 9)]
    );
    assert_eq!(result.verdict, Verdict::Physical);
    // Its partners stay in the raw samples but out of the pairs.
    assert!(
        result
            .samples
            .iter()
            .any(|s| s.arm == Arm::Alone && s.rep == 5)
    );
    let measured_pairs = result
        .samples
        .iter()
        .filter(|s| s.arm == Arm::Siblings && !s.warmup)
        .count();
    assert_eq!(result.reps, measured_pairs - 2);
}

#[test]
fn a_straddling_penalty_measures_up_to_max_batches_then_is_inconclusive() {
    let replay = Replay::synthetic(|arm, rep| match arm {
        Arm::Siblings => around(1.15, 0.08, rep),
        Arm::Alone | Arm::AloneSecond => 1.0,
        _ => working_control(arm, rep).unwrap(),
    });
    let (result, replay) = gate(&topology("laptop-i5-11300H"), replay);
    assert_eq!(result.verdict, Verdict::Inconclusive, "{}", result.sentence);
    assert_eq!(result.reps, RULE.batching.max_batches * RULE.max_reps);
    let ci = result.ci95.unwrap();
    assert!(
        ci.low < RULE.threshold && ci.high >= RULE.threshold,
        "{ci:?}"
    );
    // The control ran only in the first five rounds.
    let controls = replay
        .asked
        .iter()
        .filter(|(arm, rep)| *arm == Arm::SameCpu && *rep >= 2)
        .count();
    assert_eq!(controls, 5);
}

#[test]
fn a_failed_control_makes_any_penalty_inconclusive() {
    // Pinning does nothing: both workers "on one CPU" ran in parallel.
    let replay = Replay::synthetic(|arm, rep| match arm {
        Arm::Siblings => around(1.8, 0.01, rep),
        _ => around(1.0, 0.01, rep),
    });
    let (result, replay) = gate(&topology("laptop-i5-11300H"), replay);
    assert_eq!(result.verdict, Verdict::Inconclusive);
    assert_eq!(result.control.unwrap().status, CheckStatus::Failed);
    assert!(
        result.sentence.contains("the same-CPU control failed"),
        "{}",
        result.sentence
    );
    // Measured three times in all, a pause before each new attempt.
    assert_eq!(result.control_attempts.len(), 2);
    assert!(
        result
            .control_attempts
            .iter()
            .all(|c| c.status == CheckStatus::Failed)
    );
    assert_eq!(replay.pauses.len(), 1 + 2);
}

#[test]
fn a_control_that_a_burst_failed_passes_when_measured_again() {
    // A third thread shared the control's CPU during the first five rounds.
    let replay = Replay::synthetic(|arm, rep| match arm {
        Arm::Siblings => around(1.8, 0.01, rep),
        Arm::SameCpu if rep < 7 => around(3.0, 0.01, rep),
        _ => working_control(arm, rep).unwrap_or_else(|| around(1.0, 0.01, rep)),
    });
    let (result, _) = gate(&topology("laptop-i5-11300H"), replay);
    assert_eq!(result.verdict, Verdict::Physical, "{}", result.sentence);
    assert_eq!(result.control.unwrap().status, CheckStatus::Passed);
    assert_eq!(result.control_attempts.len(), 1);
    assert_eq!(result.control_attempts[0].status, CheckStatus::Failed);
}

#[test]
fn a_burst_through_one_batch_makes_a_virtual_guest_inconclusive_never_physical() {
    // One core of two threads on separate host CPUs; a burst that slows
    // both host CPUs while the siblings work, through the first batch.
    let replay = Replay::synthetic(|arm, rep| match arm {
        Arm::Siblings if rep < 2 + 6 => around(1.5, 0.02, rep),
        Arm::Siblings => around(1.0, 0.02, rep + 1),
        _ => working_control(arm, rep).unwrap(),
    });
    let (result, _) = gate(&one_core_two_threads(), replay);
    assert_eq!(result.verdict, Verdict::Inconclusive, "{}", result.sentence);
    let sides: Vec<_> = result.batches.iter().map(|b| b.side).collect();
    assert_eq!(sides, [Some(Side::Above), Some(Side::Below)]);
}

/// A gate whose siblings arm's worker `i` costs `together(i, rep)`, the
/// first sibling alone `alone.0` and the second `alone.1`, the control
/// working, on one core of two threads.
fn per_worker_gate(together: fn(usize, usize) -> f64, alone: (f64, f64)) -> GateResult {
    let replay = Replay::from_fn(ClockKind::Tsc, move |p, rep, warmup| {
        Some(match p.arm {
            Arm::Siblings => sample_of_workers(p, rep, warmup, |worker| together(worker, rep)),
            Arm::Alone => sample(p, rep, warmup, around(alone.0, 0.01, rep)),
            Arm::AloneSecond => sample(p, rep, warmup, around(alone.1, 0.01, rep + 1)),
            Arm::SameCpu => sample(p, rep, warmup, around(2.0 * alone.0, 0.01, rep)),
            _ => return None,
        })
    });
    gate(&one_core_two_threads(), replay).0
}

#[test]
fn a_steady_neighbour_on_one_sibling_reads_virtual_and_is_named() {
    // CPU 1 runs 1.5x slower alone and together alike (another tenant on
    // its host CPU, or a capped vCPU): the siblings' mean against CPU 0
    // alone reads +25 %; each worker against its own CPU alone, nothing.
    let result = per_worker_gate(
        |worker, rep| around([1.0, 1.5][worker], 0.02, rep + worker),
        (1.0, 1.5),
    );
    assert_eq!(result.verdict, Verdict::Virtual, "{}", result.sentence);
    let slow = result.slow_cpu.as_ref().expect("CPU 1 named as slower");
    assert_eq!((slow.cpu, slow.other), (1, 0));
    assert!((0.45..=0.55).contains(&slow.slower), "{slow:?}");
    // Said right after the verdict, before any statistics.
    let view = result.render(&View::default());
    let second = view.lines().nth(1).unwrap_or_default();
    assert!(
        view.starts_with("verdict: virtual")
            && second.starts_with("CPU 1 ran 5")
            && view.contains("slower alone than CPU 0 for the whole"),
        "{view}"
    );
}

#[test]
fn a_stacked_pair_beside_a_neighbour_still_reads_physical() {
    // Both vCPUs on one host CPU with a busy loop beside them: alone each
    // gets half of it, together a quarter.
    let result = per_worker_gate(|worker, rep| around(4.0, 0.02, rep + worker), (2.0, 2.0));
    assert_eq!(result.verdict, Verdict::Physical, "{}", result.sentence);
    assert!(result.slow_cpu.is_none());
    assert!(
        result
            .workers
            .iter()
            .all(|w| w.estimate.as_ref().unwrap().penalty > 0.9)
    );
}

#[test]
fn a_burst_on_one_sibling_through_one_batch_reads_virtual_never_physical() {
    // The burst slows only the worker on CPU 1, through the first batch:
    // the worker on CPU 0 paid nothing, so the two share nothing.
    let result = per_worker_gate(
        |worker, rep| match (worker, rep < 2 + 6) {
            (1, true) => around(2.0, 0.02, rep),
            _ => around(1.0, 0.02, rep + 1),
        },
        (1.0, 1.0),
    );
    assert_eq!(result.verdict, Verdict::Virtual, "{}", result.sentence);
    let sides: Vec<_> = result.batches.iter().map(|b| b.side).collect();
    assert_eq!(sides, [Some(Side::Below), Some(Side::Below)]);
}

#[test]
fn a_stop_signal_ends_the_gate_incomplete_without_a_verdict() {
    let mut replay = Replay::synthetic(|arm, rep| match arm {
        Arm::Siblings => around(1.15, 0.08, rep),
        Arm::Alone | Arm::AloneSecond => 1.0,
        _ => working_control(arm, rep).unwrap(),
    });
    replay.stop_after = Some(4 * 2 + 4 * 3 + 1);
    let (result, _) = gate(&topology("laptop-i5-11300H"), replay);
    assert!(!result.head.complete);
    assert_eq!(result.verdict, Verdict::Inconclusive);
    assert!(
        result
            .sentence
            .starts_with("stopped by SIGINT after 3 repetitions")
    );
    assert_eq!(
        result.warnings[0],
        Warning::Incomplete(StopSignal::Interrupt)
    );
    // The partial round is not in the samples: rounds are kept whole.
    let measured = result.samples.iter().filter(|s| !s.warmup).count();
    assert_eq!(measured, 4 * 3);
}

#[test]
fn one_core_of_two_threads_is_measured_each_worker_against_its_cpu_alone() {
    let topology = one_core_two_threads();
    let physical = Replay::synthetic(|arm, rep| match arm {
        Arm::Siblings => around(1.8, 0.02, rep),
        _ => working_control(arm, rep).unwrap(),
    });
    let (result, replay) = gate(&topology, physical);
    assert_eq!(result.verdict, Verdict::Physical, "{}", result.sentence);
    assert_eq!(result.baseline, Some(GateBaseline::EachAlone));
    assert_eq!(result.pairs.as_ref().unwrap().separate, None);
    assert!(
        result.sentence.contains("over its own CPU alone"),
        "{}",
        result.sentence
    );
    assert!(!replay.asked.iter().any(|(arm, _)| *arm == Arm::Separate));

    // vCPUs on separate host cores: the "siblings" cost what one alone does.
    let virtual_ = Replay::synthetic(|arm, rep| match arm {
        Arm::Siblings => around(1.0, 0.02, rep + 1),
        _ => working_control(arm, rep).unwrap(),
    });
    let (result, _) = gate(&topology, virtual_);
    assert_eq!(result.verdict, Verdict::Virtual, "{}", result.sentence);
}

#[test]
fn no_siblings_is_no_smt_and_never_starts_the_measurement() {
    let mut measure: LazyMeasure<'_, Replay> =
        LazyMeasure::new(|| panic!("a gate without siblings must not start measuring"));
    let result =
        gate_session(&topology("kvm-guest-2cpu"), &RULE, &mut measure, &mut Quiet).unwrap();
    assert_eq!(result.verdict, Verdict::NoSmt);
    assert!(result.no_smt_reason.unwrap().contains("SMT is absent"));
}

fn study_options(arms: &[Arm], workers: usize) -> StudyOptions {
    StudyOptions {
        rule: RULE,
        skip_gate: true,
        workers: Some(workers),
        arms: Some(arms.to_vec()),
        reps: 5,
        cv_bar: 0.01,
        tolerance: 1e-4,
        strict: false,
        measure: MeasureOptions {
            kernel: "mul".into(),
            rep_length: std::time::Duration::from_millis(50),
            warmups: 2,
            hardware_counters: true,
        },
        membind: None,
    }
}

fn study(options: &StudyOptions, replay: Replay) -> RunResult {
    let mut measure = LazyMeasure::new(|| Ok(replay));
    match run_study(
        &topology("laptop-i5-11300H"),
        options,
        &mut measure,
        &mut Quiet,
    )
    .unwrap()
    {
        RunOutcome::Studied(result) => *result,
        RunOutcome::StoppedAtGate(gate) => panic!("stopped at the gate: {}", gate.sentence),
    }
}

/// `run --membind local` on a four-node EPYC: each arm is bound to the node
/// of its cores, the engine is asked to bind every arm, and the membind
/// check reads where the replayed buffers' pages were: all on the arm's
/// node passes; one page elsewhere invalidates the run, and says so.
#[test]
fn membind_binds_each_arm_and_a_page_elsewhere_invalidates_the_run() {
    let epyc = topology("epyc-7543-nps4");
    let mut options = study_options(&[Arm::OnePerCore, Arm::SameCpu], 2);
    options.membind = Some(Membind::Local);
    let replay_on = |stray: Option<u32>| {
        Replay::from_fn(ClockKind::Tsc, move |p, rep, warmup| {
            let home = p.membind.as_ref()?[0];
            let mut sample = sample(p, rep, warmup, 1.0);
            for worker in &mut sample.workers {
                let mut by_node = std::collections::BTreeMap::from([(home, 4)]);
                if let Some(node) = stray.filter(|_| rep == 3 && worker.worker == 1) {
                    by_node = [(home, 3), (node, 1)].into();
                }
                worker.pages = Some(PageNodes {
                    pages: 4,
                    by_node,
                    missing: 0,
                });
            }
            Some(sample)
        })
    };
    let run = |replay: Replay| {
        let mut measure = LazyMeasure::new(|| Ok(replay));
        match run_study(&epyc, &options, &mut measure, &mut Quiet).unwrap() {
            RunOutcome::Studied(result) => *result,
            RunOutcome::StoppedAtGate(_) => panic!("the gate was skipped"),
        }
    };
    let held = run(replay_on(None));
    let bound: Vec<Option<Vec<u32>>> = held
        .plan
        .placements
        .iter()
        .map(|p| p.membind.clone())
        .collect();
    assert_eq!(bound, [Some(vec![0]), Some(vec![0])]);
    assert_eq!(held.options.membind, Some(Membind::Local));
    let check = held
        .checks
        .iter()
        .find(|c| c.name == CheckName::Membind)
        .unwrap();
    assert_eq!(check.status, CheckStatus::Passed, "{}", check.detail);
    assert!(held.valid);
    let view = held.render(&View::default());
    assert!(
        view.contains("memory: --membind local: one-per-core on node 0, same-cpu on node 0;"),
        "{view}"
    );

    let strayed = run(replay_on(Some(1)));
    assert!(!strayed.valid);
    assert_eq!(
        judge_run(&strayed.checks, false).reasons,
        [InvalidReason::MemoryElsewhere]
    );
    let check = strayed
        .checks
        .iter()
        .find(|c| c.name == CheckName::Membind)
        .unwrap();
    assert!(
        check
            .detail
            .starts_with("arm one-per-core rep 3 worker 1: of 4 pages 1 on node 1, outside node 0"),
        "{}",
        check.detail
    );
}

#[test]
fn a_replayed_study_with_invariant_counts_is_valid() {
    let options = study_options(&[Arm::OnePerCore, Arm::SiblingPacked], 4);
    let result = study(
        &options,
        Replay::recorded("run-invariant.json", ClockKind::CoreCycles),
    );
    assert!(result.valid, "{:?}", result.checks);
    assert!(result.head.complete);
    let status = |name| {
        result
            .checks
            .iter()
            .find(|c| c.name == name)
            .unwrap()
            .status
    };
    assert_eq!(status(CheckName::Invariance), CheckStatus::Passed);
    assert_eq!(status(CheckName::Pinning), CheckStatus::Passed);
    let packed = &result.arms[1];
    assert!(packed.change_vs_one_per_core.unwrap() > 0.3);
}

#[test]
fn a_replayed_instructions_spread_invalidates_the_study_and_the_report_says_why() {
    let options = study_options(&[Arm::OnePerCore, Arm::SiblingPacked], 4);
    let result = study(
        &options,
        Replay::recorded("run-ipb-spread.json", ClockKind::CoreCycles),
    );
    assert!(!result.valid);
    // The report re-derives the reasons from the saved checks: one rule.
    let validity = judge_run(&result.checks, result.options.strict);
    assert_eq!(validity.reasons, [InvalidReason::CountersNotOnWorkers]);
    let text = result.render(&View::default());
    assert!(text.contains("INVALID run (exit 6)"), "{text}");
    assert!(
        text.contains("the counters were not on the workers"),
        "{text}"
    );
}

#[test]
fn migrated_reps_are_excluded_from_the_study_too() {
    let options = study_options(&[Arm::OnePerCore, Arm::SameCpu], 2);
    let mut replay = Replay::synthetic(|arm, rep| match arm {
        Arm::OnePerCore => around(1.0, 0.001, rep),
        _ => around(2.0, 0.001, rep),
    });
    let base = std::mem::replace(&mut replay.source, Box::new(|_, _, _| None));
    replay.source = Box::new(move |p, rep, warmup| {
        let mut sample = base(p, rep, warmup)?;
        if p.arm == Arm::OnePerCore && rep == 4 {
            sample.workers[1].cpu_end = 3;
        }
        Some(sample)
    });
    let result = study(&options, replay);
    let excluded: Vec<(Arm, usize)> = result.excluded.iter().map(|e| (e.arm, e.rep)).collect();
    assert_eq!(excluded, [(Arm::OnePerCore, 4)]);
    assert_eq!(result.arms[0].cost.as_ref().unwrap().reps, 4);
    assert!(!result.valid, "a moved thread invalidates the run");
}

/// An arm whose every measured repetition was excluded has no number at
/// all: the run is invalid (exit 6) without `--strict`, and says which arm
/// and why, not "valid run" over an empty arm.
#[test]
fn an_arm_with_every_repetition_excluded_invalidates_the_study() {
    let options = study_options(&[Arm::OnePerCore, Arm::SameCpu], 2);
    let mut replay = Replay::synthetic(|arm, rep| match arm {
        Arm::OnePerCore => around(1.0, 0.001, rep),
        _ => around(2.0, 0.001, rep),
    });
    let base = std::mem::replace(&mut replay.source, Box::new(|_, _, _| None));
    replay.source = Box::new(move |p, rep, warmup| {
        let mut sample = base(p, rep, warmup)?;
        if p.arm == Arm::OnePerCore {
            // Another task of this OS took half of worker 0's CPU.
            let worker = &mut sample.workers[0];
            worker.counters.task_clock_ns = worker.busy_ns / 2;
        }
        Some(sample)
    });
    let result = study(&options, replay);
    assert_eq!(result.excluded.len(), options.reps, "{:?}", result.excluded);
    assert!(result.arms[0].cost.is_none());
    assert!(
        !result.valid,
        "an arm with no number left is not a valid run"
    );
    let failed = result
        .checks
        .iter()
        .find(|c| c.name == CheckName::Repetitions(Arm::OnePerCore))
        .expect("a repetitions check for the emptied arm");
    assert_eq!(failed.status, CheckStatus::Failed);
    assert_eq!(
        judge_run(&result.checks, false).reasons,
        [InvalidReason::NothingMeasured(vec!["one-per-core".into()])]
    );
    let view = result.render(&View::default());
    assert!(
        view.contains("nothing measured, no number left: one-per-core"),
        "{view}"
    );
}

#[test]
fn strict_makes_a_noisy_arm_invalidate_the_study() {
    let mut options = study_options(&[Arm::OnePerCore, Arm::SameCpu], 2);
    options.strict = true;
    let replay = Replay::synthetic(|arm, rep| match arm {
        Arm::OnePerCore => around(1.0, 0.001, rep),
        _ => around(2.0, 0.05, rep),
    });
    let result = study(&options, replay);
    assert!(!result.valid);
    assert_eq!(
        judge_run(&result.checks, true).reasons,
        [InvalidReason::NotQuotable(vec![Arm::SameCpu])]
    );
}

#[test]
fn a_study_stopped_by_a_signal_keeps_the_rounds_done() {
    let options = study_options(&[Arm::OnePerCore, Arm::SameCpu], 2);
    let mut replay = Replay::synthetic(|arm, _| if arm == Arm::OnePerCore { 1.0 } else { 2.0 });
    replay.stop_after = Some(2 * 2 + 2 * 2 + 1);
    let result = study(&options, replay);
    assert!(!result.head.complete);
    assert_eq!(
        result.warnings[0],
        Warning::Incomplete(StopSignal::Interrupt)
    );
    assert_eq!(result.samples.iter().filter(|s| !s.warmup).count(), 4);
}

#[test]
fn a_study_stops_at_a_gate_that_is_not_physical() {
    let mut options = study_options(&[Arm::OnePerCore, Arm::SiblingPacked], 2);
    options.skip_gate = false;
    let replay = Replay::recorded("gate-virtual.json", ClockKind::Tsc);
    let mut measure = LazyMeasure::new(|| Ok(replay));
    let outcome = run_study(
        &topology("kvm-guest-claims-smt"),
        &options,
        &mut measure,
        &mut Quiet,
    )
    .unwrap();
    match outcome {
        RunOutcome::StoppedAtGate(gate) => assert_eq!(gate.verdict, Verdict::Virtual),
        RunOutcome::Studied(_) => panic!("a virtual gate must stop the study"),
    }
}

#[test]
fn a_study_without_smt_leaves_sibling_packed_out_and_says_so() {
    // Plain `run` (gate, default arms and workers) and `run --skip-gate`.
    for skip_gate in [false, true] {
        let mut options = study_options(&[], 2);
        options.skip_gate = skip_gate;
        options.arms = None;
        options.workers = None;
        let replay = Replay::synthetic(|arm, _| if arm == Arm::OnePerCore { 1.0 } else { 2.0 });
        let mut measure = LazyMeasure::new(|| Ok(replay));
        let outcome = run_study(
            &topology("kvm-guest-2cpu"),
            &options,
            &mut measure,
            &mut Quiet,
        )
        .unwrap();
        let RunOutcome::Studied(result) = outcome else {
            panic!("skip_gate {skip_gate}: a host without SMT stopped at the gate");
        };
        assert_eq!(result.options.arms, [Arm::OnePerCore, Arm::SameCpu]);
        assert_eq!(result.options.workers, 2);
        assert_eq!(
            result.gate.as_ref().map(|gate| gate.verdict),
            (!skip_gate).then_some(Verdict::NoSmt)
        );
        let note = result
            .warnings
            .iter()
            .find_map(|w| match w {
                Warning::ArmsLeftOut(note) => Some(note),
                _ => None,
            })
            .expect("a note on the arm left out");
        assert!(
            note.starts_with("sibling-packed left out: no core has two allowed hardware threads"),
            "{note}"
        );
        assert!(result.valid, "{:?}", result.checks);
    }
}

#[test]
fn only_sibling_packed_without_smt_is_one_usage_error_naming_a_command_that_works() {
    let options = study_options(&[Arm::SiblingPacked], 2);
    let mut measure: LazyMeasure<'_, Replay> =
        LazyMeasure::new(|| panic!("nothing placeable must not start measuring"));
    let error = run_study(
        &topology("kvm-guest-2cpu"),
        &options,
        &mut measure,
        &mut Quiet,
    )
    .unwrap_err();
    assert!(error.downcast_ref::<UsageError>().is_some(), "{error:#}");
    assert!(
        error
            .to_string()
            .contains("`placement-study run --workers 2 --arms one-per-core,same-cpu`"),
        "{error}"
    );
}

/// A host whose CPUs map onto execution units by `unit_of` (an SMT core,
/// or the host CPU a vCPU is pinned to): each worker costs 1 TSC tick per
/// byte (±1 %) times the number of workers on its unit, as if the unit were
/// time-sliced between them. `straddling` pairs cost 15 % ±10 % more.
fn units(unit_of: impl Fn(u32) -> u32 + 'static, straddling: &'static [(u32, u32)]) -> Replay {
    Replay::from_fn(ClockKind::Tsc, move |p, rep, warmup| {
        let cpus: Vec<u32> = p.cpus.iter().map(|c| c.unwrap()).collect();
        Some(sample_of_workers(p, rep, warmup, |worker| {
            let unit = unit_of(cpus[worker]);
            let sharing = cpus.iter().filter(|&&c| unit_of(c) == unit).count();
            let straddles = cpus.len() == 2
                && straddling.contains(&(cpus[0].min(cpus[1]), cpus[0].max(cpus[1])));
            let noise = if straddles { 0.1 } else { 0.01 };
            let centre = if straddles { 1.15 } else { sharing as f64 };
            around(centre, noise, rep + worker)
        }))
    })
}

fn pairs_options(exhaustive: bool, time_budget: Option<Duration>) -> PairsStudyOptions {
    PairsStudyOptions {
        rule: RULE,
        exhaustive,
        time_budget,
        measure: MeasureOptions {
            kernel: "mul".into(),
            rep_length: Duration::from_millis(50),
            warmups: 2,
            hardware_counters: false,
        },
        first_pass: None,
    }
}

fn pairs(topology: &Topology, options: &PairsStudyOptions, replay: Replay) -> PairsResult {
    let mut measure = LazyMeasure::new(|| Ok(replay));
    pairs_study(topology, options, &mut measure, &mut Quiet).unwrap()
}

fn measured_map(result: &PairsResult) -> String {
    map_text(&result.map.measured)
}

#[test]
fn pairs_on_siblings_that_share_agree_after_every_pair() {
    let result = pairs(
        &topology("kvm-guest-claims-smt"),
        &pairs_options(false, None),
        units(|cpu| cpu / 2, &[]),
    );
    assert_eq!(result.verdict, MapVerdict::Agree, "{}", result.sentence);
    assert_eq!(result.search, SearchKind::AllPairs);
    assert_eq!(measured_map(&result), "0-1 / 2-3");
    assert_eq!(result.effort.comparisons, 6);
    assert_eq!(result.control.as_ref().unwrap().status, CheckStatus::Passed);
    assert_eq!(result.pinning.status, CheckStatus::Passed);
    let sibling = &result.comparisons[0];
    assert_eq!(sibling.outcome, Contention::Shares);
    let penalty = sibling.estimate.as_ref().unwrap().penalty;
    assert!((0.9..1.1).contains(&penalty), "{penalty}");
    assert_eq!(Outcome::Map(result.verdict).exit_status(), 0);
}

#[test]
fn pairs_on_crossed_siblings_finds_fake_and_hidden_ones() {
    let result = pairs(
        &topology("kvm-guest-claims-smt"),
        &pairs_options(false, None),
        units(|cpu| cpu % 2, &[]),
    );
    assert_eq!(result.verdict, MapVerdict::Differ, "{}", result.sentence);
    assert_eq!(measured_map(&result), "0,2 / 1,3");
    assert!(
        result
            .map
            .cpus
            .iter()
            .all(|c| c.relation == CpuRelation::FakeAndHiddenSiblings)
    );
    assert!(
        result
            .sentence
            .contains("2 pairs published as siblings measured apart (fake)")
    );
    assert_eq!(Outcome::Map(result.verdict).exit_status(), 3);
}

/// `pairs` compares each probe with itself alone on its own CPU, so a CPU
/// that runs steadily slower (a neighbour on its host CPU) slows both arms
/// of its own comparisons alike and none of the others': every vCPU on a
/// host CPU of its own reads apart, CPU 1 at 1.5x the cost included.
#[test]
fn pairs_beside_a_steadily_slower_cpu_finds_no_sibling() {
    let replay = Replay::from_fn(ClockKind::Tsc, |p, rep, warmup| {
        let cpus: Vec<u32> = p.cpus.iter().map(|c| c.unwrap()).collect();
        Some(sample_of_workers(p, rep, warmup, |worker| {
            let cpu = cpus[worker];
            let sharing = cpus.iter().filter(|&&c| c == cpu).count() as f64;
            let speed = if cpu == 1 { 1.5 } else { 1.0 };
            around(sharing * speed, 0.01, rep + worker)
        }))
    });
    let result = pairs(
        &topology("kvm-guest-claims-smt"),
        &pairs_options(false, None),
        replay,
    );
    assert_eq!(result.verdict, MapVerdict::Differ, "{}", result.sentence);
    assert_eq!(
        measured_map(&result),
        "0 / 1 / 2 / 3",
        "{}",
        result.sentence
    );
    assert!(
        result
            .comparisons
            .iter()
            .all(|c| c.outcome == Contention::Apart)
    );
}

#[test]
fn pairs_on_a_guest_without_smt_finds_hidden_siblings() {
    let result = pairs(
        &topology("kvm-guest-2cpu"),
        &pairs_options(false, None),
        units(|_| 0, &[]),
    );
    assert_eq!(result.verdict, MapVerdict::Differ, "{}", result.sentence);
    assert_eq!(measured_map(&result), "0-1");
    assert_eq!(result.map.pairs[0].relation, PairRelation::Hidden);
}

#[test]
fn pairs_on_128_cpus_tests_groups_and_confirms_each_sibling_with_a_pair() {
    let topology = topology("server-2s-xeon-8462Y");
    let result = pairs(
        &topology,
        &pairs_options(false, None),
        units(|cpu| cpu % 64, &[]),
    );
    assert_eq!(result.verdict, MapVerdict::Agree, "{}", result.sentence);
    assert_eq!(result.search, SearchKind::GroupTesting);
    let n = 128.0_f64;
    assert!(
        (result.effort.comparisons as f64) < n * n.log2(),
        "{} comparisons",
        result.effort.comparisons
    );
    assert_eq!(result.effort.all_pairs, 128 * 127 / 2);
    for group in &result.map.measured {
        let [a, b] = group.cpus() else {
            panic!("group {group} is not a pair")
        };
        assert!(result.comparisons.iter().any(|c| c.comparison.probe == *a
            && c.comparison.pair() == Some(*b)
            && c.outcome == Contention::Shares));
    }
}

#[test]
fn pairs_exhaustive_measures_every_pair_and_finds_groups_of_four() {
    let result = pairs(
        &topology("kvm-guest-claims-smt"),
        &pairs_options(true, None),
        units(|_| 0, &[]),
    );
    assert_eq!(measured_map(&result), "0-3");
    assert_eq!(result.map.pairs.len(), 6);
    assert_eq!(result.verdict, MapVerdict::Differ);
}

#[test]
fn a_straddling_pair_is_inconclusive_and_named() {
    let result = pairs(
        &topology("kvm-guest-claims-smt"),
        &pairs_options(false, None),
        units(|cpu| cpu / 2, &[(2, 3)]),
    );
    assert_eq!(
        result.verdict,
        MapVerdict::Inconclusive,
        "{}",
        result.sentence
    );
    let undecided: Vec<[u32; 2]> = result
        .map
        .pairs
        .iter()
        .filter(|p| p.relation == PairRelation::Inconclusive)
        .map(|p| p.cpus)
        .collect();
    assert_eq!(undecided, [[2, 3]]);
    let straddled = result.comparisons.last().unwrap();
    assert_eq!(
        straddled.estimate.as_ref().unwrap().reps,
        RULE.batching.max_batches * RULE.max_reps
    );
    assert_eq!(Outcome::Map(result.verdict).exit_status(), 5);
}

#[test]
fn a_spent_time_budget_leaves_the_rest_not_measured() {
    let result = pairs(
        &topology("kvm-guest-claims-smt"),
        &pairs_options(false, Some(Duration::ZERO)),
        units(|cpu| cpu / 2, &[]),
    );
    assert!(result.effort.budget_exhausted);
    assert_eq!(result.effort.comparisons, 0);
    assert_eq!(result.verdict, MapVerdict::Inconclusive);
    assert!(
        result.sentence.contains("raise --time-budget"),
        "{}",
        result.sentence
    );
    assert!(result.head.complete);
}

#[test]
fn pairs_stopped_by_a_signal_is_incomplete_without_a_verdict() {
    let mut replay = units(|cpu| cpu / 2, &[]);
    replay.stop_after = Some(20);
    let result = pairs(
        &topology("kvm-guest-claims-smt"),
        &pairs_options(false, None),
        replay,
    );
    assert!(!result.head.complete);
    assert_eq!(result.verdict, MapVerdict::Inconclusive);
    assert!(
        result.sentence.starts_with("stopped by SIGINT"),
        "{}",
        result.sentence
    );
    assert!(matches!(result.warnings[0], Warning::Incomplete(_)));
    // The control took 16 calls; the 2 comparisons that got a round in the
    // next 4 are kept, undecided; the third's round was cut short.
    let kept: Vec<Contention> = result.comparisons.iter().map(|c| c.outcome).collect();
    assert_eq!(kept, [Contention::Inconclusive; 2]);
}

#[test]
fn pairs_without_working_pinning_is_inconclusive() {
    // Every placement runs as if unpinned: same-CPU costs what alone does.
    let result = pairs(
        &topology("kvm-guest-claims-smt"),
        &pairs_options(false, None),
        Replay::synthetic(|_, rep| around(1.0, 0.01, rep)),
    );
    assert_eq!(result.control.as_ref().unwrap().status, CheckStatus::Failed);
    assert_eq!(result.control_attempts.len(), 2);
    assert_eq!(
        result.verdict,
        MapVerdict::Inconclusive,
        "{}",
        result.sentence
    );
}

/// A `hybrid` study saved from the QEMU guest whose vCPU 1 is throttled to
/// 46 % (`fixtures/results/`), replayed sample by sample: the study asks
/// for the same rounds in the same order and judges them as it did there.
#[test]
fn hybrid_replayed_from_the_throttled_guest_judges_as_it_did_there() {
    let path = format!(
        "{}/fixtures/results/hybrid-guest-slow-second-core.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let saved: HybridResult =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let options = HybridStudyOptions {
        workers: None,
        every_cpu: true,
        reps: saved.options.reps,
        // Its rounds, split in two batches; the replay has no third.
        batching: Batching {
            batches: 2,
            max_batches: 2,
            gap: Duration::ZERO,
        },
        cv_bar: saved.options.cv_bar,
        tolerance: saved.options.tolerance,
        strict: false,
        measure: MeasureOptions {
            kernel: "mul".into(),
            rep_length: Duration::from_millis(saved.options.rep_ms),
            warmups: saved.options.warmups,
            hardware_counters: false,
        },
    };
    let replay_until = |stop_after: Option<usize>| {
        let mut replay = saved_replay(&saved);
        replay.stop_after = stop_after;
        let mut measure = LazyMeasure::new(|| Ok(replay));
        hybrid_study(
            &topology("kvm-guest-2cpu"),
            &options,
            &mut measure,
            &mut Quiet,
        )
        .unwrap()
    };
    // A stop signal in the fourth round (of 6 repetitions) drops that round
    // whole: three rounds kept, two of them warm-ups.
    let stopped = replay_until(Some(3 * 6 + 2));
    assert!(!stopped.head.complete);
    assert_eq!(stopped.samples, saved.samples[..3 * 6]);
    assert_eq!(
        stopped.warnings[0],
        Warning::Incomplete(StopSignal::Interrupt)
    );
    assert_eq!(
        stopped.judged.class_judgement.verdict,
        ClassVerdict::Inconclusive
    );

    let result = replay_until(None);
    assert_eq!(result.samples, saved.samples);
    assert_eq!(result.judged.baselines, saved.judged.baselines);
    assert_eq!(result.judged.speed_classes, saved.judged.speed_classes);
    // Saved before batches: the same judgement, now with its two batches,
    // which group the CPUs alike.
    let classes = &result.judged.class_judgement;
    assert_eq!(
        (&classes.verdict, &classes.measured, &classes.notes),
        (
            &saved.judged.class_judgement.verdict,
            &saved.judged.class_judgement.measured,
            &saved.judged.class_judgement.notes
        )
    );
    assert_eq!(classes.batches.len(), 2);
    assert!(classes.batches_agree());
    assert!(!result.judged.noise.as_ref().unwrap().is_high());
    assert_eq!(result.judged.ceiling, saved.judged.ceiling);
    assert_eq!(result.judged.schemes, saved.judged.schemes);
    assert_eq!(result.sentence, saved.sentence);
    assert!(result.judged.valid);
    assert_eq!(
        Outcome::Classes(result.judged.class_judgement.verdict).exit_status(),
        3
    );
}

/// Replays a saved `hybrid` study's samples, looked up by arm, round and
/// the first worker's CPU (each baseline CPU has its own).
fn saved_replay(saved: &HybridResult) -> Replay {
    let by_key: HashMap<(Arm, usize, Option<u32>), RepSample> = saved
        .samples
        .iter()
        .map(|r| ((r.arm, r.rep, r.workers[0].pinned_cpu), r.clone()))
        .collect();
    let mut replay = Replay::from_fn(ClockKind::Tsc, move |p, rep, _| {
        by_key.get(&(p.arm, rep, p.cpus[0])).cloned()
    });
    replay.setup = saved.setup.clone();
    replay
}

/// The widest line of `text`'s tables (lines drawn with box characters),
/// in characters: the tables use single-width ones.
fn widest_table_line(text: &str) -> usize {
    text.lines()
        .filter(|line| line.starts_with(['┌', '│', '├', '└']))
        .map(|line| line.chars().count())
        .max()
        .unwrap_or(0)
}

/// Every replayed result's tables fit the view (80 columns, or 120), with
/// the not-quotable arms still marked; `--wide` has every column.
#[test]
fn replayed_views_fit_the_width_and_wide_has_every_column() {
    let (physical, _) = gate(
        &topology("laptop-i5-11300H"),
        Replay::recorded("gate-physical.json", ClockKind::CoreCycles),
    );
    let (excluded, _) = gate(
        &topology("laptop-i5-11300H"),
        Replay::recorded("gate-excluded.json", ClockKind::CoreCycles),
    );
    let arms = [Arm::OnePerCore, Arm::SiblingPacked];
    let valid = study(
        &study_options(&arms, 4),
        Replay::recorded("run-invariant.json", ClockKind::CoreCycles),
    );
    let invalid = study(
        &study_options(&arms, 4),
        Replay::recorded("run-ipb-spread.json", ClockKind::CoreCycles),
    );
    let noisy = study(
        &study_options(&[Arm::OnePerCore, Arm::SameCpu], 2),
        Replay::synthetic(|arm, rep| around(if arm == Arm::SameCpu { 2.0 } else { 1.0 }, 0.1, rep)),
    );
    let crossed = pairs(
        &topology("kvm-guest-claims-smt"),
        &pairs_options(false, None),
        units(|cpu| cpu % 2, &[]),
    );
    let server = pairs(
        &topology("server-2s-xeon-8462Y"),
        &pairs_options(false, None),
        units(|cpu| cpu % 64, &[]),
    );
    for width in [80, 120] {
        let view = View {
            width,
            ..View::default()
        };
        let views = [
            ("physical gate", physical.render(&view)),
            ("gate with exclusions", excluded.render(&view)),
            ("valid run", valid.render(&view)),
            ("invalid run", invalid.render(&view)),
            ("noisy run", noisy.render(&view)),
            ("crossed pairs", crossed.render(&view)),
            ("128-CPU pairs", server.render(&view)),
        ];
        for (what, text) in views {
            assert!(
                (1..=width).contains(&widest_table_line(&text)),
                "{what}: tables wider than {width} columns\n{text}"
            );
        }
    }
    // A noisy arm is marked in the default view too, with the mark's legend.
    let text = noisy.render(&View::default());
    assert!(noisy.arms.iter().any(|a| !a.quotable));
    assert!(text.contains("│ one-per-core* "), "{text}");
    assert!(text.contains("\n* not quotable: "), "{text}");
    // `--wide`: every column, today's headings.
    let wide = View {
        wide: true,
        ..View::default()
    };
    for text in [valid.render(&wide), physical.render(&wide)] {
        assert!(text.contains("│ eff. GHz │"), "{text}");
        assert!(widest_table_line(&text) > 80, "{text}");
    }
    let text = noisy.render(&wide);
    assert!(text.contains("│ one-per-core (not quotable) "), "{text}");
    assert!(text.contains("│ instructions │"), "{text}");
    assert!(!valid.render(&View::default()).contains("eff. GHz"));
}
