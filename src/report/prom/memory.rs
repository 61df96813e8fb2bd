//! `memory --prom`: the verdicts on the caches and the NUMA distances,
//! each plateau's latency, each published level's status, each published
//! shared level's status, and each NUMA cell's latency ratio and
//! bandwidth.

use super::Metrics;
use super::{common, states};
use crate::judge::memory::LevelStatus;
use crate::judge::memory_sharing::SharingStatus;
use crate::judge::pairs::MapVerdict;
use crate::saved::MemoryResult;

impl Metrics for MemoryResult {
    fn metrics(&self) -> String {
        let mut m = common(self.head.kind, &self.head);
        for (part, verdict) in [
            ("all", self.verdict),
            ("caches", self.caches_verdict()),
            ("numa", self.numa_judgement.verdict),
        ] {
            m.state_set(
                "placement_study_memory_verdict",
                "1 for the verdict, 0 for the others, for the caches (the ladder's steps against \
                 the published levels, and the published sharing against the pairs), the NUMA \
                 distances (latency ratios against distance / 10) and both: agree, differ, \
                 inconclusive.",
                &[("part", part)],
                "verdict",
                states::<MapVerdict>(),
                verdict.as_str(),
            );
        }
        for plateau in &self.ladder_judgement.plateaus {
            let first = plateau.first_bytes.to_string();
            m.gauge(
                "placement_study_memory_plateau_seconds",
                "The latency of one dependent load on each plateau of the ladder (sizes with one \
                 latency), by its first size in bytes.",
                &[("first_bytes", first.as_str())],
                plateau.ns * 1e-9,
            );
        }
        for level in &self.ladder_judgement.levels {
            let name = format!("L{}", level.level);
            m.state_set(
                "placement_study_memory_level_status",
                "1 for each published cache level's status: agreed (a step near its size), fake \
                 (no step near it), undecided (beyond what the ladder can show).",
                &[("level", name.as_str())],
                "status",
                states::<LevelStatus>(),
                level.status.into(),
            );
        }
        for level in self.sharing.iter().flat_map(|s| &s.levels) {
            let name = format!("L{}", level.plan.level);
            m.state_set(
                "placement_study_memory_sharing_status",
                "1 for each published shared cache level's status: agreed (two CPUs of it pass a \
                 line faster, by a gap, than two across its edge), differs (no faster), undecided \
                 (no CPU outside it, or a pair time-sliced, stalled or unpinned).",
                &[("level", name.as_str())],
                "status",
                states::<SharingStatus>(),
                level.status.into(),
            );
        }
        for row in &self.numa_judgement.rows {
            for cell in &row.cells {
                let (cpu, memory) = (cell.cpu_node.to_string(), cell.memory_node.to_string());
                let by_cell = [("cpu_node", cpu.as_str()), ("memory_node", memory.as_str())];
                m.gauge(
                    "placement_study_memory_numa_latency_ratio",
                    "Each cell's load latency over its CPU node's local latency (absent where its \
                     buffer did not land on its node).",
                    &by_cell,
                    cell.ratio,
                );
                m.gauge(
                    "placement_study_memory_numa_bandwidth_bytes_per_second",
                    "Each cell's read bandwidth, its threads streaming the node's buffer.",
                    &by_cell,
                    cell.bandwidth.as_ref().map(|b| b.bytes_per_second),
                );
            }
        }
        m.render()
    }
}
