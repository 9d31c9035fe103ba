//! Fuzzing: `snapconf fuzz` (structural mutation of seed and adversarial archives, run
//! through any extractor in a jail, findings shrunk and written as reproducers) and the
//! oracles the cargo-fuzz targets call, as library code so that `cargo test` on stable runs
//! them on the committed corpus too.

mod adversarial;
mod attack;
mod expectation;
mod failure;
mod host_safe;
mod judge;
mod mutate;
mod parsers;
mod persist;
mod plan;
mod reference;
mod report;
mod roundtrip;
mod session;
mod shrink;
mod signature;

pub use adversarial::{adversarial_cases, named_policy, AdversarialCase};
pub use attack::{attack, attack_of, AttackClass};
pub use expectation::{listing_members, reference_expectation, Expectation, ExpectedMember};
pub use failure::OracleFailure;
pub use host_safe::{host_safe, MAX_DECODED};
pub use judge::{judge, safety_policy, UNSAFE_REASONS};
pub use mutate::{mutate, Mutation};
pub use parsers::reference_vs_tar_crate;
pub use plan::{ArchivePlan, Damage, Header, Kind, MemberPlan, Token};
pub use reference::{oracle_policies, ExtractOracle, Verdict, MAX_INPUT};
pub use report::fuzz_report;
pub use roundtrip::{check_roundtrip, FuzzEntry, FuzzEntryKind, FuzzWorkspace};
pub use session::{
    fuzz, read_replay, replay_archive, replay_finding, verdicts, DrawnVerdict, FuzzEvent,
    FuzzFinding, FuzzOptions, FuzzSummary, Verdicts, MAX_CAUSES_PER_CHECK, MAX_SHRINKS_PER_CHECK,
};
pub use signature::{shape, signature};
