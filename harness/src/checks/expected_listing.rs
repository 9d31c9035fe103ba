//! Does an observed tree match what `validate` listed? The `Ok` half of the
//! `extract_reference` oracle.

use crate::model::bytes::escape;
use crate::model::tree::{NodeKind, Tree};
use snapconf_extract::{normalise_name, ListedMember, Listing, MemberKind, Modes, Policy};
use std::collections::BTreeMap;

/// What one path must be after an accepted hydration.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Want {
    File {
        size: u64,
        mode: Option<u32>,
    },
    Dir,
    Symlink {
        target: Vec<u8>,
    },
    /// Not checked: absent or anything but a special file (a dropped member, an unknown
    /// kind).
    Any,
}

/// Check an observed `tree` (read with [`crate::workspace::observe::observe`]) against the `listing`
/// of an archive the reference accepted under `policy`; `dropped` is
/// [`snapconf_extract::HydrateReport::dropped`] (raw names).
///
/// The rules: the last member of each normalised name decides what is there (earlier ones
/// are refused under `Duplicates::Reject` anyway); a regular member is a file of its listed
/// size whose mode is `mode & 0o755` (`DataFilter`) or `mode` (`Exact`); a directory member
/// is a directory; a symlink member is a symlink with its target verbatim (the oracle never
/// runs `AbsoluteSymlinks::Rebase`); a hardlink is what its (earlier) target was at that
/// point; a dropped hardlink (H12, `LNK x -> x`) changes nothing; other dropped members
/// are not checked. Every other observed path must be a directory above a listed name.
/// No special file may exist, and under `DataFilter` no setuid, setgid, sticky or
/// group/other-write bit.
///
/// # Errors
/// The first mismatch, one line, with the path escaped.
pub fn check_listing(
    listing: &Listing,
    dropped: &[Vec<u8>],
    policy: &Policy,
    tree: &Tree,
) -> Result<(), String> {
    let mut want: BTreeMap<Vec<u8>, Want> = BTreeMap::new();
    for m in &listing.members {
        let name = normalise_name(&m.name);
        if name.is_empty() {
            continue;
        }
        let is_dropped = dropped.contains(&m.name);
        if is_dropped {
            if m.kind != MemberKind::Hardlink {
                want.insert(name, Want::Any);
            }
            continue;
        }
        let w = member_want(m, policy, &want);
        want.insert(name, w);
    }
    for (path, w) in &want {
        if *w == Want::Any {
            continue;
        }
        let node = tree
            .nodes
            .iter()
            .find(|(p, _)| p.as_bytes() == path.as_slice())
            .map(|(_, n)| n);
        let Some(node) = node else {
            return Err(format!("`{}` is listed but missing", escape(path)));
        };
        let ok = match (w, &node.kind) {
            (Want::Any, _) => true,
            (Want::Dir, NodeKind::Dir) => true,
            (Want::File { size, mode }, NodeKind::File { size: s, .. }) => {
                s == size && mode.is_none_or(|m| m == node.mode)
            }
            (Want::Symlink { target }, NodeKind::Symlink { target: t }) => t.as_bytes() == target,
            _ => false,
        };
        if !ok {
            return Err(format!(
                "`{}`: listed as {w:?}, observed {:?} mode {:04o}",
                escape(path),
                node.kind,
                node.mode
            ));
        }
    }
    for (p, node) in &tree.nodes {
        let b = p.as_bytes();
        if matches!(
            node.kind,
            NodeKind::Fifo
                | NodeKind::Socket
                | NodeKind::CharDevice { .. }
                | NodeKind::BlockDevice { .. }
        ) {
            return Err(format!("special file `{}` was created", escape(b)));
        }
        if policy.modes == Modes::DataFilter
            && !matches!(node.kind, NodeKind::Symlink { .. })
            && node.mode & 0o7022 != 0
        {
            return Err(format!(
                "`{}` has mode {:04o} under the data filter",
                escape(b),
                node.mode
            ));
        }
        if want.contains_key(b) {
            continue;
        }
        let above = want
            .keys()
            .any(|k| k.len() > b.len() && k.starts_with(b) && k[b.len()] == b'/');
        if !(above && node.kind == NodeKind::Dir) {
            return Err(format!("`{}` is on disk but not in the listing", escape(b)));
        }
    }
    Ok(())
}

fn member_want(m: &ListedMember, policy: &Policy, want: &BTreeMap<Vec<u8>, Want>) -> Want {
    let mode = match policy.modes {
        Modes::DataFilter => m.mode & 0o755,
        Modes::Exact => m.mode & 0o7777,
    };
    match &m.kind {
        MemberKind::File => Want::File {
            size: m.size,
            mode: Some(mode),
        },
        MemberKind::Dir => Want::Dir,
        MemberKind::Symlink => Want::Symlink {
            target: m.link_target.clone().unwrap_or_default(),
        },
        MemberKind::Hardlink => {
            let target = normalise_name(m.link_target.as_deref().unwrap_or_default());
            match want.get(&target) {
                Some(Want::File { size, .. }) => Want::File {
                    size: *size,
                    mode: None,
                },
                Some(w @ Want::Symlink { .. }) => w.clone(),
                _ => Want::Any,
            }
        }
        _ => Want::Any,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::bytes::{RawBytes, RelPath};
    use crate::model::tree::Node;

    fn listing(ms: &[(&str, MemberKind, u64, u32)]) -> Listing {
        Listing {
            members: ms
                .iter()
                .map(|(n, k, size, mode)| ListedMember {
                    name: n.as_bytes().to_vec(),
                    kind: *k,
                    link_target: None,
                    size: *size,
                    mode: *mode,
                })
                .collect(),
        }
    }

    fn tree(nodes: &[(&str, NodeKind, u32)]) -> Tree {
        let mut t = Tree::default();
        for (p, k, mode) in nodes {
            let p = RelPath::new(*p).expect("valid path");
            t.nodes.insert(
                p,
                Node {
                    kind: k.clone(),
                    mode: *mode,
                },
            );
        }
        t
    }

    fn file(size: u64) -> NodeKind {
        NodeKind::File {
            size,
            sha256: String::new(),
        }
    }

    /// Property: the listing check accepts the faithful tree and names each kind of
    /// mismatch: a missing member, a wrong size, an extra path, a kept setuid bit.
    #[test]
    fn listing_check_accepts_the_tree_and_catches_each_mismatch() {
        let p = Policy::default();
        let l = listing(&[("./d/f", MemberKind::File, 3, 0o4644)]);
        let good = tree(&[("d", NodeKind::Dir, 0o755), ("d/f", file(3), 0o644)]);
        assert_eq!(check_listing(&l, &[], &p, &good), Ok(()));
        let missing = tree(&[("d", NodeKind::Dir, 0o755)]);
        assert!(
            check_listing(&l, &[], &p, &missing).is_err(),
            "missing member"
        );
        let size = tree(&[("d", NodeKind::Dir, 0o755), ("d/f", file(2), 0o644)]);
        assert!(check_listing(&l, &[], &p, &size).is_err(), "wrong size");
        let extra = tree(&[
            ("d", NodeKind::Dir, 0o755),
            ("d/f", file(3), 0o644),
            (
                "x",
                NodeKind::Symlink {
                    target: RawBytes::from(".."),
                },
                0,
            ),
        ]);
        assert!(check_listing(&l, &[], &p, &extra).is_err(), "extra path");
        let suid = tree(&[("d", NodeKind::Dir, 0o755), ("d/f", file(3), 0o4644)]);
        assert!(check_listing(&l, &[], &p, &suid).is_err(), "setuid kept");
    }
}
