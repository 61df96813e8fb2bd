//! `latency`'s judgement: each pair's one-way latency from its samples,
//! domains from the matrix, and how they relate to the published ones.
//!
//! A pair's latency is a low percentile ([`LATENCY_PERCENTILE`]) of its
//! samples' one-way times: interference (an interrupt, the host running
//! something else) only ever adds time, so the low end is the transfer
//! itself. Its spread is the 10th to 90th percentile.
//!
//! Domains come from the matrix alone: the pairs' latencies, sorted, are
//! split wherever one is at least [`MIN_GAP_RATIO`] times the one below it.
//! No nanosecond value is fixed anywhere, so the same rule reads a laptop,
//! a two-socket server and a guest whose vCPUs share host CPUs. The
//! same-CPU control (both threads on one CPU) joins the sort: its latency
//! is the time-slice scale, and the cluster it falls in is the stacked
//! class (two CPUs that progress only when the other is preempted), as is
//! every pair with no progress at all within the sample bound.
//!
//! The other clusters, from the fastest up, each widen the measured
//! domains (CPUs linked by pairs at or below it, stacked pairs included).
//! Each is named after the published level (thread siblings, the
//! last-level cache's CPUs, the package, the whole machine) its domains
//! agree with on the most pairs, never a lower level than the cluster
//! below; each published level is then compared with the measured domains
//! at it, pair by pair, as `pairs` does: agreed, fake or hidden.

use crate::cpuset::{CpuSet, cpu_pair};
use crate::judge::gaps::{apart, percentile};
use crate::judge::pairs::{MapJudgement, MapVerdict, groups_of, judge_partition, map_verdict};
use crate::measure::latency::PingPongSample;
use crate::plan::latency::{FlatAt, RowOutcome};
use crate::plan::pairs::CandidateSet;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The percentile of a pair's samples that is its latency.
pub const LATENCY_PERCENTILE: f64 = 0.10;

pub use crate::judge::gaps::{Gap, MIN_GAP_RATIO};

/// Samples a pair keeps at least before [`settled`] may end it: a 10th
/// percentile needs ten to be more than the minimum's neighbour.
pub const MIN_SAMPLES_TO_SETTLE: usize = 10;

/// The early stop: a pair needs no more samples once it has
/// [`MIN_SAMPLES_TO_SETTLE`] and its latency from all of them lies within
/// half a gap (a factor of √[`MIN_GAP_RATIO`]) of its latency from the first
/// half. Interference only adds time, so more samples can only lower the
/// low percentile; one that moved less than half the narrowest gap between
/// two clusters while the samples doubled is in its cluster. Pairs that
/// run into their bound settle in the probe (three in a row).
pub fn settled(samples: &[PingPongSample]) -> bool {
    if samples.len() < MIN_SAMPLES_TO_SETTLE {
        return false;
    }
    let estimate =
        |samples: &[PingPongSample]| percentile(&sorted_one_way(samples), LATENCY_PERCENTILE);
    match (estimate(&samples[..samples.len() / 2]), estimate(samples)) {
        (Some(first_half), Some(all)) => first_half / all < MIN_GAP_RATIO.sqrt(),
        _ => false,
    }
}

/// The time-sliced pairs the rest of the matrix does not bear out, to be
/// measured once more. Stacking is an equivalence (two vCPUs on one host
/// CPU), so a time-sliced pair's CPUs are time-sliced with the same other
/// CPUs; a host stall of a few samples' length makes one pair look
/// time-sliced without its neighbours. A pair is doubtful when at least
/// half of the CPUs measured with both of its CPUs (its witnesses) see them
/// differently: a wrong pair disagrees with nearly all of them, while a
/// right pair beside it disagrees with one (the wrong pair's other CPU). A
/// pair with no witness has nothing to bear it out either.
pub fn doubtful_time_sliced(tested: &CpuSet, pairs: &[PairLatency]) -> Vec<[u32; 2]> {
    let by_cpus = ByCpus::new(pairs);
    let find = |a: u32, b: u32| by_cpus.get(a, b);
    pairs
        .iter()
        .filter(|p| p.time_sliced())
        .filter(|p| {
            let [a, b] = p.cpus;
            let witnesses: Vec<bool> = tested
                .iter()
                .filter(|&c| c != a && c != b)
                .filter_map(|c| Some(find(a, c)?.time_sliced() != find(b, c)?.time_sliced()))
                .collect();
            let differing = witnesses.iter().filter(|&&differs| differs).count();
            witnesses.is_empty() || 2 * differing >= witnesses.len()
        })
        .map(|p| p.cpus)
        .collect()
}

/// How close a pair's CPUs are, for `--one-per-domain`: time-sliced
/// (stacked, one host CPU) is closest, then the faster latency.
fn closeness(pair: &PairLatency) -> (bool, f64) {
    (
        !pair.time_sliced(),
        pair.one_way_ns.unwrap_or(f64::INFINITY),
    )
}

