//! A CPU's sibling sets are written twice, as a list (`core_cpus_list`,
//! `0-1`) and as a mask (`core_cpus`, `00000003`), and the prober reads
//! one of them ([`sibling_sets`](crate::probe::sysfs::sibling_sets) takes
//! the first its candidates find). A kernel writes both from one cpumask;
//! a snapshot edited by hand, or damaged, may not. Where the two say
//! different sets, a note names the CPU, both values and the file used.
//!
//! A set is also written under two names, the newer (`core_cpus_list`,
//! `package_cpus_list`) and the older (`thread_siblings_list`,
//! `core_siblings_list`), again from one cpumask. Where the prober used the
//! newer, the older is read too: an older list that is not symmetric (CPU
//! a lists b, b's does not list a: not a partition) gets one note per such
//! pair, and one that differs otherwise one note per CPU, each saying which
//! reading was kept.

use crate::cpuset::CpuSet;
use crate::probe::sysfs::{CPU_DIR, SetForm, SysfsRoot};
use anyhow::Result;
use std::collections::BTreeMap;

/// Each list file and the mask file of the same set.
const PAIRS: [(&str, &str); 4] = [
    ("core_cpus_list", "core_cpus"),
    ("thread_siblings_list", "thread_siblings"),
    ("package_cpus_list", "package_cpus"),
    ("core_siblings_list", "core_siblings"),
];

/// The files the prober reads a core set from, and a package set, in its
/// order of preference (as `sysfs::sibling_sets` does): the first present
/// is the one used.
const CORE_ORDER: [&str; 4] = [
    "core_cpus_list",
    "core_cpus",
    "thread_siblings_list",
    "thread_siblings",
];
const PACKAGE_ORDER: [&str; 4] = [
    "package_cpus_list",
    "package_cpus",
    "core_siblings_list",
    "core_siblings",
];

/// Each set's newer list and its older name.
const RENAMED: [(&str, &str); 2] = [
    ("core_cpus_list", "thread_siblings_list"),
    ("package_cpus_list", "core_siblings_list"),
];

/// At most this many notes; one more line counts the rest (a garbled
/// snapshot of a large machine could disagree on every CPU).
const MAX_NOTES: usize = 16;

