//! Sessions (`snapconf lifecycle`): a case is a sequence of turns through one backend
//! instance — edits, a capture per turn, restores of earlier checkpoints cold, warm over
//! the moved-on workspace, and after a refused capture — judged per step by the one check
//! module, shrunk over turns, edits and the initial workspace, and replayed from its
//! reproducer. The turn model and the checks are in docs/design.md, "Sessions".

pub mod driver;
pub mod session;
pub mod shrink_sequence;

pub use session::{run_sequence, SequenceOutcome};
