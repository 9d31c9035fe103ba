//! Drawing the cases of a run: case `i` of a run is drawn from its own RNG, seeded from
//! `(seed, i)`, so it can be drawn again at any time ([`draw_case`]). A run's opening
//! cases are stratified ([`super::strata`]): drawn again from [`attempt_runner`] until
//! they have their stratum's shapes.

use crate::model::spec::Case;
use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use sha2::{Digest, Sha256};

/// A test runner whose RNG is a pure function of `(seed, index)`.
pub fn case_runner(seed: u64, index: u64) -> TestRunner {
    runner_from(b"snapconf case rng v1", &[seed, index])
}

/// The runner of a stratified case's draw number `attempt` ([`super::Strata`]): attempt 0
/// is [`case_runner`]`(seed, index)`, so a plain draw that already has the stratum's
/// shapes is kept as it is; later attempts are a pure function of `(seed, index, attempt)`.
pub fn attempt_runner(seed: u64, index: u64, attempt: u32) -> TestRunner {
    match attempt {
        0 => case_runner(seed, index),
        n => runner_from(b"snapconf stratum rng v1", &[seed, index, u64::from(n)]),
    }
}

/// A ChaCha runner seeded from the SHA-256 of `tag` and `parts` (little-endian).
fn runner_from(tag: &[u8], parts: &[u64]) -> TestRunner {
    let mut h = Sha256::new();
    h.update(tag);
    for p in parts {
        h.update(p.to_le_bytes());
    }
    let digest = h.finalize();
    let mut bytes = [0u8; 32];
    bytes.copy_from_slice(&digest);
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// Draw case `index` of the run with `seed`.
pub fn draw_case<S>(strategy: &S, seed: u64, index: u64) -> Result<S::Tree, String>
where
    S: Strategy<Value = Case>,
{
    let mut runner = case_runner(seed, index);
    strategy
        .new_tree(&mut runner)
        .map_err(|e| format!("cannot draw case {index}: {e}"))
}
