//! `placement-study memory`: the cache ladder (a dependent-load chase over
//! buffers from 4 KiB up) and the NUMA latency and bandwidth matrix,
//! planned, measured and judged against the published cache sizes and
//! node distances, as one [`MemoryResult`] document.

use super::{finished_head, head};
use crate::judge::memory::{combined_verdict, judge_ladder, judge_numa};
use crate::judge::warnings::Warning;
use crate::measure::memory::{measure_ladder, measure_numa};
use crate::measure::stop;
use crate::plan::memory::{ladder_plan, numa_plan};
use crate::probe::Topology;
use crate::saved::{DocumentKind, MemoryOptions, MemoryResult};
use anyhow::Result;

/// Plans, measures and judges the ladder, then the matrix (its buffers as
/// large as the ladder's largest size).
pub fn memory_study(topology: &Topology, options: &MemoryOptions) -> Result<MemoryResult> {
    let head = head(DocumentKind::Memory, topology);
    let ladder_plan = ladder_plan(topology, options.cpu, options.steps_per_octave)?;
    let numa_plan = numa_plan(topology, options.threads, ladder_plan.top_bytes())?;
    let ladder = measure_ladder(&ladder_plan, &options.ladder)?;
    let matrix = measure_numa(&numa_plan, ladder_plan.line_bytes, &options.numa)?;
    let ladder_judgement = judge_ladder(&ladder, &ladder_plan.published);
    let numa_judgement = judge_numa(&matrix, &numa_plan.memory_only);
    let verdict = combined_verdict(ladder_judgement.verdict, numa_judgement.verdict);
    let mut warnings = Warning::about_machine(topology);
    let head = finished_head(head, stop::stop_signal(), &mut warnings);
    let sentence = format!(
        "caches {}: {}; NUMA distances {}: {}",
        ladder_judgement.verdict.as_str(),
        ladder_judgement.reason,
        numa_judgement.verdict.as_str(),
        numa_judgement.reason
    );
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
        warnings,
    })
}
