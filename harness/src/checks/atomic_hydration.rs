//! `atomic-hydration`: a hydration that fails leaves the prior workspace as it was.
//!
//! Property: when an extractor refuses an archive, or is killed (a hang, a fault), the root
//! holds exactly the prior workspace W0 (kinds, contents, modes, link targets, inode
//! sharing), or — where the step allows it, as for an extractor killed after its atomic
//! swap — the complete new tree; it never holds a mix, and it stays readable. Evidence:
//! [`Evidence::prior`], the root after the step, [`Evidence::prior_unchanged`] and
//! [`Evidence::also_intact`].

use super::{first_line, Check, CheckDef, Evidence, Violation};
use crate::error::HarnessError;
use crate::workspace::diff::{diff_trees, listing};
use snapconf_producers::Outcome;

/// The definition registered as [`Check::ATOMIC_HYDRATION`].
pub const DEF: CheckDef = CheckDef {
    id: "atomic-hydration",
    explain: "a failed hydration changed the prior workspace",
    column: 2,
    severity: 2,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let (Some(w0), Some(tool)) = (ev.prior, ev.failure_message()) else {
        return Ok(Vec::new());
    };
    if ev.prior_unchanged == Some(true) {
        return Ok(Vec::new());
    }
    // The words baselines fingerprint: "refused hydration changed ...", "hydration under
    // fault F failed and changed ...".
    let step = match (ev.fault, ev.outcome) {
        (Some(_), _) => format!("{} failed and changed", ev.step_words()),
        (None, Outcome::Hang { .. }) => "hung hydration changed".to_string(),
        (None, _) => "refused hydration changed".to_string(),
    };
    let violation = |first: &str, observed: String| Violation {
        check: Check::ATOMIC_HYDRATION,
        message: format!("{step} the prior workspace: {first}"),
        expected: Some(listing(w0)),
        observed: Some(observed),
    };
    let now = match ev.root_tree() {
        None => return Ok(Vec::new()),
        Some(Err(e)) => {
            let e = format!("the root cannot be read: {e}");
            return Ok(vec![violation(
                &e,
                format!("hydration failed:\n{tool}\n\n\ndiff (- prior, + after):\n{e}"),
            )]);
        }
        Some(Ok(t)) => t,
    };
    let d = diff_trees(w0, now);
    if d.is_empty() {
        if ev.prior_unchanged == Some(false) {
            // Same kinds and contents, but some inode, mode or time changed.
            return Ok(vec![violation(
                "an inode, mode, size or time of the prior changed",
                format!("hydration failed:\n{tool}\n"),
            )]);
        }
        return Ok(Vec::new());
    }
    if let Some(also) = ev.also_intact {
        if also(now)? {
            return Ok(Vec::new());
        }
    }
    Ok(vec![violation(
        &first_line(&d.to_string()),
        format!(
            "hydration failed:\n{tool}\n\n{}\ndiff (- prior, + after):\n{d}",
            listing(now)
        ),
    )])
}
