//! The entries of a spec by path and its inodes, and the spec as [`links::Nodes`]: symlink
//! resolution simulated on the spec instead of the disk, by the one link walker.

use super::lexical::parent_components;
use crate::model::bytes::RelPath;
use crate::model::links::{self, Anchor, End, Seen};
use crate::model::spec::{Entry, EntryKind, WorkspaceSpec};
use std::collections::BTreeMap;

/// How a symlink resolves within the spec.
pub(super) enum Resolution {
    /// To this path (components; empty = the root).
    Inside(Vec<Vec<u8>>),
    /// Out of the root (`..` past the top, or an absolute target not under `{root}`).
    Outside,
    /// To a missing path, or through a non-directory.
    Dangling,
    /// More than [`links::MAX_HOPS`] symlinks followed.
    Loop,
}

/// The entries of a spec with parents, by path, and its inodes.
pub(super) struct Index {
    pub(super) entries: Vec<Entry>,
    by_path: BTreeMap<RelPath, usize>,
    /// Inode (path of its file/symlink entry) → all its names, in creation order.
    pub(super) inodes: BTreeMap<RelPath, Vec<RelPath>>,
}

impl Index {
    pub(super) fn new(spec: &WorkspaceSpec) -> Self {
        let entries = spec.with_parents();
        let mut index = Index {
            by_path: BTreeMap::new(),
            inodes: BTreeMap::new(),
            entries: Vec::new(),
        };
        for (i, e) in entries.iter().enumerate() {
            index.by_path.entry(e.path.clone()).or_insert(i);
        }
        index.entries = entries;
        let mut inodes: BTreeMap<RelPath, Vec<RelPath>> = BTreeMap::new();
        for e in &index.entries {
            if let Some(inode) = index.inode_of(e) {
                if matches!(
                    inode.kind,
                    EntryKind::File { .. } | EntryKind::Symlink { .. }
                ) {
                    inodes
                        .entry(inode.path.clone())
                        .or_default()
                        .push(e.path.clone());
                }
            }
        }
        index.inodes = inodes;
        index
    }

    fn get(&self, path: &RelPath) -> Option<&Entry> {
        self.by_path.get(path).and_then(|&i| self.entries.get(i))
    }

    /// The entry holding the inode `e` names: `e` itself unless it is a hardlink.
    pub(super) fn inode_of<'b>(&'b self, e: &'b Entry) -> Option<&'b Entry> {
        let mut cur = e;
        for _ in 0..=self.entries.len() {
            match &cur.kind {
                EntryKind::Hardlink { target } => cur = self.get(target)?,
                _ => return Some(cur),
            }
        }
        None
    }

    /// All names of the inode whose first entry is at `inode`.
    pub(super) fn names(&self, inode: &RelPath) -> &[RelPath] {
        self.inodes.get(inode).map(Vec::as_slice).unwrap_or(&[])
    }

    fn kind_at(&self, comps: &[Vec<u8>]) -> Option<&EntryKind> {
        let path = RelPath::new(comps.join(&b'/')).ok()?;
        let e = self.get(&path)?;
        Some(&self.inode_of(e)?.kind)
    }

    pub(super) fn is_dir(&self, comps: &[Vec<u8>]) -> bool {
        comps.is_empty() || matches!(self.kind_at(comps), Some(EntryKind::Dir))
    }

    /// Resolve the symlink at `link` with target `target` the way the kernel would (every
    /// symlink on the way followed, the final one too), on the spec instead of the disk
    /// (see [`links::walk`]; `{root}/...` targets restart at the root).
    pub(super) fn resolve(&self, link: &RelPath, target: &[u8]) -> Resolution {
        let rules = links::Rules {
            follow: links::Follow::All,
            above_root: links::AboveRoot::Leaves,
            dead_end: links::DeadEnd::Stops,
        };
        match links::walk(self, rules, &parent_components(link), target).end {
            End::Inside(path) => Resolution::Inside(path),
            End::Leaves(_) => Resolution::Outside,
            End::Missing(_) | End::NotDir(_) => Resolution::Dangling,
            End::Loop => Resolution::Loop,
        }
    }
}

/// The spec as the link walker sees it: a hardlink names its inode's kind; an absolute
/// `{root}/...` target starts at the root, `{root}x` (a sibling of the root), `{out}...`
/// and `/...` leave it.
impl links::Nodes for Index {
    fn node(&self, path: &[Vec<u8>]) -> Seen<'_> {
        match self.kind_at(path) {
            None => Seen::Missing,
            Some(EntryKind::Dir) => Seen::Dir,
            Some(EntryKind::Symlink { target }) => Seen::Symlink(target.as_bytes()),
            Some(_) => Seen::Other,
        }
    }

    fn anchor<'t>(&self, target: &'t [u8]) -> Anchor<'t> {
        if let Some(rest) = target.strip_prefix(b"{root}") {
            if rest.is_empty() || rest.starts_with(b"/") {
                Anchor::Root(rest)
            } else {
                Anchor::Away
            }
        } else if target.starts_with(b"/") || target.starts_with(b"{out}") {
            Anchor::Away
        } else {
            Anchor::Here(target)
        }
    }
}
