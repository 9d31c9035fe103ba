//! Counting the validator's verdicts of a split pipeline (validate, then hydrate).

use std::sync::atomic::{AtomicU64, Ordering};

/// Shared counters of one backend's validate step; cheap to update from any thread.
#[derive(Debug, Default)]
pub struct Verdicts {
    accepted: AtomicU64,
    refused: AtomicU64,
    accepted_then_refused: AtomicU64,
    accepted_then_hung: AtomicU64,
}

/// A snapshot of [`Verdicts`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerdictCounts {
    /// Archives the validator accepted.
    pub accepted: u64,
    /// Archives the validator refused (the hydrate step did not run).
    pub refused: u64,
    /// Accepted by the validator, then refused by the hydrate step: each is a
    /// `late-failure` the validator should have caught.
    pub accepted_then_refused: u64,
    /// Accepted by the validator, then the hydrate step hung or died.
    pub accepted_then_hung: u64,
}

impl Verdicts {
    /// Count one accept.
    pub fn accept(&self) {
        self.accepted.fetch_add(1, Ordering::Relaxed);
    }
    /// Count one refusal.
    pub fn refuse(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }
    /// Count a hydrate-step refusal after an accept.
    pub fn late_refusal(&self) {
        self.accepted_then_refused.fetch_add(1, Ordering::Relaxed);
    }
    /// Count a hydrate-step hang after an accept.
    pub fn late_hang(&self) {
        self.accepted_then_hung.fetch_add(1, Ordering::Relaxed);
    }
    /// The counts so far.
    pub fn counts(&self) -> VerdictCounts {
        VerdictCounts {
            accepted: self.accepted.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            accepted_then_refused: self.accepted_then_refused.load(Ordering::Relaxed),
            accepted_then_hung: self.accepted_then_hung.load(Ordering::Relaxed),
        }
    }
}
