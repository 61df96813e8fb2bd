//! A CPU's sibling sets are written twice, as a list (`core_cpus_list`,
//! `0-1`) and as a mask (`core_cpus`, `00000003`), and the prober reads
//! one of them ([`sibling_sets`](crate::probe::sysfs::sibling_sets) takes
//! the first its candidates find). A kernel writes both from one cpumask;
//! a snapshot edited by hand, or damaged, may not. Where the two say
//! different sets, a note names the CPU, both values and the file used.

use crate::cpuset::CpuSet;
use crate::probe::sysfs::{CPU_DIR, SetForm, SysfsRoot};
use anyhow::Result;

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

/// At most this many notes; one more line counts the rest (a garbled
/// snapshot of a large machine could disagree on every CPU).
const MAX_NOTES: usize = 16;

/// One note per online CPU whose list and mask of a set disagree. Which
/// pairs a kernel writes is read from the first CPU's listing, as the
/// prober learns its files (every CPU folder has the same ones).
pub fn list_mask_notes(root: &SysfsRoot, online: &CpuSet) -> Result<Vec<String>> {
    let Some(first) = online.iter().next() else {
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
    let mut notes = Vec::new();
    let mut more = 0;
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

/// "thread_siblings_list says 2-3 but its thread_siblings mask 00000003
/// says 0-1", or `None` when they agree or either file is absent.
fn disagreement(root: &SysfsRoot, dir: &str, list: &str, mask: &str) -> Result<Option<String>> {
    let list_file = format!("{dir}/{list}");
    let mask_file = format!("{dir}/{mask}");
    let (Some(list_text), Some(mask_text)) =
        (root.read_text(&list_file)?, root.read_text(&mask_file)?)
    else {
        return Ok(None);
    };
    // The file the prober used was read already (an unreadable one failed
    // the probe); the other one's parse error is the disagreement.
    let read = |file: &str, form| {
        root.read_cpuset(&[(file, form)])
            .map(|set| set.unwrap_or_default().to_string())
            .unwrap_or_else(|_| "no CPU set".into())
    };
    let (list_set, mask_set) = (
        read(&list_file, SetForm::List),
        read(&mask_file, SetForm::Mask),
    );
    Ok((list_set != mask_set).then(|| {
        format!("{list} says {list_text} but its {mask} mask {mask_text} says {mask_set}")
    }))
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
