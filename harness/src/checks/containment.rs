//! `containment`: a step changes nothing outside the root it was given.
//!
//! Property: after a capture or a hydration, every path in the jail outside the root under
//! test (the decoys behind planted links, the canaries beside the roots, the other roots)
//! has the `lstat` state it had before the step; and no archive holds the bytes of a decoy
//! or canary, which a producer could only have read by following a link out of the root.
//! The root itself stays a directory: a step that removes it or replaces it by a link or a
//! file has changed what the root's parent holds. Evidence: [`Evidence::outside`],
//! [`Evidence::root_replaced`] and [`Archived::stored_canaries`](super::Archived::stored_canaries).

use super::{CheckDef, Evidence, Violation};
use crate::error::HarnessError;

/// The definition registered as [`super::Check::CONTAINMENT`].
pub const DEF: CheckDef = CheckDef {
    id: "containment",
    explain: "something outside the root changed",
    column: 3,
    severity: 0,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let mut out = Vec::new();
    if let Some(first) = ev.outside.first() {
        out.push(Violation {
            check: super::Check::CONTAINMENT,
            message: format!(
                "{} changed the jail outside the root: {first}",
                ev.step_words()
            ),
            expected: Some("nothing outside the root changes\n".into()),
            observed: Some(format!(
                "changes outside the root:\n{}\n",
                ev.outside.join("\n")
            )),
        });
    }
    if let Some(how) = ev.root_replaced() {
        out.push(Violation {
            check: super::Check::CONTAINMENT,
            message: format!("{}: the root was {how}", ev.what),
            expected: Some("the root stays a directory\n".into()),
            observed: Some(format!("the root was {how}\n")),
        });
    }
    if let Some(a) = ev.archived {
        if let Some(first) = a.stored_canaries.first() {
            out.push(Violation {
                check: super::Check::CONTAINMENT,
                message: format!(
                    "{} stored the bytes of `{first}`, outside the root (read through a symlink)",
                    ev.what
                ),
                expected: Some("no bytes from outside the root in the archive\n".into()),
                observed: Some(format!(
                    "decoys found in the archive:\n{}\n",
                    a.stored_canaries.join("\n")
                )),
            });
        }
    }
    Ok(out)
}
