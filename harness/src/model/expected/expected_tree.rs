//! [`expected`]: the tree a conforming capture + hydration of a spec yields under a profile,
//! and the entries the profile allows a capture to refuse.

use super::index::Index;
use super::lexical::{escapes, parent_components, rebase};
use super::{normalise, Feature};
use crate::model::bytes::{RawBytes, RelPath};
use crate::model::profile::{AbsoluteRule, EscapingRule, HardlinkRule, Profile, SpecialRule};
use crate::model::spec::{EntryKind, Placeholders, WorkspaceSpec};
use crate::model::tree::sha256_hex;
use crate::model::tree::{Node, NodeKind, Tree};
use serde::Serialize;

/// What a conforming capture + hydration of a spec yields under a profile (serialises for
/// case directories and JSON reports).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Expected {
    /// The hydrated tree, already passed through [`normalise`] (root not included).
    pub tree: Tree,
    /// Entries for which the profile allows capture to refuse, with the reason, in
    /// creation order. If capture does not refuse, `tree` still holds these entries.
    pub refusable: Vec<(RelPath, Feature)>,
}

/// Derive the expected result of capturing `spec` and hydrating it under `profile`.
///
/// `ph` must be the placeholders the spec was materialised with at capture (symlink targets
/// are compared after [`Placeholders::resolve`]). The rules, per entry of
/// `spec.with_parents()`:
/// - excluded paths and everything under them are absent; implicit parents are present
///   (mode `0755`), also when everything in them is excluded or dropped;
/// - every kept name of an inode (its file/symlink entry and its hardlinks) is a node of
///   the inode's kind, content and mode, even if the inode's first name is excluded (H2);
///   `preserve` lists the kept names as a shared-inode group (two or more), every other
///   hardlink rule compares no inode sharing. `refuse-at-capture` makes every kept name of
///   a shared inode refusable (`shared-inode`), `refuse-excluded-alias` every kept name of
///   an inode that also has an excluded name (`excluded-alias`);
/// - FIFOs and char devices are absent under `special-files = drop`, kept and refusable
///   under `refuse-at-capture`; sockets are always absent (no tar format stores them) and
///   refusable under `refuse-at-capture`;
/// - absolute symlinks: `keep` and `refuse-at-capture` (refusable) keep the target
///   verbatim, `drop` removes every name of the link, `rebase-inside-root` rewrites a
///   target under `ph.root` relative to the link's directory (`a/b/l -> {root}/x/y`
///   becomes `../../x/y`; a target equal to the root becomes `../..`, or `.` for a
///   top-level link); a target outside the root (or climbing out of it with `..`) is kept
///   verbatim, since there is nothing inside the root to rebase onto. Under `preserve`,
///   names of one symlink inode whose rebased targets differ cannot share an inode and
///   form separate groups;
/// - escaping relative symlinks (judged lexically, see [`Feature::EscapingSymlink`]) are
///   kept, and refusable under `escaping-symlinks = refuse-at-capture`.
///
/// Finally [`normalise`] applies the mode rule.
pub fn expected(spec: &WorkspaceSpec, profile: &Profile, ph: &Placeholders) -> Expected {
    let index = Index::new(spec);
    let mut tree = Tree::default();
    let mut refusable = Vec::new();
    for entry in &index.entries {
        if spec.is_excluded(&entry.path) {
            continue;
        }
        let Some(inode) = index.inode_of(entry) else {
            continue; // a hardlink to nothing: `spec.check()` refuses such specs
        };
        let names = index.names(&inode.path);
        if names.len() >= 2 {
            match profile.hardlinks {
                HardlinkRule::RefuseAtCapture => {
                    refusable.push((entry.path.clone(), Feature::SharedInode))
                }
                HardlinkRule::RefuseExcludedAlias if names.iter().any(|n| spec.is_excluded(n)) => {
                    refusable.push((entry.path.clone(), Feature::ExcludedAlias))
                }
                _ => {}
            }
        }
        let mode = inode.effective_mode();
        let special = |feature: Feature, refusable: &mut Vec<(RelPath, Feature)>| {
            if profile.special_files == SpecialRule::RefuseAtCapture {
                refusable.push((entry.path.clone(), feature));
                true
            } else {
                false
            }
        };
        let kind = match &inode.kind {
            EntryKind::Dir => NodeKind::Dir,
            EntryKind::File { content } => NodeKind::File {
                size: content.as_bytes().len() as u64,
                sha256: sha256_hex(content.as_bytes()),
            },
            EntryKind::Symlink { target } => {
                let target = ph.resolve(target.as_bytes());
                let target = if target.starts_with(b"/") {
                    match profile.absolute_symlinks {
                        AbsoluteRule::Keep => target,
                        AbsoluteRule::Drop => continue,
                        AbsoluteRule::RebaseInsideRoot => rebase(&entry.path, &target, &ph.root),
                        AbsoluteRule::RefuseAtCapture => {
                            refusable.push((entry.path.clone(), Feature::AbsoluteSymlink));
                            target
                        }
                    }
                } else {
                    if profile.escaping_symlinks == EscapingRule::RefuseAtCapture
                        && escapes(&parent_components(&entry.path), &target)
                    {
                        refusable.push((entry.path.clone(), Feature::EscapingSymlink));
                    }
                    target
                };
                NodeKind::Symlink {
                    target: RawBytes(target),
                }
            }
            EntryKind::Fifo => {
                if !special(Feature::Fifo, &mut refusable) {
                    continue;
                }
                NodeKind::Fifo
            }
            EntryKind::CharDevice { major, minor } => {
                if !special(Feature::CharDevice, &mut refusable) {
                    continue;
                }
                NodeKind::CharDevice {
                    major: *major,
                    minor: *minor,
                }
            }
            EntryKind::Socket => {
                special(Feature::Socket, &mut refusable);
                continue;
            }
            EntryKind::Hardlink { .. } => continue, // inode_of never returns a hardlink
        };
        let mode = if matches!(kind, NodeKind::Symlink { .. }) {
            0
        } else {
            mode
        };
        tree.nodes.insert(entry.path.clone(), Node { kind, mode });
    }
    if profile.hardlinks == HardlinkRule::Preserve {
        let mut groups = Vec::new();
        for names in index.inodes.values() {
            // Names whose nodes are equal can share the inode (see the rebase note above).
            let mut by_node: Vec<(&Node, Vec<RelPath>)> = Vec::new();
            for name in names {
                let Some(node) = tree.nodes.get(name) else {
                    continue;
                };
                match by_node.iter_mut().find(|(n, _)| *n == node) {
                    Some((_, group)) => group.push(name.clone()),
                    None => by_node.push((node, vec![name.clone()])),
                }
            }
            for (_, mut group) in by_node {
                if group.len() >= 2 {
                    group.sort();
                    groups.push(group);
                }
            }
        }
        groups.sort();
        tree.shared_inodes = groups;
    }
    Expected {
        tree: normalise(&tree, profile),
        refusable,
    }
}
