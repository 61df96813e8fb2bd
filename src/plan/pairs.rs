//! The search `pairs` runs: which comparisons to measure, in which order, to
//! find the groups of CPUs that share execution resources (SMT siblings, or
//! vCPUs time-sharing one host CPU).
//!
//! A comparison is one probe worker pinned to a CPU, measured alone and
//! beside load workers on a set of candidate CPUs. If none of the candidates
//! shares the probe's core, the probe runs as fast beside them as alone.
//!
//! * [`SearchKind::AllPairs`]: every pair, one load worker each: n(n−1)/2
//!   comparisons. The default up to [`ALL_PAIRS_UP_TO`] CPUs, and
//!   `--exhaustive`.
//! * [`SearchKind::GroupTesting`]: adaptive group testing. The lowest CPU
//!   not yet placed in a group is the probe, tested against every CPU still
//!   unplaced; a set that slows it (or straddles) is halved and both halves
//!   tested, down to single CPUs. So every sibling found is confirmed by a
//!   two-worker comparison, as it must be: a VM whose vCPUs outnumber its
//!   host CPUs slows a probe beside many workers whoever its siblings are.
//!   A set that does not slow the probe clears all its CPUs at once. For
//!   SMT2 that is about 1 + 2·log₂ n comparisons per core: O(n log n).
//!   A pair left inconclusive (a noisy host) is measured again against up
//!   to [`RECHECKS`] other CPUs already found in the probe's group before
//!   the probe is done: sharing a core is an equivalence, so any member
//!   answers for the group, and each answer is a fresh measurement.
//! * [`SearchKind::LatencyDomains`] (`--first-pass latency`): group testing
//!   within each candidate set a latency pass found (the CPUs linked by
//!   stacked pairs and by the fastest cluster of a layered matrix), so a
//!   probe is compared only with its own set's CPUs: every sibling is still
//!   confirmed by a two-worker comparison, and CPUs of different sets are
//!   apart by latency, never compared.

use super::arms::{Arm, Placement};
use crate::cpuset::CpuSet;
use serde::{Deserialize, Serialize};

/// Up to this many CPUs, `pairs` measures every pair by default.
pub const ALL_PAIRS_UP_TO: usize = 8;

/// Group testing: how many other members of the probe's group a CPU whose
/// pair stayed inconclusive is measured against, one after another, until
/// one comparison decides. In CI's guests a probe sharing a busy host CPU
/// left 1 pair of 22 inconclusive (baseline drift 61 %, 23 of 48 rounds
/// noisy) while the same CPU's set had shared; a second and third chance,
/// each a different pair, decide it unless the noise lasts through all.
pub const RECHECKS: usize = 2;

/// How the comparisons are chosen.
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
pub enum SearchKind {
    /// Every pair of CPUs.
    AllPairs,
    /// One probe against sets of candidates, halved where they slow it.
    GroupTesting,
    /// Group testing within each candidate set of a latency pass.
    LatencyDomains,
}

impl SearchKind {
    /// The search for `cpus` CPUs: all pairs when few or when asked.
    pub fn for_cpus(cpus: usize, exhaustive: bool) -> SearchKind {
        if exhaustive || cpus <= ALL_PAIRS_UP_TO {
            SearchKind::AllPairs
        } else {
            SearchKind::GroupTesting
        }
    }

    /// The words the text view names the search with ("all pairs"), not
    /// the saved kebab-case word (`<&str>::from`).
    pub fn label(self) -> &'static str {
        match self {
            SearchKind::AllPairs => "all pairs",
            SearchKind::GroupTesting => "group testing",
            SearchKind::LatencyDomains => "group testing within latency domains",
        }
    }
}

/// What one comparison found: whether the candidate set slowed the probe by
/// at least the threshold.
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
pub enum Contention {
    /// The probe beside the set cost at least the threshold more.
    Shares,
    /// Less than the threshold: no CPU of the set shares the probe's core.
    Apart,
    /// The interval still straddled the threshold at the most repetitions.
    Inconclusive,
}

impl Contention {
    /// The word saved files and tables use: serde's and strum's one name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One comparison: the probe's CPU and the CPUs its load workers run on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Comparison {
    pub probe: u32,
    pub against: CpuSet,
}

impl Comparison {
    /// The probe (worker 0) beside one load worker per candidate CPU.
    pub fn loaded(&self) -> Placement {
        Placement {
            arm: Arm::Loaded,
            cpus: std::iter::once(self.probe)
                .chain(self.against.iter())
                .map(Some)
                .collect(),
            membind: None,
        }
    }

