//! Raw bytes → reference `validate` + `hydrate_file` over a prior workspace in a jail on
//! `/dev/shm`; the oracle is `snapconf_harness::fuzz::ExtractOracle` (also run by
//! `cargo test` on `corpora/`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use snapconf_harness::fuzz::{ExtractOracle, MAX_INPUT};
use std::sync::{Mutex, OnceLock};

static ORACLE: OnceLock<Mutex<ExtractOracle>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_INPUT {
        return;
    }
    let oracle = ORACLE.get_or_init(|| {
        Mutex::new(ExtractOracle::new(None).expect("cannot create the fuzzing jail"))
    });
    let mut oracle = oracle.lock().unwrap_or_else(|e| e.into_inner());
    if let Err(failure) = oracle.check(data) {
        panic!("{failure}");
    }
});
