//! `cpuset::parse_list` on any text: never a panic, and whatever it accepts
//! is a set of CPUs below `MAX_CPUS` that prints back to the same set.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placement_study::cpuset::{MAX_CPUS, parse_list};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(set) = parse_list(&text) {
        assert!(set.iter().all(|cpu| cpu < MAX_CPUS));
        assert!(set.cpus().windows(2).all(|pair| pair[0] < pair[1]));
        assert_eq!(parse_list(&set.to_string()), Ok(set));
    }
});
