//! `pairs`: which CPUs really share a core, measured. A same-CPU control
//! first (pinning must work), then the comparisons [`PairSearch`] hands
//! out, each decided by the gate's rule, then the measured map judged
//! against the published one.
//!
//! Every comparison's cost is the probe worker's ticks per byte on the tick
//! clock, wall time: a vCPU waiting for the host CPU it shares is slowed in
//! wall time while its own cycle counter (where a PMU is visible) stands
//! still. The probe alone and the probe beside its set alternate, in
//! swapped order every repetition, so drift hits both alike; and the
//! comparisons the search can hand out at once (every pair, or both halves
//! of a set) are measured round-robin, a round of each in turn, so that a
//! transient slowdown of the host spoils one round of several comparisons
//! rather than every round of one.

use super::latency::{LatencyStudyOptions, latency_study};
use super::{LazyMeasure, Progress, Recorded, head, two_or_more_allowed};
use crate::cpuset::CpuSet;
use crate::judge::batches::{Evidence, HostNoise, Next, Side};
use crate::judge::checks::{Check, CheckStatus, PinningTally, excluded_reps};
use crate::judge::cost::{rep_cost, worker_cost_per_byte};
use crate::judge::gate::{CONTROL_ATTEMPTS, GateRule, PairedCosts, Verdict, control_check};
use crate::judge::latency::candidate_sets;
use crate::judge::pairs::{ComparisonRecord, contention, judge_map, map_verdict, published_groups};
use crate::judge::warnings::Warning;
use crate::measure::stop::StopSignal;
use crate::measure::{ClockKind, Measure, MeasureOptions, RepSample};
use crate::plan::pairs::{Comparison, PairSearch, SearchKind};
use crate::plan::{Arm, Placement};
use crate::probe::Topology;
use crate::saved::{DocumentHead, DocumentKind, FirstPass, PairsEffort, PairsOptions, PairsResult};
use anyhow::Result;
use std::time::{Duration, Instant};

/// What `pairs` was asked for, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct PairsStudyOptions {
    /// Each comparison's rule: threshold, and the repetitions it may take.
    pub rule: GateRule,
    /// Measure every pair, whatever the number of CPUs.
    pub exhaustive: bool,
    /// Checked between rounds: once it is spent, the comparisons in flight
    /// are kept, undecided, and no other starts.
    pub time_budget: Option<Duration>,
    pub measure: MeasureOptions,
    /// `--first-pass latency`: a latency pass picks the candidate sets the
    /// search stays within.
    pub first_pass: Option<LatencyStudyOptions>,
}

