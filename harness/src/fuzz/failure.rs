//! What an oracle reports when a property fails.

/// A violated property found by an oracle. The check id (`containment`, ...) is stable; the
/// message says what happened, with paths escaped (`\xNN` for non-UTF-8 bytes).
#[derive(Debug, thiserror::Error)]
pub enum OracleFailure {
    /// Something outside the root changed (DESIGN.md `containment`).
    #[error("containment: {0}")]
    Containment(String),
    /// A refused hydration changed the prior workspace (DESIGN.md `atomic-hydration`).
    #[error("atomic-hydration: {0}")]
    AtomicHydration(String),
    /// An accepted hydration left a tree that does not match `validate`'s listing.
    #[error("listing-mismatch: {0}")]
    ListingMismatch(String),
    /// `validate` and `hydrate` disagree on the verdict or the reason code.
    #[error("verdict-disagreement: {0}")]
    VerdictDisagreement(String),
    /// Two parsers read the same bytes as different member lists (DESIGN.md
    /// `parser-disagreement`).
    #[error("parser-disagreement: {0}")]
    ParserDisagreement(String),
    /// A tar-rs capture + reference hydration differs from `expected(spec, profile)`, or
    /// another pipeline check failed (DESIGN.md `roundtrip` and the universal checks).
    #[error("{check}: {message}")]
    Pipeline {
        /// The pipeline check id.
        check: String,
        /// The pipeline's message.
        message: String,
    },
    /// A fault of the oracle's own machinery (cannot create the jail, `/dev/shm` full): not a
    /// property of the input.
    #[error("oracle infrastructure: {0}")]
    Infra(String),
}

impl OracleFailure {
    /// The stable id of the violated property.
    pub fn check_id(&self) -> &str {
        match self {
            OracleFailure::Containment(_) => "containment",
            OracleFailure::AtomicHydration(_) => "atomic-hydration",
            OracleFailure::ListingMismatch(_) => "listing-mismatch",
            OracleFailure::VerdictDisagreement(_) => "verdict-disagreement",
            OracleFailure::ParserDisagreement(_) => "parser-disagreement",
            OracleFailure::Pipeline { check, .. } => check,
            OracleFailure::Infra(_) => "infra",
        }
    }
}