/// What a representative's row shows: the other CPUs in classes, closest
/// first (those time-sliced with it, then the others split at
/// [`MIN_GAP_RATIO`] gaps); or one class only, which is the class an
/// earlier representative saw the whole group at (`seen_flat`) or not.
pub fn row_outcome(
    row: &[PairLatency],
    representative: u32,
    seen_flat: Option<FlatAt>,
) -> RowOutcome {
    let other = |p: &PairLatency| {
        if p.cpus[0] == representative {
            p.cpus[1]
        } else {
            p.cpus[0]
        }
    };
    let mut sorted: Vec<&PairLatency> = row.iter().collect();
    sorted.sort_by(|a, b| {
        closeness(a)
            .partial_cmp(&closeness(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut classes: Vec<Vec<u32>> = Vec::new();
    let mut previous: Option<&PairLatency> = None;
    for pair in &sorted {
        if previous.is_none_or(|before| !same_class(flat_at(before), flat_at(pair))) {
            classes.push(Vec::new());
        }
        if let Some(class) = classes.last_mut() {
            class.push(other(pair));
        }
        previous = Some(pair);
    }
    for class in &mut classes {
        class.sort_unstable();
    }
    match (classes.len(), sorted.first()) {
        (1, Some(first)) => {
            let flat = flat_at(first);
            if seen_flat.is_some_and(|seen| same_class(seen, flat)) {
                RowOutcome::FlatAgain
            } else {
                RowOutcome::Flat(flat)
            }
        }
        _ => RowOutcome::Split(classes),
    }
}

/// A split row's bridge (see [`crate::plan::latency::Bridge`]) bears the
/// row out: it lies in the class of the row's entry it should equal.
pub fn bridge_bears_out(row_entry: &PairLatency, bridge: &PairLatency) -> bool {
    same_class(flat_at(row_entry), flat_at(bridge))
}

/// Where one pair lies, as a row's class.
fn flat_at(pair: &PairLatency) -> FlatAt {
    FlatAt {
        low_ns: pair.one_way_ns,
        time_sliced: pair.time_sliced(),
    }
}

/// Two latencies in one class: both time-sliced (a time slice's latency
/// moves with the host's scheduling, its class does not), or neither and
/// no gap of [`MIN_GAP_RATIO`] between them.
fn same_class(a: FlatAt, b: FlatAt) -> bool {
    match (a.time_sliced, b.time_sliced) {
        (true, true) => true,
        (false, false) => match (a.low_ns, b.low_ns) {
            (Some(x), Some(y)) => !apart(x.min(y), x.max(y)),
            (None, None) => true,
            _ => false,
        },
        _ => false,
    }
}

/// Every pair of `tested` that `measured` lacks, taken from the last of
/// `rows` (a representative and the CPUs measured against it) that held
/// both its CPUs: the farther of its two entries (the closer is the
/// representative's own domain), or the representative's own pair.
pub fn infer_unmeasured(
    tested: &CpuSet,
    measured: &[PairLatency],
    rows: &[(u32, Vec<u32>)],
) -> Vec<PairLatency> {
    let by_cpus = ByCpus::new(measured);
    // The representative of the last row holding both CPUs of each pair.
    let mut last_row: HashMap<[u32; 2], u32> = HashMap::new();
    for (representative, others) in rows {
        let held: Vec<u32> = std::iter::once(*representative)
            .chain(others.iter().copied())
            .collect();
        for (i, &a) in held.iter().enumerate() {
            for &b in &held[i + 1..] {
                last_row.insert(cpu_pair(a, b), *representative);
            }
        }
    }
    tested
        .pairs()
        .filter(|&[a, b]| by_cpus.get(a, b).is_none())
        .filter_map(|[a, b]| {
            let representative = *last_row.get(&[a, b])?;
            let (to_a, to_b) = (
                by_cpus.get(representative, a)?,
                by_cpus.get(representative, b)?,
            );
            let farther = if closeness(to_a) >= closeness(to_b) {
                to_a
            } else {
                to_b
            };
            Some(PairLatency {
                cpus: [a, b],
                inferred_from: Some(representative),
                ..farther.clone()
            })
        })
        .collect()
}

/// A pair measured beside other pairs agrees with the same pair measured
/// alone: both time-sliced (stacked either way), or neither with latencies
/// within half a gap (√[`MIN_GAP_RATIO`]) of each other, so that no
/// cluster could change.
pub fn together_agrees_with_alone(together: &PairLatency, alone: &PairLatency) -> bool {
    match (together.time_sliced(), alone.time_sliced()) {
        // Stacked either way: a time slice's latency moves with the host's
        // scheduling (670 µs beside others, 2.01 ms alone in a TCG guest),
        // its class does not.
        (true, true) => return true,
        (false, false) => {}
        _ => return false,
    }
    match (together.one_way_ns, alone.one_way_ns) {
        (Some(t), Some(a)) => t.max(a) / t.min(a) < MIN_GAP_RATIO.sqrt(),
        (None, None) => true,
        _ => false,
    }
}

/// One pair's (or the control's) latency, from its samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PairLatency {
    /// The two CPUs (the same twice for the control).
    pub cpus: [u32; 2],
    /// One-way latency in ns: the [`LATENCY_PERCENTILE`] of the samples'
    /// half round trips; `None` when no sample completed a round trip.
    pub one_way_ns: Option<f64>,
    /// The spread: the 10th and 90th percentiles of the same.
    pub p10_ns: Option<f64>,
    pub p90_ns: Option<f64>,
    /// Samples kept (the warm-up one not counted).
    pub samples: usize,
    /// Of them, samples that ended at the wall-time bound.
    pub bounded_samples: usize,
    /// Of them, samples without a single round trip within the bound.
    pub no_progress_samples: usize,
    /// Both threads were on their CPUs before and after.
    pub pinned: bool,
    /// `--one-per-domain`: not measured, but taken from the row of this
    /// representative (see [`infer_unmeasured`]); its samples are that
    /// entry's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inferred_from: Option<u32>,
}

impl PairLatency {
    /// The latency of `cpus` from its kept `samples`.
    pub fn of(cpus: [u32; 2], samples: &[PingPongSample], pinned: bool) -> PairLatency {
        let one_way = sorted_one_way(samples);
        let at = |p: f64| percentile(&one_way, p);
        PairLatency {
            cpus,
            one_way_ns: at(LATENCY_PERCENTILE),
            p10_ns: at(0.10),
            p90_ns: at(0.90),
            samples: samples.len(),
            bounded_samples: samples.iter().filter(|s| s.bounded).count(),
            no_progress_samples: samples.iter().filter(|s| s.round_trips == 0).count(),
            pinned,
            inferred_from: None,
        }
    }

    /// Measured, and not one round trip within any sample's bound.
    pub fn no_progress(&self) -> bool {
        self.samples > 0 && self.one_way_ns.is_none()
    }

    /// Most of its samples ran into their wall-time bound: its threads
    /// progressed only when one of them was preempted. A cache line crosses
    /// in nanoseconds to a few microseconds, so 1000 round trips that do not
    /// fit a bound of milliseconds are time slices, whatever their count.
    pub fn time_sliced(&self) -> bool {
        self.samples > 0 && self.bounded_samples * 2 > self.samples
    }
}

/// The samples' one-way times (those with a round trip), ascending.
fn sorted_one_way(samples: &[PingPongSample]) -> Vec<f64> {
    let mut one_way: Vec<f64> = samples.iter().filter_map(|s| s.one_way_ns()).collect();
    one_way.sort_by(f64::total_cmp);
    one_way
}

/// The pairs by their CPUs (lower first): one lookup each instead of a
/// scan of every pair, which a 256-CPU matrix (32640 pairs) cannot afford
/// per pair.
struct ByCpus<'a>(HashMap<[u32; 2], &'a PairLatency>);

impl<'a> ByCpus<'a> {
    fn new(pairs: &'a [PairLatency]) -> ByCpus<'a> {
        ByCpus(pairs.iter().map(|p| (p.cpus, p)).collect())
    }

    fn get(&self, a: u32, b: u32) -> Option<&'a PairLatency> {
        self.0.get(&cpu_pair(a, b)).copied()
    }
}

/// A level of the structure the kernel publishes, or the class of a
/// cluster of latencies named after one.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum LatencyClass {
    /// Progress only when the other thread is preempted: two vCPUs on one
    /// host CPU (compared with the published thread siblings).
    Stacked,
    /// Thread siblings of one core.
    SmtSiblings,
    /// CPUs of one last-level cache (a CCX, a cluster).
    SharedCache,
    /// CPUs of one package.
    SamePackage,
    /// CPUs of different packages.
    AcrossPackages,
}

impl LatencyClass {
    /// The word JSON and the tables spell.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The published partitions of the tested CPUs, level by level.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PublishedLevels {
    /// Thread siblings.
    pub smt_siblings: Vec<CpuSet>,
    /// CPUs sharing the last-level cache; empty when no cache is published.
    pub shared_cache: Vec<CpuSet>,
    pub packages: Vec<CpuSet>,
    /// Why the published structure is unknown (the machine's files name no
    /// core sibling sets): no level is then compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

impl PublishedLevels {
    /// The levels in order, each with its class; the cache level only
    /// where caches are published, and the whole machine last.
    fn in_order(&self, tested: &CpuSet) -> Vec<(LatencyClass, Vec<CpuSet>)> {
        let mut levels = vec![(LatencyClass::SmtSiblings, self.smt_siblings.clone())];
        if !self.shared_cache.is_empty() {
            levels.push((LatencyClass::SharedCache, self.shared_cache.clone()));
        }
        levels.push((LatencyClass::SamePackage, self.packages.clone()));
        levels.push((LatencyClass::AcrossPackages, vec![tested.clone()]));
        levels
    }
}

/// Latencies with no gap of [`MIN_GAP_RATIO`] among them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cluster {
    pub class: LatencyClass,
    /// The fastest and slowest latency in it (pairs without progress have
    /// none: a stacked cluster of only those has neither).
    pub low_ns: Option<f64>,
    pub high_ns: Option<f64>,
    /// Its pairs, lower CPU first.
    pub pairs: Vec<[u32; 2]>,
    /// The measured domains once it and every faster cluster link their
    /// CPUs (stacked pairs always do).
    pub domains: Vec<CpuSet>,
}

/// One published level against the measured domains at it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LevelJudgement {
    pub level: LatencyClass,
    pub map: MapJudgement,
    pub verdict: MapVerdict,
}

