//! The `/proc/cpuinfo` parsers the probe uses on any text: the first block
//! (`FirstCpuInfo::parse`) and the MIDR fields of every block
//! (`midr::parse_cpuinfo`): an answer or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placement_study::probe::environment::FirstCpuInfo;
use placement_study::probe::midr::parse_cpuinfo;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = FirstCpuInfo::parse(&text);
    let _ = parse_cpuinfo(&text);
});
