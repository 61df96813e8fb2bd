//! The memory study's judgement: the ladder's plateaus and steps against
//! the published cache sizes, and the NUMA matrix's latency ratios against
//! the published distances.
//!
//! Every latency is a low percentile ([`LATENCY_PERCENTILE`]) of its
//! samples, as `latency`'s pairs are: interference only adds time. Its
//! spread is the 10th to 90th percentile.
//!
//! **Plateaus.** Walking the ladder by size, a run of sizes whose
//! latencies lie within [`PLATEAU_SPREAD`] of each other is a plateau
//! candidate (a lone size between two runs is a transition). Neighbouring
//! candidates whose latencies are not [`apart`] (the relative gap
//! `latency` splits its domains at) are one plateau: a noisy size cannot
//! make a level. Between two plateaus is a step; its size range runs
//! from the last size of the plateau below to the first of the one above.
//! A ladder that ends still rising ends in an open step.
//!
//! **Levels.** A published cache level agrees with a step whose range,
//! widened by [`NEAR`] on both sides, holds its size, and whose rise
//! begins no more than [`RISE_BEFORE`] below it (its last flat size at
//! least half the cache: conflict misses start a physically indexed
//! cache's rise early, but not an octave early); it is fake when no step
//! does. A step that no published level explains is hidden. (Under TCG a
//! guest's chase runs on the host's caches: the host's 2 MiB L2 shows as a
//! step from 1.3 MiB, which is no step of a published 4 MiB L2.)
//!
//! **Translation.** A chase that changes page at every load also pays
//! for the TLB's reach and the page walk, which step at spans of their
//! own (on a VM whose host backs its memory with base pages, huge pages
//! in the guest do not help). The translation ladder chases one line per
//! base page over the same spans: its lines' footprint in the caches is a
//! 64th of the span, so its steps are translation's, except where that
//! footprint reaches a published cache (those are left out). A cache
//! ladder step whose range meets a translation step is a translation
//! step: never a hidden level, and a level whose only step it is cannot
//! be told from the TLB's (its status `tlb-step`, and the verdict
//! inconclusive, unless something else differs).
//!
//! **Distances.** Each cell's latency over its row's local latency (the
//! CPU node's own memory) against the published distance / 10: they agree
//! within [`DISTANCE_TOLERANCE`] (relative), or differ, naming the
//! distance that is fiction. A memory-only node (CXL, HBM) has no local
//! cell: its column is judged against each CPU node's local latency, and
//! shown as a row of its own. A buffer whose pages were not on its node is
//! no measurement: the matrix is then inconclusive.

use crate::judge::gaps::{Gap, apart, percentile};
use crate::judge::pairs::MapVerdict;
use crate::measure::memory::buffer::BASE_PAGE_BYTES;
use crate::measure::memory::{Column, Ladder, LadderPoint, NumaMatrix};
use crate::plan::memory::PublishedCache;
use crate::units::bytes;
use serde::{Deserialize, Serialize};

pub use crate::judge::latency::LATENCY_PERCENTILE;

/// Latencies within this ratio of each other can be one plateau.
pub const PLATEAU_SPREAD: f64 = 1.25;
/// A published size agrees with a step whose range, widened by this
/// factor either side, holds it (a cache's step starts just below its
/// size, and a random chase reaches the level above only some sizes on).
pub const NEAR: f64 = std::f64::consts::SQRT_2;
/// A step's rise begins at most this factor below the cache that makes it
/// (or two sizes of the ladder below, where its sizes are further apart).
pub const RISE_BEFORE: f64 = 2.0;
/// A cell's latency ratio agrees with distance / 10 within this share.
pub const DISTANCE_TOLERANCE: f64 = 0.25;

/// A latency from samples: the low percentile, its spread and n.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Latency {
    pub ns: f64,
    /// 10th and 90th percentiles.
    pub p10_ns: f64,
    pub p90_ns: f64,
    pub n: usize,
}

impl Latency {
    pub fn of(samples: &[f64]) -> Option<Latency> {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|s| s.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        Some(Latency {
            ns: percentile(&sorted, LATENCY_PERCENTILE)?,
            p10_ns: percentile(&sorted, 0.10)?,
            p90_ns: percentile(&sorted, 0.90)?,
            n: sorted.len(),
        })
    }
}

/// One size of the ladder, judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SizeLatency {
    pub size_bytes: u64,
    pub latency: Latency,
}

/// A plateau: sizes with one latency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Plateau {
    pub first_bytes: u64,
    pub last_bytes: u64,
    /// The median of its sizes' latencies.
    pub ns: f64,
    pub low_ns: f64,
    pub high_ns: f64,
    pub sizes: usize,
}

/// A step between two plateaus (or after the last, when the ladder ends
/// still rising).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Step {
    /// The last size of the plateau below.
    pub below_bytes: u64,
    /// The first size of the plateau above (the ladder's last size for
    /// an open step).
    pub above_bytes: u64,
    pub gap: Gap,
    /// The ladder ends before a plateau above it.
    pub open: bool,
    /// The published level it agrees with, if any (`None`: hidden, unless
    /// it is a translation step).
    pub level: Option<u32>,
    /// The translation ladder steps within its range too: the TLB's reach
    /// or the page walk's, not a cache (false in files saved before the
    /// translation ladder).
    #[serde(default)]
    pub translation: bool,
}

/// A published level against the steps.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum LevelStatus {
    /// A step lies near its size.
    Agreed,
    /// No step lies near its size.
    Fake,
    /// Its size is beyond what the ladder can show a step for.
    Undecided,
    /// The only step near its size is a translation step: the ladder
    /// cannot tell the cache's step from the TLB's.
    TlbStep,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LevelJudgement {
    pub level: u32,
    pub size_bytes: u64,
    pub status: LevelStatus,
    /// The index of its step in `steps`.
    pub step: Option<usize>,
}

