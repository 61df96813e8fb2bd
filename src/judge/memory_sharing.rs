//! The memory study's sharing check: a cache the machine publishes as
//! shared by a set of CPUs should let two CPUs of the set see each other's
//! lines faster than two across its edge.
//!
//! Each pair is `latency`'s pair ([`PairLatency`]: a low percentile of its
//! one-way times), and the two are compared at `latency`'s relative gap
//! ([`apart`]): the pair inside faster and [`apart`] from the one outside
//! agrees; anything else differs (the published set is not where the
//! lines meet). A level with no allowed CPU outside its set (a VM whose
//! last-level cache spans every vCPU), or one of its pairs time-sliced,
//! without progress, unpinned or not measured, is undecided: a note,
//! never a verdict of its own.
//!
//! The caches' verdict folds it in ([`caches_verdict`]): a sharing that
//! differs makes the caches differ; an undecided one changes nothing.

use crate::judge::gaps::apart;
use crate::judge::latency::PairLatency;
use crate::judge::pairs::MapVerdict;
use crate::plan::memory::SharingPlan;
use crate::units::nanos;
use serde::{Deserialize, Serialize};

/// What the pairs say of one published sharing.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum SharingStatus {
    /// The pair inside is faster, by a gap, than the pair outside.
    Agreed,
    /// It is not: the CPUs of the set see each other's lines no faster
    /// than a CPU outside it.
    Differs,
    /// Nothing to compare (no CPU outside the set, no other inside), or a
    /// pair time-sliced, without progress, unpinned or not measured.
    Undecided,
}

/// One published shared cache, its pairs and what they say.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SharedLevel {
    /// The level, the CPUs sharing it and the pairs planned.
    #[serde(flatten)]
    pub plan: SharingPlan,
    /// The pair inside, as measured (`None`: not measured).
    pub inside_latency: Option<PairLatency>,
    /// The pair outside, as measured (`None`: not measured).
    pub outside_latency: Option<PairLatency>,
    pub status: SharingStatus,
    /// The status in words, naming the CPUs and their latencies.
    pub reason: String,
}

/// Every published shared cache of the ladder's CPU, judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SharingJudgement {
    /// Ascending by level.
    pub levels: Vec<SharedLevel>,
    /// Differ if a level differs, else agree if one agreed, else
    /// inconclusive (nothing could be compared).
    pub verdict: MapVerdict,
    /// Every level's reason, or why there is no level.
    pub reason: String,
}

impl SharingJudgement {
    /// Some level's pair was measured.
    pub fn measured(&self) -> bool {
        self.levels
            .iter()
            .any(|l| l.inside_latency.is_some() || l.outside_latency.is_some())
    }
}

/// Judges each of `plans` (for the ladder's CPU `cpu`) from the pairs
/// `measured`.
pub fn judge_sharing(
    cpu: u32,
    plans: &[SharingPlan],
    measured: &[PairLatency],
) -> SharingJudgement {
    let find = |pair: Option<[u32; 2]>| {
        pair.and_then(|cpus| measured.iter().find(|m| m.cpus == cpus))
            .cloned()
    };
    let levels: Vec<SharedLevel> = plans
        .iter()
        .map(|plan| {
            let (inside, outside) = (find(plan.inside), find(plan.outside));
            let (status, reason) = judge_level(plan, inside.as_ref(), outside.as_ref());
            SharedLevel {
                plan: plan.clone(),
                inside_latency: inside,
                outside_latency: outside,
                status,
                reason,
            }
        })
        .collect();
    let any = |status: SharingStatus| levels.iter().any(|l| l.status == status);
    let verdict = if any(SharingStatus::Differs) {
        MapVerdict::Differ
    } else if any(SharingStatus::Agreed) {
        MapVerdict::Agree
    } else {
        MapVerdict::Inconclusive
    };
    let reason = if levels.is_empty() {
        format!("no published cache of CPU {cpu} is shared with another CPU")
    } else {
        let reasons: Vec<&str> = levels.iter().map(|l| l.reason.as_str()).collect();
        reasons.join("; ")
    };
    SharingJudgement {
        levels,
        verdict,
        reason,
    }
}

/// "CPUs 0 and 8".
fn pair_words([a, b]: [u32; 2]) -> String {
    format!("CPUs {a} and {b}")
}

