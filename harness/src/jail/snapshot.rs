//! What `containment` compares: a jail's [`Snapshot`] of [`StatKey`]s, and the changes
//! between two of them.

use crate::model::bytes::escape;
use std::collections::BTreeMap;

/// What `containment` compares for one path: kind, permission bits, size, inode, link
/// count, owner and group, mtime and ctime (seconds and nanoseconds), and a symlink's target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatKey {
    /// `symlink`, `dir`, `file` or `special`.
    pub kind: &'static str,
    /// Permission bits, `st_mode & 0o7777`.
    pub mode: u32,
    /// Size in bytes (0 for a directory, whose size the filesystem picks).
    pub size: u64,
    /// Inode number.
    pub ino: u64,
    /// Link count (0 for a directory, which counts its subdirectories).
    pub nlink: u64,
    /// Owner (uid).
    pub uid: u32,
    /// Group (gid).
    pub gid: u32,
    /// Modification time: seconds and nanoseconds since the epoch.
    pub mtime: (i64, i64),
    /// Status-change time: seconds and nanoseconds since the epoch.
    pub ctime: (i64, i64),
    /// A symlink's target bytes; `None` for anything else.
    pub target: Option<Vec<u8>>,
    /// SHA-256 of the content, for regular files under `out/` only (the decoys): a prior
    /// may hardlink one into its root, and removing that name changes the decoy's link
    /// count and ctime without touching the decoy (see [`Snapshot::changes`]).
    pub sha256: Option<String>,
}

impl StatKey {
    /// Equal but for link count and ctime, with the same known content: a name of the inode
    /// elsewhere was added or removed, the file itself is unchanged.
    fn same_but_links(&self, b: &StatKey) -> bool {
        self.sha256.is_some()
            && self.sha256 == b.sha256
            && (self.kind, self.mode, self.size, self.ino, self.mtime)
                == (b.kind, b.mode, b.size, b.ino, b.mtime)
            && (self.uid, self.gid) == (b.uid, b.gid)
            && self.target == b.target
    }
}

/// A `lstat` snapshot of a jail, keyed by jail-relative path bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot(pub BTreeMap<Vec<u8>, StatKey>);

impl Snapshot {
    /// Paths that differ between `self` (before) and `after`, one line each
    /// (`new x`, `removed x`, `changed x (...)`), ignoring `ignore` and everything under it.
    pub fn changes(&self, after: &Snapshot, ignore: &[&[u8]]) -> Vec<String> {
        self.changes_touching(after, ignore, &[])
    }

    /// [`Snapshot::changes`], where the directories `touched` may have new timestamps, size
    /// and link count (entries made and removed in them: an extractor's staging sibling
    /// beside its root), as long as their kind, mode and inode stay; their entries are
    /// compared as ever.
    pub fn changes_touching(
        &self,
        after: &Snapshot,
        ignore: &[&[u8]],
        touched: &[&[u8]],
    ) -> Vec<String> {
        let touched_only = |p: &[u8], a: &StatKey, b: &StatKey| {
            touched.contains(&p)
                && a.kind == "dir"
                && (a.kind, a.mode, a.ino, a.uid, a.gid) == (b.kind, b.mode, b.ino, b.uid, b.gid)
        };
        let skip = |p: &[u8]| {
            ignore
                .iter()
                .any(|i| p == *i || (p.len() > i.len() && p.starts_with(i) && p[i.len()] == b'/'))
        };
        // The jail's own node (in a whole snapshot) has the empty key.
        let escape = |p: &[u8]| {
            if p.is_empty() {
                "the jail itself".to_string()
            } else {
                escape(p)
            }
        };
        let mut out = Vec::new();
        for (p, a) in &self.0 {
            if skip(p) {
                continue;
            }
            match after.0.get(p) {
                None => out.push(format!("removed {} ({})", escape(p), a.kind)),
                Some(b) if a != b && !a.same_but_links(b) && !touched_only(p, a, b) => {
                    out.push(format!("changed {} ({})", escape(p), describe(a, b)))
                }
                Some(_) => {}
            }
        }
        for (p, b) in &after.0 {
            if !skip(p) && !self.0.contains_key(p) {
                out.push(format!("new {} ({})", escape(p), b.kind));
            }
        }
        out
    }
}

fn describe(a: &StatKey, b: &StatKey) -> String {
    let mut what = Vec::new();
    if a.kind != b.kind {
        what.push(format!("{} -> {}", a.kind, b.kind));
    }
    if a.mode != b.mode {
        what.push(format!("mode {:04o} -> {:04o}", a.mode, b.mode));
    }
    if a.size != b.size {
        what.push(format!("size {} -> {}", a.size, b.size));
    }
    if a.target != b.target {
        what.push("link target".to_string());
    }
    if a.ino != b.ino {
        what.push("replaced".to_string());
    }
    if (a.uid, a.gid) != (b.uid, b.gid) {
        what.push(format!("owner {}:{} -> {}:{}", a.uid, a.gid, b.uid, b.gid));
    }
    if a.nlink != b.nlink {
        what.push(format!("links {} -> {}", a.nlink, b.nlink));
    }
    if what.is_empty() {
        what.push("content or metadata written".to_string());
    }
    what.join(", ")
}
