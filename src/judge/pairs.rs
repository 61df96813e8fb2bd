//! `pairs`' judgement: each comparison's outcome from its penalty, the
//! measured sibling map from the comparisons, and how it relates to the
//! map the kernel publishes.
//!
//! A comparison is decided by the gate's rule, batch by batch
//! ([`crate::judge::batches::Evidence`]): the probe beside its candidates
//! against the probe alone, paired by repetition, until enough batches a
//! pause apart lie on one side of the threshold and none on the other.
//! "Physical" there means the set slows the probe: it [`Contention::Shares`].
//!
//! The measured map takes sharing as an equivalence: CPUs linked by
//! confirmed pair comparisons form one group. Every pair of CPUs then is
//! measured sharing (directly, or through a common sibling), measured apart,
//! inconclusive (its comparison straddled), or not measured (a time budget
//! ended the search first); and against the published map it is agreed,
//! fake (published, not measured), hidden (measured, not published) or
//! inconclusive.

use crate::cpuset::CpuSet;
use crate::judge::batches::{Batch, HostNoise};
use crate::judge::checks::ExcludedRep;
use crate::judge::gate::{Estimate, Verdict};
use crate::judge::stats::median;
use crate::plan::pairs::{Comparison, Contention};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A comparison's outcome, from the gate's verdict on it.
pub fn contention(verdict: Verdict) -> Contention {
    match verdict {
        Verdict::Physical => Contention::Shares,
        Verdict::Virtual => Contention::Apart,
        Verdict::NoSmt | Verdict::Inconclusive => Contention::Inconclusive,
    }
}

/// One measured comparison, as saved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ComparisonRecord {
    /// 1-based, in the order measured.
    #[schemars(range(min = 1))]
    pub index: usize,
    #[serde(flatten)]
    pub comparison: Comparison,
    pub outcome: Contention,
    /// The probe's penalty beside the set against alone (an [`Estimate`]
    /// whose treated arm is the probe beside the set, and whose baseline is
    /// the probe alone); `None` when too few repetitions survived.
    pub estimate: Option<Estimate>,
    /// The batches its rounds were measured in (empty in files before 0.2).
    #[serde(default)]
    pub batches: Vec<Batch>,
    /// How noisy the host was while it was measured.
    #[serde(default)]
    pub noise: Option<HostNoise>,
    /// The probe's cost per byte beside the set, per kept repetition (on
    /// the tick clock), paired element by element with `alone_costs`.
    pub loaded_costs: Vec<f64>,
    pub alone_costs: Vec<f64>,
    /// Repetitions left out (a worker moved, or a counter multiplexed).
    pub excluded: Vec<ExcludedRep>,
    /// Wall time this comparison took (a comparison runs no warm-ups).
    pub seconds: f64,
}

/// The map verdict. Each has its own exit code (see `exit.rs`).
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
pub enum MapVerdict {
    /// Every published sibling pair measured sharing, and no other pair.
    Agree,
    /// At least one pair is a fake or a hidden sibling.
    Differ,
    /// No difference found, but some pair could not be decided (or the
    /// control failed, or the search did not finish).
    Inconclusive,
}

impl MapVerdict {
    /// The verdict word, as tables print it and JSON spells it.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What the measurement says about one pair of CPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PairStatus {
    /// Its pair comparison cleared the threshold, or both share a third CPU.
    Shares,
    /// Its comparison (or a set holding one of them) stayed below it.
    Apart,
    /// Its comparison straddled, or contradicts the groups' other pairs.
    Inconclusive,
    /// Neither CPU's group was finished when the search ended.
    NotMeasured,
}

/// A pair against the published map.
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
pub enum PairRelation {
    /// Published siblings that measured sharing.
    Agreed,
    /// Published siblings that measured apart.
    Fake,
    /// Measured sharing, not published as siblings.
    Hidden,
    /// Undecided (inconclusive or not measured).
    Inconclusive,
}