/// Everything the matrix says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyJudgement {
    /// Fastest first; a stacked cluster last.
    pub clusters: Vec<Cluster>,
    /// The gaps between consecutive clusters, fastest first, up to the one
    /// below the stacked cluster (the control's, the time-slice scale).
    pub gaps: Vec<Gap>,
    /// Thread siblings first (where stacked pairs are judged), then the
    /// shared cache (where published) and the package.
    pub levels: Vec<LevelJudgement>,
    pub verdict: MapVerdict,
}

/// Judges the `pairs` of `tested` (the `control`'s latency marks the
/// time-slice scale) against the `published` levels. `unmeasured` pairs
/// (a time budget, a stop) leave their levels undecided; without a passing
/// control, or when `complete` is false, the verdict is inconclusive.
pub fn judge_latency(
    tested: &CpuSet,
    pairs: &[PairLatency],
    control: Option<&PairLatency>,
    published: &PublishedLevels,
    control_passed: bool,
    complete: bool,
) -> LatencyJudgement {
    let (clusters, gaps) = clusters_of(tested, pairs, control, published);
    let by_cpus = ByCpus::new(pairs);
    let unmeasured: Vec<[u32; 2]> = tested
        .pairs()
        .filter(|&[a, b]| by_cpus.get(a, b).is_none())
        .collect();
    let stacked_domains = clusters
        .iter()
        .find(|c| c.is_stacked())
        .map_or_else(|| groups_of(tested, &[]), |c| c.domains.clone());
    let mut levels = Vec::new();
    for (level, groups) in published.in_order(tested) {
        if level == LatencyClass::AcrossPackages {
            continue;
        }
        // The domains of the slowest cluster named at or below this level.
        let domains = clusters
            .iter()
            .rfind(|c| !c.is_stacked() && c.class <= level)
            .map_or_else(|| stacked_domains.clone(), |c| c.domains.clone());
        let mut map = judge_partition(tested, &groups, domains, &unmeasured);
        map.published_unknown = published.unknown.clone();
        let verdict = map_verdict(&map, control_passed, complete);
        levels.push(LevelJudgement {
            level,
            map,
            verdict,
        });
    }
    let verdicts: Vec<MapVerdict> = levels.iter().map(|l| l.verdict).collect();
    let verdict = [MapVerdict::Differ, MapVerdict::Inconclusive]
        .into_iter()
        .find(|v| verdicts.contains(v))
        .unwrap_or(MapVerdict::Agree);
    LatencyJudgement {
        clusters,
        gaps,
        levels,
        verdict,
    }
}

