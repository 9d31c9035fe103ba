//! `unsafe-accept`: an extractor that accepts what the reference refuses as unsafe lands
//! nothing outside policy.
//!
//! Property: when the reference (under the profile's safety policy) refuses an archive for
//! an unsafe reason (absolute path, `..`, a write through a link, an escaping link, a
//! special file, a dangling hardlink), or the archive asks for setuid/setgid bits the
//! profile strips, an extractor that accepts it anyway leaves no FIFO, socket or device,
//! and no setuid/setgid bit the profile strips, in the root. (What it wrote outside the
//! root is [`containment`](super::containment).) Evidence: [`Evidence::judged`], the
//! profile and the root after a successful hydration.

use super::{Check, CheckDef, Evidence, Violation};
use crate::checks::privileged_or_special;
use crate::error::HarnessError;
use crate::model::profile::ModeRule;
use snapconf_producers::Outcome;

/// The definition registered as [`Check::UNSAFE_ACCEPT`].
pub const DEF: CheckDef = CheckDef {
    id: "unsafe-accept",
    explain: "an extractor accepted an archive the reference refuses as unsafe, and something \
              landed outside policy",
    column: 7,
    severity: 4,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let (Some(j), Some(profile), Outcome::Success) = (ev.judged, ev.profile, ev.outcome) else {
        return Ok(Vec::new());
    };
    if j.unsafe_reason.is_none() && !j.privileged_mode {
        return Ok(Vec::new());
    }
    let Some(now) = ev.root_tree_or_err()? else {
        return Ok(Vec::new());
    };
    let landed = privileged_or_special(now, profile.modes != ModeRule::Exact);
    let Some(first) = landed.first() else {
        return Ok(Vec::new());
    };
    Ok(vec![Violation {
        check: Check::UNSAFE_ACCEPT,
        message: format!(
            "accepted an archive the reference refuses or filters ({}); {first}",
            j.unsafe_reason.as_deref().unwrap_or("privileged mode bits")
        ),
        expected: Some("nothing outside policy in the root\n".into()),
        observed: Some(format!(
            "reference: {}\noutside policy:\n{}\n",
            j.verdict,
            landed.join("\n")
        )),
    }])
}
