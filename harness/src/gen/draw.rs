//! Drawing the cases of a run: case `i` of a run is drawn from its own RNG, seeded from
//! `(seed, i)`, so it can be drawn again at any time ([`draw_case`]).

use crate::model::spec::Case;
use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use sha2::{Digest, Sha256};

/// A test runner whose RNG is a pure function of `(seed, index)`.
pub fn case_runner(seed: u64, index: u64) -> TestRunner {
    let mut h = Sha256::new();
    h.update(b"snapconf case rng v1");
    h.update(seed.to_le_bytes());
    h.update(index.to_le_bytes());
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
