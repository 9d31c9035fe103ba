//! `checkpoint-restore`: every accepted checkpoint of a session restores to exactly its
//! turn's workspace under the profile, whatever came after it.
//!
//! Property: in a session of turns through one backend instance (`snapconf lifecycle`),
//! restoring the checkpoint of turn k yields `expected(W_k, profile)` — into an empty root
//! (cold), over the live workspace that has moved on since (warm), and right after a
//! refused capture, when the last good checkpoint must come back with nothing of the
//! failed turn. A backend that keeps state between calls (a fingerprint that says a
//! restore can be skipped, an incremental snapshot keyed by the root) fails it where a
//! stateless one cannot. Evidence: [`Evidence::session`] with a restore, and what
//! `roundtrip` uses ([`Evidence::expected`], [`Evidence::profile`], the root after the
//! step); the comparison is `roundtrip`'s. A refused restore of an accepted checkpoint is a
//! `late-failure`, and a failed restore that changed the live workspace an
//! `atomic-hydration` finding, as in a single case.

use super::{roundtrip, Check, CheckDef, Evidence, Violation};
use crate::error::HarnessError;

/// The definition registered as [`Check::CHECKPOINT_RESTORE`].
pub const DEF: CheckDef = CheckDef {
    id: "checkpoint-restore",
    explain: "restoring a session's checkpoint gave a different workspace than the one \
              captured at that turn (cold, warm over the moved-on workspace, or after a \
              refused capture)",
    column: 104,
    severity: 3,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    if ev.session.is_none_or(|s| s.restore.is_none()) {
        return Ok(Vec::new());
    }
    roundtrip::differs(ev, Check::CHECKPOINT_RESTORE)
}
