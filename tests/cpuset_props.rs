//! Property tests of the CPU list and mask parsers against a simple
//! reference: any set, written the ways a kernel may write it, parses back
//! to the same set; any other text is an error, never a panic.

use placement_study::cpuset::{
    CpuSet, MAX_CPUS, MAX_MASK_WORDS, format_mask, parse_list, parse_mask,
};
use proptest::prelude::*;
use std::collections::BTreeSet;

/// Sets with both scattered CPUs and contiguous runs, up to the last CPU
/// number allowed (`MAX_CPUS - 1`).
fn cpu_sets() -> impl Strategy<Value = BTreeSet<u32>> {
    (
        prop::collection::btree_set(0u32..MAX_CPUS, 0..48),
        prop::collection::vec((0u32..MAX_CPUS, 1u32..70), 0..6),
    )
        .prop_map(|(scattered, runs)| {
            let mut set = scattered;
            for (start, len) in runs {
                set.extend(start..(start + len).min(MAX_CPUS));
            }
            set
        })
}

/// The reference list writer: each CPU on its own, then runs merged only
/// where `merge` says so, so the parser sees `3,4`, `3-4` and `3-5,6` alike.
fn write_list(set: &BTreeSet<u32>, merge: &[bool]) -> String {
    let mut parts: Vec<(u32, u32)> = Vec::new();
    for (i, &cpu) in set.iter().enumerate() {
        match parts.last_mut() {
            Some((_, end)) if *end + 1 == cpu && merge[i % merge.len()] => *end = cpu,
            _ => parts.push((cpu, cpu)),
        }
    }
    let parts: Vec<String> = parts
        .iter()
        .map(|&(lo, hi)| {
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}-{hi}")
            }
        })
        .collect();
    parts.join(",")
}

/// The reference mask writer: 32-bit words, most significant first, with
/// `extra_words` leading zero words and the top word either padded to 8
/// digits or not (the kernel trims it to the CPU count).
fn write_mask(set: &BTreeSet<u32>, extra_words: usize, pad_top: bool) -> String {
    let top = set.iter().next_back().copied().unwrap_or(0);
    let mut words = vec![0u32; top as usize / 32 + 1 + extra_words];
    for &cpu in set {
        words[cpu as usize / 32] |= 1 << (cpu % 32);
    }
    let rendered: Vec<String> = words
        .iter()
        .rev()
        .enumerate()
        .map(|(i, word)| {
            if i == 0 && !pad_top {
                format!("{word:x}")
            } else {
                format!("{word:08x}")
            }
        })
        .collect();
    rendered.join(",")
}

/// What real files put after the value.
fn endings() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", "\n", "\n\0", "\0\n", " \n"])
}

fn as_vec(set: &BTreeSet<u32>) -> Vec<u32> {
    set.iter().copied().collect()
}

proptest! {
    #[test]
    fn lists_parse_back_to_the_set(
        set in cpu_sets(),
        merge in prop::collection::vec(any::<bool>(), 1..8),
        ending in endings(),
    ) {
        let text = format!("{}{ending}", write_list(&set, &merge));
        let parsed = parse_list(&text).map_err(TestCaseError::fail)?;
        prop_assert_eq!(parsed.cpus().to_vec(), as_vec(&set));
    }

    #[test]
    fn masks_parse_back_to_the_set(
        set in cpu_sets(),
        extra_words in 0usize..3,
        pad_top in any::<bool>(),
        ending in endings(),
    ) {
        // Leading zero words, as long as the mask stays within the limit.
        let needed = set.iter().next_back().map_or(1, |top| *top as usize / 32 + 1);
        let extra_words = extra_words.min(MAX_MASK_WORDS - needed);
        let text = format!("{}{ending}", write_mask(&set, extra_words, pad_top));
        let parsed = parse_mask(&text).map_err(TestCaseError::fail)?;
        prop_assert_eq!(parsed.cpus().to_vec(), as_vec(&set));
    }

    #[test]
    fn the_crate_writers_round_trip(set in cpu_sets()) {
        let cpus = CpuSet::from_cpus(set.iter().copied());
        prop_assert_eq!(&parse_list(&cpus.to_string()).map_err(TestCaseError::fail)?, &cpus);
        prop_assert_eq!(&parse_mask(&format_mask(&cpus)).map_err(TestCaseError::fail)?, &cpus);
    }

    #[test]
    fn garbage_never_panics(text in "[0-9a-fx,\\- \n\0()nul]{0,24}", any_text in ".{0,40}") {
        for input in [&text, &any_text] {
            let _ = parse_list(input);
            let _ = parse_mask(input);
        }
    }

    #[test]
    fn cpus_past_the_limit_are_refused_by_name(
        set in cpu_sets(),
        too_large in MAX_CPUS..u32::MAX,
        merge in prop::collection::vec(any::<bool>(), 1..8),
    ) {
        let mut parts = vec![write_list(&set, &merge)];
        parts.retain(|part| !part.is_empty());
        parts.push(too_large.to_string());
        let list = parts.join(",");
        let error = parse_list(&list).expect_err("a CPU past the limit");
        prop_assert!(error.contains(&too_large.to_string()), "{}", error);
        prop_assert!(error.contains(&MAX_CPUS.to_string()), "{}", error);
        let range = format!("0-{too_large}");
        prop_assert!(parse_list(&range).is_err());
    }

    #[test]
    fn masks_wider_than_the_limit_are_refused(
        set in cpu_sets(),
        extra_words in 1usize..4,
    ) {
        let widest = write_mask(&set, MAX_MASK_WORDS, true);
        let words = widest.split(',').count();
        let trimmed: Vec<&str> = widest.split(',').skip(words - MAX_MASK_WORDS).collect();
        let at_limit = trimmed.join(",");
        let parsed = parse_mask(&at_limit).map_err(TestCaseError::fail)?;
        prop_assert_eq!(parsed.cpus().to_vec(), as_vec(&set));
        let wider = format!("{}{at_limit}", "00000000,".repeat(extra_words));
        let error = parse_mask(&wider).expect_err("a mask past the limit");
        prop_assert!(error.contains(&MAX_MASK_WORDS.to_string()), "{}", error);
    }

    #[test]
    fn parsed_lists_are_sorted_and_distinct(text in "[0-9,\\-]{0,16}") {
        if let Ok(set) = parse_list(&text) {
            prop_assert!(set.cpus().windows(2).all(|pair| pair[0] < pair[1]));
        }
    }
}
