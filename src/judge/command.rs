//! The command study's statistics (`run -- COMMAND`, issue 24; the design
//! is in [`crate::plan::command`]): each arm's wall time as median, CV,
//! min–max and n ([`Spread`]), and each arm's cost against the baseline arm
//! paired by round, with its 95 % interval, as the kernel study's.
//!
//! Warm-ups and failed repetitions (kept by `--ignore-failure`) are out of
//! every statistic; a round counts in a pairing only where both arms have a
//! kept repetition in it.
//!
//! Two checks come from the tree's context-switch records
//! ([`PlacementRecords`]), read into each thread's on-CPU stretches as
//! `observe` reads them ([`judge_observation`]), per repetition and per
//! arm ([`arm_residency`]):
//!
//! * **placement held** ([`placement_held`]): the share of the tree's
//!   on-CPU time on its arm's CPUs, which must be all of it, naming every
//!   thread that ran elsewhere (a program that changed its own affinity);
//! * **SMT co-residency** ([`co_residency`]): the share of the tree's
//!   on-CPU time during which the CPU's hardware sibling (the topology's
//!   sibling sets) ran another thread of the tree, from the overlap of
//!   their stretches; one-per-core should read near 0 % and sibling-packed
//!   near 100 %. Beside it, other load ([`other_load_ms`]): the share
//!   during which the sibling ran a task outside the tree (idle not
//!   counted), from the siblings' CPU-wide switch records, where the
//!   kernel allowed them (perf_event_paranoid 0 or CAP_PERFMON), and
//!   unavailable, with the reason, where it did not.
//!
//! A repetition whose records are missing or incomplete (the kernel
//! dropped some because a ring was full) is never judged held: the arm's
//! check is then unavailable, with the reason, unless another repetition
//! already failed it.
//!
//! Each arm's user-space instructions ([`CommandArmStats::user_instructions`])
//! are the median over its kept repetitions whose hardware counters ran all
//! their enabled time, for the same-work check of
//! [`super::command_checks`]; a multiplexed count is never scaled, only left
//! out.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::checks::CheckStatus;
use super::observe::{ThreadStats, judge_observation};
use super::stats::{Interval, Spread, median, penalty_centre, penalty_ci95, spread};
use crate::cpuset::CpuSet;
use crate::measure::command::{CommandRep, PlacementRecords, SiblingRecords, TreeHardware};
use crate::measure::recording::{Recording, SchedEventKind};
use crate::plan::command::{CommandArm, CommandPlacement, Units};
use crate::probe::CpuEntry;

/// One arm's wall time, in seconds, over its kept repetitions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommandArmStats {
    pub arm: CommandArm,
    /// `None` with fewer than two kept repetitions.
    pub wall_s: Option<Spread>,
    /// This arm's cost against the baseline's, paired by round (0.3: 30 %
    /// slower); `None` for the baseline itself and with too few pairs.
    pub vs_baseline: Option<f64>,
    pub vs_baseline_ci95: Option<Interval>,
    /// The wall time per unit of `--units` (seconds per byte, ...); `None`
    /// without `--units` or without a wall time.
    #[serde(default)]
    pub wall_s_per_unit: Option<Spread>,
    /// The median of the tree's user-space instructions over the kept
    /// repetitions whose hardware counters ran all their enabled time;
    /// `None` where none did (no PMU, perf refused, all multiplexed).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub user_instructions: Option<f64>,
    /// That median against the baseline arm's (0.02: 2 % more
    /// instructions); `None` for the baseline and where either is missing.
    #[serde(default)]
    pub instructions_vs_baseline: Option<f64>,
}

/// The kept repetitions' wall times of `arm`, by round.
pub fn wall_by_round(reps: &[CommandRep], arm: CommandArm) -> Vec<(usize, f64)> {
    reps.iter()
        .filter(|r| r.arm == arm && !r.warmup && !r.failed)
        .map(|r| (r.round, r.sample.wall_ns as f64 / 1e9))
        .collect()
}

/// The median user-space instructions of `arm`'s kept repetitions whose
/// hardware counters were never multiplexed.
fn median_user_instructions(reps: &[CommandRep], arm: CommandArm) -> Option<f64> {
    let counts: Vec<f64> = reps
        .iter()
        .filter(|r| r.arm == arm && !r.warmup && !r.failed)
        .filter(|r| multiplexing_offence(&r.sample.hardware).is_none())
        .filter_map(|r| r.sample.hardware.user_instructions())
        .map(|count| count as f64)
        .collect();
    (!counts.is_empty()).then(|| median(&counts))
}

