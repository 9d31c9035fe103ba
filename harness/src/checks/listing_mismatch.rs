//! `listing-mismatch`: an accepted reference hydration writes exactly what `validate`
//! listed.
//!
//! Property: when `validate` and `hydrate` both accept, the root holds the listed members
//! and nothing else, as [`crate::checks::expected_listing::check_listing`] compares them (kinds, contents,
//! modes under the policy, link targets, hardlinks sharing an inode, dropped members
//! absent). Evidence: [`Evidence::reference`] and the root after the step.

use super::{Check, CheckDef, Evidence, Violation};
use crate::checks::expected_listing::check_listing;
use crate::error::HarnessError;

/// The definition registered as [`Check::LISTING_MISMATCH`].
pub const DEF: CheckDef = CheckDef {
    id: "listing-mismatch",
    explain: "an accepted reference hydration does not match validate's listing",
    column: 102,
    severity: 4,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let Some(r) = ev.reference else {
        return Ok(Vec::new());
    };
    let (Ok(listing), Ok(report)) = (r.validated, r.hydrated) else {
        return Ok(Vec::new());
    };
    let Some(seen) = ev.root_tree_or_err()? else {
        return Ok(Vec::new());
    };
    Ok(check_listing(listing, &report.dropped, r.policy, seen)
        .err()
        .map(|m| Violation::new(Check::LISTING_MISMATCH, m))
        .into_iter()
        .collect())
}
