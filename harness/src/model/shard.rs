//! Splitting a conformance run across CI jobs: `snapconf run --shard K/N` runs the case
//! indices `i` with `i % N == K - 1`. Every shard draws its cases from the same seed, so
//! the N shards together run exactly the cases of the unsharded run, each once.

use std::fmt;
use std::str::FromStr;

/// Shard `k` of `n` (1-based: `1/1` is the whole run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    k: u64,
    n: u64,
}

/// A `--shard` value that is not `K/N` with `1 <= K <= N`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad shard `{0}`: expected K/N with 1 <= K <= N, e.g. `2/4`")]
pub struct BadShard(pub String);

impl Shard {
    /// The whole run (`1/1`).
    pub const ALL: Shard = Shard { k: 1, n: 1 };

    /// Shard `k` of `n`.
    ///
    /// # Errors
    /// [`BadShard`] unless `1 <= k <= n`.
    pub fn new(k: u64, n: u64) -> Result<Shard, BadShard> {
        if k == 0 || n == 0 || k > n {
            return Err(BadShard(format!("{k}/{n}")));
        }
        Ok(Shard { k, n })
    }

    /// `K`, this shard's number (1-based).
    pub fn k(self) -> u64 {
        self.k
    }

    /// `N`, the shard count of the run.
    pub fn n(self) -> u64 {
        self.n
    }

    /// True if case `index` (0-based) belongs to this shard.
    pub fn contains(self, index: u64) -> bool {
        index % self.n == self.k - 1
    }
}

impl Default for Shard {
    fn default() -> Self {
        Shard::ALL
    }
}

impl FromStr for Shard {
    type Err = BadShard;
    fn from_str(s: &str) -> Result<Shard, BadShard> {
        let bad = || BadShard(s.to_string());
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k = k.trim().parse().map_err(|_| bad())?;
        let n = n.trim().parse().map_err(|_| bad())?;
        Shard::new(k, n).map_err(|_| bad())
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Property: for any N and any number of cases, every case index belongs to exactly
        /// one of the shards 1/N..N/N (disjoint and complete).
        #[test]
        fn shards_are_disjoint_and_complete(n in 1u64..40, cases in 0u64..2000) {
            for i in 0..cases {
                let owners = (1..=n).filter(|&k| Shard::new(k, n).map(|s| s.contains(i)).unwrap_or(false)).count();
                prop_assert_eq!(owners, 1, "case {} of {} belongs to exactly one of {} shards", i, cases, n);
            }
        }

        /// Property: `K/N` parses back to the shard it prints.
        #[test]
        fn shard_text_round_trips(n in 1u64..100, k in 1u64..100) {
            prop_assume!(k <= n);
            let s = Shard::new(k, n).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(s.to_string().parse::<Shard>(), Ok(s));
        }
    }

    #[test]
    fn bad_shards_are_refused() {
        for bad in ["0/3", "4/3", "1/0", "x/2", "3", ""] {
            assert!(bad.parse::<Shard>().is_err(), "`{bad}` is refused");
        }
    }
}
