//! The entries of a spec by path and its inodes, and symlink resolution simulated on the
//! spec instead of the disk.

use super::lexical::parent_components;
use crate::model::bytes::RelPath;
use crate::model::spec::{Entry, EntryKind, WorkspaceSpec};
use std::collections::{BTreeMap, VecDeque};

/// How a symlink resolves within the spec.
pub(super) enum Resolution {
    /// To this path (components; empty = the root).
    Inside(Vec<Vec<u8>>),
    /// Out of the root (`..` past the top, or an absolute target not under `{root}`).
    Outside,
    /// To a missing path, or through a non-directory.
    Dangling,
    /// More than [`MAX_HOPS`] symlinks followed.
    Loop,
}

/// Linux's limit on symlinks followed in one resolution (`ELOOP`).
const MAX_HOPS: usize = 40;

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
    /// symlink on the way followed, the final one too), on the spec instead of the disk.
    pub(super) fn resolve(&self, link: &RelPath, target: &[u8]) -> Resolution {
        let mut stack: Vec<Vec<u8>> = parent_components(link)
            .into_iter()
            .map(<[u8]>::to_vec)
            .collect();
        let mut pending: VecDeque<Vec<u8>> = VecDeque::new();
        let mut hops = 0;
        if !self.start(target, &mut stack, &mut pending) {
            return Resolution::Outside;
        }
        while let Some(comp) = pending.pop_front() {
            match comp.as_slice() {
                b"" | b"." => continue,
                b".." => {
                    if stack.pop().is_none() {
                        return Resolution::Outside;
                    }
                    continue;
                }
                _ => stack.push(comp),
            }
            match self.kind_at(&stack) {
                None => return Resolution::Dangling,
                Some(EntryKind::Dir) => {}
                Some(EntryKind::Symlink { target }) => {
                    hops += 1;
                    if hops > MAX_HOPS {
                        return Resolution::Loop;
                    }
                    stack.pop();
                    let mut more = VecDeque::new();
                    if !self.start(target.as_bytes(), &mut stack, &mut more) {
                        return Resolution::Outside;
                    }
                    more.extend(pending);
                    pending = more;
                }
                Some(_) => {
                    if pending.iter().any(|c| !c.is_empty() && c != b".") {
                        return Resolution::Dangling;
                    }
                }
            }
        }
        Resolution::Inside(stack)
    }

    /// Queue `target`'s components; an absolute `{root}/...` target restarts at the root.
    /// `false` if the target is absolute and not under `{root}`.
    fn start(
        &self,
        target: &[u8],
        stack: &mut Vec<Vec<u8>>,
        pending: &mut VecDeque<Vec<u8>>,
    ) -> bool {
        let rel = if let Some(rest) = target.strip_prefix(b"{root}") {
            if !rest.is_empty() && !rest.starts_with(b"/") {
                return false; // `{root}x` names a sibling of the root
            }
            stack.clear();
            rest
        } else if target.starts_with(b"/") || target.starts_with(b"{out}") {
            return false;
        } else {
            target
        };
        pending.extend(rel.split(|&b| b == b'/').map(<[u8]>::to_vec));
        true
    }
}
