//! The checks: one file per property of the contract (its doc comment states it), the one
//! id type [`Check`] whose [`Check::ALL`] is the registry, and the [`Evidence`] every
//! driver collects and hands to [`violations_of`].

pub mod atomic_hydration;
pub mod checkpoint_restore;
pub mod containment;
pub mod dangling_link;
pub mod escaping_link;
mod evidence;
pub mod exclusion_leak;
pub mod expected_listing;
pub mod hang;
mod id;
mod judged;
pub mod late_failure;
pub mod listing_mismatch;
pub mod parser_disagreement;
pub mod roundtrip;
pub mod stuck_session;
pub mod traversal;
pub mod unsafe_accept;
pub mod verdict_disagreement;

use evidence::on_members;
pub use evidence::{
    first_line, violations_of, AlsoIntact, Archived, Evidence, InView, ReferenceRun, RestoreKind,
    SessionStep, Step, Violation,
};
pub use id::{Check, CheckDef};
pub use judged::{privileged_or_special, Judged};