impl PairRelation {
    /// The words the text view prints ("fake siblings"), not the saved
    /// word (`<&str>::from`, "fake").
    pub fn label(self) -> &'static str {
        match self {
            PairRelation::Agreed => "agreed siblings",
            PairRelation::Fake => "fake siblings",
            PairRelation::Hidden => "hidden siblings",
            PairRelation::Inconclusive => "inconclusive",
        }
    }
}

/// One pair worth listing: published siblings, measured sharing, or
/// undecided. Pairs neither published nor measured sharing are apart and
/// agreed, and are not listed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PairFinding {
    pub cpus: [u32; 2],
    pub published: bool,
    pub measured: PairStatus,
    pub relation: PairRelation,
    /// The comparison of exactly this pair, when one was measured; `None`
    /// when its status was inferred (through a common sibling, or from a set).
    #[schemars(range(min = 1))]
    pub comparison: Option<usize>,
}

/// One CPU's relation to its published and measured siblings.
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
pub enum CpuRelation {
    /// Its published and measured siblings are the same CPUs (maybe none).
    Agreed,
    /// Some published siblings measured apart; no hidden ones.
    FakeSiblings,
    /// Some CPUs measured sharing that are not published; no fake ones.
    HiddenSiblings,
    /// Both: its real siblings are other CPUs than the published ones.
    FakeAndHiddenSiblings,
    /// No difference found, but some of its pairs are undecided.
    Inconclusive,
}

impl CpuRelation {
    /// The words the text view prints ("fake siblings"), not the saved
    /// kebab-case word (`<&str>::from`).
    pub fn label(self) -> &'static str {
        match self {
            CpuRelation::Agreed => "agreed",
            CpuRelation::FakeSiblings => "fake siblings",
            CpuRelation::HiddenSiblings => "hidden siblings",
            CpuRelation::FakeAndHiddenSiblings => "fake and hidden siblings",
            CpuRelation::Inconclusive => "inconclusive",
        }
    }
}

/// One CPU's row of the map.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuMapEntry {
    pub cpu: u32,
    /// The CPU's published siblings among the tested CPUs, itself included.
    pub published: CpuSet,
    /// Its measured group, itself included.
    pub measured: CpuSet,
    pub fake: CpuSet,
    pub hidden: CpuSet,
    pub undecided: CpuSet,
    pub relation: CpuRelation,
}

/// Everything the comparisons say about the map; its verdict is
/// [`map_verdict`]'s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MapJudgement {
    /// The published groups, restricted to the tested CPUs.
    pub published: Vec<CpuSet>,
    /// The measured groups (singletons included), by lowest CPU.
    pub measured: Vec<CpuSet>,
    pub cpus: Vec<CpuMapEntry>,
    pub pairs: Vec<PairFinding>,
    /// Contradictions among the comparisons, one line each.
    pub notes: Vec<String>,
    /// Why the published map is unknown (the machine's files name no core
    /// sibling sets): `published` is then no claim, every relation to it
    /// is meaningless, and the verdict is inconclusive; only the measured
    /// map stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_unknown: Option<String>,
}

/// Groups of `cpus` joined by `links` (union by lowest member).
pub fn groups_of(cpus: &CpuSet, links: &[(u32, u32)]) -> Vec<CpuSet> {
    let mut group: BTreeMap<u32, u32> = cpus.iter().map(|c| (c, c)).collect();
    fn root(group: &BTreeMap<u32, u32>, mut cpu: u32) -> u32 {
        while group[&cpu] != cpu {
            cpu = group[&cpu];
        }
        cpu
    }
    for &(a, b) in links {
        if !(group.contains_key(&a) && group.contains_key(&b)) {
            continue;
        }
        let (ra, rb) = (root(&group, a), root(&group, b));
        let (low, high) = (ra.min(rb), ra.max(rb));
        group.insert(high, low);
    }
    let mut members: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for cpu in cpus.iter() {
        members.entry(root(&group, cpu)).or_default().push(cpu);
    }
    members.into_values().map(CpuSet::from_cpus).collect()
}

