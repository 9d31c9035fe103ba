//! What an oracle reports when a property fails.

use crate::checks::Violation;

/// A violated property found by an oracle, or a fault of the oracle itself.
#[derive(Debug, thiserror::Error)]
pub enum OracleFailure {
    /// A check of [`crate::checks`] failed; its id is stable, its message says what
    /// happened, with paths escaped (`\xNN` for non-UTF-8 bytes).
    #[error("{}: {}", .0.check, .0.message)]
    Violated(Violation),
    /// A fault of the oracle's own machinery (cannot create the jail, `/dev/shm` full): not a
    /// property of the input.
    #[error("oracle infrastructure: {0}")]
    Infra(String),
}

impl OracleFailure {
    /// The stable id of the violated check, or `infra`.
    pub fn check_id(&self) -> &str {
        match self {
            OracleFailure::Violated(v) => v.check.id(),
            OracleFailure::Infra(_) => "infra",
        }
    }
}
