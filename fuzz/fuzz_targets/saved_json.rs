//! Saved result files, as `report` reads them back (header, kind and
//! version first, then the whole document): any bytes are a document or a
//! one-line error, never a panic or a huge allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placement_study::saved::load::from_bytes;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let _ = from_bytes(data, Path::new("fuzz-input.json"));
});
