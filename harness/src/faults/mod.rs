//! Fault injection for `atomic-hydration` and `containment`: truncated and corrupt archives,
//! `EFBIG`, `ENOSPC` and `SIGKILL` during hydration, for every extractor.

mod child;
mod kind;
mod layout;
mod plan;
mod repro;
mod run;
mod tally;
mod tmpfs;

pub use child::{policy_flags, ChildReference};
pub use kind::{FaultKind, FaultOptions, UnknownFault};
pub use layout::{layout, MemberSpan, TarLayout};
pub use plan::{fault_seed, FaultPlan};
pub use repro::{read_fault_json, write_fault_json, FAULT_JSON};
pub use run::{run_faults, FaultStep};
pub use tally::{FaultResult, FaultTally};
pub use tmpfs::Tmpfs;
