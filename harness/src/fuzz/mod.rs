//! Fuzzing: `snapconf fuzz` (structural mutation of seed and adversarial archives, run
//! through any extractor in a jail, findings shrunk and written as reproducers) and the
//! oracles the cargo-fuzz targets call, as library code so that `cargo test` on stable runs
//! them on the committed corpus too.

mod adversarial;
mod attack;
mod campaign;
mod causes;
mod execute;
mod expectation;
mod failure;
mod finding;
mod host_safe;
mod judge;
mod mutate;
mod options;
mod parsers;
mod persist;
mod plan;
mod reference;
mod replay;
mod report;
mod roundtrip;
mod shrink;
mod signature;
mod worker;

pub use adversarial::{adversarial_cases, named_policy, AdversarialCase};
pub use attack::{attack, attack_of, AttackClass};
pub use campaign::{fuzz, FuzzEvent, FuzzSummary};
pub use expectation::{listing_members, reference_expectation, Expectation, ExpectedMember};
pub use failure::OracleFailure;
pub use finding::FuzzFinding;
pub use host_safe::{host_safe, MAX_DECODED};
pub use judge::{judge, safety_policy, UNSAFE_REASONS};
pub use mutate::{mutate, Mutation};
pub use options::{FuzzOptions, MAX_CAUSES_PER_CHECK, MAX_SHRINKS_PER_CHECK};
pub use parsers::reference_vs_tar_crate;
pub use plan::{ArchivePlan, Damage, Header, Kind, MemberPlan, Token};
pub use reference::{oracle_policies, ExtractOracle, Verdict, MAX_INPUT};
pub use replay::{read_replay, replay_archive, replay_finding};
pub use report::fuzz_report;
pub use roundtrip::{check_roundtrip, FuzzEntry, FuzzEntryKind, FuzzWorkspace};
pub use signature::{shape, signature};
pub use worker::{verdicts, DrawnVerdict, Verdicts};
