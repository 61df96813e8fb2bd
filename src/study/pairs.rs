//! `pairs`: which CPUs really share a core, measured. A same-CPU control
//! first (pinning must work), then the comparisons [`PairSearch`] hands
//! out, each decided by the gate's rule, then the measured map judged
//! against the published one.
//!
//! Every comparison's cost is the probe worker's ticks per byte on the tick
//! clock, wall time: a vCPU waiting for the host CPU it shares is slowed in
//! wall time while its own cycle counter (where a PMU is visible) stands
//! still. The probe alone and the probe beside its set alternate, in
//! swapped order every repetition, so drift hits both alike.

use super::{LazyMeasure, Progress, Recorded, host_name, unix_now};
use crate::cpuset::CpuSet;
use crate::judge::checks::{Check, CheckStatus, PinningTally, excluded_reps};
use crate::judge::cost::{rep_cost, worker_cost_per_byte};
use crate::judge::gate::{self, GateRule, Step, Verdict, control_check};
use crate::judge::pairs::{
    ComparisonRecord, MapJudgement, MapVerdict, PairRelation, contention, judge_map, map_text,
    published_groups,
};
use crate::judge::warnings::Warning;
use crate::measure::stop::StopSignal;
use crate::measure::{ClockKind, Measure, MeasureOptions, RepSample};
use crate::plan::Arm;
use crate::plan::pairs::{Comparison, PairSearch, SearchKind};
use crate::probe::Topology;
use crate::report::units::count;
use crate::saved::{
    DocumentKind, Evidence, PairsEffort, PairsOptions, PairsResult, RESULT_SCHEMA_VERSION,
};
use anyhow::{Result, bail};
use std::time::{Duration, Instant};

/// What `pairs` was asked for, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct PairsStudyOptions {
    /// Each comparison's rule: threshold, and the repetitions it may take.
    pub rule: GateRule,
    /// Measure every pair, whatever the number of CPUs.
    pub exhaustive: bool,
    /// Stop starting comparisons after this long (the one running finishes).
    pub time_budget: Option<Duration>,
    pub measure: MeasureOptions,
}

