//! `stuck-session`: a session whose capture was refused can go on once the offending
//! entries are gone.
//!
//! Property: after a turn whose capture was refused, the session removes every entry the
//! profile lets a capture refuse (a FIFO under `special-files = refuse-at-capture`, an
//! absolute symlink under `absolute-symlinks = refuse-at-capture`, ...); the next capture
//! by the same producer instance must then not be refused where a fresh instance of that
//! producer, given the same workspace, captures it. A backend that keeps the failed
//! capture's state (a lock, a half-written index, a "last capture failed" flag) is stuck.
//! Comparing with a fresh instance keeps refusals that do not come from the instance's
//! state (a directory an ordinary user cannot read) out of it. Evidence:
//! [`Evidence::session`]'s `fresh_capture` and a refused [`Evidence::outcome`].

use super::{first_line, Check, CheckDef, Evidence, Violation};
use crate::error::HarnessError;
use snapconf_producers::Outcome;

/// The definition registered as [`Check::STUCK_SESSION`].
pub const DEF: CheckDef = CheckDef {
    id: "stuck-session",
    explain: "after a refused capture and the removal of the offending entries, the session's \
              producer still refused a workspace that a fresh instance captures",
    column: 105,
    severity: 4,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let (Some(step), Outcome::Refused { message }) = (ev.session, ev.outcome) else {
        return Ok(Vec::new());
    };
    if step.fresh_capture != Some(true) {
        return Ok(Vec::new());
    }
    Ok(vec![Violation {
        check: Check::STUCK_SESSION,
        message: format!(
            "{} was refused after the offending entries of the refused turn were removed, \
             while a fresh instance captured the same workspace: {}",
            ev.what,
            first_line(message)
        ),
        expected: Some(
            "the capture succeeds, as a fresh instance's capture of the same workspace does\n"
                .into(),
        ),
        observed: Some(format!("capture refused:\n{message}\n")),
    }])
}