/// Why `pair` (planned as `cpus`) cannot be compared, if it cannot.
fn unusable(cpus: [u32; 2], pair: Option<&PairLatency>) -> Option<String> {
    let words = pair_words(cpus);
    let Some(pair) = pair else {
        return Some(format!("{words} were not measured"));
    };
    if !pair.pinned {
        Some(format!("a thread of {words} left its CPU"))
    } else if pair.time_sliced() {
        Some(format!(
            "{words} took turns by time slice (two vCPUs on one host CPU?): no transfer to time"
        ))
    } else if pair.no_progress() || pair.one_way_ns.is_none() {
        Some(format!("{words} made no progress within a sample's bound"))
    } else {
        None
    }
}

/// One level's status and its words.
fn judge_level(
    plan: &SharingPlan,
    inside: Option<&PairLatency>,
    outside: Option<&PairLatency>,
) -> (SharingStatus, String) {
    let level = format!("L{} shared by CPUs {}", plan.level, plan.cpus);
    let undecided = |why: String| (SharingStatus::Undecided, format!("{level}: {why}"));
    let Some(out_cpus) = plan.outside else {
        return undecided("no allowed CPU outside it to compare with, so not measured".into());
    };
    let Some(in_cpus) = plan.inside else {
        return undecided("no other CPU of it is allowed, so not measured".into());
    };
    for (cpus, pair) in [(in_cpus, inside), (out_cpus, outside)] {
        if let Some(why) = unusable(cpus, pair) {
            return undecided(why);
        }
    }
    let (Some(inner), Some(outer)) = (
        inside.and_then(|p| p.one_way_ns),
        outside.and_then(|p| p.one_way_ns),
    ) else {
        return undecided("a pair has no latency".into());
    };
    if inner < outer && apart(inner, outer) {
        (
            SharingStatus::Agreed,
            format!(
                "{level}: {} see each other's lines in {}, {} in {}",
                pair_words(in_cpus),
                nanos(inner),
                pair_words(out_cpus),
                nanos(outer)
            ),
        )
    } else {
        (
            SharingStatus::Differs,
            format!(
                "L{} published as shared by CPUs {}, but {} see each other's lines no faster \
                 than {} ({} against {})",
                plan.level,
                plan.cpus,
                pair_words(in_cpus),
                pair_words(out_cpus),
                nanos(inner),
                nanos(outer)
            ),
        )
    }
}

