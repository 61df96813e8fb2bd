//! `placement-study memory`: the cache ladder (a dependent-load chase over
//! buffers from 4 KiB up), the sharing of each published shared cache (a
//! line passed between two CPUs of it, and two across its edge, by
//! `latency`'s probe) and the NUMA latency and bandwidth matrix, planned,
//! measured and judged against the published cache sizes, cache sharing
//! and node distances, as one [`MemoryResult`] document.

use super::latency::{DEFAULT_SAMPLE_MS, DEFAULT_SAMPLES};
use super::{finished_head, head};
use crate::judge::latency::{PairLatency, settled};
use crate::judge::memory::{combined_verdict, judge_ladder, judge_numa};
use crate::judge::memory_sharing::{caches_verdict, judge_sharing};
use crate::judge::sentences::memory::sentence;
use crate::judge::warnings::Warning;
use crate::measure::latency::{PingPongOptions, ping_pong};
use crate::measure::memory::{measure_ladder, measure_numa};
use crate::measure::stop;
use crate::plan::memory::{SharingPlan, ladder_plan, numa_plan, sharing_plan};
use crate::probe::Topology;
use crate::saved::{DocumentKind, MemoryOptions, MemoryResult};
use anyhow::Result;
use std::time::Duration;

/// Plans, measures and judges the ladder, then the sharing, then the
/// matrix (its buffers as large as the ladder's largest size).
pub fn memory_study(topology: &Topology, options: &MemoryOptions) -> Result<MemoryResult> {
    let head = head(DocumentKind::Memory, topology);
    let ladder_plan = ladder_plan(topology, options.cpu, options.steps_per_octave)?;
    let sharing_plan = sharing_plan(topology, &ladder_plan);
    let numa_plan = numa_plan(topology, options.threads, ladder_plan.top_bytes())?;
    let ladder = measure_ladder(&ladder_plan, &options.ladder)?;
    let pairs = measure_sharing(&sharing_plan)?;
    let matrix = measure_numa(&numa_plan, ladder_plan.line_bytes, &options.numa)?;
    let ladder_judgement = judge_ladder(&ladder, &ladder_plan.published);
    let sharing = judge_sharing(ladder_plan.cpu, &sharing_plan, &pairs);
    let numa_judgement = judge_numa(&matrix, &numa_plan.memory_only);
    let verdict = combined_verdict(
        caches_verdict(ladder_judgement.verdict, Some(&sharing)),
        numa_judgement.verdict,
    );
    let mut warnings = Warning::about_machine(topology);
    let head = finished_head(head, stop::stop_signal(), &mut warnings);
    let sentence = sentence(&ladder_judgement, &sharing, &numa_judgement);
    Ok(MemoryResult {
        head,
        verdict,
        sentence,
        options: *options,
        ladder_plan,
        numa_plan,
        ladder,
        matrix,
        ladder_judgement,
        numa_judgement,
        sharing: Some(sharing),
        warnings,
    })
}

/// Each level's two pairs (where it has both), each distinct pair once,
/// ping-ponged as `latency` pings its pairs: its samples, sample bound and
/// early stop. A stop request ends it; the pairs measured are kept.
fn measure_sharing(plans: &[SharingPlan]) -> Result<Vec<PairLatency>> {
    let options = PingPongOptions {
        samples: DEFAULT_SAMPLES,
        sample_bound: Duration::from_millis(DEFAULT_SAMPLE_MS),
    };
    let mut measured: Vec<PairLatency> = Vec::new();
    let pairs = plans
        .iter()
        .filter_map(|plan| plan.inside.zip(plan.outside))
        .flat_map(|(inside, outside)| [inside, outside]);
    for cpus in pairs {
        if stop::stop_requested() {
            break;
        }
        if measured.iter().any(|m| m.cpus == cpus) {
            continue;
        }
        let run = ping_pong(cpus[0], cpus[1], options, &settled)?;
        if !run.samples.is_empty() {
            measured.push(PairLatency::of(cpus, &run.samples, run.pinned));
        }
    }
    Ok(measured)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::affinity::allowed_cpus;
    use crate::cpuset::CpuSet;

    /// Each distinct pair once, and only for a level with both pairs.
    #[test]
    fn each_pair_of_a_comparable_level_is_measured_once() {
        let allowed = allowed_cpus().unwrap();
        let cpus = allowed.cpus();
        let (a, b) = (cpus[0], *cpus.last().unwrap());
        let plan = |level: u32, outside: Option<[u32; 2]>| SharingPlan {
            level,
            kind: "Unified".into(),
            cpus: CpuSet::from_cpus([a, b]),
            inside: Some([a, b]),
            outside,
        };
        // Two levels over the same pairs (an L1d and an L2 of one core),
        // and one with nothing outside it.
        let plans = [plan(1, Some([b, a])), plan(2, Some([b, a])), plan(3, None)];
        let measured = measure_sharing(&plans).unwrap();
        let pairs: Vec<[u32; 2]> = measured.iter().map(|m| m.cpus).collect();
        assert_eq!(pairs, [[a, b], [b, a]]);
        assert!(measured.iter().all(|m| m.samples > 0));
        assert!(measure_sharing(&plans[2..]).unwrap().is_empty());
    }
}
