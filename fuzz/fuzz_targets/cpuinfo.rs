//! The `/proc/cpuinfo` first-block parser the probe uses
//! (`FirstCpuInfo::parse`) on any text: an answer or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placement_study::probe::environment::FirstCpuInfo;

fuzz_target!(|data: &[u8]| {
    let _ = FirstCpuInfo::parse(&String::from_utf8_lossy(data));
});
