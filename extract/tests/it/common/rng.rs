//! The seeded generator of the extractor's tests and benchmark: SplitMix64 (Steele, Lea and
//! Flood, OOPSLA 2014), the same algorithm and outputs as the harness's
//! `snapconf_harness::gen::Rng`.
//!
//! A copy, and the only other one: `snapconf-extract` depends on nothing of ours so that it
//! can be audited and reused alone, and a dev-dependency on the harness (which depends on
//! this crate) would build a second `snapconf-extract` whose types do not match these
//! tests'. The benchmark includes this file by path.

/// SplitMix64 state.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}
