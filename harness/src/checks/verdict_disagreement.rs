//! `verdict-disagreement`: the reference's `validate` and `hydrate` agree on every archive.
//!
//! Property: for one archive and one policy, `validate` accepts exactly when `hydrate`
//! does, and when both refuse they give the same reason code. `check-archive` is a
//! validator that guards other extractors, so a gap between the two is a bypass. Evidence:
//! [`Evidence::reference`].

use super::{Check, CheckDef, Evidence, Violation};
use crate::error::HarnessError;

/// The definition registered as [`Check::VERDICT_DISAGREEMENT`].
pub const DEF: CheckDef = CheckDef {
    id: "verdict-disagreement",
    explain: "the reference's validate and hydrate disagree on an archive",
    column: 101,
    severity: 4,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let Some(r) = ev.reference else {
        return Ok(Vec::new());
    };
    let message = match (r.validated, r.hydrated) {
        (Err(v), Err(h)) if v.reason() != h.reason() => {
            format!("validate refused with `{v}` but hydrate failed with `{h}`")
        }
        (Ok(_), Err(h)) => format!("validate accepted but hydrate failed with `{h}`"),
        (Err(v), Ok(_)) => format!("validate refused with `{v}` but hydrate accepted"),
        _ => return Ok(Vec::new()),
    };
    Ok(vec![Violation::new(Check::VERDICT_DISAGREEMENT, message)])
}