/// Runs `pairs` on the CPUs of `topology` this process may use.
pub fn pairs_study<M: Measure>(
    topology: &Topology,
    options: &PairsStudyOptions,
    measure: &mut LazyMeasure<'_, M>,
    progress: &mut dyn Progress,
) -> Result<PairsResult> {
    let head = head(DocumentKind::Pairs, topology);
    let tested = two_or_more_allowed(topology, "pairs", "to compare")?;
    let measure = measure.get()?;
    let published = published_groups(&tested, topology.cpus.iter().map(|c| (c.cpu, &c.siblings)));
    let began = Instant::now();
    let first_pass = options
        .first_pass
        .as_ref()
        .map(|latency| latency_first_pass(topology, &tested, latency, progress))
        .transpose()?;
    let mut search = match first_pass.as_ref().filter(|p| p.unused.is_none()) {
        Some(pass) => PairSearch::within(&tested, pass.candidate_sets.clone()),
        None => PairSearch::new(
            &tested,
            SearchKind::for_cpus(tested.len(), options.exhaustive),
        ),
    };
    let setup = measure.setup().clone();
    let clock = setup.tick_clock;
    let rule = &options.rule;
    let mut tally = Tally::default();

    // A stop during the latency pass leaves the stop flag set: the control
    // then measures nothing and says stopped.
    let (mut control, mut control_run) = same_cpu_control(
        measure,
        tested.cpus()[0],
        setup.warmups + rule.min_reps,
        setup.warmups,
        clock,
        progress,
    )?;
    tally.add(&control_run.samples, "control ");
    // A failed control is measured again, after a pause, before it may
    // make the map inconclusive (see `CONTROL_ATTEMPTS`).
    let mut control_attempts = Vec::new();
    while let Some(failed) = control.take_if(|c| c.status == CheckStatus::Failed) {
        if control_attempts.len() + 1 >= CONTROL_ATTEMPTS {
            control = Some(failed);
            break;
        }
        if let Some(signal) = measure.pause(rule.batching.gap) {
            control = Some(failed);
            control_run.stopped = Some(signal);
            break;
        }
        control_attempts.push(failed);
        let again;
        (control, again) =
            same_cpu_control(measure, tested.cpus()[0], rule.min_reps, 0, clock, progress)?;
        tally.add(&again.samples, "control ");
        control_run.samples.extend(again.samples);
        control_run.stopped = again.stopped;
    }

    let deadline = options.time_budget.map(|budget| began + budget);
    let searched = if control_run.stopped.is_none() {
        search_comparisons(
            measure,
            &mut search,
            rule,
            clock,
            deadline,
            &mut tally,
            progress,
        )?
    } else {
        Searched::default()
    };
    let stopped = control_run.stopped.or(searched.stopped);
    let (comparisons, budget_exhausted) = (searched.comparisons, searched.budget_exhausted);
    progress.done();

    let mut map = judge_map(&tested, &published, &comparisons, &search.settled());
    map.published_unknown = topology.summary.structure_unknown.clone();
    let control_passed = control
        .as_ref()
        .is_some_and(|c| c.status == CheckStatus::Passed);
    let verdict = map_verdict(&map, control_passed, stopped.is_none());
    let mut warnings = Warning::about_machine(topology);
    warnings.extend(Warning::about_setup(&setup));
    if let Some(signal) = stopped {
        warnings.insert(0, Warning::Incomplete(signal));
    }
    let noise = HostNoise::combined(comparisons.iter().filter_map(|c| c.noise.as_ref()));
    if let Some(noise) = noise.as_ref().filter(|n| n.is_high()) {
        warnings.push(Warning::NoisyHost(noise.clone()));
    }
    let sentence = crate::judge::sentences::pairs::sentence(
        verdict,
        &map,
        control.as_ref(),
        budget_exhausted,
        stopped,
    );
    let effort = PairsEffort {
        pair_comparisons: comparisons
            .iter()
            .filter(|c| c.comparison.pair().is_some())
            .count(),
        comparisons: comparisons.len(),
        all_pairs: tested.len() * (tested.len() - 1) / 2,
        repetitions: tally.repetitions,
        measuring_seconds: began.elapsed().as_secs_f64(),
        budget_exhausted,
    };
    Ok(PairsResult {
        head: DocumentHead {
            complete: stopped.is_none(),
            ..head
        },
        verdict,
        sentence,
        search: search.kind(),
        first_pass,
        options: PairsOptions {
            threshold: rule.threshold,
            min_reps: rule.min_reps,
            max_reps: rule.max_reps,
            batching: rule.batching.into(),
            warmups: setup.warmups,
            rep_ms: u64::try_from(options.measure.rep_length.as_millis()).unwrap_or(u64::MAX),
            kernel: options.measure.kernel.clone(),
            exhaustive: options.exhaustive,
            time_budget_seconds: options.time_budget.map(|b| b.as_secs_f64()),
        },
        clock,
        tested,
        map,
        comparisons,
        effort,
        noise,
        control,
        control_attempts,
        pinning: tally.pinning.check(),
        setup,
        warnings,
        control_samples: control_run.samples,
    })
}

/// Runs the latency pass over `tested` and reads its candidate sets; a pass
/// whose control or pinning failed, or that did not finish, is not used
/// (the search then covers the whole machine, and says why).
fn latency_first_pass(
    topology: &Topology,
    tested: &CpuSet,
    options: &LatencyStudyOptions,
    progress: &mut dyn Progress,
) -> Result<FirstPass> {
    let latency = latency_study(topology, options, progress)?;
    let failed = [latency.control_check.as_ref(), Some(&latency.pinning)]
        .into_iter()
        .flatten()
        .find(|c| c.status != CheckStatus::Passed);
    let unused = if !latency.head.complete {
        Some("the latency pass was stopped".to_owned())
    } else if latency.effort.budget_exhausted {
        Some("the latency pass ran out of its time budget".to_owned())
    } else if latency.control_check.is_none() {
        Some("the latency pass has no control".to_owned())
    } else {
        failed.map(|check| {
            format!(
                "the latency pass's {} check failed: {}",
                check.name, check.detail
            )
        })
    };
    let candidate_sets = match unused {
        None => candidate_sets(tested, &latency.judgement),
        Some(_) => Vec::new(),
    };
    Ok(FirstPass {
        verdict: latency.verdict,
        pairs_measured: latency.effort.pairs_measured,
        all_pairs: latency.effort.all_pairs,
        samples_taken: latency.effort.samples_taken,
        seconds: latency.effort.measuring_seconds,
        candidate_sets,
        unused,
    })
}