/// The published groups among `tested`: each CPU's `siblings` ∩ `tested`.
pub fn published_groups<'a>(
    tested: &CpuSet,
    siblings: impl IntoIterator<Item = (u32, &'a CpuSet)>,
) -> Vec<CpuSet> {
    let mut groups: Vec<CpuSet> = siblings
        .into_iter()
        .filter(|(cpu, _)| tested.contains(*cpu))
        .map(|(_, set)| set.intersection(tested))
        .collect();
    groups.sort();
    groups.dedup();
    groups
}

/// Judges the map: `tested` CPUs, their `published` groups, the measured
/// `comparisons`, and the CPUs whose group the search `settled`.
pub fn judge_map(
    tested: &CpuSet,
    published: &[CpuSet],
    comparisons: &[ComparisonRecord],
    settled: &CpuSet,
) -> MapJudgement {
    let key = |a: u32, b: u32| (a.min(b), a.max(b));
    // The last measured comparison of each pair decides it.
    let mut direct: BTreeMap<(u32, u32), &ComparisonRecord> = BTreeMap::new();
    for record in comparisons {
        if let Some(other) = record.comparison.pair() {
            direct.insert(key(record.comparison.probe, other), record);
        }
    }
    let links: Vec<(u32, u32)> = direct
        .iter()
        .filter(|(_, r)| r.outcome == Contention::Shares)
        .map(|(&pair, _)| pair)
        .collect();
    let measured = groups_of(tested, &links);
    let group_of = |cpu: u32| measured.iter().find(|g| g.contains(cpu));
    let published_together =
        |a: u32, b: u32| published.iter().any(|g| g.contains(a) && g.contains(b));
    // Sharing is an equivalence, so the direct pairs between two measured
    // groups answer for every pair across them: one measured apart decides
    // them all apart; otherwise one left inconclusive leaves them all
    // undecided (a CPU whose pair with a probe straddled may share with the
    // probe's whole group, however settled the search calls it).
    let between = |a: u32, b: u32| -> Option<Contention> {
        let (ga, gb) = (group_of(a)?, group_of(b)?);
        let across = |&(x, y): &(u32, u32)| {
            (ga.contains(x) && gb.contains(y)) || (ga.contains(y) && gb.contains(x))
        };
        let outcomes: Vec<Contention> = direct
            .iter()
            .filter(|(pair, _)| across(pair))
            .map(|(_, r)| r.outcome)
            .collect();
        [Contention::Apart, Contention::Inconclusive]
            .into_iter()
            .find(|wanted| outcomes.contains(wanted))
    };
    let mut notes = Vec::new();
    let mut pairs = Vec::new();
    let cpus = tested.cpus();
    for (i, &a) in cpus.iter().enumerate() {
        for &b in &cpus[i + 1..] {
            let record = direct.get(&(a, b));
            let together = group_of(a).is_some_and(|g| g.contains(b));
            let status = match record.map(|r| r.outcome) {
                Some(Contention::Apart) if together => {
                    notes.push(format!(
                        "CPUs {a} and {b} measured apart (comparison {}), yet both share with \
                         CPUs of group {}: sharing is not transitive here",
                        record.map_or(0, |r| r.index),
                        group_of(a).map(|g| g.to_string()).unwrap_or_default()
                    ));
                    PairStatus::Inconclusive
                }
                _ if together => PairStatus::Shares,
                _ => match between(a, b) {
                    Some(Contention::Apart) => PairStatus::Apart,
                    Some(_) => PairStatus::Inconclusive,
                    None if settled.contains(a) || settled.contains(b) => PairStatus::Apart,
                    None => PairStatus::NotMeasured,
                },
            };
            let published = published_together(a, b);
            let Some(relation) = relation(published, status) else {
                continue;
            };
            pairs.push(PairFinding {
                cpus: [a, b],
                published,
                measured: status,
                relation,
                comparison: record.map(|r| r.index),
            });
        }
    }

    let entries = cpu_entries(tested, published, &measured, &pairs);
    notes.extend(apart_bias_note(comparisons));
    MapJudgement {
        published: published.to_vec(),
        measured,
        cpus: entries,
        pairs,
        notes,
        published_unknown: None,
    }
}