    /// The probe alone on its CPU: the baseline it is paired with.
    pub fn alone(&self) -> Placement {
        Placement {
            arm: Arm::Alone,
            cpus: vec![Some(self.probe)],
            membind: None,
        }
    }

    /// Both workers on the probe's CPU: the control that pinning works.
    pub fn same_cpu(&self) -> Placement {
        Placement {
            arm: Arm::SameCpu,
            cpus: vec![Some(self.probe); 2],
            membind: None,
        }
    }

    /// The one candidate, when this compares a pair.
    pub fn pair(&self) -> Option<u32> {
        match self.against.cpus() {
            [one] => Some(*one),
            _ => None,
        }
    }
}

/// The search in progress: hands out comparisons, takes their outcomes.
#[derive(Clone, Debug)]
pub struct PairSearch {
    kind: SearchKind,
    /// Comparisons still to measure, the next one last.
    pending: Vec<Comparison>,
    /// Group testing: CPUs neither probed yet nor found in a probe's group,
    /// ascending.
    unplaced: Vec<u32>,
    /// Group testing: the probe whose comparisons are pending.
    current_probe: Option<u32>,
    /// Group testing: the CPUs found sharing with the current probe.
    group: Vec<u32>,
    /// Group testing: CPUs whose pair with the current probe's group stayed
    /// inconclusive, each with the members it was measured against.
    doubtful: Vec<(u32, Vec<u32>)>,
    /// CPUs whose group the search has finished: every CPU they may share
    /// with has been compared with them, directly or by a set.
    settled: Vec<u32>,
    /// All pairs: how many comparisons each CPU still has pending.
    left: Vec<(u32, usize)>,
    /// Latency domains: the candidate sets; a probe is compared only with
    /// the unplaced CPUs of its own.
    domains: Vec<CandidateSet>,
}

/// A set of CPUs a latency pass linked, that `pairs` then searches within.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CandidateSet {
    pub cpus: CpuSet,
    /// Linked by time-sliced (stacked) pairs: its CPUs are expected to
    /// share, so a probe is compared with each of them directly rather than
    /// with the set first.
    pub stacked: bool,
}

impl PairSearch {
    /// A search over `cpus` (ascending, at least two).
    pub fn new(cpus: &CpuSet, kind: SearchKind) -> PairSearch {
        let cpus = cpus.cpus();
        let mut search = PairSearch {
            kind,
            pending: Vec::new(),
            unplaced: Vec::new(),
            current_probe: None,
            group: Vec::new(),
            doubtful: Vec::new(),
            settled: Vec::new(),
            left: Vec::new(),
            domains: Vec::new(),
        };
        match kind {
            SearchKind::AllPairs => {
                for (i, &probe) in cpus.iter().enumerate() {
                    for &other in &cpus[i + 1..] {
                        search.pending.push(Comparison {
                            probe,
                            against: CpuSet::from_cpus([other]),
                        });
                    }
                }
                search.pending.reverse();
                search.left = cpus.iter().map(|&c| (c, cpus.len() - 1)).collect();
            }
            SearchKind::GroupTesting | SearchKind::LatencyDomains => {
                search.unplaced = cpus.to_vec();
            }
        }
        search
    }

    /// Group testing over `cpus` within each of `domains` (a partition of
    /// them, as a latency pass found it).
    pub fn within(cpus: &CpuSet, domains: Vec<CandidateSet>) -> PairSearch {
        PairSearch {
            domains,
            ..PairSearch::new(cpus, SearchKind::LatencyDomains)
        }
    }

    pub fn kind(&self) -> SearchKind {
        self.kind
    }

    /// Every comparison that can be measured now, without waiting for an
    /// outcome (all of them for all pairs; the pending halves, or a new
    /// probe's first set, for group testing): a study may interleave their
    /// repetitions. Empty when the search is done.
    pub fn next_batch(&mut self) -> Vec<Comparison> {
        let mut batch: Vec<Comparison> = self.next_comparison().into_iter().collect();
        batch.extend(self.pending.drain(..).rev());
        batch
    }

