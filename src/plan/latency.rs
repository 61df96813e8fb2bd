//! `latency`'s plan: the order in which every pair of CPUs is measured, in
//! rounds of pairs that share no CPU, so that up to a round's worth can be
//! measured at once.
//!
//! The rounds are a round-robin tournament (the circle method): with `n`
//! CPUs (one left out each round when `n` is odd), `n - 1` rounds (`n`
//! when odd) of `⌊n/2⌋` disjoint pairs hold every pair exactly once, so
//! measuring a round at once divides the wall time by up to `n/2` without
//! ever putting two threads on one CPU.

use crate::cpuset::{CpuSet, cpu_pair};

/// Every pair of `cpus` exactly once, in rounds of disjoint pairs, each
/// pair lower CPU first.
pub fn rounds(cpus: &CpuSet) -> Vec<Vec<[u32; 2]>> {
    // `None` is the bye that makes an odd count even.
    let mut seats: Vec<Option<u32>> = cpus.iter().map(Some).collect();
    if seats.len() % 2 == 1 {
        seats.push(None);
    }
    let seats_count = seats.len();
    if cpus.len() < 2 {
        return Vec::new();
    }
    let mut rounds = Vec::with_capacity(seats_count - 1);
    for _ in 0..seats_count - 1 {
        let round: Vec<[u32; 2]> = (0..seats_count / 2)
            .filter_map(|i| match (seats[i], seats[seats_count - 1 - i]) {
                (Some(a), Some(b)) => Some(cpu_pair(a, b)),
                _ => None,
            })
            .collect();
        rounds.push(round);
        // The first seat stays; the others turn one place.
        seats[1..].rotate_right(1);
    }
    rounds
}

/// `--one-per-domain`: the rows to measure, one representative at a time.
///
/// A row is one representative CPU against the other CPUs of its group
/// (at first, every tested CPU). The study measures it and splits the
/// others into the classes the row shows (the judge's clustering: CPUs at
/// one latency from the representative); each class of two or more is a
/// group to refine with its own representative, its lowest CPU. A row that
/// shows one class only (its representative is as far from each of them)
/// is measured once more by the next CPU, and a group two representatives
/// both see flat in one class is done: no third row is measured. Which
/// class a latency is in is the judge's to say (`row_outcome`).
/// Every pair not measured takes its latency from the last row that held
/// both (the slower of its two entries), which is exact where latency is
/// hierarchical (a CPU is as far from every CPU of another domain) and
/// costs about n per level instead of n²/2. A split row's [`bridges`]
/// check that assumption where it infers across its classes.
#[derive(Clone, Debug, Default)]
pub struct DomainSearch {
    /// Groups still to refine, the next one last, each with the class at
    /// which a representative already saw it flat.
    pending: Vec<(Vec<u32>, Option<FlatAt>)>,
}

/// One row to measure.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub representative: u32,
    /// The other CPUs of its group, ascending.
    pub others: Vec<u32>,
    /// The one class an earlier representative saw this whole group at.
    pub seen_flat: Option<FlatAt>,
}

/// The one class a representative saw a whole group at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlatAt {
    /// Its lowest latency in ns (`None`: time-sliced without progress).
    pub low_ns: Option<f64>,
    pub time_sliced: bool,
}

/// What a measured row showed (the judge reads it: `row_outcome`).
#[derive(Clone, Debug, PartialEq)]
pub enum RowOutcome {
    /// The others in classes, closest first: each is refined.
    Split(Vec<Vec<u32>>),
    /// One class: the next CPU measures the others once more.
    Flat(FlatAt),
    /// One class, the one the row's `seen_flat` named: the group is done.
    FlatAgain,
}

impl DomainSearch {
    pub fn new(cpus: &CpuSet) -> DomainSearch {
        DomainSearch {
            pending: vec![(cpus.cpus().to_vec(), None)],
        }
    }

    /// The next row; `None` when every group is done.
    pub fn next_row(&mut self) -> Option<Row> {
        while let Some((group, seen_flat)) = self.pending.pop() {
            if let [representative, others @ ..] = group.as_slice()
                && !others.is_empty()
            {
                return Some(Row {
                    representative: *representative,
                    others: others.to_vec(),
                    seen_flat,
                });
            }
        }
        None
    }

    /// Takes what `row` showed.
    pub fn record(&mut self, row: &Row, outcome: RowOutcome) {
        match outcome {
            RowOutcome::FlatAgain => {}
            RowOutcome::Flat(flat) => self.pending.push((row.others.clone(), Some(flat))),
            RowOutcome::Split(classes) => {
                self.pending
                    .extend(classes.into_iter().rev().map(|class| (class, None)));
            }
        }
    }
}