/// The pair just above each gap between transfer clusters: the fastest
/// measured pair of every cluster but the fastest, the stacked one aside.
/// Noise only ever adds to a latency, so a gap that one noisy pair opened
/// closes when that pair is measured again (a CI guest read 0-9 at 357 ns
/// against 212 ns for every other transfer: a second class of one pair).
pub fn gap_edges(
    tested: &CpuSet,
    pairs: &[PairLatency],
    control: Option<&PairLatency>,
    published: &PublishedLevels,
) -> Vec<[u32; 2]> {
    let (clusters, _) = clusters_of(tested, pairs, control, published);
    let by_cpus = ByCpus::new(pairs);
    clusters
        .iter()
        .filter(|c| !c.is_stacked())
        .skip(1)
        .filter_map(|cluster| {
            cluster
                .pairs
                .iter()
                .filter_map(|&[a, b]| by_cpus.get(a, b))
                .filter(|p| p.inferred_from.is_none())
                .filter_map(|p| Some((p.one_way_ns?, p.cpus)))
                .min_by(|x, y| x.0.total_cmp(&y.0))
                .map(|(_, cpus)| cpus)
        })
        .collect()
}

/// A pair's reading `again` is no slower than its reading `before`, so it
/// is kept (otherwise `before` stands): noise only adds to a latency, so
/// the faster of two readings of one pair is the truer.
pub fn reading_again_is_faster(before: &PairLatency, again: &PairLatency) -> bool {
    // Slowest last: a time-sliced reading, then no round trip at all.
    let slowness = |p: &PairLatency| (p.time_sliced(), p.one_way_ns.unwrap_or(f64::INFINITY));
    slowness(again) <= slowness(before)
}

impl Cluster {
    fn is_stacked(&self) -> bool {
        self.class == LatencyClass::Stacked
    }
}

/// The clusters of the pairs' latencies (the stacked one last) and the
/// gaps between them.
fn clusters_of(
    tested: &CpuSet,
    pairs: &[PairLatency],
    control: Option<&PairLatency>,
    published: &PublishedLevels,
) -> (Vec<Cluster>, Vec<Gap>) {
    // Sorted latencies with their pair (`None`: the control's).
    let mut sorted: Vec<(f64, Option<[u32; 2]>)> = pairs
        .iter()
        .filter_map(|p| Some((p.one_way_ns?, Some(p.cpus))))
        .chain(control.and_then(|c| Some((c.one_way_ns?, None))))
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut runs: Vec<Vec<(f64, Option<[u32; 2]>)>> = Vec::new();
    let mut gaps = Vec::new();
    for entry in sorted {
        match runs.last_mut() {
            Some(run) => match Gap::between(run[run.len() - 1].0, entry.0) {
                None => run.push(entry),
                Some(gap) => {
                    gaps.push(gap);
                    runs.push(vec![entry]);
                }
            },
            None => runs.push(vec![entry]),
        }
    }
    // The control's run, the first run holding a time-sliced pair, and
    // every pair without progress are stacked. Under an emulator two stacked
    // vCPUs may trade the line many times a time slice and still fall far
    // below the control (668 µs against 11.9 ms in a TCG guest): the bound
    // they ran into, not their distance from the control, shows them.
    let time_sliced: Vec<[u32; 2]> = pairs
        .iter()
        .filter(|p| p.time_sliced())
        .map(|p| p.cpus)
        .collect();
    let stacked_run = runs.iter().position(|run| {
        run.iter()
            .any(|e| e.1.is_none_or(|pair| time_sliced.contains(&pair)))
    });
    let mut stacked_pairs: Vec<[u32; 2]> = pairs
        .iter()
        .filter(|p| p.no_progress())
        .map(|p| p.cpus)
        .collect();
    let mut stacked_range: Option<(f64, f64)> = None;
    if let Some(index) = stacked_run {
        // The gap below the stacked run separates it; gaps above it are
        // within the time-slice scale, and the runs above it are stacked
        // too (slower than a time slice is no faster transfer).
        gaps.truncate(index);
        for run in runs.drain(index..) {
            for (ns, pair) in run {
                stacked_range =
                    Some(stacked_range.map_or((ns, ns), |(l, h)| (l.min(ns), h.max(ns))));
                stacked_pairs.extend(pair);
            }
        }
    }
    stacked_pairs.sort();
    let levels = published.in_order(tested);
    let mut linked: Vec<(u32, u32)> = stacked_pairs.iter().map(|p| (p[0], p[1])).collect();
    let stacked_domains = groups_of(tested, &linked);
    let mut lowest_level = 0;
    let mut clusters = Vec::new();
    for run in runs {
        let mut cluster_pairs: Vec<[u32; 2]> = run.iter().filter_map(|e| e.1).collect();
        cluster_pairs.sort();
        linked.extend(cluster_pairs.iter().map(|p| (p[0], p[1])));
        let domains = groups_of(tested, &linked);
        // The level whose partition agrees with the domains on the most
        // pairs, the lowest of equals, never below the last cluster's.
        let disagreements = |groups: &[CpuSet]| disagreements(tested, groups, &domains);
        let best = (lowest_level..levels.len())
            .min_by_key(|&i| (disagreements(&levels[i].1), i))
            .unwrap_or(levels.len() - 1);
        lowest_level = best;
        clusters.push(Cluster {
            class: levels[best].0,
            low_ns: run.first().map(|e| e.0),
            high_ns: run.last().map(|e| e.0),
            pairs: cluster_pairs,
            domains,
        });
    }
    if !stacked_pairs.is_empty() {
        clusters.push(Cluster {
            class: LatencyClass::Stacked,
            low_ns: stacked_range.map(|r| r.0),
            high_ns: stacked_range.map(|r| r.1),
            domains: stacked_domains,
            pairs: stacked_pairs,
        });
    }
    (clusters, gaps)
}

