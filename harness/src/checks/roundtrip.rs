//! `roundtrip`: an accepted hydration yields exactly the tree the profile promises.
//!
//! Property: after a successful hydration of a capture of workspace W1, the root, observed
//! and normalised by the profile, equals `expected(W1, profile)` (kinds, contents, modes as
//! the profile keeps them, link targets, which names share an inode). Evidence:
//! [`Evidence::expected`], [`Evidence::profile`] and the root after the step. A restore in
//! a session ([`Evidence::session`] with a restore) is judged by `checkpoint-restore`
//! instead, with `differs`, the same comparison.

use super::{first_line, Check, CheckDef, Evidence, Violation};
use crate::error::HarnessError;
use crate::model::diff::{diff_trees, listing_shown, ModeShown};
use crate::model::expected::normalise;
use snapconf_producers::Outcome;

/// The definition registered as [`Check::ROUNDTRIP`].
pub const DEF: CheckDef = CheckDef {
    id: "roundtrip",
    explain: "the hydrated tree differs from what the profile promises",
    column: 1,
    severity: 8,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    if ev.session.is_some_and(|s| s.restore.is_some()) {
        return Ok(Vec::new());
    }
    differs(ev, Check::ROUNDTRIP)
}

/// The comparison behind `roundtrip` and `checkpoint-restore`: after a successful step
/// with an expected tree and a profile, the root (normalised by the profile) against the
/// expected tree; one violation of `check` when they differ, with both listings and the
/// diff.
///
/// # Errors
/// The root cannot be read after a success (snapconf's fault, see
/// [`Evidence::root_tree_or_err`]).
pub(super) fn differs(ev: &Evidence<'_>, check: Check) -> Result<Vec<Violation>, HarnessError> {
    let (Some(want), Some(profile), Outcome::Success) = (ev.expected, ev.profile, ev.outcome)
    else {
        return Ok(Vec::new());
    };
    let Some(seen) = ev.root_tree_or_err()? else {
        return Ok(Vec::new());
    };
    let seen = normalise(seen, profile);
    let d = diff_trees(want, &seen);
    if d.is_empty() {
        return Ok(Vec::new());
    }
    let shown = ModeShown::Compared(profile.modes);
    Ok(vec![Violation {
        check,
        message: format!(
            "{} differs from the expected tree: {}",
            ev.what,
            first_line(&d.shown(shown))
        ),
        expected: Some(listing_shown(want, shown)),
        observed: Some(format!(
            "{}\ndiff (- expected, + observed):\n{}",
            listing_shown(&seen, shown),
            d.shown(shown)
        )),
    }])
}
