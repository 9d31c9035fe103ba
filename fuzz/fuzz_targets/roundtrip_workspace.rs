//! An `Arbitrary` workspace → `tar-rs` capture → reference hydration (empty root and over a
//! prior) → `expected(spec, profile)` and every pipeline check (`harness::pipeline::run_case`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use snapconf_harness::fuzz::{check_roundtrip, FuzzWorkspace};

fuzz_target!(|ws: FuzzWorkspace| {
    if let Err(failure) = check_roundtrip(&ws, None) {
        panic!("{failure}");
    }
});