/// The ladder judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LadderJudgement {
    pub sizes: Vec<SizeLatency>,
    pub plateaus: Vec<Plateau>,
    pub steps: Vec<Step>,
    /// The translation ladder's steps (its footprint's cache steps left
    /// out); empty in files saved before it.
    #[serde(default)]
    pub translation_steps: Vec<Step>,
    pub levels: Vec<LevelJudgement>,
    pub verdict: MapVerdict,
    /// The verdict in words: which level is fake, which step hidden, or
    /// why nothing could be decided.
    pub reason: String,
}

/// Judges `ladder` against the `published` caches.
pub fn judge_ladder(ladder: &Ladder, published: &[PublishedCache]) -> LadderJudgement {
    let sizes = sizes_of(&ladder.points);
    let plateaus = plateaus_of(&sizes);
    let mut steps = steps_between(&plateaus, &sizes);
    let translation_steps = translation_steps(ladder, published);
    for step in &mut steps {
        step.translation = translation_steps.iter().any(|t| meets(t, step));
    }
    // One level per step at most: the nearest published size wins.
    let top = sizes.last().map_or(0, |s| s.size_bytes);
    let mut levels: Vec<LevelJudgement> = Vec::new();
    for cache in published {
        if levels.iter().any(|l| l.level == cache.level) {
            continue;
        }
        let size = cache.size_bytes as f64;
        let step = steps
            .iter()
            .position(|s| s.level.is_none() && !s.translation && explains(size, s, &sizes));
        let status = match step {
            Some(_) => LevelStatus::Agreed,
            // A step shows once the ladder reaches twice the size.
            None if (top as f64) < size * 2.0 => LevelStatus::Undecided,
            None if steps
                .iter()
                .any(|s| s.translation && explains(size, s, &sizes)) =>
            {
                LevelStatus::TlbStep
            }
            None => LevelStatus::Fake,
        };
        if let Some(index) = step {
            steps[index].level = Some(cache.level);
        }
        levels.push(LevelJudgement {
            level: cache.level,
            size_bytes: cache.size_bytes,
            status,
            step,
        });
    }
    let (verdict, reason) = ladder_verdict(ladder, &sizes, &steps, &levels);
    LadderJudgement {
        sizes,
        plateaus,
        steps,
        translation_steps,
        levels,
        verdict,
        reason,
    }
}

/// Each point's latency, where it has samples.
fn sizes_of(points: &[LadderPoint]) -> Vec<SizeLatency> {
    points
        .iter()
        .filter_map(|p| {
            Some(SizeLatency {
                size_bytes: p.size_bytes,
                latency: Latency::of(&p.ns_per_load)?,
            })
        })
        .collect()
}

/// `size` lies within `step`'s range widened by [`NEAR`] either side.
fn near(size: f64, step: &Step) -> bool {
    step.below_bytes as f64 / NEAR <= size && size <= step.above_bytes as f64 * NEAR
}

/// A cache of `size` bytes can make `step`: its size is [`near`] the step,
/// and the step's last flat size is at most [`RISE_BEFORE`] below it (two
/// of the ladder's sizes where they are further apart than that).
fn explains(size: f64, step: &Step, sizes: &[SizeLatency]) -> bool {
    let below = step.below_bytes as f64;
    let grid = sizes
        .iter()
        .find(|s| s.size_bytes > step.below_bytes)
        .map_or(1.0, |next| next.size_bytes as f64 / below);
    near(size, step) && size <= below * RISE_BEFORE.max(grid * grid)
}

/// The two steps' ranges meet, one widened by [`NEAR`] either side.
fn meets(one: &Step, other: &Step) -> bool {
    one.below_bytes as f64 <= other.above_bytes as f64 * NEAR
        && other.below_bytes as f64 <= one.above_bytes as f64 * NEAR
}

/// The translation ladder's steps, less those its lines' footprint (a
/// line per base page) makes where it reaches a published cache.
fn translation_steps(ladder: &Ladder, published: &[PublishedCache]) -> Vec<Step> {
    let sizes = sizes_of(&ladder.translation);
    let per_page = f64::from(ladder.line_bytes) / BASE_PAGE_BYTES as f64;
    steps_between(&plateaus_of(&sizes), &sizes)
        .into_iter()
        .filter(|step| {
            let footprint = Step {
                below_bytes: (step.below_bytes as f64 * per_page) as u64,
                above_bytes: (step.above_bytes as f64 * per_page) as u64,
                ..step.clone()
            };
            !published
                .iter()
                .any(|cache| near(cache.size_bytes as f64, &footprint))
        })
        .collect()
}

/// Runs within [`PLATEAU_SPREAD`] of at least two sizes, neighbours not
/// [`apart`] merged.
fn plateaus_of(sizes: &[SizeLatency]) -> Vec<Plateau> {
    let mut runs: Vec<Vec<&SizeLatency>> = Vec::new();
    let mut run: Vec<&SizeLatency> = Vec::new();
    for size in sizes {
        let low = run
            .iter()
            .map(|s| s.latency.ns)
            .fold(size.latency.ns, f64::min);
        let high = run
            .iter()
            .map(|s| s.latency.ns)
            .fold(size.latency.ns, f64::max);
        if high > low * PLATEAU_SPREAD {
            runs.push(std::mem::take(&mut run));
        }
        run.push(size);
    }
    runs.push(run);
    // Lone sizes are transitions, except a last one that nothing follows.
    let last = runs.len().saturating_sub(1);
    let candidates: Vec<Vec<&SizeLatency>> = runs
        .into_iter()
        .enumerate()
        .filter(|(index, run)| run.len() >= 2 || (*index == last && !run.is_empty()))
        .map(|(_, run)| run)
        .collect();
    let mut merged: Vec<Vec<&SizeLatency>> = Vec::new();
    for candidate in candidates {
        if let Some(previous) = merged.last_mut() {
            let (below, above) = (median_ns(previous), median_ns(&candidate));
            if !apart(below.min(above), below.max(above)) {
                // The transition sizes between them belong to it too.
                let from = previous[previous.len() - 1].size_bytes;
                let to = candidate[0].size_bytes;
                previous.extend(
                    sizes
                        .iter()
                        .filter(|s| s.size_bytes > from && s.size_bytes < to),
                );
                previous.extend(candidate);
                continue;
            }
        }
        merged.push(candidate);
    }
    merged
        .iter()
        .map(|run| Plateau {
            first_bytes: run[0].size_bytes,
            last_bytes: run[run.len() - 1].size_bytes,
            ns: median_ns(run),
            low_ns: run.iter().map(|s| s.latency.ns).fold(f64::MAX, f64::min),
            high_ns: run.iter().map(|s| s.latency.ns).fold(f64::MIN, f64::max),
            sizes: run.len(),
        })
        .collect()
}