/// The control, on `cpu`: both workers there against one alone, `rounds`
/// times, the first `warmups` of them discarded. `None` when a stop signal
/// came first (the recorded rounds say so).
fn same_cpu_control<M: Measure>(
    measure: &mut M,
    cpu: u32,
    rounds: usize,
    warmups: usize,
    clock: ClockKind,
    progress: &mut dyn Progress,
) -> Result<(Option<Check>, Recorded)> {
    let on_cpu = Comparison {
        probe: cpu,
        against: CpuSet::default(),
    };
    let (same_cpu, alone) = (on_cpu.same_cpu(), on_cpu.alone());
    let mut recorded = Recorded::default();
    for rep in 0..rounds {
        progress.update(&format!(
            "pairs: same-CPU control on CPU {cpu}, round {}/{rounds}",
            rep + 1
        ));
        if !recorded.measure_round(measure, &[&same_cpu, &alone], rep, rep < warmups)? {
            break;
        }
    }
    let excluded = excluded_reps(&recorded.samples);
    let costs = |arm: Arm| -> Vec<f64> {
        recorded
            .samples
            .iter()
            .filter(|r| r.arm == arm && !r.warmup)
            .filter(|r| !excluded.iter().any(|e| e.covers(r.arm, r.rep)))
            .filter_map(|r| rep_cost(r, clock))
            .collect()
    };
    let control = recorded
        .stopped
        .is_none()
        .then(|| control_check(&costs(Arm::SameCpu), &costs(Arm::Alone), clock));
    Ok((control, recorded))
}

/// The pinning evidence and the repetition count, over the control and
/// every comparison (whose samples are not kept).
#[derive(Default)]
struct Tally {
    pinning: PinningTally,
    /// Measured repetitions (warm-ups not counted).
    repetitions: usize,
}

impl Tally {
    fn add(&mut self, samples: &[RepSample], context: &str) {
        self.pinning.add(samples, context);
        self.repetitions += samples.iter().filter(|r| !r.warmup).count();
    }
}

/// How the comparisons went.
#[derive(Default)]
struct Searched {
    /// Every comparison measured, by index.
    comparisons: Vec<ComparisonRecord>,
    /// The deadline passed before the search finished.
    budget_exhausted: bool,
    stopped: Option<StopSignal>,
}

/// Measures the comparisons `search` hands out, batch by batch, until it is
/// done, the `deadline` passes, or a stop signal comes. Each batch is
/// measured round-robin: one round of each comparison in turn, so that a
/// transient slowdown of the host hits one round of several comparisons,
/// not every round of one.
fn search_comparisons<M: Measure>(
    measure: &mut M,
    search: &mut PairSearch,
    rule: &GateRule,
    clock: ClockKind,
    deadline: Option<Instant>,
    tally: &mut Tally,
    progress: &mut dyn Progress,
) -> Result<Searched> {
    let mut searched = Searched::default();
    let comparisons = &mut searched.comparisons;
    loop {
        let batch = search.next_batch();
        if batch.is_empty() {
            break;
        }
        let first_index = comparisons.len() + 1;
        let mut running: Vec<Running> = batch
            .into_iter()
            .enumerate()
            .map(|(i, comparison)| {
                let stacked = search.stacked_candidate(&comparison);
                Running::new(first_index + i, comparison, stacked)
            })
            .collect();
        while !running.is_empty() {
            searched.budget_exhausted = deadline.is_some_and(|d| Instant::now() >= d);
            if !searched.budget_exhausted && searched.stopped.is_none() {
                let left = search.estimated_remaining() + running.len();
                let eta = eta(comparisons, left);
                // Each comparison's open batch, round-robin; a comparison
                // whose batch closed waits for the others, so every batch
                // of this set is measured in the same stretch of time and
                // one pause separates it from the next.
                for comparison in running.iter_mut().filter(|c| c.next == Next::Round) {
                    progress.update(&format!(
                        "pairs: comparison {} (~{left} left{eta}): CPU {} beside {}, batch {}, repetition {}{}",
                        comparison.index,
                        comparison.comparison.probe,
                        comparison.comparison.against,
                        comparison.evidence.batches.len().max(1),
                        comparison.rounds + 1,
                        comparison.penalty_so_far()
                    ));
                    if !comparison.round(measure, rule, clock)? {
                        searched.stopped = comparison.recorded.stopped;
                        break;
                    }
                }
            }
            if searched.budget_exhausted || searched.stopped.is_some() {
                // What was measured of them stays: decided if the rule
                // already could, else undecided.
                for unfinished in running.into_iter().filter(|c| c.rounds > 0) {
                    comparisons.push(unfinished.finish(rule, tally));
                }
                comparisons.sort_by_key(|c| c.index);
                return Ok(searched);
            }
            if running.iter().any(|c| c.next == Next::Round) {
                continue;
            }
            let (done, still): (Vec<Running>, Vec<Running>) = running
                .into_iter()
                .partition(|c| matches!(c.next, Next::Decided(_)));
            for decided in done {
                let record = decided.finish(rule, tally);
                search.record(&record.comparison, record.outcome);
                comparisons.push(record);
            }
            running = still;
            if !running.is_empty() {
                progress.update(&format!(
                    "pairs: {} comparisons need another batch; pausing {} ms",
                    running.len(),
                    rule.batching.gap.as_millis()
                ));
                if let Some(signal) = measure.pause(rule.batching.gap) {
                    searched.stopped = Some(signal);
                }
                for comparison in &mut running {
                    comparison.next = Next::Round;
                }
            }
        }
    }
    comparisons.sort_by_key(|c| c.index);
    Ok(searched)
}

