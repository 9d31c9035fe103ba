//! Fuzzing: `snapconf fuzz` (structural mutation of seed and adversarial archives, run
//! through any extractor in a jail, findings shrunk and written as reproducers) and the
//! oracles the cargo-fuzz targets call, as library code so that `cargo test` on stable runs
//! them on the committed corpus too.

mod adversarial;
mod attack;
mod campaign;
mod causes;
mod effect;
mod execute;
mod expectation;
mod feedback;
mod finding;
mod host_safe;
mod mutate;
mod options;
mod oracles;
mod persist;
mod recognise;
mod replay;
mod safety;
mod shrink;
mod signature;
mod summary_report;
mod worker;

pub use adversarial::{adversarial_cases, named_policy, AdversarialCase};
pub use attack::{attack, attack_lowered, attack_of, AttackClass};
pub use campaign::{fuzz, CoverageFigures, FuzzEvent, FuzzSummary};
pub use causes::FirstSeen;
pub use expectation::{listing_members, reference_expectation, Expectation, ExpectedMember};
pub use feedback::{
    coverage_available, CoverageMode, CORPUS_SHARE, MAX_CORPUS_BYTES, MAX_CORPUS_ENTRIES,
};
pub use finding::FuzzFinding;
pub use host_safe::{host_safe, MAX_DECODED};
pub use mutate::{mutate, Mutation};
pub use options::{FuzzOptions, MAX_CAUSES_PER_CHECK, MAX_SHRINKS_PER_CHECK};
pub use oracles::{
    check_roundtrip, oracle_policies, reference_vs_tar_crate, ArchivePlan, Damage, ExtractOracle,
    ExtractVerdict, FuzzEntry, FuzzEntryKind, FuzzWorkspace, Header, MemberPlan, OracleFailure,
    PlanKind, Token, MAX_INPUT,
};
pub use replay::{read_replay, replay_archive, replay_finding};
pub use safety::{judge_safety, safety_policy, UNSAFE_REASONS};
pub use signature::{shape, signature};
pub use summary_report::{cause_lines, fuzz_report};
pub use worker::{verdicts, DrawnVerdict, Verdicts};
