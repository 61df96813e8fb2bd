//! `hybrid`'s judgement: each class's speed from pinned single-worker
//! baselines, the classes those speeds form, the ceiling, and what each
//! scheme made of the CPUs.
//!
//! Every time here is wall time on CLOCK_MONOTONIC, in milliseconds: a
//! repetition's from releasing its workers to collecting the last (so a
//! scheme's idle time includes the wake-up and the wait at the end), a
//! worker's busy time from its first item to its last. Wall time, not core
//! cycles, because speed is what differs between classes: an E core's
//! cycle is longer, and a vCPU the host starves loses wall time, not cycles.
//!
//! Repetitions are measured in rounds (every baseline, then every scheme),
//! so a baseline and a scheme of one round ran back to back: ratios are
//! paired by round, and the host's drift cancels inside each pair.

use crate::cpuset::CpuSet;
use crate::judge::checks::{self, Check, CheckName, CheckStatus, ExcludedRep, excluded_reps};
use crate::judge::stats::{Spread, spread};
use crate::judge::validity::judge_run;
use crate::measure::{MeasurementSetup, RepSample};
use crate::plan::Arm;
use crate::plan::command::CommandArm;
use crate::plan::hybrid::{HybridPlan, SCHEME_ARMS};
use crate::probe::{CoreClass, CoreKind};
use std::collections::BTreeMap;

/// Judges a `hybrid` study: baselines, the classes their speeds form
/// against the published `classes` (in all the rounds, and in each of
/// `batches`, the round numbers of each batch: a class verdict needs them
/// to agree), the ceiling, every scheme, and the checks that say whether
/// any of it may be quoted.
pub fn judge_hybrid(
    samples: &[RepSample],
    plan: &HybridPlan,
    setup: &MeasurementSetup,
    classes: &[CoreClass],
    rules: &HybridRules,
    batches: &[Vec<usize>],
) -> HybridJudgement {
    let class_of = |cpu: u32| {
        classes
            .iter()
            .find(|c| c.cpus.contains(cpu))
            .map_or(CoreKind::Uniform, |c| c.name)
    };
    // Every baseline CPU's repetitions share the arm and the round number,
    // so each CPU's exclusions are kept apart from the schemes'.
    let mut baseline_excluded: BTreeMap<u32, Vec<ExcludedRep>> = BTreeMap::new();
    let mut excluded = Vec::new();
    for rep in samples {
        for exclusion in excluded_reps(std::slice::from_ref(rep)) {
            match rep.workers.first().and_then(|w| w.pinned_cpu) {
                Some(cpu) if rep.arm == Arm::Baseline => {
                    baseline_excluded.entry(cpu).or_default().push(exclusion)
                }
                _ => excluded.push(exclusion),
            }
        }
    }

    // Rounds a burst of host load spoiled are left out like any other
    // excluded repetition, so that medians, paired ratios and the class
    // grouping rest on the rounds the host left alone.
    let BaselineNoise { noise, flagged } =
        baseline_noise(samples, &plan.baseline_cpus, &baseline_excluded, batches);
    for (cpu, rounds) in flagged {
        baseline_excluded.entry(cpu).or_default().extend(rounds);
    }
    let baselines = baseline_stats(samples, plan, class_of, &baseline_excluded, rules.cv_bar);
    let groups = measured_groups(samples, &baselines);
    let published_order: Vec<CoreKind> = classes.iter().map(|c| c.name).collect();
    let mut class_judgement = judge_classes(
        &baselines,
        groups.clone(),
        &published_order,
        rules.every_cpu,
    );
    judge_batches(&mut class_judgement, samples, &baselines, batches);
    let speed_classes = speed_classes(samples, &baselines, &groups, &plan.worker_cpus, class_of);
    let ceiling = ceiling(&speed_classes, &plan.worker_cpus);
    let fastest = groups
        .first()
        .map(|group| group_times(samples, &baselines, group))
        .unwrap_or_default();
    let mut schemes: Vec<SchemeStats> = SCHEME_ARMS
        .iter()
        .filter_map(|&arm| scheme_stats(samples, arm, &excluded, &speed_classes, &fastest, ceiling))
        .collect();

    let mut all_checks = vec![checks::pinning(samples), checks::multiplexing(samples)];
    let (invariance, invariance_spread) = checks::invariance(
        samples,
        rules.tolerance,
        setup.kernel_instructions_per_byte,
        setup.why_instructions_uncounted(),
    );
    all_checks.push(invariance);
    all_checks.push(baselines_cv_check(&baselines, rules.cv_bar));
    for scheme in &mut schemes {
        let check = match &scheme.wall_ms {
            Some(wall) => checks::cv_bar(CheckName::CvBar(scheme.arm), wall, rules.cv_bar),
            None => Check::unavailable(
                CheckName::CvBar(scheme.arm),
                "fewer than 2 measured repetitions",
            ),
        };
        scheme.quotable = check.status == CheckStatus::Passed;
        all_checks.push(check);
    }
    all_checks.extend(nothing_kept(samples, plan, &baseline_excluded, &excluded));
    let valid = judge_run(&all_checks, rules.strict).is_valid();
    HybridJudgement {
        baselines,
        speed_classes,
        class_judgement,
        ceiling,
        schemes,
        checks: all_checks,
        excluded,
        invariance_spread,
        noise,
        valid,
    }
}

