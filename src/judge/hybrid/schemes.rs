//! What each `hybrid` scheme made of the CPUs: its time, idle share, the
//! work each class did against its speed, and the ceiling.

use super::baselines::*;
use super::model::*;
use crate::judge::checks::ExcludedRep;
use crate::judge::stats::{median, spread};
use crate::measure::{RepSample, WorkerSample};
use crate::plan::Arm;
use crate::plan::hybrid::Scheme;
use std::collections::BTreeMap;

/// One scheme's statistics over its measured rounds. `fastest` is the
/// fastest class's baseline time by round.
pub(super) fn scheme_stats(
    samples: &[RepSample],
    arm: Arm,
    excluded: &[ExcludedRep],
    classes: &[SpeedClass],
    fastest: &BTreeMap<usize, f64>,
    ceiling: Option<f64>,
) -> Option<SchemeStats> {
    let scheme = arm.scheme()?;
    let reps = rounds(samples, arm, None, excluded);
    let workers = reps.values().map(|r| r.workers.len()).max().unwrap_or(0);
    let pinned = arm.pinned();
    let class_of_cpu = |cpu: u32| speed_class_of(classes, cpu).map(|c| c.label.clone());
    let wall: BTreeMap<usize, f64> = times(&reps);
    let speedup = Ratio::paired(fastest, &wall);
    let idle_of = |rep: &RepSample, members: &dyn Fn(&WorkerSample) -> bool| -> Option<f64> {
        let chosen: Vec<&WorkerSample> = rep.workers.iter().filter(|w| members(w)).collect();
        if chosen.is_empty() || rep.wall_ns == 0 {
            return None;
        }
        let idle: f64 = chosen
            .iter()
            .map(|w| rep.wall_ns.saturating_sub(w.busy_ns) as f64)
            .sum();
        Some(idle / (chosen.len() as f64 * rep.wall_ns as f64))
    };
    let idle = spread(
        &reps
            .values()
            .filter_map(|r| idle_of(r, &|_| true))
            .collect::<Vec<f64>>(),
    );
    let total_items: Vec<f64> = reps
        .values()
        .map(|r| r.workers.iter().map(items_of).sum::<u64>() as f64)
        .collect();
    let class_shares: Vec<ClassShare> = classes
        .iter()
        .map(|class| {
            let in_class =
                |w: &WorkerSample| main_cpu(w).is_some_and(|cpu| class.cpus.contains(cpu));
            let shares: Vec<f64> = reps
                .values()
                .zip(&total_items)
                .filter(|(_, total)| **total > 0.0)
                .map(|(rep, total)| {
                    let on_class: u64 = rep
                        .workers
                        .iter()
                        .filter_map(|w| w.items.as_ref())
                        .flat_map(|i| &i.per_cpu)
                        .filter(|c| class.cpus.contains(c.cpu))
                        .map(|c| c.items)
                        .sum();
                    on_class as f64 / total
                })
                .collect();
            ClassShare {
                class: class.label.clone(),
                workers: pinned.then(|| {
                    reps.values()
                        .next()
                        .map_or(0, |r| r.workers.iter().filter(|w| in_class(w)).count())
                }),
                items: (!shares.is_empty()).then(|| median(&shares)),
                idle: spread(
                    &reps
                        .values()
                        .filter_map(|r| idle_of(r, &in_class))
                        .collect::<Vec<f64>>(),
                ),
            }
        })
        .collect();
    let work_ratios = if pinned && scheme == Scheme::WorkStealing {
        work_ratios(classes, &class_shares)
    } else {
        Vec::new()
    };
    let worker_rows = (0..workers)
        .map(|worker| worker_row(&reps, worker, &class_of_cpu))
        .collect();
    let of_ceiling = speedup.as_ref().zip(ceiling).map(|(s, c)| s.value / c);
    Some(SchemeStats {
        arm,
        scheme,
        pinned,
        workers,
        // Set from the scheme's CV-bar check.
        quotable: false,
        wall_ms: spread(&wall.values().copied().collect::<Vec<f64>>()),
        speedup,
        of_ceiling,
        idle,
        classes: class_shares,
        work_ratios,
        worker_rows,
    })
}