/// Runs `pairs` on the CPUs of `topology` this process may use.
pub fn pairs_study<M: Measure>(
    topology: &Topology,
    options: &PairsStudyOptions,
    measure: &mut LazyMeasure<'_, M>,
    progress: &mut dyn Progress,
) -> Result<PairsResult> {
    let started_unix = unix_now();
    let tested: CpuSet = topology
        .cpus
        .iter()
        .filter(|c| c.allowed)
        .map(|c| c.cpu)
        .collect();
    if tested.len() < 2 {
        bail!(
            "pairs needs at least two CPUs to compare, and this process may run on {} ({tested}); \
             widen its CPU affinity (taskset, cpuset)",
            tested.len()
        );
    }
    let measure = measure.get()?;
    let published = published_groups(&tested, topology.cpus.iter().map(|c| (c.cpu, &c.siblings)));
    let kind = SearchKind::for_cpus(tested.len(), options.exhaustive);
    let mut search = PairSearch::new(&tested, kind);
    let setup = measure.setup().clone();
    let clock = setup.tick_clock;
    let rule = &options.rule;
    let began = Instant::now();
    let mut pinning = PinningTally::default();
    let mut repetitions = 0;

    // The control, on the first CPU: two workers there cost about twice one.
    let first = Comparison {
        probe: tested.cpus()[0],
        against: CpuSet::default(),
    };
    let (same_cpu, alone) = (first.same_cpu(), first.alone());
    let mut control_run = Recorded::default();
    for rep in 0..setup.warmups + rule.min_reps {
        let warmup = rep < setup.warmups;
        progress.update(&format!("pairs: same-CPU control on CPU {}", first.probe));
        if !control_run.measure_round(measure, &[&same_cpu, &alone], rep, warmup)? {
            break;
        }
    }
    pinning.add(&control_run.samples, "control ");
    let control_excluded = excluded_reps(&control_run.samples);
    let control_costs = |arm: Arm| -> Vec<f64> {
        control_run
            .samples
            .iter()
            .filter(|r| r.arm == arm && !r.warmup)
            .filter(|r| !control_excluded.iter().any(|e| e.covers(r.arm, r.rep)))
            .filter_map(|r| rep_cost(r, clock))
            .collect()
    };
    let control = (control_run.stopped.is_none()).then(|| {
        control_check(
            &control_costs(Arm::SameCpu),
            &control_costs(Arm::Alone),
            clock,
        )
    });
    repetitions += control_run.samples.iter().filter(|r| !r.warmup).count();
    let mut stopped = control_run.stopped;

    let mut comparisons: Vec<ComparisonRecord> = Vec::new();
    let mut budget_exhausted = false;
    while stopped.is_none() {
        if options
            .time_budget
            .is_some_and(|budget| began.elapsed() >= budget)
        {
            budget_exhausted = search.next_comparison().is_some();
            break;
        }
        let Some(comparison) = search.next_comparison() else {
            break;
        };
        let index = comparisons.len() + 1;
        let eta = eta(&comparisons, search.estimated_remaining());
        let shown = format!(
            "pairs: comparison {index} (~{} left{eta}): CPU {} beside {}",
            search.estimated_remaining(),
            comparison.probe,
            comparison.against
        );
        let measured = compare(measure, &comparison, rule, clock, index, |rep, penalty| {
            progress.update(&format!(
                "{shown}, repetition {rep}/{}{penalty}",
                rule.max_reps
            ))
        })?;
        pinning.add(&measured.samples, &format!("comparison {index} "));
        repetitions += measured.samples.len();
        stopped = measured.stopped;
        if stopped.is_none() {
            search.record(&comparison, measured.record.outcome);
            comparisons.push(measured.record);
        }
    }
    progress.done();

    let map = judge_map(
        &tested,
        &published,
        &comparisons,
        &search.settled(),
        control
            .as_ref()
            .is_some_and(|c| c.status == CheckStatus::Passed),
    );
    let mut warnings = Warning::about_machine(topology);
    if let Some(signal) = stopped {
        warnings.insert(0, Warning::Incomplete(signal));
    }
    let verdict = if stopped.is_some() {
        MapVerdict::Inconclusive
    } else {
        map.verdict
    };
    let sentence = sentence(verdict, &map, control.as_ref(), budget_exhausted, stopped);
    let effort = PairsEffort {
        pair_comparisons: comparisons
            .iter()
            .filter(|c| c.comparison.pair().is_some())
            .count(),
        comparisons: comparisons.len(),
        all_pairs: tested.len() * (tested.len() - 1) / 2,
        repetitions,
        measuring_seconds: began.elapsed().as_secs_f64(),
        budget_exhausted,
    };
    Ok(PairsResult {
        schema_version: RESULT_SCHEMA_VERSION,
        kind: DocumentKind::Pairs,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        host: host_name(),
        started_unix,
        complete: stopped.is_none(),
        verdict,
        sentence,
        search: search.kind(),
        options: PairsOptions {
            threshold: rule.threshold,
            min_reps: rule.min_reps,
            max_reps: rule.max_reps,
            warmups: setup.warmups,
            rep_ms: u64::try_from(options.measure.rep_length.as_millis()).unwrap_or(u64::MAX),
            kernel: options.measure.kernel.clone(),
            exhaustive: options.exhaustive,
            time_budget_seconds: options.time_budget.map(|b| b.as_secs_f64()),
        },
        clock,
        tested,
        model: topology.cpu_name(),
        topology: topology.summary.clone(),
        evidence: Evidence::of(topology),
        map,
        comparisons,
        effort,
        control,
        pinning: pinning.check(),
        setup,
        warnings,
        control_samples: control_run.samples,
    })
}

/// One comparison measured: its record, the raw repetitions it took (for
/// the pinning tally), and the signal that stopped it, if one did.
struct Measured {
    record: ComparisonRecord,
    samples: Vec<RepSample>,
    stopped: Option<StopSignal>,
}

