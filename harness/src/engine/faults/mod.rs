//! Fault injection for `atomic-hydration` and `containment`: truncated and corrupt archives,
//! `EFBIG`, `ENOSPC` and `SIGKILL` during hydration, for every extractor.

mod child;
mod inject;
mod layout;
mod options;
mod plan;
mod repro;
mod tmpfs;

pub use child::{policy_flags, ChildReference};
pub use inject::{run_faults, FaultStep};
pub use layout::{layout, MemberSpan, TarLayout};
pub use options::FaultOptions;
pub use plan::{fault_seed, FaultPlan};
pub use repro::{read_fault_json, write_fault_json, FAULT_JSON};
pub use tmpfs::Tmpfs;
