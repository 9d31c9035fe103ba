//! The oracles the cargo-fuzz targets call (`fuzz/fuzz_targets/`), as library code so that
//! `cargo test` on stable runs them on the committed corpus too: `extract_reference`
//! ([`ExtractOracle`]), `roundtrip_workspace` ([`check_roundtrip`]) and `archive_plan`
//! ([`ArchivePlan`] and [`reference_vs_tar_crate`]); each reports an [`OracleFailure`] when
//! its property fails.

mod failure;
mod parsers;
mod plan;
mod reference;
mod roundtrip;

pub use failure::OracleFailure;
pub use parsers::reference_vs_tar_crate;
pub use plan::{ArchivePlan, Damage, Header, MemberPlan, PlanKind, Token};
pub use reference::{oracle_policies, ExtractOracle, ExtractVerdict, MAX_INPUT};
pub use roundtrip::{check_roundtrip, FuzzEntry, FuzzEntryKind, FuzzWorkspace};