/// One note per online CPU whose list and mask of a set disagree, in a
/// snapshot. Which pairs a kernel writes is read from the first CPU's
/// listing, as the prober learns its files (every CPU folder has the same
/// ones). The running kernel prints both from one cpumask, so the live
/// system is not read twice over.
pub fn list_mask_notes(root: &SysfsRoot, online: &CpuSet) -> Result<Vec<String>> {
    let first = online.iter().next();
    let Some(first) = first.filter(|_| !root.is_live()) else {
        return Ok(Vec::new());
    };
    let listed = root.list_dir(&format!("{CPU_DIR}/cpu{first}/topology"))?;
    let has = |name: &str| listed.binary_search_by(|n| n.as_str().cmp(name)).is_ok();
    let pairs: Vec<(&str, &str)> = PAIRS
        .into_iter()
        .filter(|(list, mask)| has(list) && has(mask))
        .collect();
    let used = |order: &[&'static str; 4]| order.iter().copied().find(|name| has(name));
    let (core_used, package_used) = (used(&CORE_ORDER), used(&PACKAGE_ORDER));
    let renamed: Vec<(&str, &str)> = RENAMED
        .into_iter()
        .filter(|(newer, older)| has(newer) && has(older))
        .collect();
    let mut notes = Vec::new();
    let mut more = 0;
    for (newer, older) in renamed {
        for note in renamed_notes(root, online, newer, older)? {
            if notes.len() == MAX_NOTES {
                more += 1;
            } else {
                notes.push(note);
            }
        }
    }
    for cpu in online.iter() {
        let dir = format!("{CPU_DIR}/cpu{cpu}/topology");
        for &(list, mask) in &pairs {
            let Some(disagreement) = disagreement(root, &dir, list, mask)? else {
                continue;
            };
            if notes.len() == MAX_NOTES {
                more += 1;
                continue;
            }
            let used = if CORE_ORDER.contains(&list) {
                core_used
            } else {
                package_used
            };
            notes.push(format!(
                "CPU {cpu}'s {disagreement}; {} was used",
                used.unwrap_or(list)
            ));
        }
    }
    if more > 0 {
        notes.push(format!("and {more} more list/mask disagreements"));
    }
    Ok(notes)
}

/// The notes on the older list `older` of a set the prober read from its
/// newer list `newer`: where the older is not symmetric, "CPU 0's
/// thread_siblings_list lists CPU 1, but CPU 1's does not list CPU 0 (not a
/// partition); core_cpus_list was used (CPU 0: 0-1, CPU 1: 0-1)", one per
/// such pair; where it is symmetric but differs, one per CPU that differs.
fn renamed_notes(
    root: &SysfsRoot,
    online: &CpuSet,
    newer: &str,
    older: &str,
) -> Result<Vec<String>> {
    let read = |cpu: u32, name: &str| {
        let file = format!("{CPU_DIR}/cpu{cpu}/topology/{name}");
        // The file the prober used was read already; the other one's parse
        // error is a list that says no CPU set.
        root.read_cpuset(&[(&file, SetForm::List)]).ok().flatten()
    };
    // By CPU: the newer list and the older.
    let mut sets = BTreeMap::new();
    for cpu in online.iter() {
        if let (Some(new_set), Some(old_set)) = (read(cpu, newer), read(cpu, older)) {
            sets.insert(cpu, (new_set, old_set));
        }
    }
    let differ = |cpu: &u32| sets.get(cpu).is_some_and(|(new, old)| new != old);
    // Where both lists agree on both CPUs, an asymmetry is the newer
    // list's own, which the sibling map's notes name.
    let mut asymmetric = Vec::new();
    for (a, (new_a, old_a)) in &sets {
        for b in old_a.iter().filter(|b| b != a) {
            let Some((new_b, old_b)) = sets.get(&b) else {
                continue;
            };
            if (differ(a) || differ(&b)) && !old_b.contains(*a) {
                asymmetric.push(format!(
                    "CPU {a}'s {older} lists CPU {b}, but CPU {b}'s does not list CPU {a} (not a \
                     partition); {newer} was used (CPU {a}: {new_a}, CPU {b}: {new_b})"
                ));
            }
        }
    }
    if !asymmetric.is_empty() {
        return Ok(asymmetric);
    }
    Ok(sets
        .iter()
        .filter(|(_, (new_set, old_set))| new_set != old_set)
        .map(|(cpu, (new_set, old_set))| {
            format!(
                "CPU {cpu}'s {older} says {old_set} but its {newer} says {new_set}; {newer} was used"
            )
        })
        .collect())
}

/// "thread_siblings_list says 2-3 but its thread_siblings mask 00000003
/// says 0-1", or `None` when they agree or either file is absent.
fn disagreement(root: &SysfsRoot, dir: &str, list: &str, mask: &str) -> Result<Option<String>> {
    let list_file = format!("{dir}/{list}");
    let mask_file = format!("{dir}/{mask}");
    // The file the prober used was read already (an unreadable one failed
    // the probe); the other one's parse error is the disagreement.
    let list_set = root.read_cpuset(&[(&list_file, SetForm::List)]);
    let mask_set = root.read_cpuset(&[(&mask_file, SetForm::Mask)]);
    match (&list_set, &mask_set) {
        (Ok(None), _) | (_, Ok(None)) => return Ok(None),
        (Ok(Some(list_set)), Ok(Some(mask_set))) if list_set == mask_set => return Ok(None),
        _ => {}
    }
    let mask_says = match mask_set {
        Ok(set) => set.unwrap_or_default().to_string(),
        Err(_) => "no CPU set".into(),
    };
    let text = |file: &str| -> Result<String> { Ok(root.read_text(file)?.unwrap_or_default()) };
    Ok(Some(format!(
        "{list} says {} but its {mask} mask {} says {mask_says}",
        text(&list_file)?,
        text(&mask_file)?
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_is_a_list_and_its_mask() {
        for (list, mask) in PAIRS {
            assert_eq!(list.strip_suffix("_list"), Some(mask));
            assert!(CORE_ORDER.contains(&list) || PACKAGE_ORDER.contains(&list));
        }
    }
}
