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
use crate::model::diff::{diff_trees, listing};
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
    // When snapconf's adapter emptied the root itself (the clear-then-extract resume path
    // it models) and the prior lost entries, the finding is about that path, and says so;
    // entries only added (or a root that cannot be read) are the tool's doing.
    let cleared_note = |lost: bool| match ev.cleared_by {
        Some(name) if lost => format!(
            " (snapconf's `{name}` adapter emptied the root before the tool ran: \
             clear then extract)"
        ),
        _ => String::new(),
    };
    let violation = |first: &str, observed: String, lost: bool| Violation {
        check: Check::ATOMIC_HYDRATION,
        message: format!("{step} the prior workspace: {first}{}", cleared_note(lost)),
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
                false,
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
                // Re-created by the tool after the clear: new inodes and times.
                true,
            )]);
        }
        return Ok(Vec::new());
    }
    if let Some(also) = ev.also_intact {
        if also(now)? {
            return Ok(Vec::new());
        }
    }
    let lost = !d.missing.is_empty() || !d.changed.is_empty();
    Ok(vec![violation(
        &first_line(&d.to_string()),
        format!(
            "hydration failed:\n{tool}\n\n{}\ndiff (- prior, + after):\n{d}",
            listing(now)
        ),
        lost,
    )])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::observe::observe;

    /// A refused hydration that emptied the root is a finding either way; when snapconf's
    /// adapter did the emptying (clear then extract), the message says so, and only then.
    #[test]
    fn a_root_cleared_by_the_adapter_is_said_to_be() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        std::fs::create_dir(&root).expect("mkdir");
        std::fs::write(root.join("a"), b"prior").expect("write");
        let prior = observe(&root).expect("observe");
        std::fs::remove_file(root.join("a")).expect("rm");
        let outcome = Outcome::Refused {
            message: "tar: exited with status 2".into(),
        };
        for cleared in [Some("gnu-tar"), None] {
            let mut ev = Evidence::hydration("hydration", &outcome, &root);
            ev.prior = Some(&prior);
            ev.cleared_by = cleared;
            let v = judge(&ev).expect("judged");
            assert_eq!(v.len(), 1, "{v:?}");
            let said = v[0]
                .message
                .contains("snapconf's `gnu-tar` adapter emptied the root");
            assert_eq!(said, cleared.is_some(), "{}", v[0].message);
        }
        // Entries only added: the tool's doing, whoever cleared the root.
        std::fs::write(root.join("a"), b"prior").expect("write");
        let prior = observe(&root).expect("observe");
        std::fs::write(root.join("new"), b"written by the tool").expect("write");
        let mut ev = Evidence::hydration("hydration", &outcome, &root);
        ev.prior = Some(&prior);
        ev.cleared_by = Some("gnu-tar");
        let v = judge(&ev).expect("judged");
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            !v[0].message.contains("emptied the root"),
            "{}",
            v[0].message
        );
    }
}