/// The statistics of every arm in `arms`, each against `baseline`, and per
/// unit where `units` says what one run processes.
pub fn command_arm_stats(
    reps: &[CommandRep],
    arms: &[CommandArm],
    baseline: CommandArm,
    units: Option<&Units>,
) -> Vec<CommandArmStats> {
    let base = wall_by_round(reps, baseline);
    let base_instructions = median_user_instructions(reps, baseline);
    arms.iter()
        .map(|&arm| {
            let walls = wall_by_round(reps, arm);
            let values: Vec<f64> = walls.iter().map(|(_, wall)| *wall).collect();
            let (treated, paired): (Vec<f64>, Vec<f64>) = walls
                .iter()
                .filter_map(|(round, wall)| {
                    let base = base.iter().find(|(r, _)| r == round)?;
                    Some((*wall, base.1))
                })
                .unzip();
            let compared = arm != baseline;
            let wall_s = spread(&values);
            let user_instructions = median_user_instructions(reps, arm);
            CommandArmStats {
                arm,
                wall_s_per_unit: units.and_then(|units| Some(wall_s.as_ref()?.per(units.count))),
                wall_s,
                vs_baseline: compared
                    .then(|| penalty_centre(&treated, &paired))
                    .flatten(),
                vs_baseline_ci95: compared.then(|| penalty_ci95(&treated, &paired)).flatten(),
                user_instructions,
                instructions_vs_baseline: user_instructions
                    .zip(base_instructions)
                    .filter(|&(_, base)| compared && base > 0.0)
                    .map(|(arm, base)| arm / base - 1.0),
            }
        })
        .collect()
}

/// How many threads outside its CPUs an arm's detail names.
const NAMED_THREADS: usize = 3;

/// The tree's threads with their on-CPU stretches, as `observe` reads them
/// from the records; why they cannot be judged where the records are
/// missing, incomplete or empty.
pub fn tree_threads(records: &PlacementRecords) -> Result<Vec<ThreadStats>, String> {
    let recording = match records {
        PlacementRecords::Recorded { tree, .. } => tree,
        PlacementRecords::Unavailable { reason } => return Err(reason.clone()),
    };
    complete(recording, "the threads")?;
    let threads = judge_observation(recording, &[], None).threads;
    if threads.iter().all(|t| t.on_cpu_ms <= 0.0) {
        return Err("the records hold no time on a CPU".into());
    }
    Ok(threads)
}

/// Why `recording` is not to be trusted: the kernel dropped records.
fn complete(recording: &Recording, what: &str) -> Result<(), String> {
    if recording.lost_records > 0 {
        return Err(format!(
            "the kernel dropped {} context-switch records (a ring buffer was full): where \
             {what} ran is not known in full",
            recording.lost_records
        ));
    }
    Ok(())
}

/// A thread of the tree that ran outside its arm's CPUs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadOutside {
    pub tid: u32,
    pub pid: u32,
    pub comm: String,
    /// Its time outside, ms.
    pub ms: f64,
    /// The CPUs outside it ran on.
    pub cpus: CpuSet,
}

/// Where one repetition's tree ran, against its arm's CPUs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlacementHeld {
    /// The tree's on-CPU time, ms.
    pub on_cpu_ms: f64,
    /// The share of it on the arm's CPUs: held only at 1.
    pub share: f64,
    /// Most time outside first; empty when held.
    pub outside: Vec<ThreadOutside>,
}

impl PlacementHeld {
    pub fn held(&self) -> bool {
        self.outside.is_empty()
    }
}

/// Judges one repetition's `threads` against its arm's `cpus`.
pub fn placement_held(threads: &[ThreadStats], cpus: &CpuSet) -> PlacementHeld {
    let on_cpu_ms = threads.iter().fold(0.0, |total, t| total + t.on_cpu_ms);
    let mut outside: Vec<ThreadOutside> = threads
        .iter()
        .filter_map(|thread| {
            let away: Vec<_> = thread
                .intervals
                .iter()
                .filter(|i| !cpus.contains(i.cpu))
                .collect();
            (!away.is_empty()).then(|| ThreadOutside {
                tid: thread.tid,
                pid: thread.pid,
                comm: thread.comm.clone(),
                ms: away
                    .iter()
                    .fold(0.0, |total, i| total + (i.end_ms - i.start_ms)),
                cpus: away.iter().map(|i| i.cpu).collect(),
            })
        })
        .collect();
    outside.sort_by(|a, b| b.ms.total_cmp(&a.ms).then(a.tid.cmp(&b.tid)));
    let outside_ms = outside.iter().fold(0.0, |total, t| total + t.ms);
    PlacementHeld {
        on_cpu_ms,
        share: if on_cpu_ms > 0.0 {
            1.0 - outside_ms / on_cpu_ms
        } else {
            1.0
        },
        outside,
    }
}

/// How much of one repetition's on-CPU time shared a core with the tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoResidency {
    /// The tree's on-CPU time, ms.
    pub on_cpu_ms: f64,
    /// The part of it during which the CPU's hardware sibling ran another
    /// thread of the tree, ms.
    pub with_tree_ms: f64,
}

impl CoResidency {
    pub fn with_tree_share(&self) -> f64 {
        share(self.with_tree_ms, self.on_cpu_ms)
    }
}

fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { part / whole } else { 0.0 }
}

/// Stretches by CPU, `(start_ms, end_ms, tid)`, in order of start: a CPU
/// runs one task at a time, so they are disjoint and in order of their
/// ends too.
type StretchesByCpu = BTreeMap<u32, Vec<(f64, f64, u32)>>;

/// Judges one repetition's `threads` on the machine whose CPUs (with their
/// sibling sets) are `topology`; a CPU it does not list has no sibling.
pub fn co_residency(threads: &[ThreadStats], topology: &[CpuEntry]) -> CoResidency {
    let mut by_cpu = StretchesByCpu::new();
    for thread in threads {
        for i in &thread.intervals {
            by_cpu
                .entry(i.cpu)
                .or_default()
                .push((i.start_ms, i.end_ms, thread.tid));
        }
    }
    for stretches in by_cpu.values_mut() {
        stretches.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let (on_cpu_ms, with_tree_ms) = sibling_overlap(threads, topology, &by_cpu);
    CoResidency {
        on_cpu_ms,
        with_tree_ms,
    }
}

/// The tree's on-CPU time, and the part of it during which a sibling of
/// its CPU ran one of `on_siblings` (another thread than its own), ms.
fn sibling_overlap(
    threads: &[ThreadStats],
    topology: &[CpuEntry],
    on_siblings: &StretchesByCpu,
) -> (f64, f64) {
    let (mut on_cpu_ms, mut overlap_ms) = (0.0, 0.0);
    for thread in threads {
        for i in &thread.intervals {
            on_cpu_ms += i.end_ms - i.start_ms;
            let Some(entry) = topology.iter().find(|e| e.cpu == i.cpu) else {
                continue;
            };
            let mut overlaps: Vec<(f64, f64)> = Vec::new();
            for sibling in entry.siblings.iter().filter(|&cpu| cpu != i.cpu) {
                let Some(stretches) = on_siblings.get(&sibling) else {
                    continue;
                };
                let from = stretches.partition_point(|s| s.1 <= i.start_ms);
                overlaps.extend(
                    stretches[from..]
                        .iter()
                        .take_while(|s| s.0 < i.end_ms)
                        .filter(|s| s.2 != thread.tid)
                        .map(|s| (s.0.max(i.start_ms), s.1.min(i.end_ms))),
                );
            }
            overlap_ms += covered_ms(overlaps);
        }
    }
    (on_cpu_ms, overlap_ms)
}

/// The part of one repetition's on-CPU time (its `threads`, read from
/// `records`) during which a sibling of its CPU ran a task outside the
/// tree, idle not counted, ms; why it is unknown where the siblings were
/// not recorded in full. Only the watched siblings (those of the arm's
/// CPUs) count.
pub fn other_load_ms(
    records: &PlacementRecords,
    threads: &[ThreadStats],
    topology: &[CpuEntry],
) -> Result<f64, String> {
    let (tree, siblings) = match records {
        PlacementRecords::Recorded { tree, siblings } => (tree, siblings),
        PlacementRecords::Unavailable { reason } => return Err(reason.clone()),
    };
    let recording = match siblings {
        SiblingRecords::Recorded { recording, .. } => recording,
        SiblingRecords::Unavailable { reason } => return Err(reason.clone()),
    };
    complete(recording, "the siblings' tasks")?;
    let ms = |ns: u64| ns.saturating_sub(tree.start_ns) as f64 / 1e6;
    let in_tree: BTreeSet<u32> = threads.iter().map(|t| t.tid).collect();
    let other = |pid: u32, tid: u32| pid != 0 && !in_tree.contains(&tid);
    let mut by_cpu = StretchesByCpu::new();
    // Per CPU, the task switched in there and since when; a CPU's first
    // record, a switch-out, is of the task that ran from the start.
    let mut running: BTreeMap<u32, Option<(u32, u32, u64)>> = BTreeMap::new();
    for event in &recording.events {
        let now = running.entry(event.cpu).or_insert_with(|| {
            (event.kind == SchedEventKind::SwitchOut).then_some((
                event.pid,
                event.tid,
                recording.start_ns,
            ))
        });
        match event.kind {
            SchedEventKind::SwitchIn => *now = Some((event.pid, event.tid, event.time_ns)),
            // An exiting task's last switch-out names no thread (-1): the
            // task is the one switched in.
            SchedEventKind::SwitchOut => {
                if let Some((pid, tid, since)) = now.take()
                    && other(pid, tid)
                {
                    let stretch = (ms(since), ms(event.time_ns), tid);
                    by_cpu.entry(event.cpu).or_default().push(stretch);
                }
            }
            _ => {}
        }
    }
    for (cpu, now) in running {
        if let Some((pid, tid, since)) = now
            && other(pid, tid)
        {
            let stretch = (ms(since), ms(recording.end_ns), tid);
            by_cpu.entry(cpu).or_default().push(stretch);
        }
    }
    Ok(sibling_overlap(threads, topology, &by_cpu).1)
}

/// The length of the union of `spans`: with more than one sibling (SMT4),
/// two siblings may run the tree at once, which counts once.
fn covered_ms(mut spans: Vec<(f64, f64)>) -> f64 {
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut total = 0.0;
    let mut current: Option<(f64, f64)> = None;
    for (start, end) in spans {
        current = match current {
            Some((from, to)) if start <= to => Some((from, to.max(end))),
            Some((from, to)) => {
                total += to - from;
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    total + current.map_or(0.0, |(from, to)| to - from)
}

/// A thread outside the arm's CPUs in one round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoundOutside {
    pub round: usize,
    #[serde(flatten)]
    pub thread: ThreadOutside,
}

/// One arm's placement and co-residency over its kept repetitions (not
/// warm-ups, not failed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArmResidency {
    pub arm: CommandArm,
    /// Repetitions whose records were judged.
    pub judged: usize,
    /// Repetitions without complete records; `unavailable` says why.
    pub unjudged: usize,
    /// The share of the judged repetitions' on-CPU time on the arm's CPUs.
    pub held_share: Option<f64>,
    pub outside: Vec<RoundOutside>,
    /// Placement held: failed when any thread ran outside, unavailable
    /// when a repetition could not be judged, passed otherwise.
    pub held: CheckStatus,
    /// What was found, in words.
    pub detail: String,
    /// The share of the judged repetitions' on-CPU time during which the
    /// CPU's sibling ran another thread of the tree.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub co_residency: Option<f64>,
    /// The share during which it ran something else; `None`, with the
    /// reason, where not measured.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub other_load: Option<f64>,
    pub other_load_unavailable: Option<String>,
    /// The kept repetitions whose share beside other load was above the
    /// bar (the CV bar: see [`arm_residency`]); they mark the arm not
    /// quotable.
    #[serde(default)]
    pub other_load_over_bar: Vec<RoundShare>,
    /// Why some repetitions could not be judged (the first reason).
    pub unavailable: Option<String>,
}

/// One repetition's share of the tree's on-CPU time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoundShare {
    pub round: usize,
    pub share: f64,
}

/// Judges `placement`'s kept repetitions among `reps` on the machine
/// whose CPUs (with their sibling sets) are `topology`. A repetition
/// whose sibling ran other load for more than `bar` of the tree's on-CPU
/// time is listed: at worst other load on a sibling doubles the tree's
/// cost while it runs, so that share bounds what it added to the wall
/// time, and a share above the CV bar could move the arm by more than its
/// noise is allowed to.
pub fn arm_residency(
    reps: &[CommandRep],
    placement: &CommandPlacement,
    topology: &[CpuEntry],
    bar: f64,
) -> ArmResidency {
    let (mut judged, mut unjudged) = (0, 0);
    let (mut on_cpu_ms, mut on_arm_ms, mut with_tree_ms) = (0.0, 0.0, 0.0);
    let mut other_ms: Result<f64, String> = Ok(0.0);
    let mut outside = Vec::new();
    let mut over_bar = Vec::new();
    let mut unavailable = None;
    let kept = reps
        .iter()
        .filter(|r| r.arm == placement.arm && !r.warmup && !r.failed);
    for rep in kept {
        let threads = match tree_threads(&rep.sample.placement) {
            Ok(threads) => threads,
            Err(reason) => {
                unjudged += 1;
                unavailable.get_or_insert(format!("round {}: {reason}", rep.round));
                continue;
            }
        };
        judged += 1;
        let held = placement_held(&threads, &placement.cpus);
        on_cpu_ms += held.on_cpu_ms;
        on_arm_ms += held.on_cpu_ms * held.share;
        with_tree_ms += co_residency(&threads, topology).with_tree_ms;
        if let Ok(total) = &mut other_ms {
            match other_load_ms(&rep.sample.placement, &threads, topology) {
                Ok(ms) => {
                    *total += ms;
                    let rep_share = share(ms, held.on_cpu_ms);
                    if rep_share > bar {
                        over_bar.push(RoundShare {
                            round: rep.round,
                            share: rep_share,
                        });
                    }
                }
                Err(reason) => other_ms = Err(format!("round {}: {reason}", rep.round)),
            }
        }
        outside.extend(held.outside.into_iter().map(|thread| RoundOutside {
            round: rep.round,
            thread,
        }));
    }
    let held_share = (judged > 0).then(|| share(on_arm_ms, on_cpu_ms));
    let (held, detail) = if !outside.is_empty() {
        (CheckStatus::Failed, outside_detail(placement, &outside))
    } else if let Some(reason) = &unavailable {
        (
            CheckStatus::Unavailable,
            format!(
                "{unjudged} of {} repetitions not judged; {reason}",
                judged + unjudged
            ),
        )
    } else if judged == 0 {
        (
            CheckStatus::Unavailable,
            "no kept repetition to judge".to_string(),
        )
    } else {
        (
            CheckStatus::Passed,
            format!(
                "every thread ran only on CPUs {} in {judged} repetitions",
                placement.cpus
            ),
        )
    };
    ArmResidency {
        arm: placement.arm,
        judged,
        unjudged,
        held_share,
        outside,
        held,
        detail,
        co_residency: (judged > 0).then(|| share(with_tree_ms, on_cpu_ms)),
        other_load: other_ms
            .as_ref()
            .ok()
            .filter(|_| judged > 0)
            .map(|&ms| share(ms, on_cpu_ms)),
        other_load_unavailable: other_ms.err(),
        other_load_over_bar: over_bar,
        unavailable,
    }
}

/// "CPU 3" or "CPUs 0-3".
fn cpus_named(cpus: &CpuSet) -> String {
    let noun = if cpus.len() == 1 { "CPU" } else { "CPUs" };
    format!("{noun} {cpus}")
}

/// The threads that ran outside, the first few by name.
fn outside_detail(placement: &CommandPlacement, outside: &[RoundOutside]) -> String {
    let mut named: Vec<String> = outside
        .iter()
        .take(NAMED_THREADS)
        .map(|o| {
            format!(
                "round {}: thread {} ({}) ran {:.1} ms on {}",
                o.round,
                o.thread.tid,
                o.thread.comm,
                o.thread.ms,
                cpus_named(&o.thread.cpus)
            )
        })
        .collect();
    if outside.len() > NAMED_THREADS {
        named.push(format!("{} more", outside.len() - NAMED_THREADS));
    }
    format!(
        "{} ran outside its {}: {}",
        placement.arm,
        cpus_named(&placement.cpus),
        named.join("; ")
    )
}

/// How one repetition's hardware counters ran less than all their enabled
/// time; `None` when they did not, or counted nothing. On a machine with a
/// PMU per kind of core each PMU's counter runs only while the tree is on
/// its CPUs, so an event is multiplexed when its PMUs' running times
/// together fall short of the time it was enabled.
pub fn multiplexing_offence(hardware: &TreeHardware) -> Option<String> {
    let TreeHardware::Counted { pmus } = hardware else {
        return None;
    };
    let events = [
        (
            "cycles",
            pmus.iter().map(|pmu| pmu.cycles).collect::<Vec<_>>(),
        ),
        (
            "user-space instructions",
            pmus.iter().map(|pmu| pmu.user_instructions).collect(),
        ),
    ];
    let offences: Vec<String> = events
        .into_iter()
        .filter_map(|(name, counts)| {
            let enabled = counts.iter().map(|c| c.times.time_enabled_ns).max()?;
            let running: u64 = counts.iter().map(|c| c.times.time_running_ns).sum();
            (running < enabled)
                .then(|| format!("{name} counted {running} ns of {enabled} ns enabled"))
        })
        .collect();
    (!offences.is_empty()).then(|| offences.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::command::CommandSample;
    use crate::measure::recording::{CommandEnd, Recording, SchedEvent, SchedEventKind};
    use crate::plan::Arm;

    const ONE: CommandArm = CommandArm::Placement(Arm::OnePerCore);
    const SAME: CommandArm = CommandArm::Placement(Arm::SameCpu);

    fn rep(arm: CommandArm, round: usize, wall_ms: u64) -> CommandRep {
        CommandRep {
            arm,
            round,
            warmup: round == 0,
            failed: false,
            sample: CommandSample::of_wall(wall_ms * 1_000_000),
        }
    }

    #[test]
    fn arms_get_their_spread_and_the_paired_ratio_without_warm_ups_or_failures() {
        let mut reps = vec![rep(ONE, 0, 900), rep(SAME, 0, 100)];
        for (round, base) in [(1, 100), (2, 102), (3, 98), (4, 101)] {
            reps.push(rep(ONE, round, base));
            reps.push(rep(SAME, round, base * 2));
        }
        let mut failed = rep(SAME, 5, 10_000);
        failed.failed = true;
        reps.push(failed);
        let stats = command_arm_stats(&reps, &[ONE, SAME], ONE, None);
        let one = stats[0].wall_s.as_ref().unwrap();
        assert_eq!(one.reps, 4);
        assert!((one.median - 0.1005).abs() < 1e-9, "{one:?}");
        assert_eq!(stats[0].vs_baseline, None);
        let ratio = stats[1].vs_baseline.unwrap();
        assert!(
            (ratio - 1.0).abs() < 1e-9,
            "same-cpu is twice the cost: {ratio}"
        );
        let interval = stats[1].vs_baseline_ci95.as_ref().unwrap();
        assert!(
            interval.low <= ratio && ratio <= interval.high,
            "{interval:?}"
        );
        assert_eq!(stats[1].wall_s.as_ref().unwrap().reps, 4);
        assert_eq!(stats[0].wall_s_per_unit, None);
    }

    #[test]
    fn units_give_the_wall_time_per_unit_with_its_spread() {
        let reps: Vec<CommandRep> = [(1, 100), (2, 102), (3, 98)]
            .into_iter()
            .map(|(round, ms)| rep(ONE, round, ms))
            .collect();
        let bytes = Units {
            count: 1000.0,
            name: "byte".into(),
        };
        let stats = command_arm_stats(&reps, &[ONE], ONE, Some(&bytes));
        let wall = stats[0].wall_s.as_ref().unwrap();
        let per_byte = stats[0].wall_s_per_unit.as_ref().unwrap();
        assert!((per_byte.median - 100e-6).abs() < 1e-12, "{per_byte:?}");
        assert!((per_byte.min - 98e-6).abs() < 1e-12, "{per_byte:?}");
        assert!((per_byte.max - 102e-6).abs() < 1e-12, "{per_byte:?}");
        assert_eq!((per_byte.cv, per_byte.reps), (wall.cv, wall.reps));
    }

    const MS: u64 = 1_000_000;

    /// A thread's name and its stretches `(cpu, start_ms, end_ms)`.
    type Stretches<'a> = (u32, &'a str, &'a [(u32, u64, u64)]);

    fn event(time_ms: u64, cpu: u32, tid: u32, kind: SchedEventKind) -> SchedEvent {
        SchedEvent {
            time_ns: time_ms * MS,
            cpu,
            pid: if tid == 0 { 0 } else { 100 },
            tid,
            kind,
        }
    }

    /// A recording of `events` from 0 to the last of them.
    fn recording(mut events: Vec<SchedEvent>) -> Box<Recording> {
        events.sort_by_key(|e| e.time_ns);
        Box::new(Recording {
            start_ns: 0,
            end_ns: events.last().map_or(0, |e| e.time_ns),
            events,
            names: Vec::new(),
            per_cpu: Vec::new(),
            cycles_unavailable: None,
            lost_records: 0,
            command: Some(CommandEnd::Exited { code: 0 }),
            stopped: false,
            outlivers: Vec::new(),
        })
    }

    /// The records of `threads`: a name for each, then a switch in and out
    /// per stretch, from 0 to the last switch; no CPU watched whole.
    fn records(threads: &[Stretches]) -> PlacementRecords {
        let mut events: Vec<SchedEvent> = Vec::new();
        for &(tid, comm, stretches) in threads {
            let comm = SchedEventKind::Comm {
                comm: comm.into(),
                exec: false,
            };
            events.push(event(0, stretches[0].0, tid, comm));
            for &(cpu, start, end) in stretches {
                events.push(event(start, cpu, tid, SchedEventKind::SwitchIn));
                events.push(event(end, cpu, tid, SchedEventKind::SwitchOut));
            }
        }
        PlacementRecords::Recorded {
            tree: recording(events),
            siblings: SiblingRecords::Recorded {
                cpus: CpuSet::from_cpus([]),
                recording: recording(Vec::new()),
            },
        }
    }

    /// `records` with CPU-wide records of `cpus`: each `(cpu, tid, ms)`
    /// switches the task `tid` (0: idle) in there at `ms`, the one before
    /// it out.
    fn with_siblings(
        records: PlacementRecords,
        cpus: &[u32],
        switches: &[(u32, u32, u64)],
    ) -> PlacementRecords {
        let PlacementRecords::Recorded { tree, .. } = records else {
            unreachable!("records() records")
        };
        let mut events = Vec::new();
        let mut running: BTreeMap<u32, u32> = BTreeMap::new();
        for &(cpu, tid, ms) in switches {
            if let Some(before) = running.insert(cpu, tid) {
                events.push(event(ms, cpu, before, SchedEventKind::SwitchOut));
            }
            events.push(event(ms, cpu, tid, SchedEventKind::SwitchIn));
        }
        PlacementRecords::Recorded {
            tree,
            siblings: SiblingRecords::Recorded {
                cpus: CpuSet::from_cpus(cpus.iter().copied()),
                recording: recording(events),
            },
        }
    }

    fn threads(stretches: &[Stretches]) -> Vec<ThreadStats> {
        tree_threads(&records(stretches)).unwrap()
    }

    /// CPUs 0-3, each core's CPUs as `cores` gives them.
    fn topology(cores: &[&[u32]]) -> Vec<CpuEntry> {
        let mut cpus: Vec<CpuEntry> = cores
            .iter()
            .enumerate()
            .flat_map(|(core, siblings)| {
                siblings.iter().map(move |&cpu| {
                    CpuEntry::on_core(cpu, core, 0, CpuSet::from_cpus(siblings.iter().copied()))
                })
            })
            .collect();
        cpus.sort_by_key(|c| c.cpu);
        cpus
    }

    fn placement(arm: CommandArm, cpus: &[u32]) -> CommandPlacement {
        CommandPlacement {
            arm,
            cpus: CpuSet::from_cpus(cpus.iter().copied()),
            membind: None,
        }
    }

    #[test]
    fn a_tree_that_stays_on_its_cpus_holds_all_of_its_time() {
        let tree = threads(&[
            (100, "sh", &[(0, 0, 10), (1, 20, 30)]),
            (101, "worker", &[(1, 0, 15)]),
        ]);
        let held = placement_held(&tree, &CpuSet::from_cpus([0, 1]));
        assert!(held.held(), "{held:?}");
        assert_eq!(held.share, 1.0);
        assert!((held.on_cpu_ms - 35.0).abs() < 1e-9, "{held:?}");
    }

    #[test]
    fn a_thread_that_moved_outside_is_named_with_its_time_there() {
        let tree = threads(&[
            (100, "sh", &[(0, 0, 30)]),
            (102, "mover", &[(0, 0, 10), (1, 10, 20), (2, 25, 30)]),
        ]);
        let held = placement_held(&tree, &CpuSet::from_cpus([0]));
        assert!(!held.held());
        assert!((held.share - 40.0 / 55.0).abs() < 1e-9, "{held:?}");
        assert_eq!(held.outside.len(), 1, "{held:?}");
        let mover = &held.outside[0];
        assert_eq!((mover.tid, mover.comm.as_str()), (102, "mover"));
        assert!((mover.ms - 15.0).abs() < 1e-9, "{mover:?}");
        assert_eq!(mover.cpus, CpuSet::from_cpus([1, 2]));
    }

    #[test]
    fn threads_on_separate_cores_or_at_separate_times_share_no_core() {
        let together = threads(&[(100, "a", &[(0, 0, 10)]), (101, "b", &[(1, 0, 10)])]);
        let one_per_core = co_residency(&together, &topology(&[&[0], &[1]]));
        assert_eq!(one_per_core.with_tree_share(), 0.0, "{one_per_core:?}");
        let apart = threads(&[(100, "a", &[(0, 0, 10)]), (101, "b", &[(1, 10, 20)])]);
        let siblings = co_residency(&apart, &topology(&[&[0, 1]]));
        assert_eq!(siblings.with_tree_share(), 0.0, "{siblings:?}");
        assert!((siblings.on_cpu_ms - 20.0).abs() < 1e-9);
    }

    #[test]
    fn threads_always_on_both_siblings_share_their_core_all_the_time() {
        let packed = threads(&[(100, "a", &[(0, 0, 10)]), (101, "b", &[(1, 0, 10)])]);
        let judged = co_residency(&packed, &topology(&[&[0, 1]]));
        assert!((judged.with_tree_share() - 1.0).abs() < 1e-9, "{judged:?}");
        let half = threads(&[(100, "a", &[(0, 0, 10)]), (101, "b", &[(1, 5, 15)])]);
        let judged = co_residency(&half, &topology(&[&[0, 1]]));
        assert!((judged.with_tree_share() - 0.5).abs() < 1e-9, "{judged:?}");
    }

    #[test]
    fn two_siblings_running_the_tree_at_once_count_once() {
        let smt3 = threads(&[
            (100, "a", &[(0, 0, 10)]),
            (101, "b", &[(1, 0, 10)]),
            (102, "c", &[(2, 0, 10)]),
        ]);
        let judged = co_residency(&smt3, &topology(&[&[0, 1, 2]]));
        assert!((judged.with_tree_share() - 1.0).abs() < 1e-9, "{judged:?}");
    }

    #[test]
    fn lost_or_missing_records_are_never_held() {
        let PlacementRecords::Recorded { mut tree, siblings } =
            records(&[(100, "a", &[(0, 0, 10)])])
        else {
            unreachable!()
        };
        tree.lost_records = 3;
        let reason = tree_threads(&PlacementRecords::Recorded { tree, siblings }).unwrap_err();
        assert!(reason.contains("dropped 3"), "{reason}");
        let empty = tree_threads(&records(&[])).unwrap_err();
        assert!(empty.contains("no time on a CPU"), "{empty}");
    }

    fn recorded(arm: CommandArm, round: usize, placement: PlacementRecords) -> CommandRep {
        let mut rep = rep(arm, round, 100);
        rep.sample.placement = placement;
        rep
    }

    #[test]
    fn an_arm_fails_on_any_thread_outside_and_is_unavailable_without_records() {
        let arm = placement(SAME, &[0]);
        let stayed = records(&[(100, "sh", &[(0, 0, 10)])]);
        let moved = records(&[(100, "sh", &[(0, 0, 10)]), (103, "mover", &[(1, 0, 10)])]);
        let missing = PlacementRecords::Unavailable {
            reason: "perf refused".into(),
        };
        let topology = topology(&[&[0], &[1]]);

        let held = arm_residency(&[recorded(SAME, 1, stayed.clone())], &arm, &topology, 0.01);
        assert_eq!(held.held, CheckStatus::Passed, "{held:?}");
        assert_eq!((held.held_share, held.co_residency), (Some(1.0), Some(0.0)));
        assert_eq!(
            (held.other_load, held.other_load_unavailable),
            (Some(0.0), None)
        );

        let reps = [
            recorded(SAME, 1, stayed.clone()),
            recorded(SAME, 2, missing.clone()),
        ];
        let unknown = arm_residency(&reps, &arm, &topology, 0.01);
        assert_eq!(unknown.held, CheckStatus::Unavailable, "{unknown:?}");
        assert_eq!((unknown.judged, unknown.unjudged), (1, 1));
        assert!(
            unknown.detail.contains("round 2: perf refused"),
            "{unknown:?}"
        );

        let reps = [recorded(SAME, 1, missing), recorded(SAME, 2, moved)];
        let failed = arm_residency(&reps, &arm, &topology, 0.01);
        assert_eq!(failed.held, CheckStatus::Failed, "{failed:?}");
        assert_eq!(failed.held_share, Some(0.5));
        assert_eq!(
            failed.detail,
            "same-cpu ran outside its CPU 0: round 2: thread 103 (mover) ran 10.0 ms on CPU 1"
        );

        let warm_up_only = arm_residency(&[recorded(SAME, 0, stayed)], &arm, &topology, 0.01);
        assert_eq!(warm_up_only.held, CheckStatus::Unavailable);
    }

    #[test]
    fn other_load_is_the_time_a_watched_sibling_ran_a_task_outside_the_tree() {
        // The tree: thread 100 on CPU 0 for 0-20 ms, 101 on CPU 1 for 10-20.
        let tree = records(&[(100, "a", &[(0, 0, 20)]), (101, "b", &[(1, 10, 20)])]);
        let threads = tree_threads(&tree).unwrap();
        let topology = topology(&[&[0, 1]]);
        // CPU 1: idle, a stranger (tid 7) from 5 to 10 ms, then the tree.
        let switches = [(1, 0, 0), (1, 7, 5), (1, 101, 10), (1, 0, 20)];
        let watched = with_siblings(tree.clone(), &[0, 1], &switches);
        let ms = other_load_ms(&watched, &threads, &topology).unwrap();
        assert!((ms - 5.0).abs() < 1e-9, "{ms}");
        // 5 of the tree's 30 ms on a CPU: over a 1 % bar, under a 20 % one.
        let arm = placement(ONE, &[0, 1]);
        let rep = [recorded(ONE, 1, watched.clone())];
        let busy = arm_residency(&rep, &arm, &topology, 0.01);
        let [over] = &busy.other_load_over_bar[..] else {
            panic!("{busy:?}")
        };
        assert_eq!(over.round, 1);
        assert!((over.share - 5.0 / 30.0).abs() < 1e-9, "{over:?}");
        let tolerant = arm_residency(&rep, &arm, &topology, 0.2);
        assert!(tolerant.other_load_over_bar.is_empty(), "{tolerant:?}");
        // A task running from before the first record: its switch-out says so.
        let hog = [(1, 7, 0), (1, 0, 8)];
        let PlacementRecords::Recorded { tree: t, siblings } = with_siblings(tree, &[1], &hog)
        else {
            unreachable!()
        };
        let SiblingRecords::Recorded {
            cpus,
            mut recording,
        } = siblings
        else {
            unreachable!()
        };
        recording.events.retain(|e| e.time_ns > 0);
        let hogged = PlacementRecords::Recorded {
            tree: t,
            siblings: SiblingRecords::Recorded { cpus, recording },
        };
        let ms = other_load_ms(&hogged, &threads, &topology).unwrap();
        assert!((ms - 8.0).abs() < 1e-9, "{ms}");
    }

    #[test]
    fn other_load_is_unavailable_without_the_siblings_records() {
        let PlacementRecords::Recorded { tree, .. } = records(&[(100, "a", &[(0, 0, 10)])]) else {
            unreachable!()
        };
        let refused = PlacementRecords::Recorded {
            tree,
            siblings: SiblingRecords::Unavailable {
                reason: "perf refused CPU-wide records".into(),
            },
        };
        let threads = tree_threads(&refused).unwrap();
        let reason = other_load_ms(&refused, &threads, &topology(&[&[0, 1]])).unwrap_err();
        assert_eq!(reason, "perf refused CPU-wide records");
        let arm = placement(ONE, &[0]);
        let judged = arm_residency(
            &[recorded(ONE, 1, refused)],
            &arm,
            &topology(&[&[0, 1]]),
            0.01,
        );
        assert_eq!(judged.held, CheckStatus::Passed);
        assert_eq!(judged.other_load, None);
        assert_eq!(
            judged.other_load_unavailable.as_deref(),
            Some("round 1: perf refused CPU-wide records")
        );
    }
}