/// The candidate sets `pairs --first-pass latency` searches within: the
/// CPUs linked by stacked pairs and, where the matrix has more than one
/// faster cluster, by the fastest (the SMT siblings' place on a layered
/// machine; a flat matrix, one cluster, links nothing). Every tested CPU
/// is in one set, alone where nothing linked it.
pub fn candidate_sets(tested: &CpuSet, judgement: &LatencyJudgement) -> Vec<CandidateSet> {
    let stacked: Vec<(u32, u32)> = judgement
        .clusters
        .iter()
        .filter(|c| c.is_stacked())
        .flat_map(|c| c.pairs.iter().map(|p| (p[0], p[1])))
        .collect();
    let faster: Vec<&Cluster> = judgement
        .clusters
        .iter()
        .filter(|c| !c.is_stacked())
        .collect();
    let mut links = stacked.clone();
    if faster.len() > 1 {
        links.extend(faster[0].pairs.iter().map(|p| (p[0], p[1])));
    }
    groups_of(tested, &links)
        .into_iter()
        .map(|cpus| CandidateSet {
            stacked: stacked
                .iter()
                .any(|&(a, b)| cpus.contains(a) && cpus.contains(b)),
            cpus,
        })
        .collect()
}

/// The pairs of `tested` that one partition puts together and the other
/// apart.
fn disagreements(tested: &CpuSet, a: &[CpuSet], b: &[CpuSet]) -> usize {
    let together =
        |groups: &[CpuSet], x: u32, y: u32| groups.iter().any(|g| g.contains(x) && g.contains(y));
    tested
        .pairs()
        .filter(|&[x, y]| together(a, x, y) != together(b, x, y))
        .count()
}

/// Recorded pairs for the tests of this layer and the study's.
#[cfg(test)]
pub(crate) mod recorded {
    use super::PairLatency;

    /// A pair measured at `ns` in 10 samples, none at the bound (`None`:
    /// 3 of them made no progress).
    pub fn pair(a: u32, b: u32, ns: Option<f64>) -> PairLatency {
        PairLatency {
            cpus: [a, b],
            one_way_ns: ns,
            p10_ns: ns,
            p90_ns: ns,
            samples: 10,
            bounded_samples: if ns.is_none() { 3 } else { 0 },
            no_progress_samples: if ns.is_none() { 3 } else { 0 },
            pinned: true,
            inferred_from: None,
        }
    }

    /// `pair` with every sample at the bound: time-sliced.
    pub fn sliced(mut pair: PairLatency) -> PairLatency {
        pair.bounded_samples = pair.samples;
        pair
    }

    /// Every pair of `cpus` at `ns(a, b)`.
    pub fn matrix(cpus: &[u32], ns: impl Fn(u32, u32) -> Option<f64>) -> Vec<PairLatency> {
        let mut pairs = Vec::new();
        for (i, &a) in cpus.iter().enumerate() {
            for &b in &cpus[i + 1..] {
                pairs.push(pair(a, b, ns(a, b)));
            }
        }
        pairs
    }
}

#[cfg(test)]
mod tests {
    use super::recorded::{matrix, pair, sliced};
    use super::*;
    use crate::judge::pairs::{CpuRelation, PairRelation};

    fn set(cpus: &[u32]) -> CpuSet {
        CpuSet::from_cpus(cpus.iter().copied())
    }

    fn control() -> PairLatency {
        pair(0, 0, Some(3_000_000.0))
    }

    /// Four vCPUs published as two cores of two threads, one cache, one
    /// package: `-smp 4,sockets=1,cores=2,threads=2`.
    fn guest_published() -> PublishedLevels {
        PublishedLevels {
            smt_siblings: vec![set(&[0, 1]), set(&[2, 3])],
            shared_cache: vec![set(&[0, 1, 2, 3])],
            packages: vec![set(&[0, 1, 2, 3])],
            unknown: None,
        }
    }

    fn judge(pairs: &[PairLatency], published: &PublishedLevels) -> LatencyJudgement {
        let tested = pairs.iter().flat_map(|p| p.cpus).collect();
        judge_latency(&tested, pairs, Some(&control()), published, true, true)
    }

    fn level(judged: &LatencyJudgement, class: LatencyClass) -> &LevelJudgement {
        judged.levels.iter().find(|l| l.level == class).unwrap()
    }

    #[test]
    fn a_pair_latency_is_a_low_percentile_of_half_round_trips() {
        let sample = |round_trips, nanos, bounded| PingPongSample {
            round_trips,
            nanos,
            bounded,
        };
        let mut samples: Vec<PingPongSample> = (0..9)
            .map(|i| sample(1000, 200_000 + i * 10_000, false))
            .collect();
        samples.push(sample(0, 20_000_000, true));
        let latency = PairLatency::of([0, 1], &samples, true);
        assert_eq!(latency.one_way_ns, Some(100.0));
        assert_eq!(latency.p90_ns, Some(140.0));
        assert_eq!((latency.samples, latency.bounded_samples), (10, 1));
        assert_eq!(latency.no_progress_samples, 1);
        assert!(!latency.no_progress());
        let stuck = PairLatency::of([0, 1], &[sample(0, 20_000_000, true)], true);
        assert!(stuck.no_progress());
    }

    #[test]
    fn two_cpus_of_one_cache_agree() {
        let pairs = [pair(0, 1, Some(60.0))];
        let published = PublishedLevels {
            smt_siblings: vec![set(&[0]), set(&[1])],
            shared_cache: vec![set(&[0, 1])],
            packages: vec![set(&[0, 1])],
            unknown: None,
        };
        let judged = judge(&pairs, &published);
        assert_eq!(judged.clusters.len(), 1);
        assert_eq!(judged.clusters[0].class, LatencyClass::SharedCache);
        // The one gap is the control's: the time-slice scale above.
        assert_eq!(judged.gaps.len(), 1, "{:?}", judged.gaps);
        assert_eq!(judged.gaps[0].above_ns, 3_000_000.0);
        assert_eq!(judged.verdict, MapVerdict::Agree);
    }