/// One CV-bar check for all the baselines: they are one arm, measured on
/// several CPUs, and each must be quotable.
fn baselines_cv_check(baselines: &[BaselineStats], bar: f64) -> Check {
    const NAME: CheckName = CheckName::CvBar(Arm::Baseline);
    let measured: Vec<(&BaselineStats, &Spread)> = baselines
        .iter()
        .filter_map(|b| Some((b, b.wall_ms.as_ref()?)))
        .collect();
    if measured.len() < baselines.len() || measured.is_empty() {
        return Check::unavailable(NAME, "a baseline CPU has fewer than 2 measured repetitions");
    }
    let noisy: Vec<String> = measured
        .iter()
        .filter(|(_, wall)| wall.cv > bar)
        .map(|(b, wall)| format!("CPU {} CV {:.2} %", b.cpu, wall.cv * 100.0))
        .collect();
    let worst = measured.iter().map(|(_, w)| w.cv).fold(0.0, f64::max);
    if noisy.is_empty() {
        Check::passed(
            NAME,
            format!(
                "every baseline CPU's CV is within the {:.2} % bar (at most {:.2} %)",
                bar * 100.0,
                worst * 100.0
            ),
        )
    } else {
        Check::failed(
            NAME,
            format!(
                "above the {:.2} % bar: {}: not quotable",
                bar * 100.0,
                noisy.join(", ")
            ),
        )
    }
}

/// A failed `repetitions` check ([`checks::nothing_kept`]) for each
/// baseline CPU (`repetitions cpu:N`) and each scheme (`repetitions ARM`)
/// that kept no round: a class or scheme without a number makes the study
/// invalid. `baseline_excluded` holds each baseline CPU's exclusions,
/// `excluded` the schemes'.
fn nothing_kept(
    samples: &[RepSample],
    plan: &HybridPlan,
    baseline_excluded: &BTreeMap<u32, Vec<ExcludedRep>>,
    excluded: &[ExcludedRep],
) -> Vec<Check> {
    let measured = |arm: Arm, cpu: Option<u32>| rounds(samples, arm, cpu, &[]).len();
    let no_exclusions = Vec::new();
    let baselines = plan
        .baseline_cpus
        .iter()
        .filter(|&cpu| {
            let cpu_excluded = baseline_excluded.get(cpu).unwrap_or(&no_exclusions);
            rounds(samples, Arm::Baseline, Some(*cpu), cpu_excluded).is_empty()
        })
        .map(|&cpu| {
            let name = CheckName::repetitions_of(CommandArm::Alone(cpu));
            checks::nothing_kept(name, measured(Arm::Baseline, Some(cpu)), 0)
        });
    let schemes = plan
        .schemes
        .iter()
        .map(|p| p.arm)
        .filter(|&arm| rounds(samples, arm, None, excluded).is_empty())
        .map(|arm| checks::nothing_kept(CheckName::Repetitions(arm), measured(arm, None), 0));
    baselines.chain(schemes).collect()
}

