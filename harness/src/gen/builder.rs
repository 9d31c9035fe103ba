//! `Builder`: grows a workspace one entry at a time and refuses any step that would make
//! `WorkspaceSpec::check` fail, so resolving plans is total.
//!
//! Invariant: every ancestor of every entry is an explicit `Dir` entry created before it.

use crate::model::bytes::{RawBytes, RelPath};
use crate::model::spec::{Entry, EntryKind, WorkspaceSpec};
use proptest::sample::Index;
use std::collections::BTreeMap;

/// Longest component the builder produces (`NAME_MAX`).
const NAME_MAX: usize = 255;

/// Longest root-relative path the builder accepts: well past the 100/155/255-byte tar edges,
/// and short enough that the path under a jail root stays below `PATH_MAX` (4096) even when
/// a larger `max-entries` nests long names deeply.
pub const MAX_PATH_BYTES: usize = 2048;

/// A workspace under construction.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    /// Entries in creation order.
    pub entries: Vec<Entry>,
    /// Path to "is a directory".
    is_dir: BTreeMap<RelPath, bool>,
    /// Directories plans may put children in; `None` is the root. Never empty.
    pub open_dirs: Vec<Option<RelPath>>,
    /// Files and symlinks (hardlink targets), in creation order.
    pub linkable: Vec<RelPath>,
}

impl Builder {
    /// An empty workspace whose only open directory is the root.
    pub fn new() -> Self {
        Builder {
            open_dirs: vec![None],
            ..Builder::default()
        }
    }

    /// The open directory `index` picks (modulo).
    pub fn pick_dir(&self, index: &Index) -> Option<RelPath> {
        if self.open_dirs.is_empty() {
            return None;
        }
        self.open_dirs[index.index(self.open_dirs.len())].clone()
    }

    /// True if `path` is an entry.
    pub fn exists(&self, path: &RelPath) -> bool {
        self.is_dir.contains_key(path)
    }

    /// `parent/base`, or `parent/base-N` (truncated so the component stays within
    /// `NAME_MAX`) when that is taken. A base that is not a valid component becomes `x`.
    pub fn fresh_child(&self, parent: Option<&RelPath>, base: &[u8]) -> RelPath {
        let join = |name: &[u8]| -> Option<RelPath> {
            match parent {
                Some(p) => p.join(name).ok(),
                None => RelPath::new(name.to_vec()).ok(),
            }
        };
        let base: &[u8] = if join(base).is_some() && !base.contains(&b'/') {
            base
        } else {
            b"x"
        };
        let base = &base[..base.len().min(NAME_MAX)];
        let mut n = 0usize;
        loop {
            let name = if n == 0 {
                base.to_vec()
            } else {
                let suffix = format!("-{n}");
                let keep = base.len().min(NAME_MAX - suffix.len());
                let mut v = base[..keep].to_vec();
                v.extend_from_slice(suffix.as_bytes());
                v
            };
            if let Some(path) = join(&name) {
                if !self.exists(&path) {
                    return path;
                }
            }
            n += 1;
        }
    }

    /// Add `path` with `kind`, creating missing ancestors as `0755` directories first.
    /// Refused (nothing changes, `false`) if the path exists, is longer than
    /// [`MAX_PATH_BYTES`], an ancestor is not a directory, or a hardlink target is not an
    /// earlier file or symlink.
    /// Add a hardlink at `path` to `target`, a `{out}/...` jail file outside the root (not an
    /// earlier entry); false when `path` cannot be added.
    pub fn add_outside_hardlink(&mut self, path: &RelPath, target: RelPath) -> bool {
        if !target.as_bytes().starts_with(b"{out}/") {
            return false;
        }
        let at = path.clone();
        // Reuse add_at's parent handling with a placeholder kind, then set the link.
        if !self.add_at(&at, EntryKind::Fifo, None) {
            return false;
        }
        self.set_last_kind(EntryKind::Hardlink { target });
        true
    }

    pub fn add_at(&mut self, path: &RelPath, kind: EntryKind, mode: Option<u32>) -> bool {
        if self.exists(path) || path.as_bytes().len() > MAX_PATH_BYTES {
            return false;
        }
        let mut missing = Vec::new();
        let mut p = path.parent();
        while let Some(dir) = p {
            match self.is_dir.get(&dir) {
                Some(true) => break,
                Some(false) => return false,
                None => {
                    p = dir.parent();
                    missing.push(dir);
                }
            }
        }
        if let EntryKind::Hardlink { target } = &kind {
            if !self.linkable.contains(target) {
                return false;
            }
        }
        for dir in missing.into_iter().rev() {
            self.push(dir, EntryKind::Dir, None);
        }
        self.push(path.clone(), kind, mode);
        true
    }

    fn set_last_kind(&mut self, kind: EntryKind) {
        if let Some(e) = self.entries.last_mut() {
            e.kind = kind;
        }
    }

    fn push(&mut self, path: RelPath, kind: EntryKind, mode: Option<u32>) {
        let dir = matches!(kind, EntryKind::Dir);
        if matches!(kind, EntryKind::File { .. } | EntryKind::Symlink { .. }) {
            self.linkable.push(path.clone());
        }
        self.is_dir.insert(path.clone(), dir);
        self.entries.push(Entry { path, kind, mode });
    }

    /// Add a fresh child of `parent` (an existing directory or the root) named after
    /// `base`; returns its path (`None` only if `parent` is not a directory of this builder).
    pub fn add_child(
        &mut self,
        parent: Option<&RelPath>,
        base: &[u8],
        kind: EntryKind,
        mode: Option<u32>,
    ) -> Option<RelPath> {
        let path = self.fresh_child(parent, base);
        self.add_at(&path, kind, mode).then_some(path)
    }

    /// A file entry kind.
    pub fn file(content: Vec<u8>) -> EntryKind {
        EntryKind::File {
            content: RawBytes(content),
        }
    }

    /// A symlink entry kind.
    pub fn symlink(target: Vec<u8>) -> EntryKind {
        EntryKind::Symlink {
            target: RawBytes(target),
        }
    }

    /// The finished spec with these exclusions (deduplicated, in first-seen order).
    pub fn finish(self, exclusions: Vec<RelPath>) -> WorkspaceSpec {
        let mut uniq: Vec<RelPath> = Vec::new();
        for x in exclusions {
            if !uniq.contains(&x) {
                uniq.push(x);
            }
        }
        WorkspaceSpec {
            entries: self.entries,
            exclusions: uniq,
        }
    }
}

/// The names of every inode with two or more names: for each file or symlink that a
/// hardlink names, the original first, then its hardlinks, in creation order.
pub fn inode_groups(entries: &[Entry]) -> Vec<Vec<RelPath>> {
    let mut groups: Vec<Vec<RelPath>> = Vec::new();
    for e in entries {
        if let EntryKind::Hardlink { target } = &e.kind {
            match groups.iter_mut().find(|g| g.first() == Some(target)) {
                Some(g) => g.push(e.path.clone()),
                None => groups.push(vec![target.clone(), e.path.clone()]),
            }
        }
    }
    groups
}