fn median_ns(run: &[&SizeLatency]) -> f64 {
    let values: Vec<f64> = run.iter().map(|s| s.latency.ns).collect();
    crate::judge::stats::median(&values)
}

/// The steps between neighbouring plateaus, and an open one where the
/// ladder's last sizes rise past the last plateau.
fn steps_between(plateaus: &[Plateau], sizes: &[SizeLatency]) -> Vec<Step> {
    let mut steps: Vec<Step> = plateaus
        .windows(2)
        .filter_map(|pair| {
            let (below, above) = (&pair[0], &pair[1]);
            Some(Step {
                below_bytes: below.last_bytes,
                above_bytes: above.first_bytes,
                gap: Gap::between(below.ns.min(above.ns), below.ns.max(above.ns))?,
                open: false,
                level: None,
                translation: false,
            })
        })
        .collect();
    if let (Some(last_plateau), Some(last)) = (plateaus.last(), sizes.last()) {
        if last.size_bytes > last_plateau.last_bytes {
            if let Some(gap) = Gap::between(last_plateau.ns, last.latency.ns) {
                steps.push(Step {
                    below_bytes: last_plateau.last_bytes,
                    above_bytes: last.size_bytes,
                    gap,
                    open: true,
                    level: None,
                    translation: false,
                });
            }
        }
    }
    steps
}

fn ladder_verdict(
    ladder: &Ladder,
    sizes: &[SizeLatency],
    steps: &[Step],
    levels: &[LevelJudgement],
) -> (MapVerdict, String) {
    if !ladder.complete {
        return (
            MapVerdict::Inconclusive,
            "the ladder was stopped before its last size".into(),
        );
    }
    if !ladder.pinned {
        return (
            MapVerdict::Inconclusive,
            format!("the chase did not stay on CPU {}", ladder.cpu),
        );
    }
    if sizes.len() < 3 {
        return (
            MapVerdict::Inconclusive,
            "fewer than three sizes measured".into(),
        );
    }
    if levels.is_empty() {
        return (
            MapVerdict::Inconclusive,
            "the machine publishes no cache size to compare the steps with".into(),
        );
    }
    let fake: Vec<String> = levels
        .iter()
        .filter(|l| l.status == LevelStatus::Fake)
        .map(|l| format!("L{} ({}) has no step near it", l.level, bytes(l.size_bytes)))
        .collect();
    let hidden: Vec<String> = steps
        .iter()
        .filter(|s| s.level.is_none() && !s.translation)
        .map(|s| {
            format!(
                "a step between {} and {} ({:.1} to {:.1} ns) has no published level",
                bytes(s.below_bytes),
                bytes(s.above_bytes),
                s.gap.below_ns,
                s.gap.above_ns
            )
        })
        .collect();
    if !fake.is_empty() || !hidden.is_empty() {
        let words: Vec<String> = fake
            .iter()
            .map(|f| format!("fake: {f}"))
            .chain(hidden.iter().map(|h| format!("hidden: {h}")))
            .collect();
        return (MapVerdict::Differ, words.join("; "));
    }
    let undecided: Vec<String> = levels
        .iter()
        .filter(|l| l.status == LevelStatus::Undecided)
        .map(|l| format!("L{} ({})", l.level, bytes(l.size_bytes)))
        .collect();
    if !undecided.is_empty() {
        return (
            MapVerdict::Inconclusive,
            format!(
                "the ladder ends before twice the size of {}",
                undecided.join(" and ")
            ),
        );
    }
    let masked: Vec<String> = levels
        .iter()
        .filter(|l| l.status == LevelStatus::TlbStep)
        .map(|l| format!("L{} ({})", l.level, bytes(l.size_bytes)))
        .collect();
    if !masked.is_empty() {
        return (
            MapVerdict::Inconclusive,
            format!(
                "the only step near {} is also where a chase of one line per page steps (the \
                 TLB's reach): the ladder cannot tell the cache's step from the TLB's",
                masked.join(" and ")
            ),
        );
    }
    (
        MapVerdict::Agree,
        "every published level has its step, and every step its level".into(),
    )
}

/// One cell of the matrix, judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CellJudgement {
    pub cpu_node: u32,
    pub memory_node: u32,
    /// `None` where its buffer did not land.
    pub latency: Option<Latency>,
    /// Median bytes per second of its streams, and their 10th and 90th
    /// percentiles.
    pub bandwidth: Option<Bandwidth>,
    /// Its latency over its CPU node's local latency.
    pub ratio: Option<f64>,
    /// The published distance / 10.
    pub published_ratio: Option<f64>,
    /// The ratio within [`DISTANCE_TOLERANCE`] of the published one.
    pub agrees: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bandwidth {
    pub bytes_per_second: f64,
    pub p10: f64,
    pub p90: f64,
    pub n: usize,
}