/// A pair's relation to the published map; `None` for a pair neither
/// published nor measured sharing (apart, and agreed: not listed).
fn relation(published: bool, status: PairStatus) -> Option<PairRelation> {
    Some(match (published, status) {
        (_, PairStatus::Inconclusive | PairStatus::NotMeasured) => PairRelation::Inconclusive,
        (true, PairStatus::Shares) => PairRelation::Agreed,
        (true, PairStatus::Apart) => PairRelation::Fake,
        (false, PairStatus::Shares) => PairRelation::Hidden,
        (false, PairStatus::Apart) => return None,
    })
}

/// Judges a `measured` partition of `tested` (every pair in one group
/// shares, every other is apart, but for the `unmeasured` pairs) against
/// the `published` groups: what `latency` does at each level of its
/// domains, where no comparison of a pair exists to cite.
pub fn judge_partition(
    tested: &CpuSet,
    published: &[CpuSet],
    measured: Vec<CpuSet>,
    unmeasured: &[[u32; 2]],
) -> MapJudgement {
    let together =
        |groups: &[CpuSet], a: u32, b: u32| groups.iter().any(|g| g.contains(a) && g.contains(b));
    let mut pairs = Vec::new();
    for [a, b] in tested.pairs() {
        let status = if unmeasured.contains(&[a, b]) {
            PairStatus::NotMeasured
        } else if together(&measured, a, b) {
            PairStatus::Shares
        } else {
            PairStatus::Apart
        };
        let published = together(published, a, b);
        if let Some(relation) = relation(published, status) {
            pairs.push(PairFinding {
                cpus: [a, b],
                published,
                measured: status,
                relation,
                comparison: None,
            });
        }
    }
    MapJudgement {
        published: published.to_vec(),
        cpus: cpu_entries(tested, published, &measured, &pairs),
        measured,
        pairs,
        notes: Vec::new(),
        published_unknown: None,
    }
}

/// Each tested CPU's row: its published and measured groups, and the
/// pairs that make it differ or stay undecided.
fn cpu_entries(
    tested: &CpuSet,
    published: &[CpuSet],
    measured: &[CpuSet],
    pairs: &[PairFinding],
) -> Vec<CpuMapEntry> {
    let group_in = |groups: &[CpuSet], cpu: u32| groups.iter().find(|g| g.contains(cpu)).cloned();
    tested
        .iter()
        .map(|cpu| {
            let others = |relation: PairRelation| -> CpuSet {
                pairs
                    .iter()
                    .filter(|p| p.relation == relation && p.cpus.contains(&cpu))
                    .map(|p| {
                        if p.cpus[0] == cpu {
                            p.cpus[1]
                        } else {
                            p.cpus[0]
                        }
                    })
                    .collect()
            };
            let (fake, hidden) = (others(PairRelation::Fake), others(PairRelation::Hidden));
            let undecided = others(PairRelation::Inconclusive);
            let relation = match (fake.is_empty(), hidden.is_empty()) {
                (false, false) => CpuRelation::FakeAndHiddenSiblings,
                (false, true) => CpuRelation::FakeSiblings,
                (true, false) => CpuRelation::HiddenSiblings,
                (true, true) if !undecided.is_empty() => CpuRelation::Inconclusive,
                (true, true) => CpuRelation::Agreed,
            };
            CpuMapEntry {
                cpu,
                published: group_in(published, cpu).unwrap_or_else(|| CpuSet::from_cpus([cpu])),
                measured: group_in(measured, cpu).unwrap_or_default(),
                fake,
                hidden,
                undecided,
                relation,
            }
        })
        .collect()
}