    /// The next comparison, starting the next probe when none is pending.
    fn next_comparison(&mut self) -> Option<Comparison> {
        while self.pending.is_empty() {
            if let Some(recheck) = self.next_recheck() {
                return Some(recheck);
            }
            if let Some(probe) = self.current_probe.take() {
                self.settled.push(probe);
                self.group.clear();
                self.doubtful.clear();
            }
            if self.unplaced.is_empty() {
                return None;
            }
            let probe = self.unplaced.remove(0);
            self.current_probe = Some(probe);
            let domain = self.domains.iter().find(|d| d.cpus.contains(probe));
            let candidates: Vec<u32> = self
                .unplaced
                .iter()
                .copied()
                .filter(|&cpu| domain.is_none_or(|d| d.cpus.contains(cpu)))
                .collect();
            if domain.is_some_and(|d| d.stacked) {
                // Expected to share: one pair comparison each (pending is
                // handed out last first).
                self.pending
                    .extend(candidates.iter().rev().map(|&cpu| Comparison {
                        probe,
                        against: CpuSet::from_cpus([cpu]),
                    }));
            } else if !candidates.is_empty() {
                self.pending.push(Comparison {
                    probe,
                    against: CpuSet::from_cpus(candidates),
                });
            }
        }
        self.pending.pop()
    }

    /// A doubtful CPU's next pair, with a member of the current probe's
    /// group it has not been measured against, while it has had fewer than
    /// 1 + [`RECHECKS`] comparisons; the doubt is dropped when none is left.
    fn next_recheck(&mut self) -> Option<Comparison> {
        while let Some((candidate, tried)) = self.doubtful.first() {
            let partner = self
                .current_probe
                .into_iter()
                .chain(self.group.iter().copied())
                .find(|member| !tried.contains(member));
            match partner {
                Some(partner) if tried.len() <= RECHECKS => {
                    return Some(Comparison {
                        probe: partner,
                        against: CpuSet::from_cpus([*candidate]),
                    });
                }
                _ => {
                    self.doubtful.remove(0);
                }
            }
        }
        None
    }

    /// `comparison` is a pair within a stacked candidate set.
    pub fn stacked_candidate(&self, comparison: &Comparison) -> bool {
        comparison.pair().is_some_and(|other| {
            self.domains
                .iter()
                .any(|d| d.stacked && d.cpus.contains(comparison.probe) && d.cpus.contains(other))
        })
    }

    /// Takes the outcome of `comparison` (the one last handed out).
    pub fn record(&mut self, comparison: &Comparison, outcome: Contention) {
        match self.kind {
            SearchKind::AllPairs => {
                for cpu in std::iter::once(comparison.probe).chain(comparison.against.iter()) {
                    if let Some(entry) = self.left.iter_mut().find(|(c, _)| *c == cpu) {
                        entry.1 -= 1;
                        if entry.1 == 0 {
                            self.settled.push(cpu);
                        }
                    }
                }
            }
            SearchKind::GroupTesting | SearchKind::LatencyDomains => match comparison.pair() {
                Some(sibling) if outcome == Contention::Shares => {
                    self.unplaced.retain(|&c| c != sibling);
                    self.settled.push(sibling);
                    self.group.push(sibling);
                    self.doubtful.retain(|(c, _)| *c != sibling);
                }
                Some(candidate) if outcome == Contention::Inconclusive => {
                    match self.doubtful.iter_mut().find(|(c, _)| *c == candidate) {
                        Some((_, tried)) => tried.push(comparison.probe),
                        None => self.doubtful.push((candidate, vec![comparison.probe])),
                    }
                }
                // Apart from a member is apart from the group.
                Some(candidate) => self.doubtful.retain(|(c, _)| *c != candidate),
                // Shares or straddles: which of them? Test both halves.
                None if outcome != Contention::Apart => {
                    let cpus = comparison.against.cpus();
                    let (low, high) = cpus.split_at(cpus.len() / 2);
                    for half in [high, low] {
                        self.pending.push(Comparison {
                            probe: comparison.probe,
                            against: CpuSet::from_cpus(half.iter().copied()),
                        });
                    }
                }
                None => {}
            },
        }
    }

    /// The CPUs whose group is finished (see [`PairSearch::settled`]'s field).
    pub fn settled(&self) -> CpuSet {
        CpuSet::from_cpus(self.settled.iter().copied())
    }

