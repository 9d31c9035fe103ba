//! `escaping-link`: an extractor that promises not to write links leaving the root does not.
//!
//! Property: after an accepted hydration, the root holds no symlink with an absolute
//! target if the extractor promised none, and no symlink whose resolution (from where it
//! sits, through the other symlinks of the tree, as the kernel would follow them) leaves
//! the root if it promised none ([`snapconf_producers::LinkPromises`]: Python's `data`
//! filter promises both, the reference what its policy refuses, a plugged-in backend what
//! its `[profile]` refuses, mapped through the reference policy of that profile). A link
//! the prior workspace held at the same path with the same target was left, not written,
//! and is not counted. Such a link is a
//! security bug even when nothing outside has changed yet: the next consumer of the tree
//! (a build, the next hydration through it) follows it. Evidence:
//! [`Evidence::promises`], a successful outcome and the root after the step.
//!
//! Hardlinks to an inode outside the root are not seen here: the observed tree knows which
//! names inside the root share an inode, not names outside it.

use super::{Check, CheckDef, Evidence, Violation};
use crate::error::HarnessError;
use crate::model::bytes::{escape, RelPath};
use crate::model::tree::{NodeKind, Tree};
use snapconf_producers::Outcome;
use std::collections::VecDeque;

/// The definition registered as [`Check::ESCAPING_LINK`].
pub const DEF: CheckDef = CheckDef {
    id: "escaping-link",
    explain: "the extractor left a link leaving the root that it promised to refuse",
    column: 103,
    severity: 1,
    judge,
};

/// Symlinks followed before a resolution is taken for a loop (Linux's `MAXSYMLINKS`).
pub const MAX_HOPS: usize = 40;

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let (Some(p), Outcome::Success) = (ev.promises, ev.outcome) else {
        return Ok(Vec::new());
    };
    if !p.no_absolute_symlinks && !p.no_escaping_symlinks {
        return Ok(Vec::new());
    }
    let Some(tree) = ev.root_tree_or_err()? else {
        return Ok(Vec::new());
    };
    let mut bad = Vec::new();
    for (path, node) in &tree.nodes {
        let NodeKind::Symlink { target } = &node.kind else {
            continue;
        };
        // A link the prior workspace held at the same path with the same target was left
        // in place, not written: the promise is about what the extractor writes.
        if ev
            .prior
            .and_then(|w0| w0.nodes.get(path))
            .is_some_and(|n| n.kind == node.kind)
        {
            continue;
        }
        let t = target.as_bytes();
        let line = || format!("`{} -> {}`", path.escaped(), escape(t));
        if t.starts_with(b"/") {
            if p.no_absolute_symlinks {
                bad.push(format!("{} has an absolute target", line()));
            }
        } else if p.no_escaping_symlinks && leaves_root(tree, path.as_bytes(), t) {
            bad.push(format!("{} resolves outside the root", line()));
        }
    }
    let Some(first) = bad.first() else {
        return Ok(Vec::new());
    };
    Ok(vec![Violation {
        check: Check::ESCAPING_LINK,
        message: format!(
            "{} left a link it promised to refuse: {first} ({} such link(s))",
            ev.what,
            bad.len()
        ),
        expected: Some(format!("no link leaving the root ({p:?})\n")),
        observed: Some(format!("{}\n", bad.join("\n"))),
    }])
}

/// True if the symlink at `link` (root-relative path bytes) with relative `target`
/// resolves outside the root: a `..` above the root, or an absolute target of a symlink met
/// on the way. Missing components are taken lexically (as `realpath` does for a dangling
/// link); a loop of more than [`MAX_HOPS`] links is not an escape.
pub fn leaves_root(tree: &Tree, link: &[u8], target: &[u8]) -> bool {
    let mut stack: Vec<Vec<u8>> = link.split(|&b| b == b'/').map(<[u8]>::to_vec).collect();
    stack.pop();
    let mut pending: VecDeque<Vec<u8>> = target.split(|&b| b == b'/').map(<[u8]>::to_vec).collect();
    let mut hops = 0;
    while let Some(comp) = pending.pop_front() {
        match comp.as_slice() {
            b"" | b"." => continue,
            b".." => {
                if stack.pop().is_none() {
                    return true;
                }
                continue;
            }
            _ => stack.push(comp),
        }
        let Some(node) = RelPath::new(stack.join(&b'/'))
            .ok()
            .and_then(|p| tree.nodes.get(&p))
        else {
            continue;
        };
        if let NodeKind::Symlink { target } = &node.kind {
            hops += 1;
            if hops > MAX_HOPS {
                return false;
            }
            let t = target.as_bytes();
            if t.starts_with(b"/") {
                return true;
            }
            stack.pop();
            for (i, c) in t.split(|&b| b == b'/').enumerate() {
                pending.insert(i, c.to_vec());
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bytes::RawBytes;
    use crate::model::tree::Node;

    fn tree(links: &[(&str, Option<&str>)]) -> Tree {
        let mut t = Tree::default();
        for (p, target) in links {
            let kind = match target {
                Some(t) => NodeKind::Symlink {
                    target: RawBytes(t.as_bytes().to_vec()),
                },
                None => NodeKind::Dir,
            };
            t.nodes
                .insert(RelPath::new(*p).expect("path"), Node { kind, mode: 0 });
        }
        t
    }

    /// Escapes are seen lexically, through other links, and through an absolute link met on
    /// the way; links that stay inside, dangle inside or loop are not escapes.
    #[test]
    fn resolution_follows_the_tree() {
        let t = tree(&[
            ("d", None),
            ("d/up", Some("..")),
            ("d/abs", Some("/etc")),
            ("loop", Some("loop")),
        ]);
        assert!(leaves_root(&t, b"x", b".."));
        assert!(leaves_root(&t, b"d/x", b"../.."));
        assert!(!leaves_root(&t, b"d/x", b".."));
        assert!(leaves_root(&t, b"x", b"d/up/.."), "through d/up -> ..");
        assert!(!leaves_root(&t, b"x", b"d/up"));
        assert!(
            leaves_root(&t, b"x", b"d/abs/passwd"),
            "through an absolute link"
        );
        assert!(!leaves_root(&t, b"x", b"missing/../d"));
        assert!(!leaves_root(&t, b"x", b"loop"));
    }

    /// Only links the extractor wrote count: one the prior workspace held at the same path
    /// with the same target was left in place; one re-pointed, or new, was written.
    #[test]
    fn links_left_from_the_prior_are_not_counted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        std::fs::create_dir(&root).expect("mkdir");
        std::os::unix::fs::symlink("../old", root.join("kept")).expect("symlink");
        std::os::unix::fs::symlink("../new", root.join("moved")).expect("symlink");
        std::os::unix::fs::symlink("../new", root.join("written")).expect("symlink");
        let prior = tree(&[("kept", Some("../old")), ("moved", Some("../old"))]);
        let outcome = Outcome::Success;
        let mut ev = Evidence::hydration("hydration", &outcome, &root);
        ev.prior = Some(&prior);
        ev.promises = Some(snapconf_producers::LinkPromises {
            no_absolute_symlinks: true,
            no_escaping_symlinks: true,
        });
        let v = judge(&ev).expect("judged");
        assert_eq!(v.len(), 1, "{v:?}");
        let observed = v[0].observed.as_deref().unwrap_or_default();
        assert!(observed.contains("`moved -> ../new`"), "{observed}");
        assert!(observed.contains("`written -> ../new`"), "{observed}");
        assert!(!observed.contains("kept"), "{observed}");
    }
}
