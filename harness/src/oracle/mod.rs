//! Fuzzing oracles: the properties the cargo-fuzz targets check, as library code so that
//! `cargo test` on stable runs them on the committed corpus too.

mod adversarial;
mod expect;
mod expectation;
mod failure;
mod fast_jail;
mod parsers;
mod plan;
mod raw_tar;
mod reference;
mod roundtrip;

pub use adversarial::{adversarial_cases, named_policy, AdversarialCase};
pub use expect::{check_listing, normalise_member_name};
pub use expectation::{listing_members, reference_expectation, Expectation, ExpectedMember};
pub use failure::OracleFailure;
pub use fast_jail::{FuzzJail, PRIOR};
pub use parsers::{
    compare_listings, kind_flag, parsed, permissive_policy, reference_listing,
    reference_vs_tar_crate, tar_crate_listing, ParsedMember, ParserListing,
};
pub use plan::{ArchivePlan, Damage, Header, Kind, MemberPlan, Token};
pub use raw_tar::{
    header, parse_numeric, parse_octal, pax_records, put_octal, set_checksum, RawTar,
};
pub use reference::{oracle_policies, ExtractOracle, Verdict, MAX_INPUT};
pub use roundtrip::{check_roundtrip, FuzzEntry, FuzzEntryKind, FuzzWorkspace};