/// One row: a CPU node's cells, or a memory-only node's column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NumaRow {
    pub node: u32,
    /// The node has memory and no CPU: its cells are the CPU nodes'
    /// reads of it.
    pub memory_only: bool,
    pub cells: Vec<CellJudgement>,
}

/// The matrix judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NumaJudgement {
    pub rows: Vec<NumaRow>,
    pub columns: Vec<Column>,
    pub verdict: MapVerdict,
    pub reason: String,
}

/// Judges `matrix`; `memory_only` are the nodes with memory and no CPU.
pub fn judge_numa(matrix: &NumaMatrix, memory_only: &[u32]) -> NumaJudgement {
    let local = |cpu_node: u32| {
        matrix
            .cells
            .iter()
            .find(|c| c.cpu_node == cpu_node && c.memory_node == cpu_node)
            .and_then(|c| Latency::of(&c.ns_per_load))
    };
    let judged: Vec<CellJudgement> = matrix
        .cells
        .iter()
        .map(|cell| {
            let latency = Latency::of(&cell.ns_per_load);
            let ratio = latency
                .as_ref()
                .zip(local(cell.cpu_node))
                .map(|(here, home)| here.ns / home.ns);
            let published_ratio = cell.distance.map(|d| f64::from(d) / 10.0);
            CellJudgement {
                cpu_node: cell.cpu_node,
                memory_node: cell.memory_node,
                bandwidth: bandwidth_of(&cell.bytes_per_second),
                agrees: ratio
                    .zip(published_ratio)
                    .map(|(r, p)| (r / p - 1.0).abs() <= DISTANCE_TOLERANCE),
                latency,
                ratio,
                published_ratio,
            }
        })
        .collect();
    let mut rows: Vec<NumaRow> = Vec::new();
    for cell in &judged {
        let (node, only) = if memory_only.contains(&cell.memory_node) {
            (cell.memory_node, true)
        } else {
            (cell.cpu_node, false)
        };
        match rows
            .iter_mut()
            .find(|r| r.node == node && r.memory_only == only)
        {
            Some(row) => row.cells.push(cell.clone()),
            None => rows.push(NumaRow {
                node,
                memory_only: only,
                cells: vec![cell.clone()],
            }),
        }
    }
    rows.sort_by_key(|r| (r.memory_only, r.node));
    let (verdict, reason) = numa_verdict(matrix, &judged);
    NumaJudgement {
        rows,
        columns: matrix.columns.clone(),
        verdict,
        reason,
    }
}