/// The verdict on `map`: without a passing same-CPU control nothing
/// measured means anything, and a search a stop signal ended has none, so
/// both are inconclusive; otherwise a fake or hidden pair is a difference
/// whatever else is undecided.
pub fn map_verdict(map: &MapJudgement, control_passed: bool, complete: bool) -> MapVerdict {
    let any =
        |relations: &[PairRelation]| map.pairs.iter().any(|p| relations.contains(&p.relation));
    if !(control_passed && complete) || map.published_unknown.is_some() {
        MapVerdict::Inconclusive
    } else if any(&[PairRelation::Fake, PairRelation::Hidden]) {
        MapVerdict::Differ
    } else if any(&[PairRelation::Inconclusive]) {
        MapVerdict::Inconclusive
    } else {
        MapVerdict::Agree
    }
}

/// Above this median penalty, pairs measured apart still cost something.
const APART_BIAS: f64 = 0.05;

/// A note when the pairs measured apart cost more than [`APART_BIAS`] in
/// the median: running two workers at once slows each one on this host
/// wherever they are (turbo, a CPU quota, host load), which eats into the
/// threshold's margin.
fn apart_bias_note(comparisons: &[ComparisonRecord]) -> Option<String> {
    let apart: Vec<f64> = comparisons
        .iter()
        .filter(|c| c.outcome == Contention::Apart && c.comparison.pair().is_some())
        .filter_map(|c| Some(c.estimate.as_ref()?.penalty))
        .collect();
    if apart.is_empty() {
        return None;
    }
    let typical = median(&apart);
    (typical > APART_BIAS).then(|| {
        format!(
            "the {} pairs measured apart still cost {:+.1} % in the median: two workers at once \
             are slower on this host wherever they run (turbo, a CPU quota, load outside this \
             OS), which narrows the margin to the threshold",
            apart.len(),
            typical * 100.0
        )
    })
}

