//! `hybrid`: core classes measured, and what two ways of sharing work make
//! of them.
//!
//! Every round measures, back to back: a pinned single-worker baseline of
//! all the work on each baseline CPU (one per published class, or every
//! worker CPU with `--every-cpu`), then the same work shared by N workers
//! as static equal shares and as work stealing, each pinned one per core
//! and left to the scheduler. A baseline that is not pinned is not a
//! baseline: an unpinned one may land on a slow core and make every
//! speedup look larger. Rounds are kept whole, so baselines and schemes
//! pair by round and the host's drift cancels inside each pair.

use super::{LazyMeasure, Progress, Recorded, head};
use crate::judge::batches::Batching;
use crate::judge::hybrid::{HybridRules, judge_hybrid};
use crate::judge::warnings::Warning;
use crate::measure::{Measure, MeasureOptions};
use crate::plan::Placement;
use crate::plan::hybrid::{
    HybridPlan, ITEMS_PER_WORKER, Scheme, SharedWork, hybrid_plan, item_length,
};
use crate::probe::Topology;
use crate::saved::{DocumentHead, DocumentKind, HybridOptions, HybridResult, HybridWork};
use anyhow::Result;
use std::time::Instant;

/// What `hybrid` was asked for, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct HybridStudyOptions {
    /// Workers of each scheme; `None`: one per allowed core.
    pub workers: Option<usize>,
    /// A baseline on every worker CPU, not one per published class.
    pub every_cpu: bool,
    /// Measured rounds after the warm-ups, split into the first batches.
    pub reps: usize,
    /// The batches the rounds are measured in, and how many must agree.
    pub batching: Batching,
    pub cv_bar: f64,
    pub tolerance: f64,
    pub strict: bool,
    /// `rep_length` is how long one worker's equal share takes; the engine
    /// runs items, so it is started with [`HybridStudyOptions::engine`].
    pub measure: MeasureOptions,
}

impl HybridStudyOptions {
    /// The engine's options: its passes calibrated to one item
    /// ([`item_length`]), not to a whole share.
    pub fn engine(&self) -> MeasureOptions {
        MeasureOptions {
            rep_length: item_length(self.measure.rep_length, ITEMS_PER_WORKER),
            ..self.measure.clone()
        }
    }
}

/// Runs `hybrid` on the cores of `topology` this process may use.
pub fn hybrid_study<M: Measure>(
    topology: &Topology,
    options: &HybridStudyOptions,
    measure: &mut LazyMeasure<'_, M>,
    progress: &mut dyn Progress,
) -> Result<HybridResult> {
    let head = head(DocumentKind::Hybrid, topology);
    let plan = hybrid_plan(topology, options.workers, options.every_cpu)?;
    let measure = measure.get()?;
    let setup = measure.setup().clone();
    let items = ITEMS_PER_WORKER * plan.worker_cpus.len() as u64;
    let parts = round_parts(&plan, items);

    let mut recorded = Recorded::default();
    let batching = options.batching;
    let per_batch = options.reps / batching.batches;
    // The first batches share the rounds asked for (the last takes the
    // remainder); any further batch has `per_batch` rounds.
    let mut batches: Vec<Vec<usize>> = (0..batching.batches)
        .map(|b| {
            let start = setup.warmups + b * per_batch;
            let end = match b + 1 == batching.batches {
                true => setup.warmups + options.reps,
                false => start + per_batch,
            };
            (start..end).collect()
        })
        .collect();
    let rules = HybridRules {
        every_cpu: options.every_cpu,
        cv_bar: options.cv_bar,
        tolerance: options.tolerance,
        strict: options.strict,
    };
    let began = Instant::now();
    let mut next = 0;
    let judged = loop {
        let planned = setup.warmups + batches.iter().map(Vec::len).sum::<usize>();
        while next < planned && recorded.stopped.is_none() {
            let warmup = next < setup.warmups;
            if !warmup && batches.iter().skip(1).any(|b| b.first() == Some(&next)) {
                progress.update(&format!(
                    "hybrid: batch done, pausing {} ms",
                    batching.gap.as_millis()
                ));
                if !recorded.pause(measure, batching.gap) {
                    break;
                }
            }
            // Rounds take alike, so the first ones tell how long the rest take.
            let eta = match next {
                0 => String::new(),
                done => super::time_left(began, done, planned),
            };
            progress.update(&if warmup {
                format!("hybrid: warm-up round {}/{}{eta}", next + 1, setup.warmups)
            } else {
                format!(
                    "hybrid: round {}/{} ({} baselines, 4 schemes, {} batches){eta}",
                    next + 1 - setup.warmups,
                    planned - setup.warmups,
                    plan.baseline_cpus.len(),
                    batches.len()
                )
            });
            if !recorded.measure_shared_round(measure, &parts, next, warmup)? {
                break;
            }
            next += 1;
        }
        let judged = judge_hybrid(
            &recorded.samples,
            &plan,
            &setup,
            &topology.classes,
            &rules,
            &batches,
        );
        // Batches that group the CPUs differently buy another batch.
        if recorded.stopped.is_some()
            || judged.class_judgement.batches_agree()
            || batches.len() >= batching.max_batches
        {
            break judged;
        }
        batches.push((planned..planned + per_batch).collect());
    };
    progress.done();

    let mut warnings = Warning::about_machine(topology);
    warnings.extend(Warning::about_setup(&setup));
    if let Some(signal) = recorded.stopped {
        warnings.insert(0, Warning::Incomplete(signal));
    }
    if let Some(noise) = judged.noise.as_ref().filter(|n| n.is_high()) {
        warnings.push(Warning::NoisyHost(noise.clone()));
    }
    Ok(HybridResult {
        head: DocumentHead {
            complete: recorded.stopped.is_none(),
            ..head
        },
        sentence: crate::judge::sentences::hybrid::sentence(
            &judged.schemes,
            judged.ceiling,
            judged.class_judgement.verdict,
        ),
        options: HybridOptions {
            workers: plan.worker_cpus.len(),
            every_cpu: options.every_cpu,
            items_per_worker: ITEMS_PER_WORKER,
            reps: options.reps,
            batching: batching.into(),
            warmups: setup.warmups,
            rep_ms: u64::try_from(options.measure.rep_length.as_millis()).unwrap_or(u64::MAX),
            kernel: options.measure.kernel.clone(),
            cv_bar: options.cv_bar,
            tolerance: options.tolerance,
            strict: options.strict,
        },
        classes: topology.classes.clone(),
        work: HybridWork {
            items,
            passes_per_item: setup.passes,
            item_bytes: setup.bytes_per_worker,
        },
        plan,
        judged,
        setup,
        warnings,
        samples: recorded.samples,
    })
}

/// One round, in order: every baseline (all `items` on one pinned
/// worker), then every scheme's placement sharing the same `items`.
fn round_parts(plan: &HybridPlan, items: u64) -> Vec<(Placement, SharedWork)> {
    let baselines = plan.baseline_cpus.iter().map(|&cpu| {
        let work = SharedWork {
            items,
            scheme: Scheme::StaticShares,
        };
        (HybridPlan::baseline(cpu), work)
    });
    let schemes = plan.schemes.iter().filter_map(|placement| {
        let scheme = placement.arm.scheme()?;
        Some((placement.clone(), SharedWork { items, scheme }))
    });
    baselines.chain(schemes).collect()
}
