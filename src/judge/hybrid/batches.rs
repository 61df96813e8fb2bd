//! `hybrid`'s evidence spread in time: how each batch of rounds, measured
//! a pause apart, groups the CPUs (a class verdict needs them to agree),
//! and how noisy the host was as the baselines saw it.

use super::baselines::{baseline_times, measured_groups};
use super::model::{BaselineStats, ClassBatch, ClassJudgement, ClassVerdict};
use crate::cpuset::CpuSet;
use crate::judge::batches::{HostNoise, NOISY_BASELINE};
use crate::judge::checks::ExcludedRep;
use crate::judge::stats::{median, range_ratio};
use crate::measure::RepSample;
use crate::plan::Arm;
use std::collections::{BTreeMap, BTreeSet};

/// Groups the CPUs of each of `batches` (round numbers) by their baselines
/// alone, into `judgement`; batches that group them unlike all the rounds
/// together make a definite verdict inconclusive, with a note naming how.
pub(super) fn judge_batches(
    judgement: &mut ClassJudgement,
    samples: &[RepSample],
    baselines: &[BaselineStats],
    batches: &[Vec<usize>],
) {
    judgement.batches = batches
        .iter()
        .enumerate()
        .map(|(i, rounds)| {
            let in_batch: Vec<RepSample> = samples
                .iter()
                .filter(|s| rounds.contains(&s.rep))
                .cloned()
                .collect();
            ClassBatch {
                index: i + 1,
                rounds: rounds.clone(),
                measured: measured_groups(&in_batch, baselines),
            }
        })
        .collect();
    if !judgement.batches_agree() && judgement.verdict != ClassVerdict::Inconclusive {
        let groupings: Vec<String> = judgement
            .batches
            .iter()
            .map(|b| format!("batch {}: {}", b.index, group_list(&b.measured)))
            .collect();
        judgement.notes.push(format!(
            "batches measured a pause apart group the CPUs differently ({}): the host's load \
             changed under the measurement, so the classes are inconclusive",
            groupings.join("; ")
        ));
        judgement.verdict = ClassVerdict::Inconclusive;
    }
}

/// "0,1 / 2": groups of CPUs, fastest first.
pub(super) fn group_list(groups: &[CpuSet]) -> String {
    groups
        .iter()
        .map(CpuSet::to_string)
        .collect::<Vec<_>>()
        .join(" / ")
}

/// The host's noise as the baselines saw it, and the rounds it spoiled.
pub(super) struct BaselineNoise {
    /// Each baseline CPU's median time per batch (the drift is the largest
    /// spread of one CPU's batch medians), and the rounds in which some
    /// baseline strayed more than [`NOISY_BASELINE`] from its CPU's batch
    /// median.
    pub noise: Option<HostNoise>,
    /// Per baseline CPU, its flagged rounds, each with why: kept out of
    /// the CPU's statistics and the class grouping, as the gate keeps its
    /// noisy rounds out of its estimate.
    pub flagged: BTreeMap<u32, Vec<ExcludedRep>>,
}

/// Flags, per baseline CPU in `cpus` and per batch, the rounds whose time
/// is more than [`NOISY_BASELINE`] off the batch's median (each CPU's
/// `excluded` rounds already left out). A CPU's rounds are flagged only
/// while they are a minority of its batch: when most of a batch strays
/// from its median, the batch has no typical value to be noise against,
/// and the drift and the CV bar speak for it instead.
pub(super) fn baseline_noise(
    samples: &[RepSample],
    cpus: &[u32],
    excluded: &BTreeMap<u32, Vec<ExcludedRep>>,
    batches: &[Vec<usize>],
) -> BaselineNoise {
    let none = Vec::new();
    let mut drift: Option<f64> = None;
    let mut noisy = BTreeSet::new();
    let mut rounds = BTreeSet::new();
    let mut flagged: BTreeMap<u32, Vec<ExcludedRep>> = BTreeMap::new();
    for &cpu in cpus {
        let times = baseline_times(samples, cpu, excluded.get(&cpu).unwrap_or(&none));
        rounds.extend(times.keys().copied());
        let mut medians = Vec::new();
        for batch in batches {
            let in_batch: Vec<(usize, f64)> = times
                .iter()
                .filter(|(round, _)| batch.contains(round))
                .map(|(round, t)| (*round, *t))
                .collect();
            if in_batch.is_empty() {
                continue;
            }
            let typical = median(&in_batch.iter().map(|(_, t)| *t).collect::<Vec<_>>());
            medians.push(typical);
            let strays: Vec<(usize, f64)> = in_batch
                .iter()
                .copied()
                .filter(|(_, t)| typical > 0.0 && (t / typical - 1.0).abs() > NOISY_BASELINE)
                .collect();
            noisy.extend(strays.iter().map(|(round, _)| *round));
            if 2 * strays.len() < in_batch.len() {
                flagged
                    .entry(cpu)
                    .or_default()
                    .extend(strays.iter().map(|&(round, t)| ExcludedRep {
                        arm: Arm::Baseline,
                        rep: round,
                        why: format!(
                            "host noise: {:+.0} % off its batch's median baseline on CPU {cpu}",
                            (t / typical - 1.0) * 100.0
                        ),
                    }));
            }
        }
        if let Some(moved) = range_ratio(&medians) {
            drift = Some(drift.map_or(moved, |d| d.max(moved)));
        }
    }
    BaselineNoise {
        noise: (!rounds.is_empty()).then_some(HostNoise {
            baseline_drift: drift,
            noisy_rounds: noisy.len(),
            rounds: rounds.len(),
        }),
        flagged,
    }
}
