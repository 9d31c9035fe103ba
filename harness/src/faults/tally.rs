//! What one faulted hydration came to, for the report's extractor × fault rows.

use super::kind::FaultKind;

/// The result of one faulted hydration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultResult {
    /// The hydration failed (refused, killed, error) and the root is the prior workspace
    /// (after a kill: the prior or the complete new tree).
    FailedIntact,
    /// The hydration failed and the root is neither: an `atomic-hydration` finding.
    FailedDamaged,
    /// The extractor accepted the faulted input (e.g. an archive cut at a member boundary,
    /// or a hydration that finished before the kill). Not a finding by itself.
    Accepted,
    /// The fault could not be applied to this case here; the reason says why.
    Skipped(String),
}

/// One faulted hydration of one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultTally {
    pub extractor: String,
    pub kind: FaultKind,
    pub result: FaultResult,
}