/// Items per worker of the fastest class against each slower class's.
pub(super) fn work_ratios(classes: &[SpeedClass], shares: &[ClassShare]) -> Vec<WorkRatio> {
    let per_worker = |share: &ClassShare| -> Option<f64> {
        let workers = share.workers.filter(|n| *n > 0)? as f64;
        Some(share.items? / workers)
    };
    let Some(fastest) = shares.first().and_then(per_worker) else {
        return Vec::new();
    };
    classes
        .iter()
        .zip(shares)
        .skip(1)
        .filter_map(|(class, share)| {
            let slower = per_worker(share).filter(|v| *v > 0.0)?;
            let speed_ratio = class.slowdown.as_ref()?.value;
            let work_ratio = fastest / slower;
            Some(WorkRatio {
                class: class.label.clone(),
                work_ratio,
                speed_ratio,
                difference: work_ratio / speed_ratio - 1.0,
            })
        })
        .collect()
}

/// One worker's row: medians over the rounds.
pub(crate) fn worker_row(
    reps: &BTreeMap<usize, &RepSample>,
    worker: usize,
    class_of_cpu: &dyn Fn(u32) -> Option<String>,
) -> WorkerRow {
    let samples: Vec<(&RepSample, &WorkerSample)> = reps
        .values()
        .filter_map(|rep| Some((*rep, rep.workers.iter().find(|w| w.worker == worker)?)))
        .collect();
    let pinned_cpu = samples.first().and_then(|(_, w)| w.pinned_cpu);
    let mut on_cpu: BTreeMap<u32, u64> = BTreeMap::new();
    for (_, w) in &samples {
        for entry in w.items.iter().flat_map(|i| &i.per_cpu) {
            *on_cpu.entry(entry.cpu).or_default() += entry.items;
        }
    }
    let main_cpu = pinned_cpu.or_else(|| on_cpu.iter().max_by_key(|(_, n)| **n).map(|(c, _)| *c));
    let column = |f: &dyn Fn(&RepSample, &WorkerSample) -> f64| -> Vec<f64> {
        samples.iter().map(|(rep, w)| f(rep, w)).collect()
    };
    let items = column(&|_, w| items_of(w) as f64);
    let busy = column(&|_, w| w.busy_ns as f64 / 1e6);
    let rates: Vec<f64> = items
        .iter()
        .zip(&busy)
        .filter(|(_, b)| **b > 0.0)
        .map(|(i, b)| i / b)
        .collect();
    let stolen = column(&|_, w| w.items.as_ref().map_or(0, |i| i.stolen) as f64);
    WorkerRow {
        worker,
        pinned_cpu,
        ran_on: on_cpu.keys().copied().collect(),
        class: main_cpu.and_then(class_of_cpu),
        items: spread(&items),
        stolen: (!stolen.is_empty()).then(|| median(&stolen)),
        busy_ms: spread(&busy),
        idle_ms: spread(&column(&|rep, w| {
            rep.wall_ns.saturating_sub(w.busy_ns) as f64 / 1e6
        })),
        items_per_ms: (!rates.is_empty()).then(|| median(&rates)),
    }
}

/// The speed class that speaks for `cpu`.
pub(super) fn speed_class_of(classes: &[SpeedClass], cpu: u32) -> Option<&SpeedClass> {
    classes.iter().find(|c| c.cpus.contains(cpu))
}

/// The ceiling: the worker CPUs' speeds added up, in fastest-class CPUs.
/// `None` when a worker CPU has no measured speed.
pub(super) fn ceiling(classes: &[SpeedClass], worker_cpus: &[u32]) -> Option<f64> {
    worker_cpus
        .iter()
        .map(|cpu| Some(speed_class_of(classes, *cpu)?.speed.as_ref()?.value))
        .sum()
}
