//! Saved result files, as `report` reads them back: any bytes are a result
//! or an error, never a panic or a huge allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placement_study::results::{GateResult, RunResult};

fuzz_target!(|data: &[u8]| {
    let _ = serde_json::from_slice::<RunResult>(data);
    let _ = serde_json::from_slice::<GateResult>(data);
});
