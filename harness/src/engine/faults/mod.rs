//! Fault injection for `atomic-hydration` and `containment`: truncated and corrupt archives,
//! `EFBIG`, `ENOSPC` and `SIGKILL` during hydration, for every extractor.

mod child;
mod layout;
mod options;
mod plan;
mod repro;
mod run;
mod tmpfs;

pub use child::{policy_flags, ChildReference};
pub use layout::{layout, MemberSpan, TarLayout};
pub use options::FaultOptions;
pub use plan::{fault_seed, FaultPlan};
pub use repro::{read_fault_json, write_fault_json, FAULT_JSON};
pub use run::{run_faults, FaultStep};
pub use tmpfs::Tmpfs;
