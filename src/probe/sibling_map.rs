//! Making the kernel's sibling sets a partition, and saying where they were
//! not one.
//!
//! Each CPU's `core_cpus` (or `thread_siblings`) names the CPUs of its core,
//! so the sets of a sane kernel are symmetric (a lists b, b lists a) and
//! either equal or disjoint. A corrupt snapshot, or a guest kernel handed an
//! odd topology, can break both. Then CPUs joined by any listing are taken
//! as one core (the connected components of "lists"), so no CPU ends up in
//! two cores, and each problem becomes one note naming the CPUs and the file.

use crate::cpuset::CpuSet;

/// At most this many notes per kind of set; one more line counts the rest.
/// A garbled 256-CPU map could otherwise give tens of thousands of lines.
const MAX_NOTES_PER_KIND: usize = 16;

/// Replaces each CPU's set by the union of every set reachable from it, so
/// that the sets partition `cpus`, and returns one note per asymmetric pair
/// and per group of overlapping sets found.
///
/// * `cpus`: the CPUs, ascending; `sets[i]` and `files[i]` belong to
///   `cpus[i]`: its set (restricted to `cpus`, holding `cpus[i]`) and the
///   name of the file it came from (`core_cpus_list`, `thread_siblings`, ...);
/// * `kind`: what a set is, for the notes: "core" or "package".
pub fn make_partition(
    cpus: &[u32],
    sets: &mut [CpuSet],
    files: &[&str],
    kind: &str,
) -> Vec<String> {
    let position = |cpu: u32| cpus.binary_search(&cpu).ok();
    if is_partition(cpus, sets) {
        return Vec::new();
    }
    let mut groups = UnionFind::new(cpus.len());
    let mut asymmetric: Vec<(usize, usize)> = Vec::new();
    for (a, set) in sets.iter().enumerate() {
        for b in set.iter().filter_map(position) {
            groups.union(a, b);
            if !sets[b].contains(cpus[a]) {
                asymmetric.push((a, b));
            }
        }
    }
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); cpus.len()];
    for at in 0..cpus.len() {
        members[groups.find(at)].push(at);
    }
    // One set per group, shared by its members.
    let components: Vec<CpuSet> = members
        .iter()
        .map(|group| CpuSet::from_cpus(group.iter().map(|&m| cpus[m])))
        .collect();
    let component_of: Vec<CpuSet> = (0..cpus.len())
        .map(|at| components[groups.find(at)].clone())
        .collect();

    let mut notes: Vec<String> = asymmetric
        .iter()
        .map(|&(a, b)| {
            let their_file = if files[b] == files[a] {
                String::new()
            } else {
                format!(" {}", files[b])
            };
            format!(
                "CPU {}'s {} lists CPU {}, but CPU {}'s{their_file} does not list CPU {}: treated as one {kind} (CPUs {})",
                cpus[a], files[a], cpus[b], cpus[b], cpus[a], component_of[a]
            )
        })
        .collect();
    let has_asymmetry: Vec<bool> = {
        let mut flagged = vec![false; cpus.len()];
        for &(a, _) in &asymmetric {
            flagged[groups.find(a)] = true;
        }
        flagged
    };
    for (root, group) in members.iter().enumerate() {
        if group.is_empty() || has_asymmetry[root] {
            continue;
        }
        // Symmetric but not transitive: some member's set is not the group.
        // Such a set lists some CPU whose own set differs from it.
        let differing = group.iter().find_map(|&a| {
            if sets[a] == component_of[a] {
                return None;
            }
            let b = sets[a]
                .iter()
                .filter_map(position)
                .find(|&b| sets[b] != sets[a])?;
            Some((a, b))
        });
        if let Some((a, b)) = differing {
            notes.push(format!(
                "CPU {}'s {} (CPUs {}) and CPU {}'s (CPUs {}) overlap but differ: treated as one {kind} (CPUs {})",
                cpus[a], files[a], sets[a], cpus[b], sets[b], component_of[a]
            ));
        }
    }
    if notes.len() > MAX_NOTES_PER_KIND {
        let more = notes.len() - MAX_NOTES_PER_KIND;
        notes.truncate(MAX_NOTES_PER_KIND);
        notes.push(format!("... and {more} more {kind} sibling-map problems"));
    }
    for (set, component) in sets.iter_mut().zip(component_of) {
        *set = component;
    }
    notes
}