/// The caches' verdict: the ladder's, made differ by a sharing that
/// differs (`None`: a file saved before the sharing check).
pub fn caches_verdict(ladder: MapVerdict, sharing: Option<&SharingJudgement>) -> MapVerdict {
    match sharing {
        Some(sharing) if sharing.verdict == MapVerdict::Differ => MapVerdict::Differ,
        _ => ladder,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuset::CpuSet;
    use crate::judge::latency::recorded::{pair, sliced};

    fn plan(level: u32, cpus: &[u32], inside: Option<u32>, outside: Option<u32>) -> SharingPlan {
        SharingPlan {
            level,
            kind: "Unified".into(),
            cpus: CpuSet::from_cpus(cpus.iter().copied()),
            inside: inside.map(|b| [0, b]),
            outside: outside.map(|c| [0, c]),
        }
    }

    /// A two-socket box: its L3 is package 0's (CPUs 0-31), and a line
    /// crosses within it in 40 ns, to the other package in 120 ns.
    #[test]
    fn a_package_l3_is_borne_out_by_a_faster_pair_inside() {
        let plans = [plan(3, &(0..32).collect::<Vec<_>>(), Some(1), Some(32))];
        let measured = [pair(0, 1, Some(40.0)), pair(0, 32, Some(120.0))];
        let judged = judge_sharing(0, &plans, &measured);
        assert_eq!(judged.levels[0].status, SharingStatus::Agreed);
        assert_eq!(judged.verdict, MapVerdict::Agree);
        assert_eq!(
            judged.reason,
            "L3 shared by CPUs 0-31: CPUs 0 and 1 see each other's lines in 40.0 ns, \
             CPUs 0 and 32 in 120 ns"
        );
        assert_eq!(
            caches_verdict(MapVerdict::Agree, Some(&judged)),
            MapVerdict::Agree
        );
    }

    /// A VM publishing an L3 per virtual socket (vCPUs 0-7, 8-15) whose
    /// host spreads the vCPUs over its sockets: inside ≈ outside.
    #[test]
    fn a_virtual_l3_the_host_spreads_differs() {
        let plans = [plan(3, &(0..8).collect::<Vec<_>>(), Some(1), Some(8))];
        let measured = [pair(0, 1, Some(118.0)), pair(0, 8, Some(121.0))];
        let judged = judge_sharing(0, &plans, &measured);
        assert_eq!(judged.levels[0].status, SharingStatus::Differs);
        assert_eq!(judged.verdict, MapVerdict::Differ);
        assert_eq!(
            judged.reason,
            "L3 published as shared by CPUs 0-7, but CPUs 0 and 1 see each other's lines no \
             faster than CPUs 0 and 8 (118 ns against 121 ns)"
        );
        // The ladder agreed: the caches differ all the same.
        assert_eq!(
            caches_verdict(MapVerdict::Agree, Some(&judged)),
            MapVerdict::Differ
        );
        // Faster inside, but within a gap: still no faster.
        let close = [pair(0, 1, Some(90.0)), pair(0, 8, Some(121.0))];
        assert_eq!(
            judge_sharing(0, &plans, &close).levels[0].status,
            SharingStatus::Differs
        );
    }

    /// This VM: L3 shared by CPUs 0-1, which are all of its CPUs.
    #[test]
    fn no_cpu_outside_is_a_note_not_a_verdict() {
        let plans = [plan(3, &[0, 1], Some(1), None)];
        let judged = judge_sharing(0, &plans, &[]);
        assert_eq!(judged.levels[0].status, SharingStatus::Undecided);
        assert_eq!(judged.verdict, MapVerdict::Inconclusive);
        assert!(!judged.measured());
        assert_eq!(
            judged.reason,
            "L3 shared by CPUs 0-1: no allowed CPU outside it to compare with, so not measured"
        );
        for ladder in [MapVerdict::Agree, MapVerdict::Differ] {
            assert_eq!(caches_verdict(ladder, Some(&judged)), ladder);
        }
        assert_eq!(
            judge_sharing(0, &[], &[]).reason,
            "no published cache of CPU 0 is shared with another CPU"
        );
    }

    #[test]
    fn a_time_sliced_unpinned_or_stalled_pair_leaves_its_level_undecided() {
        let plans = [plan(3, &[0, 1, 2, 3], Some(1), Some(4))];
        let inside = pair(0, 1, Some(40.0));
        let mut unpinned = pair(0, 4, Some(120.0));
        unpinned.pinned = false;
        for (outside, why) in [
            (
                sliced(pair(0, 4, Some(2_000_000.0))),
                "took turns by time slice",
            ),
            (pair(0, 4, None), "made no progress"),
            (unpinned, "left its CPU"),
        ] {
            let judged = judge_sharing(0, &plans, &[inside.clone(), outside]);
            assert_eq!(judged.levels[0].status, SharingStatus::Undecided);
            assert!(judged.reason.contains(why), "{}", judged.reason);
            assert!(judged.measured());
        }
        let judged = judge_sharing(0, &plans, &[inside]);
        assert!(
            judged.reason.ends_with("CPUs 0 and 4 were not measured"),
            "{}",
            judged.reason
        );
    }

    /// One level differing outweighs another agreeing; saved files
    /// without the check keep the ladder's verdict.
    #[test]
    fn a_differing_level_makes_the_sharing_differ() {
        let plans = [
            plan(2, &[0, 64], Some(64), Some(1)),
            plan(3, &[0, 1, 64, 65], Some(1), Some(2)),
        ];
        let measured = [
            pair(0, 64, Some(15.0)),
            pair(0, 1, Some(45.0)),
            pair(0, 2, Some(46.0)),
        ];
        let judged = judge_sharing(0, &plans, &measured);
        let statuses: Vec<SharingStatus> = judged.levels.iter().map(|l| l.status).collect();
        assert_eq!(statuses, [SharingStatus::Agreed, SharingStatus::Differs]);
        assert_eq!(judged.verdict, MapVerdict::Differ);
        assert_eq!(
            caches_verdict(MapVerdict::Inconclusive, None),
            MapVerdict::Inconclusive
        );
    }
}