fn bandwidth_of(rates: &[f64]) -> Option<Bandwidth> {
    let mut sorted: Vec<f64> = rates.iter().copied().filter(|r| r.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    Some(Bandwidth {
        bytes_per_second: percentile(&sorted, 0.5)?,
        p10: percentile(&sorted, 0.10)?,
        p90: percentile(&sorted, 0.90)?,
        n: sorted.len(),
    })
}

fn numa_verdict(matrix: &NumaMatrix, cells: &[CellJudgement]) -> (MapVerdict, String) {
    if matrix.cells.is_empty() {
        return (
            MapVerdict::Inconclusive,
            "the machine publishes no NUMA node".into(),
        );
    }
    if !matrix.complete {
        return (
            MapVerdict::Inconclusive,
            "the matrix was stopped before its last column".into(),
        );
    }
    let strays: Vec<String> = matrix
        .columns
        .iter()
        .filter(|c| !c.landed)
        .map(|c| {
            let found: Vec<String> = c
                .pages
                .by_node
                .iter()
                .map(|(node, n)| format!("{n} on node {node}"))
                .collect();
            format!(
                "node {}'s buffer did not land there ({} of {} pages located: {}{})",
                c.memory_node,
                c.pages.pages - c.pages.missing,
                c.pages.pages,
                if found.is_empty() {
                    "none".to_string()
                } else {
                    found.join(", ")
                },
                c.mbind_error
                    .as_ref()
                    .map(|e| format!("; mbind: {e}"))
                    .unwrap_or_default()
            )
        })
        .collect();
    if !strays.is_empty() {
        return (MapVerdict::Inconclusive, strays.join("; "));
    }
    if let Some(cell) = matrix.cells.iter().find(|c| !c.pinned) {
        return (
            MapVerdict::Inconclusive,
            format!(
                "a thread of cell node {} → node {} left its CPU",
                cell.cpu_node, cell.memory_node
            ),
        );
    }
    let fiction: Vec<String> = cells
        .iter()
        .filter(|c| c.agrees == Some(false))
        .map(|c| {
            format!(
                "node {} → node {}: distance {:.0} says ×{:.1}, measured ×{:.2}: the distance is not measured",
                c.cpu_node,
                c.memory_node,
                c.published_ratio.unwrap_or_default() * 10.0,
                c.published_ratio.unwrap_or_default(),
                c.ratio.unwrap_or_default()
            )
        })
        .collect();
    if !fiction.is_empty() {
        return (MapVerdict::Differ, fiction.join("; "));
    }
    if let Some(cell) = cells.iter().find(|c| c.agrees.is_none()) {
        let why = if cell.published_ratio.is_none() {
            "no published distance"
        } else {
            "no local latency to compare with"
        };
        return (
            MapVerdict::Inconclusive,
            format!("node {} → node {}: {why}", cell.cpu_node, cell.memory_node),
        );
    }
    (
        MapVerdict::Agree,
        format!(
            "every measured latency ratio is within {:.0} % of its published distance / 10",
            DISTANCE_TOLERANCE * 100.0
        ),
    )
}

/// The ladder and the matrix together: differ if either differs, else
/// inconclusive if either is, else agree.
pub fn combined_verdict(ladder: MapVerdict, numa: MapVerdict) -> MapVerdict {
    use MapVerdict::*;
    match (ladder, numa) {
        (Differ, _) | (_, Differ) => Differ,
        (Inconclusive, _) | (_, Inconclusive) => Inconclusive,
        (Agree, Agree) => Agree,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuset::CpuSet;
    use crate::measure::memory::buffer::Pages;
    use crate::measure::memory::{Cell, LadderPoint, PlacedBy};
    use crate::measure::mempolicy::PageNodes;

    /// A ladder of (size, ns per load), three samples each (the latency
    /// and two noisier ones).
    fn ladder(points: &[(u64, f64)]) -> Ladder {
        Ladder {
            cpu: 0,
            line_bytes: 64,
            pages: Pages::Huge,
            advised: true,
            huge_bytes: None,
            clock: "CLOCK_MONOTONIC".into(),
            points: points
                .iter()
                .map(|&(size_bytes, ns)| LadderPoint {
                    size_bytes,
                    loads_per_sample: 1000,
                    ns_per_load: vec![ns * 1.1, ns, ns * 1.3],
                })
                .collect(),
            translation: Vec::new(),
            pinned: true,
            complete: true,
            seconds: 1.0,
        }
    }

    fn cache(level: u32, size_bytes: u64) -> PublishedCache {
        PublishedCache {
            level,
            kind: "Unified".into(),
            size_bytes,
            cpus: CpuSet::from_cpus([0]),
        }
    }

    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;

    /// This machine's ladder (a KVM guest on a Xeon whose CPUID passes
    /// the host's 48 KiB L1d, 2 MiB L2 and 480 MiB L3 through), the 10th
    /// percentiles of `cargo run --release --example memory`, every other
    /// size.
    fn this_machine() -> Vec<(u64, f64)> {
        vec![
            (4 * KIB, 1.25),
            (8 * KIB, 1.22),
            (16 * KIB, 1.22),
            (32 * KIB, 1.22),
            (41_280, 1.22),
            (52_032, 3.13),
            (64 * KIB, 3.90),
            (128 * KIB, 4.45),
            (256 * KIB, 4.45),
            (512 * KIB, 4.95),
            (MIB, 5.68),
            (1_664_512, 5.23),
            (2 * MIB, 15.03),
            (2_642_240, 25.29),
            (4 * MIB, 36.37),
            (8 * MIB, 38.74),
            (16 * MIB, 38.94),
            (21_137_984, 93.60),
            (32 * MIB, 75.96),
            (64 * MIB, 129.50),
            (128 * MIB, 155.08),
            (256 * MIB, 157.95),
            (512 * MIB, 186.97),
            (1024 * MIB, 203.85),
            (2048 * MIB, 226.75),
        ]
    }

    #[test]
    fn latencies_are_low_percentiles_with_spread_and_n() {
        let latency = Latency::of(&[3.0, 1.0, 2.0, f64::NAN]).unwrap();
        assert_eq!((latency.ns, latency.p90_ns, latency.n), (1.0, 3.0, 3));
        assert_eq!(Latency::of(&[]), None);
    }

    #[test]
    fn a_ladder_that_agrees_with_its_published_caches() {
        // A desktop's ladder: 48 KiB L1d, 1.25 MiB L2, 18 MiB L3.
        let points = vec![
            (4 * KIB, 1.0),
            (16 * KIB, 1.0),
            (32 * KIB, 1.0),
            (64 * KIB, 3.5),
            (128 * KIB, 3.6),
            (512 * KIB, 3.7),
            (MIB, 3.9),
            (2 * MIB, 12.0),
            (4 * MIB, 14.0),
            (8 * MIB, 14.5),
            (16 * MIB, 16.0),
            (32 * MIB, 60.0),
            (64 * MIB, 85.0),
            (128 * MIB, 90.0),
        ];
        let published = [cache(1, 48 * KIB), cache(2, 1280 * KIB), cache(3, 18 * MIB)];
        let judged = judge_ladder(&ladder(&points), &published);
        assert_eq!(judged.plateaus.len(), 4, "{:#?}", judged.plateaus);
        assert_eq!(judged.verdict, MapVerdict::Agree, "{}", judged.reason);
        let l3 = &judged.steps[judged.levels[2].step.unwrap()];
        assert_eq!((l3.below_bytes, l3.above_bytes), (8 * MIB, 64 * MIB));
        assert_eq!(judged.plateaus[0].ns, 1.0);
    }

    #[test]
    fn this_machines_l3_has_no_step_near_its_published_size() {
        let published = [cache(1, 48 * KIB), cache(2, 2 * MIB), cache(3, 480 * MIB)];
        let judged = judge_ladder(&ladder(&this_machine()), &published);
        assert_eq!(judged.verdict, MapVerdict::Differ);
        let status: Vec<LevelStatus> = judged.levels.iter().map(|l| l.status).collect();
        assert_eq!(
            status,
            [LevelStatus::Agreed, LevelStatus::Agreed, LevelStatus::Fake]
        );
        assert!(
            judged
                .reason
                .contains("fake: L3 (480 MiB) has no step near it"),
            "{}",
            judged.reason
        );
        assert!(
            judged.reason.contains("hidden: a step between 16 MiB"),
            "{}",
            judged.reason
        );
    }

    /// The translation ladder of this machine (one line per 4 KiB page,
    /// the 10th percentiles of a chase over each span, this session's
    /// host): steps at the L1 DTLB's reach (~400 KiB), where its lines'
    /// footprint fills the 48 KiB L1d (3 MiB span), at the STLB's reach
    /// (8 MiB of 4 KiB pages), where the footprint fills the 2 MiB L2
    /// (128 MiB span), and as the page walk reaches memory.
    fn this_machines_translation() -> Vec<(u64, f64)> {
        vec![
            (256 * KIB, 1.2),
            (320 * KIB, 1.2),
            (504 * KIB, 2.9),
            (632 * KIB, 2.9),
            (MIB, 2.9),
            (1584 * KIB, 3.1),
            (1992 * KIB, 3.1),
            (3160 * KIB, 4.6),
            (3980 * KIB, 5.3),
            (5012 * KIB, 5.5),
            (6312 * KIB, 6.0),
            (7952 * KIB, 7.9),
            (10016 * KIB, 10.9),
            (12620 * KIB, 11.5),
            (20032 * KIB, 12.1),
            (31800 * KIB, 12.6),
            (50484 * KIB, 12.8),
            (63608 * KIB, 13.2),
            (100_980 * KIB, 20.4),
            (127_232 * KIB, 31.7),
            (160_312 * KIB, 38.8),
            (254_508 * KIB, 52.2),
            (320_680 * KIB, 54.9),
            (641_476 * KIB, 130.1),
            (1_018_400 * KIB, 210.5),
            (1_616_808 * KIB, 235.7),
            (2_037_176 * KIB, 252.8),
        ]
    }

    #[test]
    fn a_step_the_translation_ladder_shares_is_the_tlbs_not_a_hidden_level() {
        // The desktop's ladder with a TLB step at 8 MiB inside its L3.
        let mut points = vec![
            (4 * KIB, 1.0),
            (32 * KIB, 1.0),
            (64 * KIB, 3.5),
            (512 * KIB, 3.7),
            (MIB, 3.9),
            (2 * MIB, 12.0),
            (4 * MIB, 12.5),
            (16 * MIB, 30.0),
            (24 * MIB, 31.0),
            (64 * MIB, 120.0),
            (128 * MIB, 125.0),
        ];
        let published = [cache(1, 48 * KIB), cache(2, 1280 * KIB), cache(3, 32 * MIB)];
        let mut with_translation = ladder(&points);
        with_translation.translation = ladder(&this_machines_translation()).points;
        let judged = judge_ladder(&with_translation, &published);
        assert_eq!(judged.verdict, MapVerdict::Agree, "{}", judged.reason);
        let tlb: Vec<&Step> = judged.steps.iter().filter(|s| s.translation).collect();
        assert_eq!(tlb.len(), 1, "{:#?}", judged.steps);
        assert_eq!(
            (tlb[0].below_bytes, tlb[0].above_bytes),
            (4 * MIB, 16 * MIB)
        );
        // The footprint's steps (48 KiB of lines at 3 MiB, 2 MiB at
        // 128 MiB) are the caches', not translation's.
        assert!(
            judged
                .translation_steps
                .iter()
                .all(|t| !(t.below_bytes..=t.above_bytes).contains(&(3 * MIB))),
            "{:#?}",
            judged.translation_steps
        );
        // Without the translation ladder, the same step is a hidden level.
        let alone = judge_ladder(&ladder(&points), &published);
        assert_eq!(alone.verdict, MapVerdict::Differ, "{}", alone.reason);
        assert!(alone.reason.contains("hidden: a step between 4 MiB"));
        // A level whose only step is the TLB's cannot be told from it.
        points.retain(|&(size, _)| size <= 24 * MIB);
        let mut masked = ladder(&points);
        masked.translation = ladder(&this_machines_translation()).points;
        let judged = judge_ladder(
            &masked,
            &[cache(1, 48 * KIB), cache(2, 1280 * KIB), cache(3, 8 * MIB)],
        );
        assert_eq!(
            judged.levels[2].status,
            LevelStatus::TlbStep,
            "{:#?}",
            judged.levels
        );
        assert_eq!(judged.verdict, MapVerdict::Inconclusive);
        assert!(judged.reason.contains("TLB's reach"), "{}", judged.reason);
    }

    #[test]
    fn a_host_step_an_octave_below_a_published_level_is_not_its_step() {
        // A TCG guest's chase runs on the host's caches: the host's 2 MiB
        // L2 rises from 1.3 MiB, and QEMU publishes a 4 MiB L2.
        let points = vec![
            (4 * KIB, 6.0),
            (16 * KIB, 6.0),
            (64 * KIB, 6.1),
            (256 * KIB, 6.1),
            (MIB, 6.1),
            (1_331_200, 6.1),
            (1_677_312, 12.0),
            (2_113_536, 30.0),
            (2_642_240, 48.9),
            (4 * MIB, 49.0),
            (8 * MIB, 50.0),
            (16 * MIB, 51.0),
        ];
        let published = [cache(1, 64 * KIB), cache(2, 4 * MIB)];
        let judged = judge_ladder(&ladder(&points), &published);
        assert_eq!(
            judged.levels[1].status,
            LevelStatus::Fake,
            "{:#?}",
            judged.steps
        );
        assert!(
            judged.reason.contains("fake: L2 (4 MiB)"),
            "{}",
            judged.reason
        );
        // The same step is a 2 MiB L2's.
        let judged = judge_ladder(&ladder(&points), &[cache(1, 64 * KIB), cache(2, 2 * MIB)]);
        assert_eq!(
            judged.levels[1].status,
            LevelStatus::Agreed,
            "{:#?}",
            judged.steps
        );
    }

    #[test]
    fn the_recorded_ladder_of_this_machine_judges_as_it_was_saved() {
        let saved: serde_json::Value =
            serde_json::from_str(include_str!("../../fixtures/results/memory-vm.json")).unwrap();
        let ladder: Ladder = serde_json::from_value(saved["ladder"].clone()).unwrap();
        let published: Vec<PublishedCache> =
            serde_json::from_value(saved["ladder_plan"]["published"].clone()).unwrap();
        let judged = judge_ladder(&ladder, &published);
        let status: Vec<LevelStatus> = judged.levels.iter().map(|l| l.status).collect();
        assert_eq!(status, [LevelStatus::Agreed; 3], "{}", judged.reason);
        assert_eq!(
            serde_json::to_value(&judged).unwrap(),
            saved["ladder_judgement"],
            "the saved judgement is today's"
        );
    }

    #[test]
    fn a_level_the_ladder_cannot_reach_is_undecided_and_a_stop_inconclusive() {
        let points: Vec<(u64, f64)> = this_machine().into_iter().take(12).collect();
        let published = [cache(1, 48 * KIB), cache(2, 2 * MIB)];
        let judged = judge_ladder(&ladder(&points), &published);
        assert_eq!(judged.levels[1].status, LevelStatus::Undecided);
        assert_eq!(
            judged.verdict,
            MapVerdict::Inconclusive,
            "{}",
            judged.reason
        );
        let mut stopped = ladder(&this_machine());
        stopped.complete = false;
        assert_eq!(
            judge_ladder(&stopped, &published).verdict,
            MapVerdict::Inconclusive
        );
        let nothing = judge_ladder(&ladder(&this_machine()), &[]);
        assert!(nothing.reason.contains("publishes no cache size"));
    }

    fn column(node: u32, landed: bool) -> Column {
        Column {
            memory_node: node,
            placed_by: PlacedBy::Mbind,
            mbind_error: None,
            pages: PageNodes {
                pages: 8,
                by_node: [(if landed { node } else { 0 }, 8)].into(),
                missing: 0,
            },
            stride_bytes: 4096,
            landed,
        }
    }

    /// A matrix from `rows[i][j]` = (latency ns, distance), CPU nodes
    /// `0..rows.len()`, memory nodes `0..rows[0].len()`.
    fn matrix(rows: &[&[(f64, u32)]]) -> NumaMatrix {
        let mut cells = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            for (j, &(ns, distance)) in row.iter().enumerate() {
                cells.push(Cell {
                    cpu_node: i as u32,
                    memory_node: j as u32,
                    cpu: i as u32,
                    threads: CpuSet::from_cpus([i as u32]),
                    distance: Some(distance),
                    loads_per_sample: 1000,
                    ns_per_load: vec![ns, ns * 1.2],
                    bytes_per_sample: 1 << 30,
                    bytes_per_second: vec![1e10, 1.1e10],
                    pinned: true,
                });
            }
        }
        NumaMatrix {
            buffer_bytes: 1 << 30,
            line_bytes: 64,
            pages: Pages::Huge,
            clock: "CLOCK_MONOTONIC".into(),
            columns: (0..rows[0].len() as u32).map(|n| column(n, true)).collect(),
            cells,
            complete: true,
            seconds: 1.0,
        }
    }

    /// A two-socket Xeon's idle latencies in the shape Intel MLC's
    /// `--latency_matrix` prints them (local ≈ 80 ns, remote ≈ 135 ns,
    /// the range Intel's MLC article and vendors' tuning guides show for
    /// two-socket Xeons), with the SLIT distances 10 and 21 those
    /// machines publish: ×1.7 measured against ×2.1 published is within
    /// the tolerance.
    #[test]
    fn a_two_socket_matrix_agrees_with_distance_21() {
        let judged = judge_numa(
            &matrix(&[&[(79.8, 10), (133.8, 21)], &[(133.9, 21), (79.9, 10)]]),
            &[],
        );
        assert_eq!(judged.verdict, MapVerdict::Agree, "{}", judged.reason);
        let remote = &judged.rows[0].cells[1];
        assert!((remote.ratio.unwrap() - 1.677).abs() < 0.01);
        assert_eq!(remote.published_ratio, Some(2.1));
        assert_eq!(remote.bandwidth.as_ref().unwrap().n, 2);
    }

    /// Under TCG every node's memory is the host's: distance 21, ×1.0.
    #[test]
    fn an_emulated_second_node_with_distance_21_differs() {
        let judged = judge_numa(
            &matrix(&[&[(300.0, 10), (305.0, 21)], &[(302.0, 21), (298.0, 10)]]),
            &[],
        );
        assert_eq!(judged.verdict, MapVerdict::Differ);
        assert!(
            judged
                .reason
                .starts_with("node 0 → node 1: distance 21 says ×2.1, measured ×1.02: the distance is not measured"),
            "{}",
            judged.reason
        );
    }

    #[test]
    fn one_node_agrees_and_a_stray_buffer_is_no_measurement() {
        let one = matrix(&[&[(120.0, 10)]]);
        assert_eq!(judge_numa(&one, &[]).verdict, MapVerdict::Agree);
        let mut stray = matrix(&[&[(79.8, 10), (133.8, 21)], &[(133.9, 21), (79.9, 10)]]);
        stray.columns[1] = column(1, false);
        let judged = judge_numa(&stray, &[]);
        assert_eq!(judged.verdict, MapVerdict::Inconclusive);
        assert_eq!(
            judged.reason,
            "node 1's buffer did not land there (8 of 8 pages located: 8 on node 0)"
        );
    }

    /// A CXL expander as node 1 (memory, no CPU; distance 21 as
    /// `xeon-cxl-memory-node` publishes): about twice local DRAM's
    /// latency, as vendors' CXL Type-3 figures show. Its column is a row
    /// of its own.
    #[test]
    fn a_memory_only_node_is_a_row_of_its_own() {
        let judged = judge_numa(&matrix(&[&[(110.0, 10), (240.0, 21)]]), &[1]);
        assert_eq!(judged.verdict, MapVerdict::Agree, "{}", judged.reason);
        assert_eq!(judged.rows.len(), 2);
        assert!(judged.rows[1].memory_only);
        assert_eq!(judged.rows[1].node, 1);
        assert_eq!(judged.rows[1].cells[0].cpu_node, 0);
    }

    /// Recorded multi-node matrices, replayed: published `mlc
    /// --latency_matrix` idle latencies (ns, rows the CPU node, columns
    /// the memory node) with the SLIT distances of their machines, through
    /// the judge as a live matrix would go. Where agreement cannot be shown
    /// on this one-node machine, these are the evidence.
    ///
    /// Two-socket Xeon Skylake-SP (CSIT testbed server s5-t22-sut1, 112
    /// logical CPUs), MLC v3.5, section "Memory latency" of FD.io CSIT's
    /// calibration data:
    /// <https://github.com/FDio/csit/blob/0fc7d0b8fb105cd3a707f525aec99c73b1736bf7/docs/report/introduction/test_environment_sut_calib_skx.rst>.
    /// The file gives no `numactl -H`; two-socket Xeons publish 10 and 21
    /// (as on the dual-socket Xeon of
    /// <https://stevescargall.com/blog/2022/11/linux-numa-distances-explained/>).
    /// Measured ×1.78 and ×1.92 against ×2.1: within the tolerance.
    #[test]
    fn replayed_two_socket_skylake_agrees_with_distance_21() {
        let judged = judge_numa(
            &matrix(&[&[(81.1, 10), (144.5, 21)], &[(139.6, 21), (72.7, 10)]]),
            &[],
        );
        assert_eq!(judged.verdict, MapVerdict::Agree, "{}", judged.reason);
        let ratios: Vec<f64> = [(0, 1), (1, 0)]
            .map(|(row, cell)| judged.rows[row].cells[cell].ratio.unwrap())
            .to_vec();
        assert!((ratios[0] - 1.782).abs() < 0.01 && (ratios[1] - 1.920).abs() < 0.01);
    }

    /// Two-socket Xeon Cascade Lake (CSIT testbed server s32-t27-sut1, 96
    /// logical CPUs), MLC v3.7, section "Memory Latency" of
    /// <https://github.com/FDio/csit/blob/0d0c903a8bfddedd431240381a8c9fd780cf6ff7/docs/report/introduction/test_environment_sut_calib_clx.rst>;
    /// distance 21, as above. Measured ×1.60 against ×2.1 is 24 % under:
    /// it agrees, by a point of the tolerance. Both two-socket Xeons
    /// recorded here overstate their remote latency by their SLIT 21, by 9
    /// to 24 %; a Xeon whose remote access is under ×1.575 would read
    /// differ.
    #[test]
    fn replayed_two_socket_cascade_lake_agrees_at_the_edge_of_the_tolerance() {
        let judged = judge_numa(
            &matrix(&[&[(81.2, 10), (130.2, 21)], &[(130.2, 21), (81.1, 10)]]),
            &[],
        );
        assert_eq!(judged.verdict, MapVerdict::Agree, "{}", judged.reason);
        let remote = &judged.rows[0].cells[1];
        let off = 1.0 - remote.ratio.unwrap() / remote.published_ratio.unwrap();
        assert!((0.23..DISTANCE_TOLERANCE).contains(&off), "{off}");
    }

    /// Two-socket AMD EPYC 9224 in NPS2 (nodes 0-1 on one socket, 2-3 on
    /// the other), with a Samsung CXL memory expander as node 4 (memory,
    /// no CPU): its `numactl -H` (distances 10, 12 within a socket, 32
    /// across, 50 and 60 to the CXL node) and `mlc` idle latencies, in one
    /// public notes file of CXL experiments (host "seksu"), found through
    /// this project's code index, which does not name its repository.
    /// Within a socket ×1.08 to ×1.09 against ×1.2 agrees; across sockets
    /// ×1.87 against ×3.2, and the CXL node's ×2.60 to ×3.43 against ×5.0
    /// and ×6.0, are fiction: AMD's 32 and the expander's 50/60 order the
    /// nodes, they do not measure them. The judge names each one.
    #[test]
    fn replayed_epyc_with_a_cxl_node_differs_naming_the_fictional_distances() {
        let judged = judge_numa(
            &matrix(&[
                &[
                    (107.5, 10),
                    (117.1, 12),
                    (200.7, 32),
                    (200.7, 32),
                    (279.4, 50),
                ],
                &[
                    (115.8, 12),
                    (106.8, 10),
                    (199.9, 32),
                    (199.9, 32),
                    (278.8, 50),
                ],
                &[
                    (200.0, 32),
                    (200.1, 32),
                    (106.8, 10),
                    (115.8, 12),
                    (363.8, 60),
                ],
                &[
                    (199.0, 32),
                    (199.0, 32),
                    (115.6, 12),
                    (105.9, 10),
                    (363.5, 60),
                ],
            ]),
            &[4],
        );
        assert_eq!(judged.verdict, MapVerdict::Differ);
        let fiction: Vec<(u32, u32)> = judged
            .rows
            .iter()
            .flat_map(|row| &row.cells)
            .filter(|c| c.agrees == Some(false))
            .map(|c| (c.cpu_node, c.memory_node))
            .collect();
        // Every cross-socket cell and every CPU node's CXL cell; no
        // same-socket one.
        assert_eq!(fiction.len(), 12, "{fiction:?}");
        assert!(
            fiction
                .iter()
                .all(|&(cpu, memory)| memory == 4 || cpu / 2 != memory / 2)
        );
        assert!(
            judged.reason.starts_with(
                "node 0 → node 2: distance 32 says ×3.2, measured ×1.87: the distance is not measured"
            ),
            "{}",
            judged.reason
        );
        assert!(
            judged
                .reason
                .contains("node 0 → node 4: distance 50 says ×5.0, measured ×2.60"),
            "{}",
            judged.reason
        );
        assert!(
            judged
                .reason
                .contains("node 2 → node 4: distance 60 says ×6.0, measured ×3.41"),
            "{}",
            judged.reason
        );
        // The CXL node is a row of its own: read from each CPU node.
        let cxl = judged.rows.last().unwrap();
        assert!(cxl.memory_only && cxl.node == 4 && cxl.cells.len() == 4);
    }

    #[test]
    fn verdicts_combine_differ_first() {
        use MapVerdict::*;
        assert_eq!(combined_verdict(Agree, Differ), Differ);
        assert_eq!(combined_verdict(Inconclusive, Agree), Inconclusive);
        assert_eq!(combined_verdict(Agree, Agree), Agree);
    }
}