    #[test]
    fn stacked_vcpus_where_siblings_are_published_agree() {
        // PIN=0,0,1,1: vCPUs 0 and 1 on one host CPU, 2 and 3 on another.
        let stacked = |a: u32, b: u32| a / 2 == b / 2;
        let pairs = matrix(&[0, 1, 2, 3], |a, b| {
            Some(if stacked(a, b) { 2_500_000.0 } else { 45.0 })
        });
        let judged = judge(&pairs, &guest_published());
        let last = judged.clusters.last().unwrap();
        assert_eq!(last.class, LatencyClass::Stacked);
        assert_eq!(last.pairs, vec![[0, 1], [2, 3]]);
        assert_eq!(judged.clusters[0].class, LatencyClass::SharedCache);
        // The gap below the time-slice scale separates them.
        assert_eq!(judged.gaps.len(), 1);
        assert_eq!(judged.gaps[0].below_ns, 45.0);
        let smt = level(&judged, LatencyClass::SmtSiblings);
        assert_eq!(smt.map.measured, vec![set(&[0, 1]), set(&[2, 3])]);
        assert_eq!(smt.verdict, MapVerdict::Agree);
        assert_eq!(judged.verdict, MapVerdict::Agree);
    }

    #[test]
    fn time_sliced_pairs_far_below_the_control_are_stacked() {
        // A TCG guest, PIN=0,0,1,1, measured: the stacked pairs traded the
        // line 15 times a 20 ms sample (668 µs, every sample at its bound),
        // the control 11.9 ms, the others 262-313 ns.
        let stacked = |a: u32, b: u32| a / 2 == b / 2;
        let pairs: Vec<PairLatency> = matrix(&[0, 1, 2, 3], |a, b| {
            Some(if stacked(a, b) {
                668_000.0 + f64::from(a)
            } else {
                280.0
            })
        })
        .into_iter()
        .map(|mut p| {
            if stacked(p.cpus[0], p.cpus[1]) {
                p.samples = 3;
                p.bounded_samples = 3;
            }
            p
        })
        .collect();
        let tested = set(&[0, 1, 2, 3]);
        let control = pair(0, 0, Some(11_900_000.0));
        let judged = judge_latency(
            &tested,
            &pairs,
            Some(&control),
            &guest_published(),
            true,
            true,
        );
        let last = judged.clusters.last().unwrap();
        assert_eq!(last.class, LatencyClass::Stacked);
        assert_eq!(last.pairs, vec![[0, 1], [2, 3]]);
        assert_eq!(judged.gaps.len(), 1, "{:?}", judged.gaps);
        assert_eq!(judged.verdict, MapVerdict::Agree);
    }

    fn sample(one_way_ns: u64) -> PingPongSample {
        PingPongSample {
            round_trips: 1000,
            nanos: one_way_ns * 2000,
            bounded: false,
        }
    }

    #[test]
    fn a_pair_settles_once_its_estimate_holds_while_its_samples_double() {
        let steady: Vec<PingPongSample> = (0..10).map(|i| sample(100 + i % 3)).collect();
        assert!(!settled(&steady[..9]), "fewer than ten samples");
        assert!(settled(&steady));
        // The first half's low end at 300 ns, the second's at 100 ns: the
        // estimate moved by more than half a gap, so keep sampling.
        let falling: Vec<PingPongSample> = (0..10)
            .map(|i| sample(if i < 5 { 300 } else { 100 }))
            .collect();
        assert!(!settled(&falling));
        let none: Vec<PingPongSample> = (0..10)
            .map(|_| PingPongSample {
                round_trips: 0,
                nanos: 20_000_000,
                bounded: true,
            })
            .collect();
        assert!(
            !settled(&none),
            "no round trip: the probe's own rule ends it"
        );
    }

    #[test]
    fn a_pair_beside_others_agrees_when_it_stays_within_half_a_gap() {
        let alone = pair(0, 1, Some(100.0));
        assert!(together_agrees_with_alone(&pair(0, 1, Some(115.0)), &alone));
        assert!(!together_agrees_with_alone(
            &pair(0, 1, Some(130.0)),
            &alone
        ));
        assert!(!together_agrees_with_alone(&pair(0, 1, None), &alone));
        let mut sliced = pair(0, 1, Some(670_000.0));
        sliced.bounded_samples = 8;
        assert!(!together_agrees_with_alone(&sliced, &alone));
        let mut sliced_alone = pair(0, 1, Some(2_010_000.0));
        sliced_alone.bounded_samples = 8;
        assert!(together_agrees_with_alone(&sliced, &sliced_alone));
    }

    #[test]
    fn candidate_sets_are_stacked_domains_or_the_fastest_of_layers() {
        let stacked = |a: u32, b: u32| a % 2 == b % 2;
        let pairs = matrix(&[0, 1, 2, 3], |a, b| {
            Some(if stacked(a, b) { 2_500_000.0 } else { 300.0 })
        });
        let judged = judge(&pairs, &guest_published());
        let sets = candidate_sets(&set(&[0, 1, 2, 3]), &judged);
        assert_eq!(
            sets,
            vec![
                CandidateSet {
                    cpus: set(&[0, 2]),
                    stacked: true
                },
                CandidateSet {
                    cpus: set(&[1, 3]),
                    stacked: true
                },
            ]
        );
        // A flat matrix links nothing; layers link the fastest.
        let flat = judge(
            &matrix(&[0, 1, 2, 3], |_, _| Some(80.0)),
            &guest_published(),
        );
        assert!(
            candidate_sets(&set(&[0, 1, 2, 3]), &flat)
                .iter()
                .all(|s| s.cpus.len() == 1)
        );
        let layered = judge(
            &matrix(&[0, 1, 2, 3], |a, b| {
                Some(if a / 2 == b / 2 { 20.0 } else { 80.0 })
            }),
            &guest_published(),
        );
        let sets = candidate_sets(&set(&[0, 1, 2, 3]), &layered);
        assert_eq!(
            sets[0],
            CandidateSet {
                cpus: set(&[0, 1]),
                stacked: false
            }
        );
        assert_eq!(sets[1].cpus, set(&[2, 3]));
    }