/// Measures one comparison until the gate's rule decides it; `shown` gets
/// each repetition's number and the penalty so far.
fn compare<M: Measure>(
    measure: &mut M,
    comparison: &Comparison,
    rule: &GateRule,
    clock: ClockKind,
    index: usize,
    mut shown: impl FnMut(usize, String),
) -> Result<Measured> {
    let started = Instant::now();
    let (loaded, alone) = (comparison.loaded(), comparison.alone());
    let mut recorded = Recorded::default();
    let mut verdict = Verdict::Inconclusive;
    let mut estimate = None;
    let mut costs = (Vec::new(), Vec::new());
    for rep in 0..rule.max_reps {
        let round = if rep % 2 == 0 {
            [&loaded, &alone]
        } else {
            [&alone, &loaded]
        };
        if !recorded.measure_round(measure, &round, rep, false)? {
            break;
        }
        costs = probe_costs(&recorded.samples, clock);
        let (step, now) = gate::decide(rule, &costs.0, &costs.1);
        shown(
            rep + 1,
            now.as_ref()
                .map(|e| format!(", penalty {:+.1} %", e.penalty * 100.0))
                .unwrap_or_default(),
        );
        estimate = now;
        if let Step::Decided(decided) = step {
            verdict = decided;
            break;
        }
    }
    let (loaded_costs, alone_costs) = costs;
    Ok(Measured {
        record: ComparisonRecord {
            index,
            comparison: comparison.clone(),
            outcome: contention(verdict),
            estimate,
            loaded_costs,
            alone_costs,
            excluded: excluded_reps(&recorded.samples),
            seconds: started.elapsed().as_secs_f64(),
        },
        samples: recorded.samples,
        stopped: recorded.stopped,
    })
}

/// The probe worker's costs per byte, loaded and alone, paired by
/// repetition; a repetition excluded in either arm drops its partner.
fn probe_costs(samples: &[RepSample], clock: ClockKind) -> (Vec<f64>, Vec<f64>) {
    let excluded = excluded_reps(samples);
    let cost = |arm: Arm, rep: usize| {
        if excluded.iter().any(|e| e.covers(arm, rep)) {
            return None;
        }
        let sample = samples.iter().find(|s| s.arm == arm && s.rep == rep)?;
        let probe = sample.workers.iter().find(|w| w.worker == 0)?;
        worker_cost_per_byte(probe, clock)
    };
    let mut paired = (Vec::new(), Vec::new());
    let reps = samples
        .iter()
        .filter(|s| s.arm == Arm::Loaded)
        .map(|s| s.rep);
    for rep in reps {
        if let (Some(loaded), Some(alone)) = (cost(Arm::Loaded, rep), cost(Arm::Alone, rep)) {
            paired.0.push(loaded);
            paired.1.push(alone);
        }
    }
    paired
}

/// ", ETA 12 s" from the comparisons so far; empty before the first.
fn eta(done: &[ComparisonRecord], remaining: usize) -> String {
    if done.is_empty() {
        return String::new();
    }
    let mean = done.iter().map(|c| c.seconds).sum::<f64>() / done.len() as f64;
    format!(", ETA {:.0} s", mean * remaining as f64)
}

/// The one line a sysadmin reads first.
fn sentence(
    verdict: MapVerdict,
    map: &MapJudgement,
    control: Option<&Check>,
    budget_exhausted: bool,
    stopped: Option<StopSignal>,
) -> String {
    let pairs =
        |relation: PairRelation| map.pairs.iter().filter(|p| p.relation == relation).count();
    let maps = format!(
        "measured {}, published {}",
        map_text(&map.measured),
        map_text(&map.published)
    );
    if let Some(signal) = stopped {
        return format!(
            "stopped by {} before the search finished: no verdict",
            signal.name()
        );
    }
    if let Some(control) = control.filter(|c| c.status != CheckStatus::Passed) {
        return format!(
            "{maps}: inconclusive, the same-CPU control did not pass: {}",
            control.detail
        );
    }
    match verdict {
        MapVerdict::Agree => format!(
            "{maps}: the maps agree ({} confirmed)",
            count(pairs(PairRelation::Agreed), "sibling pair")
        ),
        MapVerdict::Differ => {
            let mut parts = Vec::new();
            let (fake, hidden) = (pairs(PairRelation::Fake), pairs(PairRelation::Hidden));
            if fake > 0 {
                parts.push(format!(
                    "{} published as siblings measured apart (fake)",
                    count(fake, "pair")
                ));
            }
            if hidden > 0 {
                parts.push(format!(
                    "{} not published as siblings measured sharing (hidden)",
                    count(hidden, "pair")
                ));
            }
            format!("{maps}: the maps differ: {}", parts.join(", "))
        }
        MapVerdict::Inconclusive => {
            let why = if budget_exhausted {
                "the time budget ran out first; raise --time-budget"
            } else {
                "raise --max-reps, lengthen --rep-ms, or quiet the machine"
            };
            format!(
                "{maps}: inconclusive, {} undecided; {why}",
                count(pairs(PairRelation::Inconclusive), "pair")
            )
        }
    }
}