    /// About how many comparisons remain: exact for all pairs; for group
    /// testing, the pending ones plus what the unplaced CPUs would cost if
    /// they were SMT2 cores (1 + 2·log₂ m per core).
    pub fn estimated_remaining(&self) -> usize {
        let unplaced = self.unplaced.len();
        let per_core = 1 + 2 * (usize::BITS - unplaced.leading_zeros()) as usize;
        self.pending.len() + self.doubtful.len() + unplaced.div_ceil(2) * per_core
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search over CPUs 0..`cpus` to its end, each comparison
    /// answered by `answer` (given the comparisons asked before it): what
    /// was asked, in order, and the CPUs settled.
    fn run_search(
        cpus: u32,
        kind: SearchKind,
        answer: impl FnMut(&Comparison, &[Comparison]) -> Contention,
    ) -> (Vec<Comparison>, CpuSet) {
        run(PairSearch::new(&CpuSet::from_cpus(0..cpus), kind), answer)
    }

    /// Runs `search` to its end as [`run_search`] does.
    fn run(
        mut search: PairSearch,
        mut answer: impl FnMut(&Comparison, &[Comparison]) -> Contention,
    ) -> (Vec<Comparison>, CpuSet) {
        let mut asked = Vec::new();
        loop {
            let batch = search.next_batch();
            if batch.is_empty() {
                break;
            }
            for comparison in batch {
                let outcome = answer(&comparison, &asked);
                search.record(&comparison, outcome);
                asked.push(comparison);
            }
        }
        (asked, search.settled())
    }

    /// Runs a search to its end against a machine whose groups are
    /// `groups`; a set shares with the probe when it holds one of its group.
    fn search(cpus: u32, groups: &[&[u32]], kind: SearchKind) -> (Vec<Comparison>, CpuSet) {
        let group_of = |cpu: u32| groups.iter().find(|g| g.contains(&cpu)).copied();
        run_search(cpus, kind, |comparison, _| {
            let shares = group_of(comparison.probe)
                .is_some_and(|g| comparison.against.iter().any(|c| g.contains(&c)));
            if shares {
                Contention::Shares
            } else {
                Contention::Apart
            }
        })
    }

    #[test]
    fn all_pairs_asks_every_pair_at_once_in_order() {
        let (asked, settled) = search(4, &[&[0, 1], &[2, 3]], SearchKind::AllPairs);
        let pairs: Vec<(u32, u32)> = asked.iter().map(|c| (c.probe, c.pair().unwrap())).collect();
        assert_eq!(pairs, [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]);
        assert_eq!(settled, CpuSet::from_cpus(0..4));
    }

    #[test]
    fn group_testing_confirms_every_sibling_with_a_pair() {
        let groups: Vec<Vec<u32>> = (0..8).map(|core| vec![core, core + 8]).collect();
        let refs: Vec<&[u32]> = groups.iter().map(Vec::as_slice).collect();
        let (asked, settled) = search(16, &refs, SearchKind::GroupTesting);
        for core in 0..8 {
            assert!(
                asked
                    .iter()
                    .any(|c| c.probe == core && c.pair() == Some(core + 8)),
                "no pair comparison confirms CPU {core}'s sibling"
            );
        }
        assert_eq!(settled, CpuSet::from_cpus(0..16));
        // 8 cores × (1 + 2·log₂ of at most 15 candidates) at most.
        assert!(asked.len() <= 8 * 9, "{} comparisons", asked.len());
    }

    #[test]
    fn group_testing_grows_as_n_log_n() {
        for n in [16u32, 64, 256] {
            let groups: Vec<Vec<u32>> = (0..n / 2).map(|c| vec![2 * c, 2 * c + 1]).collect();
            let refs: Vec<&[u32]> = groups.iter().map(Vec::as_slice).collect();
            let (asked, _) = search(n, &refs, SearchKind::GroupTesting);
            let bound = (n as f64 * (n as f64).log2()) as usize;
            assert!(
                asked.len() <= bound,
                "{n} CPUs: {} comparisons",
                asked.len()
            );
            println!("{n} CPUs (SMT2): {} comparisons", asked.len());
        }
    }

    #[test]
    fn group_testing_finds_groups_of_any_size_and_singletons() {
        let (asked, settled) = search(10, &[&[0, 3, 6, 9], &[1, 2]], SearchKind::GroupTesting);
        let confirmed: Vec<(u32, u32)> = asked
            .iter()
            .filter_map(|c| Some((c.probe, c.pair()?)))
            .collect();
        for sibling in [3, 6, 9] {
            assert!(confirmed.contains(&(0, sibling)));
        }
        assert!(confirmed.contains(&(1, 2)));
        assert_eq!(settled, CpuSet::from_cpus(0..10));
    }

    #[test]
    fn an_inconclusive_pair_is_measured_against_other_members_of_the_group() {
        // Ten CPUs, 1-9 on one core; the pair 1-7 straddles every time it
        // is measured with CPU 1, and CPU 7 answers clearly beside others.
        let (asked, settled) = run_search(10, SearchKind::GroupTesting, |comparison, asked| {
            let earlier_sevens = asked.iter().filter(|c| c.pair() == Some(7)).count();
            match (comparison.probe, comparison.against.cpus()) {
                (0, _) => Contention::Apart,
                // With 1, then with the first other member.
                (_, [7]) if earlier_sevens < 2 => Contention::Inconclusive,
                _ => Contention::Shares,
            }
        });
        let partners: Vec<u32> = asked
            .iter()
            .filter(|c| c.pair() == Some(7))
            .map(|c| c.probe)
            .collect();
        assert_eq!(partners.len(), 3, "1, then two other members: {partners:?}");
        assert_eq!(partners[0], 1);
        assert!(partners[1] != partners[2] && partners[1..].iter().all(|&p| (2..10).contains(&p)));
        assert!(
            asked.iter().all(|c| c.probe != 7),
            "7 joined 1's group, so it is never a probe of its own"
        );
        assert_eq!(settled, CpuSet::from_cpus(0..10));
    }

    #[test]
    fn an_inconclusive_pair_is_rechecked_at_most_twice() {
        let mut rechecks = 0;
        let (_, settled) = run_search(10, SearchKind::GroupTesting, |comparison, _| {
            match (comparison.probe, comparison.against.cpus()) {
                (0, _) => Contention::Apart,
                (probe, [7]) => {
                    rechecks += usize::from(probe != 1);
                    Contention::Inconclusive
                }
                (7, _) => Contention::Apart,
                _ => Contention::Shares,
            }
        });
        assert_eq!(rechecks, RECHECKS);
        assert_eq!(settled, CpuSet::from_cpus(0..10));
    }

    #[test]
    fn a_straddling_set_is_halved_like_a_slowed_one() {
        let mut search = PairSearch::new(&CpuSet::from_cpus(0..10), SearchKind::GroupTesting);
        let first = search.next_batch();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].against, CpuSet::from_cpus(1..10));
        search.record(&first[0], Contention::Inconclusive);
        let halves: Vec<CpuSet> = search.next_batch().into_iter().map(|c| c.against).collect();
        assert_eq!(halves, [CpuSet::from_cpus(1..5), CpuSet::from_cpus(5..10)]);
    }

    #[test]
    fn placements_put_the_probe_first() {
        let comparison = Comparison {
            probe: 2,
            against: CpuSet::from_cpus([5, 7]),
        };
        assert_eq!(comparison.loaded().cpus, [Some(2), Some(5), Some(7)]);
        assert_eq!(comparison.alone().cpus, [Some(2)]);
        assert_eq!(comparison.same_cpu().cpus, [Some(2), Some(2)]);
        assert_eq!(comparison.pair(), None);
    }

    #[test]
    fn latency_domains_confine_each_probe_to_its_own_set() {
        // 8 CPUs, latency sets {0,2,4,6} (a fast cluster: searched by
        // halving) and {1,3,5,7} (stacked: compared pair by pair); real
        // siblings: the sets themselves (a guest's two host CPUs).
        let domains = [
            CpuSet::from_cpus([0, 2, 4, 6]),
            CpuSet::from_cpus([1, 3, 5, 7]),
        ];
        let sets = domains
            .iter()
            .zip([false, true])
            .map(|(cpus, stacked)| CandidateSet {
                cpus: cpus.clone(),
                stacked,
            })
            .collect();
        let (asked, settled) = run(
            PairSearch::within(&CpuSet::from_cpus(0..8), sets),
            |comparison, _| {
                let shares = domains.iter().any(|d| {
                    d.contains(comparison.probe) && comparison.against.iter().any(|c| d.contains(c))
                });
                if shares {
                    Contention::Shares
                } else {
                    Contention::Apart
                }
            },
        );
        for comparison in &asked {
            let domain = domains
                .iter()
                .find(|d| d.contains(comparison.probe))
                .unwrap();
            assert!(
                comparison.against.iter().all(|c| domain.contains(c)),
                "{comparison:?} crosses the sets"
            );
        }
        // Every sibling confirmed by a pair comparison.
        let confirmed: Vec<(u32, u32)> = asked
            .iter()
            .filter_map(|c| Some((c.probe, c.pair()?)))
            .collect();
        for sibling in [2, 4, 6] {
            assert!(confirmed.contains(&(0, sibling)), "{confirmed:?}");
        }
        for sibling in [3, 5, 7] {
            assert!(confirmed.contains(&(1, sibling)), "{confirmed:?}");
        }
        assert_eq!(settled, CpuSet::from_cpus(0..8));
        // Halving: the set, then 2 / 4,6, then 4 / 6; pair by pair: 3.
        assert_eq!(asked.len(), 5 + 3, "{asked:?}");
    }
}
