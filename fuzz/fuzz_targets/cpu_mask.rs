//! `cpuset::parse_mask` on any text: never a panic, and whatever it accepts
//! is a set of CPUs below `MAX_CPUS` that renders back to the same set.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placement_study::cpuset::{MAX_CPUS, format_mask, parse_mask};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(set) = parse_mask(&text) {
        assert!(set.iter().all(|cpu| cpu < MAX_CPUS));
        assert!(set.cpus().windows(2).all(|pair| pair[0] < pair[1]));
        assert_eq!(parse_mask(&format_mask(&set)), Ok(set));
    }
});
