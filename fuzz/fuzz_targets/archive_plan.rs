//! A structured archive (`ArchivePlan`: members with a token vocabulary for names and link
//! targets, long-name headers, damaged fields) → tar bytes → the `extract_reference` oracle,
//! plus the parser differential between the reference and the `tar` crate.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snapconf_harness::fuzz::{reference_vs_tar_crate, ArchivePlan, ExtractOracle, MAX_INPUT};
use std::sync::{Mutex, OnceLock};

static ORACLE: OnceLock<Mutex<ExtractOracle>> = OnceLock::new();

fuzz_target!(|plan: ArchivePlan| {
    let bytes = plan.to_bytes();
    if bytes.len() > MAX_INPUT {
        return;
    }
    let oracle = ORACLE.get_or_init(|| {
        Mutex::new(ExtractOracle::new(None).expect("cannot create the fuzzing jail"))
    });
    let mut oracle = oracle.lock().unwrap_or_else(|e| e.into_inner());
    if let Err(failure) = oracle.check(&bytes) {
        panic!("{failure}");
    }
    if let Err(failure) = reference_vs_tar_crate(&bytes) {
        panic!("{failure}");
    }
});
