//! The fault vocabulary: the five faults, how they are named on the command line
//! (`--faults LIST|all`), and what one faulted hydration came to (the report's
//! extractor × fault rows).

use serde::{Deserialize, Serialize};
use std::fmt;

/// One fault injected into a hydration over a prior workspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// The archive cut short: inside a header, inside a payload, or before the end blocks.
    Truncate,
    /// A header's checksum or size field damaged at member k.
    Corrupt,
    /// The extractor runs under `RLIMIT_FSIZE` below the largest file of the archive.
    Efbig,
    /// The root lies in a small tmpfs: the prior fits, the new tree does not.
    Enospc,
    /// `SIGKILL` at a random moment during hydration, then the backend's recovery step.
    Kill,
}

/// A `--faults` item that names no fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown fault `{0}` (one of: truncate, corrupt, efbig, enospc, kill, all)")]
pub struct UnknownFault(pub String);

impl FaultKind {
    /// Every fault, in report order.
    pub const ALL: [FaultKind; 5] = [
        FaultKind::Truncate,
        FaultKind::Corrupt,
        FaultKind::Efbig,
        FaultKind::Enospc,
        FaultKind::Kill,
    ];

    /// The stable id, e.g. `truncate`.
    pub fn id(self) -> &'static str {
        match self {
            FaultKind::Truncate => "truncate",
            FaultKind::Corrupt => "corrupt",
            FaultKind::Efbig => "efbig",
            FaultKind::Enospc => "enospc",
            FaultKind::Kill => "kill",
        }
    }

    /// Parse a `--faults` list: ids and `all`, in any order; the result is sorted and
    /// without duplicates. Empty items are ignored.
    ///
    /// # Errors
    /// [`UnknownFault`] naming the first item that is not a fault.
    pub fn parse_list<S: AsRef<str>>(items: &[S]) -> Result<Vec<FaultKind>, UnknownFault> {
        let mut out = Vec::new();
        for item in items {
            let item = item.as_ref().trim();
            if item.is_empty() {
                continue;
            }
            if item == "all" {
                out.extend(FaultKind::ALL);
                continue;
            }
            let k = FaultKind::ALL
                .into_iter()
                .find(|k| k.id() == item)
                .ok_or_else(|| UnknownFault(item.to_string()))?;
            out.push(k);
        }
        out.sort();
        out.dedup();
        Ok(out)
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

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
    /// The extractor's name (as in `--extractor`).
    pub extractor: String,
    /// The fault applied.
    pub kind: FaultKind,
    /// What came of it.
    pub result: FaultResult,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_sorted_and_unique() {
        assert_eq!(
            FaultKind::parse_list(&["kill", "truncate", "kill", ""]),
            Ok(vec![FaultKind::Truncate, FaultKind::Kill])
        );
        assert_eq!(FaultKind::parse_list(&["all"]), Ok(FaultKind::ALL.to_vec()));
        assert_eq!(
            FaultKind::parse_list(&["nope"]),
            Err(UnknownFault("nope".into()))
        );
    }
}