/// Are the sets already a partition of `cpus` (each CPU's set names
/// exactly the CPUs whose set it is)? Each set is walked once, from its
/// lowest CPU, and every other CPU only compares its set with that CPU's:
/// linear in the CPU count where the sets are shared (see [`CpuSet`]),
/// where walking every CPU's set would be quadratic on a machine with
/// thousands of CPUs per package.
fn is_partition(cpus: &[u32], sets: &[CpuSet]) -> bool {
    let position = |cpu: u32| cpus.binary_search(&cpu).ok();
    cpus.iter().zip(sets).all(|(&cpu, set)| {
        let Some(lowest) = set.first().and_then(position) else {
            return false;
        };
        if cpus[lowest] != cpu {
            return set.contains(cpu) && sets[lowest] == *set;
        }
        set.iter()
            .all(|member| position(member).is_some_and(|at| sets[at] == *set))
    })
}

/// Disjoint sets of positions 0..n, with path halving.
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut at: usize) -> usize {
        while self.parent[at] != at {
            self.parent[at] = self.parent[self.parent[at]];
            at = self.parent[at];
        }
        at
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        // The lower root wins, so a group's root is its lowest position.
        self.parent[a.max(b)] = a.min(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(lists: &[&[u32]]) -> Vec<CpuSet> {
        lists
            .iter()
            .map(|cpus| CpuSet::from_cpus(cpus.iter().copied()))
            .collect()
    }

    #[test]
    fn a_sane_map_is_left_alone() {
        let cpus = [0, 1, 2, 3];
        let mut map = sets(&[&[0, 2], &[1, 3], &[0, 2], &[1, 3]]);
        let before = map.clone();
        let notes = make_partition(&cpus, &mut map, &["core_cpus_list"; 4], "core");
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(map, before);
    }

    #[test]
    fn partitions_are_recognised() {
        let cpus = [0, 1, 2, 3];
        assert!(is_partition(
            &cpus,
            &sets(&[&[0, 2], &[1, 3], &[0, 2], &[1, 3]])
        ));
        assert!(!is_partition(&cpus, &sets(&[&[0, 1], &[1], &[2], &[3]])));
        assert!(!is_partition(&cpus, &sets(&[&[0], &[0, 1], &[2], &[3]])));
        assert!(!is_partition(
            &cpus,
            &sets(&[&[0, 1], &[0, 1, 2], &[1, 2], &[3]])
        ));
        assert!(!is_partition(&cpus, &sets(&[&[0, 9], &[1], &[2], &[3]])));
    }

    #[test]
    fn asymmetric_and_overlapping_sets_are_merged_and_named() {
        let cpus = [0, 1, 2, 3, 4, 5, 6];
        let mut map = sets(&[
            &[0, 1],
            &[1],
            &[2, 3],
            &[2, 3],
            &[4, 5],
            &[4, 5, 6],
            &[5, 6],
        ]);
        let notes = make_partition(&cpus, &mut map, &["core_cpus_list"; 7], "core");
        assert_eq!(
            notes,
            vec![
                "CPU 0's core_cpus_list lists CPU 1, but CPU 1's does not list CPU 0: treated as one core (CPUs 0-1)",
                "CPU 4's core_cpus_list (CPUs 4-5) and CPU 5's (CPUs 4-6) overlap but differ: treated as one core (CPUs 4-6)",
            ]
        );
        assert_eq!(
            map,
            sets(&[
                &[0, 1],
                &[0, 1],
                &[2, 3],
                &[2, 3],
                &[4, 5, 6],
                &[4, 5, 6],
                &[4, 5, 6]
            ])
        );
    }

    #[test]
    fn notes_are_capped() {
        let cpus: Vec<u32> = (0..64).collect();
        // Every CPU lists the next one only: 63 asymmetric pairs.
        let mut map: Vec<CpuSet> = cpus
            .iter()
            .map(|&cpu| CpuSet::from_cpus([cpu, (cpu + 1) % 64]))
            .collect();
        let notes = make_partition(&cpus, &mut map, &["thread_siblings"; 64], "core");
        assert_eq!(notes.len(), MAX_NOTES_PER_KIND + 1);
        assert_eq!(
            notes[MAX_NOTES_PER_KIND],
            "... and 48 more core sibling-map problems"
        );
        assert!(map.iter().all(|set| set.len() == 64));
    }
}
