//! The sentence a `memory` document keeps, made from its three judgements
//! (the view shows it first; scripts read it from the JSON).

use crate::judge::memory::{LadderJudgement, NumaJudgement};
use crate::judge::memory_sharing::{SharingJudgement, caches_verdict};
use crate::judge::pairs::MapVerdict;

/// "caches VERDICT: the ladder's reason[; the sharing's]; NUMA distances
/// VERDICT: the matrix's reason". The sharing is said where it agreed or
/// differed; where nothing could be compared it is the view's note.
pub fn sentence(
    ladder: &LadderJudgement,
    sharing: &SharingJudgement,
    numa: &NumaJudgement,
) -> String {
    let shared = match sharing.verdict {
        MapVerdict::Inconclusive => String::new(),
        MapVerdict::Agree | MapVerdict::Differ => format!("; {}", sharing.reason),
    };
    format!(
        "caches {}: {}{shared}; NUMA distances {}: {}",
        caches_verdict(ladder.verdict, Some(sharing)).as_str(),
        ladder.reason,
        numa.verdict.as_str(),
        numa.reason
    )
}
