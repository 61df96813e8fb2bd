//! `latency`'s plan: the order in which every pair of CPUs is measured, in
//! rounds of pairs that share no CPU, so that up to a round's worth can be
//! measured at once.
//!
//! The rounds are a round-robin tournament (the circle method): with `n`
//! CPUs (one left out each round when `n` is odd), `n - 1` rounds (`n`
//! when odd) of `⌊n/2⌋` disjoint pairs hold every pair exactly once, so
//! measuring a round at once divides the wall time by up to `n/2` without
//! ever putting two threads on one CPU.

use crate::cpuset::CpuSet;

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
                (Some(a), Some(b)) => Some([a.min(b), a.max(b)]),
                _ => None,
            })
            .collect();
        rounds.push(round);
        // The first seat stays; the others turn one place.
        seats[1..].rotate_right(1);
    }
    rounds
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
}