/// The measured groups against the published classes (both restricted to
/// the baseline CPUs).
fn judge_classes(
    baselines: &[BaselineStats],
    measured: Vec<CpuSet>,
    published_order: &[CoreKind],
    every_cpu: bool,
) -> ClassJudgement {
    let published: Vec<(CoreKind, CpuSet)> = published_order
        .iter()
        .filter_map(|class| {
            let cpus = CpuSet::from_cpus(
                baselines
                    .iter()
                    .filter(|b| &b.class == class)
                    .map(|b| b.cpu),
            );
            (!cpus.is_empty()).then_some((*class, cpus))
        })
        .collect();
    let mut notes = Vec::new();
    let unmeasured: Vec<u32> = baselines
        .iter()
        .filter(|b| b.wall_ms.is_none())
        .map(|b| b.cpu)
        .collect();
    for (class, cpus) in &published {
        let parts: Vec<&CpuSet> = measured
            .iter()
            .filter(|m| !m.intersection(cpus).is_empty())
            .collect();
        if parts.len() > 1 {
            let listed: Vec<String> = parts
                .iter()
                .map(|p| p.intersection(cpus).to_string())
                .collect();
            notes.push(format!(
                "published class {class} (CPUs {cpus}) measures as {} classes: CPUs {}",
                parts.len(),
                listed.join(" / ")
            ));
        }
    }
    for group in &measured {
        let classes: Vec<String> = published
            .iter()
            .filter(|(_, cpus)| !cpus.intersection(group).is_empty())
            .map(|(class, _)| class.to_string())
            .collect();
        if classes.len() > 1 {
            notes.push(format!(
                "published classes {} measure alike (CPUs {group})",
                classes.join(" and ")
            ));
        }
    }
    let verdict = if !unmeasured.is_empty() {
        notes.push(format!(
            "no measured repetition on CPU {}: the classes cannot be compared",
            CpuSet::from_cpus(unmeasured)
        ));
        ClassVerdict::Inconclusive
    } else if notes.is_empty() {
        ClassVerdict::Agree
    } else {
        ClassVerdict::Differ
    };
    if !every_cpu && published.iter().any(|(_, cpus)| cpus.len() == 1) {
        notes.push(
            "one CPU per published class was measured, so a class whose CPUs differ in speed \
             cannot show here: --every-cpu measures them all"
                .into(),
        );
    }
    ClassJudgement {
        verdict,
        measured,
        published: published.into_iter().map(|(_, cpus)| cpus).collect(),
        notes,
        batches: Vec::new(),
    }
}

/// The speed classes the schemes are judged by (see [`SpeedClass`]):
/// `groups` of baseline CPUs, fastest first, each also speaking for the
/// worker CPUs of its published classes that had no baseline.
fn speed_classes(
    samples: &[RepSample],
    baselines: &[BaselineStats],
    groups: &[CpuSet],
    worker_cpus: &[u32],
    class_of: impl Fn(u32) -> CoreKind,
) -> Vec<SpeedClass> {
    let measured_cpus: CpuSet = baselines.iter().map(|b| b.cpu).collect();
    let group_times: Vec<BTreeMap<usize, f64>> = groups
        .iter()
        .map(|group| group_times(samples, baselines, group))
        .collect();
    groups
        .iter()
        .zip(&group_times)
        .enumerate()
        .map(|(index, (group, t))| {
            let mut published: Vec<CoreKind> = Vec::new();
            for cpu in group.iter() {
                let class = class_of(cpu);
                if !published.contains(&class) {
                    published.push(class);
                }
            }
            let unmeasured_of_class = worker_cpus
                .iter()
                .copied()
                .filter(|cpu| !measured_cpus.contains(*cpu) && published.contains(&class_of(*cpu)));
            let cpus: CpuSet = group.iter().chain(unmeasured_of_class).collect();
            let whole_class = published.len() == 1
                && baselines
                    .iter()
                    .filter(|b| b.class == published[0])
                    .all(|b| group.contains(b.cpu));
            let label = if whole_class {
                published[0].to_string()
            } else {
                format!("measured {index}")
            };
            let slowdown = group_times.first().and_then(|fast| Ratio::paired(t, fast));
            SpeedClass {
                label,
                published,
                measured_cpus: group.clone(),
                cpus,
                wall_ms: spread(&t.values().copied().collect::<Vec<f64>>()),
                speed: slowdown.as_ref().map(Ratio::inverse),
                slowdown,
            }
        })
        .collect()
}

/// A group of baseline CPUs' wall time by round: per round, the mean of
/// its CPUs' baselines (rounds where one of them was excluded are left out).
fn group_times(
    samples: &[RepSample],
    baselines: &[BaselineStats],
    group: &CpuSet,
) -> BTreeMap<usize, f64> {
    let per_cpu: Vec<BTreeMap<usize, f64>> = baselines
        .iter()
        .filter(|b| group.contains(b.cpu))
        .map(|b| baseline_times(samples, b.cpu, &b.excluded))
        .collect();
    mean_by_round(&per_cpu)
}

/// Per round present in every map, the mean of the maps' values.
fn mean_by_round(maps: &[BTreeMap<usize, f64>]) -> BTreeMap<usize, f64> {
    let Some(first) = maps.first() else {
        return BTreeMap::new();
    };
    first
        .keys()
        .filter_map(|round| {
            let values: Option<Vec<f64>> = maps.iter().map(|m| m.get(round).copied()).collect();
            let values = values?;
            Some((*round, values.iter().sum::<f64>() / values.len() as f64))
        })
        .collect()
}

mod baselines;
mod batches;
mod model;
mod schemes;

pub(crate) use baselines::wall_ms;
use baselines::*;
use batches::{BaselineNoise, baseline_noise, judge_batches};
pub use model::*;
pub(crate) use schemes::worker_row;
use schemes::*;

#[cfg(test)]
mod tests;
