//! `late-failure`: what a capture accepted, the paired extractor hydrates.
//!
//! Property: when the archive is a successful capture of a known workspace (the evidence
//! has an expected tree), the extractor does not refuse it: a snapshot that was persisted
//! but cannot be restored loses the workspace at the worst moment (on resume). Evidence:
//! [`Evidence::expected`] and a [`Outcome::Refused`] outcome.

use super::{first_line, Check, CheckDef, Evidence, Violation};
use crate::error::HarnessError;
use crate::model::diff::{listing, listing_shown, ModeShown};
use snapconf_producers::Outcome;

/// The definition registered as [`Check::LATE_FAILURE`].
pub const DEF: CheckDef = CheckDef {
    id: "late-failure",
    explain: "capture succeeded but hydration refused the archive: persisted but unrestorable",
    column: 0,
    severity: 3,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let (Some(want), Outcome::Refused { message }) = (ev.expected, ev.outcome) else {
        return Ok(Vec::new());
    };
    Ok(vec![Violation {
        check: Check::LATE_FAILURE,
        message: format!(
            "capture succeeded but {} was refused: {}",
            ev.what,
            first_line(message)
        ),
        expected: Some(match ev.profile {
            Some(p) => listing_shown(want, ModeShown::Compared(p.modes)),
            None => listing(want),
        }),
        observed: Some(format!("hydration refused:\n{message}\n")),
    }])
}