    #[test]
    fn a_time_sliced_pair_its_neighbours_do_not_bear_out_is_doubtful() {
        // 0,1 stacked and 2,3 stacked: consistent.
        let stacked = |a: u32, b: u32| a / 2 == b / 2;
        let consistent: Vec<PairLatency> = matrix(&[0, 1, 2, 3], |_, _| Some(300.0))
            .into_iter()
            .map(|p| {
                if stacked(p.cpus[0], p.cpus[1]) {
                    sliced(p)
                } else {
                    p
                }
            })
            .collect();
        assert!(doubtful_time_sliced(&set(&[0, 1, 2, 3]), &consistent).is_empty());
        // A stall during 1-3 alone: its witnesses 0 and 2 both see 1 and 3
        // differently; 0-1 and 2-3 each have one witness of two that does
        // (the stalled pair's other CPU), so they are measured again too.
        let mut stalled = consistent.clone();
        let index = stalled.iter().position(|p| p.cpus == [1, 3]).unwrap();
        stalled[index] = sliced(stalled[index].clone());
        assert_eq!(
            doubtful_time_sliced(&set(&[0, 1, 2, 3]), &stalled),
            vec![[0, 1], [1, 3], [2, 3]]
        );
        // On 8 CPUs (0,2,4,6 and 1,3,5,7 stacked) a stalled 0-1 is the only
        // doubtful pair: each right pair beside it has one differing
        // witness of six.
        let eight: Vec<PairLatency> = matrix(&[0, 1, 2, 3, 4, 5, 6, 7], |_, _| Some(300.0))
            .into_iter()
            .map(|p| {
                let [a, b] = p.cpus;
                if a % 2 == b % 2 || [a, b] == [0, 1] {
                    sliced(p)
                } else {
                    p
                }
            })
            .collect();
        assert_eq!(
            doubtful_time_sliced(&set(&[0, 1, 2, 3, 4, 5, 6, 7]), &eight),
            vec![[0, 1]]
        );
        // Two CPUs: nothing bears it out.
        let two = vec![sliced(pair(0, 1, Some(700_000.0)))];
        assert_eq!(doubtful_time_sliced(&set(&[0, 1]), &two), vec![[0, 1]]);
    }

    #[test]
    fn a_row_keeps_time_sliced_pairs_in_one_class_however_their_latency_wanders() {
        // A TCG guest's stacked pairs read 0.7 to 2.1 ms: one class, the
        // time-sliced one, then the transfers at about 300 ns.
        let sliced = |b: u32, ns: f64| sliced(pair(0, b, Some(ns)));
        let row = [
            sliced(2, 700_000.0),
            sliced(4, 2_100_000.0),
            pair(0, 1, Some(300.0)),
            pair(0, 3, Some(310.0)),
        ];
        assert_eq!(
            row_outcome(&row, 0, None),
            RowOutcome::Split(vec![vec![2, 4], vec![1, 3]])
        );
        let flat = [sliced(2, 700_000.0), sliced(4, 2_100_000.0)];
        let RowOutcome::Flat(seen) = row_outcome(&flat, 0, None) else {
            panic!("one class expected");
        };
        assert_eq!(row_outcome(&flat, 0, Some(seen)), RowOutcome::FlatAgain);
    }

    #[test]
    fn a_bridge_bears_its_row_out_in_the_same_class() {
        // CI guest, PIN=0,0,0,0,0,0,1,0,0,1: the row of 0 read 0-9 at
        // 357 ns; 6 and 9 share a host CPU.
        let row_entry = pair(0, 9, Some(357.0));
        assert!(!bridge_bears_out(
            &row_entry,
            &sliced(pair(6, 9, Some(1_670_000.0)))
        ));
        assert!(!bridge_bears_out(&row_entry, &pair(1, 9, Some(212.0))));
        assert!(bridge_bears_out(&row_entry, &pair(1, 9, Some(330.0))));
        let stacked = sliced(pair(0, 2, Some(700_000.0)));
        assert!(bridge_bears_out(
            &stacked,
            &sliced(pair(1, 2, Some(2_100_000.0)))
        ));
    }

    #[test]
    fn a_gap_edge_is_the_fastest_measured_pair_above_each_gap() {
        // Siblings 0-1 and 2-3 at 20 ns, the rest at 60 ns but 0-2 (noisy)
        // at 130 ns; 4 stacked on 0. Edges: 1-2 (the fastest at 60 ns) and
        // 0-2 (alone above the second gap); the stacked cluster has none.
        let pairs = matrix(&[0, 1, 2, 3, 4], |a, b| match (a, b) {
            (0, 1) | (2, 3) => Some(20.0),
            (0, 2) => Some(130.0),
            (1, 2) => Some(55.0),
            (0, 4) => Some(700_000.0),
            _ => Some(60.0),
        })
        .into_iter()
        .map(|p| if p.cpus == [0, 4] { sliced(p) } else { p })
        .collect::<Vec<_>>();
        let tested = set(&[0, 1, 2, 3, 4]);
        let published = PublishedLevels {
            smt_siblings: vec![set(&[0, 1]), set(&[2, 3]), set(&[4])],
            shared_cache: vec![tested.clone()],
            packages: vec![tested.clone()],
            unknown: None,
        };
        assert_eq!(
            gap_edges(&tested, &pairs, None, &published),
            vec![[1, 2], [0, 2]]
        );
        // An inferred pair is no edge: it was never measured to measure
        // again.
        let mut inferred = pairs.clone();
        for p in &mut inferred {
            if p.cpus == [1, 2] {
                p.inferred_from = Some(0);
            }
        }
        assert_eq!(
            gap_edges(&tested, &inferred, None, &published),
            vec![[0, 3], [0, 2]]
        );
    }