/// One comparison being measured, a round at a time.
struct Running {
    index: usize,
    comparison: Comparison,
    loaded: Placement,
    alone: Placement,
    recorded: Recorded,
    /// Rounds measured (each one repetition of both arms).
    rounds: usize,
    costs: PairedCosts,
    /// Its batches so far, judged by the gate's rule.
    evidence: Evidence,
    /// What its evidence asked for after the last round.
    next: Next,
    seconds: f64,
}

impl Running {
    /// Comparison `index`; `stacked` when the latency pass found its pair
    /// stacked: that pass, taken at another time by another method, is one
    /// batch's worth of evidence that it shares ([`Evidence::with_prior`]).
    fn new(index: usize, comparison: Comparison, stacked: bool) -> Running {
        Running {
            index,
            loaded: comparison.loaded(),
            alone: comparison.alone(),
            comparison,
            recorded: Recorded::default(),
            rounds: 0,
            costs: PairedCosts::default(),
            evidence: if stacked {
                Evidence::with_prior(Side::Above)
            } else {
                Evidence::default()
            },
            next: Next::Round,
            seconds: 0.0,
        }
    }

    /// Measures one more round, alone and beside in swapped order every
    /// round, and judges its batch; `false` when a stop signal came.
    fn round<M: Measure>(
        &mut self,
        measure: &mut M,
        rule: &GateRule,
        clock: ClockKind,
    ) -> Result<bool> {
        let started = Instant::now();
        let round = if self.rounds % 2 == 0 {
            [&self.loaded, &self.alone]
        } else {
            [&self.alone, &self.loaded]
        };
        let measured = self
            .recorded
            .measure_round(measure, &round, self.rounds, false)?;
        self.seconds += started.elapsed().as_secs_f64();
        if !measured {
            return Ok(false);
        }
        self.costs = probe_costs(&self.recorded.samples, clock);
        self.next =
            self.evidence
                .round_measured(rule, self.rounds, std::slice::from_ref(&self.costs));
        self.rounds += 1;
        Ok(true)
    }

    /// ", penalty +95.6 %" once there is an estimate.
    fn penalty_so_far(&self) -> String {
        self.evidence
            .batches
            .last()
            .and_then(|b| b.estimate.as_ref())
            .map(|e| format!(", penalty {:+.1} %", e.penalty * 100.0))
            .unwrap_or_default()
    }

    /// Its record (undecided: inconclusive), its samples added to the tally.
    fn finish(self, rule: &GateRule, tally: &mut Tally) -> ComparisonRecord {
        tally.add(
            &self.recorded.samples,
            &format!("comparison {} ", self.index),
        );
        let verdict = match self.next {
            Next::Decided(verdict) => verdict,
            Next::Round | Next::Batch => Verdict::Inconclusive,
        };
        ComparisonRecord {
            index: self.index,
            outcome: contention(verdict),
            estimate: self
                .evidence
                .pooled(rule, std::slice::from_ref(&self.costs)),
            noise: self.evidence.noise(),
            batches: self.evidence.batches,
            loaded_costs: self.costs.treated,
            alone_costs: self.costs.baseline,
            excluded: excluded_reps(&self.recorded.samples),
            seconds: self.seconds,
            comparison: self.comparison,
        }
    }
}

/// The probe worker's costs per byte, loaded and alone, paired by
/// repetition; a repetition excluded in either arm drops its partner.
fn probe_costs(samples: &[RepSample], clock: ClockKind) -> PairedCosts {
    let excluded = excluded_reps(samples);
    let cost = |arm: Arm, rep: usize| {
        if excluded.iter().any(|e| e.covers(arm, rep)) {
            return None;
        }
        let sample = samples.iter().find(|s| s.arm == arm && s.rep == rep)?;
        let probe = sample.workers.iter().find(|w| w.worker == 0)?;
        worker_cost_per_byte(probe, clock)
    };
    let mut paired = PairedCosts::default();
    let reps = samples
        .iter()
        .filter(|s| s.arm == Arm::Loaded)
        .map(|s| s.rep);
    for rep in reps {
        if let (Some(loaded), Some(alone)) = (cost(Arm::Loaded, rep), cost(Arm::Alone, rep)) {
            paired.treated.push(loaded);
            paired.baseline.push(alone);
            paired.reps.push(rep);
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
