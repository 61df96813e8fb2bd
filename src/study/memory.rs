//! The memory study without its document (issue 41): plan, measure and
//! judge the cache ladder and the NUMA matrix, and return every fact as
//! one serializable [`MemoryResult`] for the document kind to carry.

use crate::judge::memory::{
    LadderJudgement, NumaJudgement, combined_verdict, judge_ladder, judge_numa,
};
use crate::judge::pairs::MapVerdict;
use crate::measure::memory::{
    Ladder, LadderOptions, NumaMatrix, NumaOptions, measure_ladder, measure_numa,
};
use crate::plan::memory::{LadderPlan, NumaPlan, ladder_plan, numa_plan};
use crate::probe::Topology;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// What the memory study is asked.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryOptions {
    /// The ladder's CPU (`None`: the first allowed).
    pub cpu: Option<u32>,
    pub steps_per_octave: u32,
    /// Streaming threads per cell (`None`: one per core of the CPU node).
    pub threads: Option<usize>,
    pub ladder: LadderOptions,
    pub numa: NumaOptions,
}

impl Default for MemoryOptions {
    fn default() -> MemoryOptions {
        MemoryOptions {
            cpu: None,
            steps_per_octave: crate::plan::memory::STEPS_PER_OCTAVE,
            threads: None,
            ladder: LadderOptions::default(),
            numa: NumaOptions::default(),
        }
    }
}

/// Everything the study planned, measured and decided.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryResult {
    pub ladder_plan: LadderPlan,
    pub numa_plan: NumaPlan,
    pub ladder: Ladder,
    pub matrix: NumaMatrix,
    pub ladder_judgement: LadderJudgement,
    pub numa_judgement: NumaJudgement,
    /// Differ if either differs, else inconclusive if either is, else
    /// agree (exit 0, 3 or 5 through `Outcome::Map`).
    pub verdict: MapVerdict,
}

/// Plans, measures and judges the ladder, then the matrix (its buffers as
/// large as the ladder's largest size).
pub fn memory_study(topology: &Topology, options: &MemoryOptions) -> Result<MemoryResult> {
    let ladder_plan = ladder_plan(topology, options.cpu, options.steps_per_octave)?;
    let numa_plan = numa_plan(topology, options.threads, ladder_plan.top_bytes())?;
    let ladder = measure_ladder(&ladder_plan, &options.ladder)?;
    let matrix = measure_numa(&numa_plan, ladder_plan.line_bytes, &options.numa)?;
    let ladder_judgement = judge_ladder(&ladder, &ladder_plan.published);
    let numa_judgement = judge_numa(&matrix, &numa_plan.memory_only);
    let verdict = combined_verdict(ladder_judgement.verdict, numa_judgement.verdict);
    Ok(MemoryResult {
        ladder_plan,
        numa_plan,
        ladder,
        matrix,
        ladder_judgement,
        numa_judgement,
        verdict,
    })
}