/// One pair across two classes of a split row, measured to check what the
/// row infers for every pair across them: that each is as far as the
/// row's representative is from the farther class.
#[derive(Clone, Debug, PartialEq)]
pub struct Bridge {
    /// The pair measured: the lowest CPU of each class.
    pub pair: [u32; 2],
    /// The row's entry the bridge should equal: the representative and
    /// the farther class's CPU.
    pub row_entry: [u32; 2],
    /// Every pair across the two classes, measured when the bridge does
    /// not bear the row out.
    pub across: Vec<[u32; 2]>,
}

/// The bridges of a row of `representative` split into `classes`
/// (closest first): one for each two classes, so that a row one noisy
/// entry split (a CI guest: 0-6 at 212 ns, 0-9 at 357 ns, while 6 and 9
/// shared a host CPU) is found out before its inference is taken.
pub fn bridges(representative: u32, classes: &[Vec<u32>]) -> Vec<Bridge> {
    let mut bridges = Vec::new();
    for (i, closer) in classes.iter().enumerate() {
        for farther in &classes[i + 1..] {
            let (Some(&near), Some(&far)) = (closer.first(), farther.first()) else {
                continue;
            };
            bridges.push(Bridge {
                pair: cpu_pair(near, far),
                row_entry: cpu_pair(representative, far),
                across: closer
                    .iter()
                    .flat_map(|&a| farther.iter().map(move |&b| cpu_pair(a, b)))
                    .collect(),
            });
        }
    }
    bridges
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn rounds_hold_every_pair_once_and_no_cpu_twice_in_a_round() {
        for n in 2..=17u32 {
            let cpus = CpuSet::from_cpus((0..n).map(|c| c * 2));
            let rounds = rounds(&cpus);
            let mut seen = BTreeSet::new();
            for round in &rounds {
                let mut used = BTreeSet::new();
                for &[a, b] in round {
                    assert!(a < b, "{a}-{b}");
                    assert!(used.insert(a) && used.insert(b), "n={n}: {round:?}");
                    assert!(seen.insert([a, b]), "n={n}: {a}-{b} twice");
                }
                assert_eq!(round.len(), n as usize / 2, "n={n}");
            }
            assert_eq!(seen.len(), cpus.pairs().count(), "n={n}");
        }
    }

    #[test]
    fn one_cpu_has_no_round() {
        assert!(rounds(&CpuSet::from_cpus([3])).is_empty());
    }

    /// Runs a domain search over a hierarchical matrix `ns(a, b)`, splitting
    /// each row at 1.5x gaps as the judge would: the rows measured.
    fn search(cpus: &CpuSet, ns: impl Fn(u32, u32) -> f64) -> Vec<(u32, Vec<u32>)> {
        let mut search = DomainSearch::new(cpus);
        let mut rows = Vec::new();
        while let Some(row) = search.next_row() {
            let representative = row.representative;
            let mut sorted: Vec<(f64, u32)> = row
                .others
                .iter()
                .map(|&c| (ns(representative, c), c))
                .collect();
            sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut classes: Vec<Vec<u32>> = Vec::new();
            let mut last = f64::NAN;
            for (value, cpu) in sorted {
                if classes.is_empty() || value >= last * 1.5 {
                    classes.push(Vec::new());
                }
                classes.last_mut().unwrap().push(cpu);
                last = value;
            }
            for class in &mut classes {
                class.sort();
            }
            let outcome = match classes.as_slice() {
                [one] => {
                    let flat = FlatAt {
                        low_ns: Some(ns(representative, one[0])),
                        time_sliced: false,
                    };
                    match row.seen_flat {
                        Some(seen) if seen == flat => RowOutcome::FlatAgain,
                        _ => RowOutcome::Flat(flat),
                    }
                }
                _ => RowOutcome::Split(classes),
            };
            search.record(&row, outcome);
            rows.push((representative, row.others));
        }
        rows
    }

    #[test]
    fn a_split_row_is_bridged_between_every_two_classes() {
        let classes = [vec![2, 4], vec![6], vec![1, 3]];
        let bridges = bridges(5, &classes);
        let pairs: Vec<([u32; 2], [u32; 2])> =
            bridges.iter().map(|b| (b.pair, b.row_entry)).collect();
        assert_eq!(
            pairs,
            vec![([2, 6], [5, 6]), ([1, 2], [1, 5]), ([1, 6], [1, 5])]
        );
        assert_eq!(bridges[1].across, vec![[1, 2], [2, 3], [1, 4], [3, 4]]);
        assert_eq!(bridges[2].across, vec![[1, 6], [3, 6]]);
        assert!(super::bridges(0, &[vec![1, 2, 3]]).is_empty());
    }

    #[test]
    fn a_flat_group_is_measured_by_two_representatives() {
        let rows = search(&CpuSet::from_cpus(0..8), |_, _| 80.0);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[0], (0, (1..8).collect()));
        assert_eq!(rows[1], (1, (2..8).collect()));
    }
}
