//! Parser differential of the `archive_plan` target: the same bytes listed by the reference
//! and the `tar` crate must give the same members.

use super::failure::OracleFailure;
use crate::archive::parser_listing::{reference_listing, tar_crate_listing, ParserListing};

/// The differential of the `archive_plan` target: the reference's listing against the `tar`
/// crate's, judged by the `parser-disagreement` check.
///
/// # Errors
/// The first disagreement, as [`OracleFailure::Violated`].
pub fn reference_vs_tar_crate(bytes: &[u8]) -> Result<(), OracleFailure> {
    use crate::checks::{Check, Evidence};
    let listings = [
        ("reference", reference_listing(bytes)),
        ("tar crate", tar_crate_listing(bytes)),
    ];
    // Only archives both read to the end are compared: the `tar` crate reads on past much
    // that the reference refuses (that is the reference's job), which is no disagreement
    // of listings.
    if listings
        .iter()
        .any(|(_, l)| !matches!(l, ParserListing::Members(_)))
    {
        return Ok(());
    }
    let mut ev = Evidence::archive_only("the archive");
    ev.listings = &listings;
    let found = Check::PARSER_DISAGREEMENT
        .violations(&ev)
        .map_err(|e| OracleFailure::Infra(e.to_string()))?;
    match found.into_iter().next() {
        Some(v) => Err(OracleFailure::Violated(v)),
        None => Ok(()),
    }
}
