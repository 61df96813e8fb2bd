//! `hybrid`'s pinned single-worker baselines: each CPU's repetitions by
//! round, its speed, and the classes those speeds group the CPUs into.

use super::model::*;
use crate::cpuset::CpuSet;
use crate::judge::checks::ExcludedRep;
use crate::judge::stats::{median, spread};
use crate::measure::{RepSample, WorkerSample};
use crate::plan::Arm;
use crate::plan::hybrid::HybridPlan;
use crate::probe::CoreKind;
use std::collections::BTreeMap;

/// A repetition's wall time in milliseconds.
pub(crate) fn wall_ms(rep: &RepSample) -> f64 {
    rep.wall_ns as f64 / 1e6
}

/// The measured, not excluded repetitions of `arm` (and, for baselines,
/// of `cpu`), by round.
pub(super) fn rounds<'a>(
    samples: &'a [RepSample],
    arm: Arm,
    cpu: Option<u32>,
    excluded: &[ExcludedRep],
) -> BTreeMap<usize, &'a RepSample> {
    samples
        .iter()
        .filter(|rep| rep.arm == arm && !rep.warmup)
        .filter(|rep| cpu.is_none() || rep.workers.first().and_then(|w| w.pinned_cpu) == cpu)
        .filter(|rep| !excluded.iter().any(|e| e.covers(arm, rep.rep)))
        .map(|rep| (rep.rep, rep))
        .collect()
}

pub(super) fn times(rounds: &BTreeMap<usize, &RepSample>) -> BTreeMap<usize, f64> {
    rounds
        .iter()
        .map(|(round, rep)| (*round, wall_ms(rep)))
        .collect()
}

/// One baseline CPU's wall time by round, its `excluded` rounds left out.
pub(super) fn baseline_times(
    samples: &[RepSample],
    cpu: u32,
    excluded: &[ExcludedRep],
) -> BTreeMap<usize, f64> {
    times(&rounds(samples, Arm::Baseline, Some(cpu), excluded))
}

/// The CPU a worker belongs to in one repetition: where it was pinned, or
/// (unpinned) where it did most of its items.
pub(super) fn main_cpu(w: &WorkerSample) -> Option<u32> {
    w.pinned_cpu.or_else(|| {
        let per_cpu = &w.items.as_ref()?.per_cpu;
        per_cpu.iter().max_by_key(|c| c.items).map(|c| c.cpu)
    })
}

/// Items a worker did in a repetition (0 for a sample without items).
pub(super) fn items_of(w: &WorkerSample) -> u64 {
    w.items.as_ref().map_or(0, |i| i.items)
}

/// Every baseline CPU's statistics; `excluded` holds each CPU's exclusions.
pub(super) fn baseline_stats(
    samples: &[RepSample],
    plan: &HybridPlan,
    class_of: impl Fn(u32) -> CoreKind,
    excluded: &BTreeMap<u32, Vec<ExcludedRep>>,
    cv_bar: f64,
) -> Vec<BaselineStats> {
    let none = Vec::new();
    let by_cpu: Vec<(u32, BTreeMap<usize, f64>, Option<f64>)> = plan
        .baseline_cpus
        .iter()
        .map(|&cpu| {
            let reps = rounds(
                samples,
                Arm::Baseline,
                Some(cpu),
                excluded.get(&cpu).unwrap_or(&none),
            );
            let rates: Vec<f64> = reps
                .values()
                .filter_map(|rep| rep.workers.first())
                .filter(|w| w.busy_ns > 0)
                .map(|w| items_of(w) as f64 / (w.busy_ns as f64 / 1e6))
                .collect();
            let rate = (!rates.is_empty()).then(|| median(&rates));
            (cpu, times(&reps), rate)
        })
        .collect();
    let fastest = by_cpu
        .iter()
        .filter(|(_, t, _)| !t.is_empty())
        .min_by(|a, b| median_of(&a.1).total_cmp(&median_of(&b.1)));
    by_cpu
        .iter()
        .map(|(cpu, t, rate)| {
            let wall = spread(&t.values().copied().collect::<Vec<f64>>());
            BaselineStats {
                cpu: *cpu,
                class: class_of(*cpu),
                quotable: wall.as_ref().is_some_and(|s| s.cv <= cv_bar),
                wall_ms: wall,
                items_per_ms: *rate,
                slowdown: fastest.and_then(|(_, fast, _)| Ratio::paired(t, fast)),
                excluded: excluded.get(cpu).cloned().unwrap_or_default(),
            }
        })
        .collect()
}

pub(super) fn median_of(times: &BTreeMap<usize, f64>) -> f64 {
    median(&times.values().copied().collect::<Vec<f64>>())
}

/// Groups the baseline CPUs by speed, fastest first: in order of median
/// time, a CPU joins the current group unless it is slower than the
/// group's fastest CPU beyond the noise (the paired interval above 1) and
/// by at least [`CLASS_GAP`]. Without an interval the gap alone decides.
pub(super) fn measured_groups(samples: &[RepSample], baselines: &[BaselineStats]) -> Vec<CpuSet> {
    let mut ordered: Vec<(u32, BTreeMap<usize, f64>)> = baselines
        .iter()
        .map(|b| (b.cpu, baseline_times(samples, b.cpu, &b.excluded)))
        .filter(|(_, t)| !t.is_empty())
        .collect();
    ordered.sort_by(|a, b| median_of(&a.1).total_cmp(&median_of(&b.1)));
    let mut groups: Vec<(BTreeMap<usize, f64>, Vec<u32>)> = Vec::new();
    for (cpu, t) in ordered {
        let apart = groups.last().is_none_or(|(first, _)| {
            Ratio::paired(&t, first).is_none_or(|r| {
                r.value >= 1.0 + CLASS_GAP && r.ci95_low.is_none_or(|low| low > 1.0)
            })
        });
        if apart {
            groups.push((t, vec![cpu]));
        } else if let Some((_, cpus)) = groups.last_mut() {
            cpus.push(cpu);
        }
    }
    groups
        .into_iter()
        .map(|(_, cpus)| CpuSet::from_cpus(cpus))
        .collect()
}