/// A map in sysfs list form, groups separated by " / ": "0-1 / 2-3".
pub fn map_text(groups: &[CpuSet]) -> String {
    groups
        .iter()
        .map(CpuSet::to_string)
        .collect::<Vec<_>>()
        .join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(cpus: &[u32]) -> CpuSet {
        CpuSet::from_cpus(cpus.iter().copied())
    }

    fn record(index: usize, probe: u32, against: &[u32], outcome: Contention) -> ComparisonRecord {
        ComparisonRecord {
            index,
            comparison: Comparison {
                probe,
                against: set(against),
            },
            outcome,
            estimate: None,
            batches: Vec::new(),
            noise: None,
            loaded_costs: Vec::new(),
            alone_costs: Vec::new(),
            excluded: Vec::new(),
            seconds: 0.0,
        }
    }

    /// All pairs of 0..4, sharing exactly within `groups`.
    fn all_pairs(groups: &[&[u32]]) -> Vec<ComparisonRecord> {
        let mut records = Vec::new();
        for a in 0..4u32 {
            for b in a + 1..4 {
                let shares = groups.iter().any(|g| g.contains(&a) && g.contains(&b));
                let outcome = if shares {
                    Contention::Shares
                } else {
                    Contention::Apart
                };
                records.push(record(records.len() + 1, a, &[b], outcome));
            }
        }
        records
    }

    #[test]
    fn maps_that_match_agree() {
        let published = [set(&[0, 1]), set(&[2, 3])];
        let judged = judge_map(
            &set(&[0, 1, 2, 3]),
            &published,
            &all_pairs(&[&[0, 1], &[2, 3]]),
            &set(&[0, 1, 2, 3]),
        );
        assert_eq!(map_verdict(&judged, true, true), MapVerdict::Agree);
        assert_eq!(map_text(&judged.measured), "0-1 / 2-3");
        assert!(
            judged
                .cpus
                .iter()
                .all(|c| c.relation == CpuRelation::Agreed)
        );
        assert_eq!(judged.pairs.len(), 2);
    }

    #[test]
    fn crossed_siblings_are_fake_and_hidden() {
        let published = [set(&[0, 1]), set(&[2, 3])];
        let judged = judge_map(
            &set(&[0, 1, 2, 3]),
            &published,
            &all_pairs(&[&[0, 2], &[1, 3]]),
            &set(&[0, 1, 2, 3]),
        );
        assert_eq!(map_verdict(&judged, true, true), MapVerdict::Differ);
        assert_eq!(map_text(&judged.measured), "0,2 / 1,3");
        let zero = &judged.cpus[0];
        assert_eq!(
            (zero.fake.clone(), zero.hidden.clone()),
            (set(&[1]), set(&[2]))
        );
        assert_eq!(zero.relation, CpuRelation::FakeAndHiddenSiblings);
    }

    #[test]
    fn siblings_a_guest_does_not_publish_are_hidden() {
        let published = [set(&[0]), set(&[1])];
        let records = [record(1, 0, &[1], Contention::Shares)];
        let judged = judge_map(&set(&[0, 1]), &published, &records, &set(&[0, 1]));
        assert_eq!(map_verdict(&judged, true, true), MapVerdict::Differ);
        assert_eq!(judged.cpus[1].relation, CpuRelation::HiddenSiblings);
        assert_eq!(judged.pairs[0].relation, PairRelation::Hidden);
    }

    #[test]
    fn an_unknown_published_map_gives_no_verdict_on_it() {
        // The machine's files name no sibling sets: each CPU stands alone
        // in `published`, which is no claim, so sharing is not "hidden".
        let published = [set(&[0]), set(&[1])];
        let records = [record(1, 0, &[1], Contention::Shares)];
        let mut judged = judge_map(&set(&[0, 1]), &published, &records, &set(&[0, 1]));
        judged.published_unknown = Some("no core sibling set for CPUs 0-1".into());
        assert_eq!(map_verdict(&judged, true, true), MapVerdict::Inconclusive);
        assert_eq!(judged.measured, [set(&[0, 1])]);
    }

    #[test]
    fn a_straddling_pair_makes_the_map_inconclusive_unless_it_differs_anyway() {
        let published = [set(&[0, 1]), set(&[2, 3])];
        let mut records = all_pairs(&[&[0, 1], &[2, 3]]);
        records[5].outcome = Contention::Inconclusive;
        let tested = set(&[0, 1, 2, 3]);
        let judged = judge_map(&tested, &published, &records, &tested);
        assert_eq!(map_verdict(&judged, true, true), MapVerdict::Inconclusive);
        assert_eq!(judged.cpus[3].relation, CpuRelation::Inconclusive);
        records[1].outcome = Contention::Shares;
        let judged = judge_map(&tested, &published, &records, &tested);
        assert_eq!(map_verdict(&judged, true, true), MapVerdict::Differ);
        assert!(
            !map_verdict(
                &judge_map(&tested, &published, &records, &tested),
                false,
                true
            )
            .eq(&MapVerdict::Differ)
        );
    }

    #[test]
    fn group_members_are_inferred_and_unsettled_cpus_not_measured() {
        // 0 shares with 1 and 2 (so 1 and 2 share); 3 and 4 were never reached.
        let records = [
            record(1, 0, &[1, 2, 3, 4], Contention::Shares),
            record(2, 0, &[1, 2], Contention::Shares),
            record(3, 0, &[1], Contention::Shares),
            record(4, 0, &[2], Contention::Shares),
            record(5, 0, &[3, 4], Contention::Apart),
        ];
        let tested = set(&[0, 1, 2, 3, 4]);
        let published: Vec<CpuSet> = (0..5).map(|c| set(&[c])).collect();
        let judged = judge_map(&tested, &published, &records, &set(&[0, 1, 2]));
        let finding = |a, b| judged.pairs.iter().find(|p| p.cpus == [a, b]).cloned();
        assert_eq!(finding(1, 2).unwrap().measured, PairStatus::Shares);
        assert_eq!(finding(1, 2).unwrap().comparison, None);
        assert_eq!(finding(3, 4).unwrap().measured, PairStatus::NotMeasured);
        assert!(
            finding(0, 3).is_none(),
            "cleared by a set: apart, not listed"
        );
        assert_eq!(map_verdict(&judged, true, true), MapVerdict::Differ);
    }

    #[test]
    fn a_member_of_the_group_decides_an_inconclusive_pair() {
        // 0-2 stayed inconclusive; group testing measured 2 against 0's
        // sibling 1, whose answer is the group's.
        let tested = set(&[0, 1, 2]);
        let published = [set(&[0, 1]), set(&[2])];
        let mut records = vec![
            record(1, 0, &[1], Contention::Shares),
            record(2, 0, &[2], Contention::Inconclusive),
            record(3, 1, &[2], Contention::Apart),
        ];
        let judged = judge_map(&tested, &published, &records, &tested);
        assert_eq!(map_verdict(&judged, true, true), MapVerdict::Agree);
        assert_eq!(map_text(&judged.measured), "0-1 / 2");
        // Left inconclusive with 0, 2 is undecided with 0's sibling 1 too,
        // though the search settled every CPU.
        records[2].outcome = Contention::Inconclusive;
        let judged = judge_map(&tested, &published, &records, &tested);
        let one_two = judged.pairs.iter().find(|p| p.cpus == [1, 2]).unwrap();
        assert_eq!(one_two.measured, PairStatus::Inconclusive);
        assert_eq!(judged.cpus[1].undecided, set(&[2]));
        assert_eq!(map_verdict(&judged, true, true), MapVerdict::Inconclusive);
        records[2].outcome = Contention::Shares;
        let judged = judge_map(&tested, &published, &records, &tested);
        assert_eq!(map_text(&judged.measured), "0-2");
        let zero_two = judged.pairs.iter().find(|p| p.cpus == [0, 2]).unwrap();
        assert_eq!(zero_two.measured, PairStatus::Shares);
        assert_eq!(map_verdict(&judged, true, true), MapVerdict::Differ);
    }

    #[test]
    fn a_contradiction_is_noted_and_undecided() {
        let records = [
            record(1, 0, &[1], Contention::Shares),
            record(2, 0, &[2], Contention::Shares),
            record(3, 1, &[2], Contention::Apart),
        ];
        let tested = set(&[0, 1, 2]);
        let published = [tested.clone()];
        let judged = judge_map(&tested, &published, &records, &tested);
        assert_eq!(judged.notes.len(), 1);
        assert!(judged.notes[0].contains("CPUs 1 and 2 measured apart"));
        assert_eq!(map_verdict(&judged, true, true), MapVerdict::Inconclusive);
    }

    #[test]
    fn published_groups_are_cut_to_the_tested_cpus() {
        let (a, b) = (set(&[0, 4]), set(&[1, 5]));
        let siblings = [(0, &a), (1, &b), (4, &a), (5, &b)];
        assert_eq!(
            published_groups(&set(&[0, 1, 4]), siblings),
            [set(&[0, 4]), set(&[1])]
        );
    }

    #[test]
    fn apart_pairs_that_still_cost_something_are_noted() {
        let mut records = all_pairs(&[&[0, 1], &[2, 3]]);
        let tested = set(&[0, 1, 2, 3]);
        let published = [set(&[0, 1]), set(&[2, 3])];
        for record in &mut records {
            record.estimate = Some(Estimate {
                penalty: if record.outcome == Contention::Apart {
                    0.08
                } else {
                    1.0
                },
                penalty_of_medians: 0.0,
                ci95: crate::judge::stats::Interval {
                    low: 0.0,
                    high: 0.1,
                },
                reps: 5,
                mean_based: None,
            });
        }
        let judged = judge_map(&tested, &published, &records, &tested);
        assert_eq!(judged.notes.len(), 1);
        assert!(judged.notes[0].starts_with("the 4 pairs measured apart still cost +8.0 %"));
        assert_eq!(map_verdict(&judged, true, true), MapVerdict::Agree);
    }
}