    #[test]
    fn the_faster_of_two_readings_stands() {
        let at = |ns: f64| pair(0, 1, Some(ns));
        assert!(reading_again_is_faster(&at(357.0), &at(212.0)));
        assert!(!reading_again_is_faster(&at(212.0), &at(357.0)));
        // A stall during the second reading: the first stands.
        assert!(!reading_again_is_faster(&at(212.0), &sliced(at(700_000.0))));
        assert!(reading_again_is_faster(&pair(0, 1, None), &at(212.0)));
        assert!(!reading_again_is_faster(&at(212.0), &pair(0, 1, None)));
    }

    #[test]
    fn crossed_stacked_vcpus_are_fake_and_hidden() {
        // PIN=0,1,0,1: vCPUs 0 and 2 share a host CPU, 1 and 3 another;
        // one pair of each made no progress at all.
        let pairs = matrix(&[0, 1, 2, 3], |a, b| match (a, b) {
            (0, 2) => Some(2_800_000.0),
            (1, 3) => None,
            _ => Some(50.0),
        });
        let judged = judge(&pairs, &guest_published());
        let stacked = judged.clusters.last().unwrap();
        assert_eq!(stacked.class, LatencyClass::Stacked);
        assert_eq!(stacked.pairs, vec![[0, 2], [1, 3]]);
        let smt = level(&judged, LatencyClass::SmtSiblings);
        assert_eq!(smt.verdict, MapVerdict::Differ);
        let relations = |relation| {
            let pairs = smt.map.pairs.iter().filter(move |p| p.relation == relation);
            pairs.map(|p| p.cpus).collect::<Vec<_>>()
        };
        assert_eq!(relations(PairRelation::Fake), vec![[0, 1], [2, 3]]);
        assert_eq!(relations(PairRelation::Hidden), vec![[0, 2], [1, 3]]);
        assert!(
            smt.map
                .cpus
                .iter()
                .all(|c| c.relation == CpuRelation::FakeAndHiddenSiblings)
        );
        assert_eq!(judged.verdict, MapVerdict::Differ);
    }

    #[test]
    fn fast_pairs_a_machine_does_not_publish_are_hidden_siblings() {
        // Cores {0,2} and {1,3}, published as four single-thread cores.
        let pairs = matrix(&[0, 1, 2, 3], |a, b| {
            Some(if a % 2 == b % 2 { 12.0 } else { 70.0 })
        });
        let published = PublishedLevels {
            smt_siblings: (0..4).map(|c| set(&[c])).collect(),
            shared_cache: vec![set(&[0, 1, 2, 3])],
            packages: vec![set(&[0, 1, 2, 3])],
            unknown: None,
        };
        let judged = judge(&pairs, &published);
        let classes: Vec<LatencyClass> = judged.clusters.iter().map(|c| c.class).collect();
        assert_eq!(
            classes,
            [LatencyClass::SmtSiblings, LatencyClass::SharedCache]
        );
        assert_eq!(judged.gaps.len(), 2, "one to the control's time slice");
        assert!((judged.gaps[0].ratio - 70.0 / 12.0).abs() < 1e-9);
        let smt = level(&judged, LatencyClass::SmtSiblings);
        assert_eq!(smt.map.measured, vec![set(&[0, 2]), set(&[1, 3])]);
        assert_eq!(smt.verdict, MapVerdict::Differ);
        assert_eq!(
            level(&judged, LatencyClass::SharedCache).verdict,
            MapVerdict::Agree
        );
    }

    #[test]
    fn packages_are_a_slower_cluster_across() {
        let pairs = matrix(&[0, 1, 2, 3], |a, b| {
            Some(if a / 2 == b / 2 { 40.0 } else { 140.0 })
        });
        let published = PublishedLevels {
            smt_siblings: (0..4).map(|c| set(&[c])).collect(),
            shared_cache: vec![set(&[0, 1]), set(&[2, 3])],
            packages: vec![set(&[0, 1]), set(&[2, 3])],
            unknown: None,
        };
        let judged = judge(&pairs, &published);
        let classes: Vec<LatencyClass> = judged.clusters.iter().map(|c| c.class).collect();
        assert_eq!(
            classes,
            [LatencyClass::SharedCache, LatencyClass::AcrossPackages]
        );
        assert_eq!(judged.verdict, MapVerdict::Agree);
    }

    #[test]
    fn clusters_split_at_relative_gaps_at_any_scale() {
        // The same shape a thousand times slower: the same clusters.
        let shape = |scale: f64| {
            matrix(&[0, 1, 2, 3], move |a, b| {
                Some(
                    scale
                        * if a / 2 == b / 2 {
                            40.0 + f64::from(a)
                        } else {
                            140.0
                        },
                )
            })
        };
        let published = guest_published();
        let tested = set(&[0, 1, 2, 3]);
        let classes = |pairs: &[PairLatency]| {
            let judged = judge_latency(&tested, pairs, None, &published, true, true);
            judged
                .clusters
                .iter()
                .map(|c| c.pairs.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(classes(&shape(1.0)), classes(&shape(1000.0)));
        assert_eq!(classes(&shape(1.0)).len(), 2);
    }

    #[test]
    fn an_unmeasured_pair_or_a_failed_control_leaves_it_inconclusive() {
        let mut pairs = matrix(&[0, 1, 2, 3], |_, _| Some(50.0));
        pairs.pop();
        let judged = judge(&pairs, &guest_published());
        assert_eq!(
            judged.verdict,
            MapVerdict::Differ,
            "published siblings apart"
        );
        let published = PublishedLevels {
            smt_siblings: (0..4).map(|c| set(&[c])).collect(),
            ..guest_published()
        };
        assert_eq!(judge(&pairs, &published).verdict, MapVerdict::Inconclusive);
        let all = matrix(&[0, 1, 2, 3], |_, _| Some(50.0));
        let tested = set(&[0, 1, 2, 3]);
        let failed = judge_latency(&tested, &all, None, &published, false, true);
        assert_eq!(failed.verdict, MapVerdict::Inconclusive);
        let agreed = judge_latency(&tested, &all, None, &published, true, true);
        assert_eq!(agreed.verdict, MapVerdict::Agree);
    }
}
