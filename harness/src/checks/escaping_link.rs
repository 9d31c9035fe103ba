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
//! A regular file whose inode has more links (`st_nlink`) than names in the root shares it
//! with a name outside: a hardlink member whose target resolved outside. That breaks the
//! third promise, `no_outside_hardlinks` (Python's `data` filter and the reference make it;
//! the `tar` filter does not check hardlink targets).

use super::{Check, CheckDef, Evidence, Violation};
use crate::error::HarnessError;
use crate::model::bytes::{escape, RelPath};
use crate::model::links;
use crate::model::tree::{NodeKind, Tree};
use snapconf_producers::Outcome;

/// The definition registered as [`Check::ESCAPING_LINK`].
pub const DEF: CheckDef = CheckDef {
    id: "escaping-link",
    explain: "the extractor left a link leaving the root that it promised to refuse",
    column: 103,
    severity: 1,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let (Some(p), Outcome::Success) = (ev.promises, ev.outcome) else {
        return Ok(Vec::new());
    };
    if !p.no_absolute_symlinks && !p.no_escaping_symlinks && !p.no_outside_hardlinks {
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
    if p.no_outside_hardlinks {
        if let Some(root) = ev.root {
            bad.extend(outside_hardlinks(tree, ev.prior, root));
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

/// A line for each regular file of `tree` (observed at `root`) whose inode has more links
/// than `tree` has names for it (`st_nlink` against its `shared_inodes` group): another
/// name of it lies outside the root. A file the prior held at that path with the same
/// content is skipped (left, not written); a file that cannot be `lstat`ed is too (the
/// tree was just read, so it is not expected).
fn outside_hardlinks(tree: &Tree, prior: Option<&Tree>, root: &std::path::Path) -> Vec<String> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    let mut names_inside: std::collections::BTreeMap<&RelPath, u64> = Default::default();
    for group in &tree.shared_inodes {
        for p in group {
            names_inside.insert(p, group.len() as u64);
        }
    }
    let mut out = Vec::new();
    for (path, node) in &tree.nodes {
        if !matches!(node.kind, NodeKind::File { .. }) {
            continue;
        }
        if prior
            .and_then(|w0| w0.nodes.get(path))
            .is_some_and(|n| n.kind == node.kind)
        {
            continue;
        }
        let full = root.join(std::ffi::OsStr::from_bytes(path.as_bytes()));
        let Ok(meta) = std::fs::symlink_metadata(&full) else {
            continue;
        };
        let inside = names_inside.get(path).copied().unwrap_or(1);
        if meta.nlink() > inside {
            out.push(format!(
                "`{}` shares its inode with {} name(s) outside the root",
                path.escaped(),
                meta.nlink() - inside
            ));
        }
    }
    out
}

/// True if the symlink at `link` (root-relative path bytes) with relative `target`
/// resolves outside the root: a `..` above the root, or an absolute target of a symlink met
/// on the way. Missing components are taken lexically (as `realpath -m` does for a dangling
/// link: what it reaches once they are made); a loop of more than
/// [`MAX_HOPS`](crate::model::links::MAX_HOPS) links is not an escape. See
/// [`links::walk`].
pub fn leaves_root(tree: &Tree, link: &[u8], target: &[u8]) -> bool {
    let mut dir: Vec<&[u8]> = link.split(|&b| b == b'/').collect();
    dir.pop();
    let rules = links::Rules {
        follow: links::Follow::All,
        above_root: links::AboveRoot::Leaves,
        dead_end: links::DeadEnd::PassesThrough,
    };
    matches!(
        links::walk(&Observed(tree), rules, &dir, target).end,
        links::End::Leaves(_)
    )
}

/// An observed tree as the link walker sees it (every absolute target leaves the root: the
/// tree does not know where the root is).
pub(crate) struct Observed<'a>(pub(crate) &'a Tree);

impl links::Nodes for Observed<'_> {
    fn node(&self, path: &[Vec<u8>]) -> links::Seen<'_> {
        let node = RelPath::new(path.join(&b'/'))
            .ok()
            .and_then(|p| self.0.nodes.get(&p));
        match node.map(|n| &n.kind) {
            None => links::Seen::Missing,
            Some(NodeKind::Dir) => links::Seen::Dir,
            Some(NodeKind::Symlink { target }) => links::Seen::Symlink(target.as_bytes()),
            Some(_) => links::Seen::Other,
        }
    }
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
            no_outside_hardlinks: true,
        });
        let v = judge(&ev).expect("judged");
        assert_eq!(v.len(), 1, "{v:?}");
        let observed = v[0].observed.as_deref().unwrap_or_default();
        assert!(observed.contains("`moved -> ../new`"), "{observed}");
        assert!(observed.contains("`written -> ../new`"), "{observed}");
        assert!(!observed.contains("kept"), "{observed}");
    }

    /// A file sharing its inode with a name outside the root breaks `no_outside_hardlinks`;
    /// two names of one inode both inside the root do not, nor does a file the prior held
    /// with the same content, nor anything when nothing was promised.
    #[test]
    fn hardlinks_to_an_inode_outside_the_root_are_seen() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        std::fs::create_dir(&root).expect("mkdir");
        std::fs::write(dir.path().join("outside"), b"host").expect("write");
        std::fs::hard_link(dir.path().join("outside"), root.join("escaped")).expect("link");
        std::fs::write(root.join("a"), b"inside").expect("write");
        std::fs::hard_link(root.join("a"), root.join("b")).expect("link");
        std::fs::write(dir.path().join("old"), b"old").expect("write");
        std::fs::hard_link(dir.path().join("old"), root.join("left")).expect("link");
        let mut prior = crate::workspace::observe::observe(&root).expect("observe");
        prior.nodes.retain(|p, _| p.as_bytes() == b"left");
        let outcome = Outcome::Success;
        let promises = |no_outside_hardlinks| snapconf_producers::LinkPromises {
            no_absolute_symlinks: false,
            no_escaping_symlinks: false,
            no_outside_hardlinks,
        };
        let mut ev = Evidence::hydration("hydration", &outcome, &root);
        ev.prior = Some(&prior);
        ev.promises = Some(promises(true));
        let v = judge(&ev).expect("judged");
        assert_eq!(v.len(), 1, "{v:?}");
        let observed = v[0].observed.as_deref().unwrap_or_default();
        assert_eq!(
            observed.trim(),
            "`escaped` shares its inode with 1 name(s) outside the root",
            "only the link to outside: {observed}"
        );
        let mut ev = Evidence::hydration("hydration", &outcome, &root);
        ev.promises = Some(promises(false));
        assert!(judge(&ev).expect("judged").is_empty(), "nothing promised");
    }
}
