//! Putting a kept jail back the way it was laid out, from what a snapshot shows changed:
//! the fuzzer's persistent path (`snapconf fuzz`) resets its view this way after an
//! execution that wrote outside the root, instead of laying out a new jail, view and
//! server.
//!
//! [`Laid`] keeps the snapshot of the jail as laid out (outside the root) and the content
//! of every regular file in it (decoys, the canary, empty mount points). [`Laid::restore`]
//! removes what is new, recreates what was removed or changed (kind, content, mode, link
//! target, then mtime, deepest first), and checks the result: every path the same kind,
//! mode, size, owner, mtime and link target as laid out, and nothing more or less. New
//! inodes and ctimes are the only difference, and no check compares them across
//! executions (each execution snapshots the jail afresh before it runs). It gives up
//! (`false`: the caller lays out a new jail) when in doubt: a mount point of the view, a
//! directory holding one, or the jail itself was touched; an owner it cannot recreate; a
//! file whose content it did not keep; or a check that fails.

use super::confined::Confined;
use super::{Jail, Snapshot, StatKey};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A jail as laid out; see the module docs.
pub struct Laid {
    reference: Snapshot,
    contents: BTreeMap<Vec<u8>, Vec<u8>>,
    /// Jail-relative mount points (never touched by a restore).
    mounts: Vec<Vec<u8>>,
    /// Jail-relative paths a restore leaves alone: the root (reset by the caller) and the
    /// archive (rewritten before every execution).
    skip: Vec<Vec<u8>>,
}

impl Laid {
    /// Record `jail` as laid out now, with the root `root` and the archive `archive`
    /// (both left alone by restores) and the view's `mounts` (host paths in the jail).
    ///
    /// # Errors
    /// The snapshot or a file's content cannot be read.
    pub fn record(
        jail: &Jail,
        root: &Path,
        archive: &Path,
        mounts: &[PathBuf],
    ) -> io::Result<Laid> {
        let reference = jail.snapshot_whole(root)?;
        let skip = vec![jail.rel(root), jail.rel(archive)];
        let mut contents = BTreeMap::new();
        for (rel, key) in &reference.0 {
            if key.kind == "file" && !under_any(rel, &skip) {
                contents.insert(rel.clone(), std::fs::read(at(jail, rel))?);
            }
        }
        Ok(Laid {
            reference,
            contents,
            mounts: mounts.iter().map(|m| jail.rel(m)).collect(),
            skip,
        })
    }

    /// What differs in `now`, a snapshot of the jail, from the jail as laid out (or as last
    /// restored), outside the root, the archive and `ignore` (jail-relative: a backend's
    /// scratch, the decoy directories just planted; their directories and the root's may
    /// have new times), one line each as [`Snapshot::changes`]. Empty for a jail that only
    /// had its root reset since: what a persistent worker changes while it waits between
    /// requests shows here.
    pub fn changed_since(&self, now: &Snapshot, ignore: &[Vec<u8>]) -> Vec<String> {
        let skip: Vec<&[u8]> = self.skip.iter().chain(ignore).map(Vec::as_slice).collect();
        let touched: Vec<&[u8]> = std::iter::once(self.skip[0].as_slice())
            .chain(ignore.iter().map(Vec::as_slice))
            .map(parent_of)
            .collect();
        self.reference.changes_touching(now, &skip, &touched)
    }

    /// Bring `jail`, whose snapshot is `now`, back to the laid-out state outside the root;
    /// `Ok(true)` when done and checked, `Ok(false)` when the jail must be laid out anew.
    ///
    /// # Errors
    /// A failing removal, write or snapshot (the caller then lays out a new jail too).
    pub fn restore(&mut self, jail: &Jail, now: &Snapshot) -> io::Result<bool> {
        let parent = parent_of(&self.skip[0]).to_vec();
        let skip = |p: &[u8]| under_any(p, &self.skip);
        // Paths whose entry differs, is new or is gone (the root's parent may only have
        // new times: entries made and removed in it).
        let mut changed: Vec<Vec<u8>> = Vec::new();
        for (p, a) in &self.reference.0 {
            if skip(p) {
                continue;
            }
            match now.0.get(p) {
                Some(b) if a == b => {}
                Some(b) if *p == parent && same_node(a, b) => {}
                _ => changed.push(p.clone()),
            }
        }
        let new: Vec<Vec<u8>> = now
            .0
            .keys()
            .filter(|p| !skip(p) && !self.reference.0.contains_key(*p))
            .cloned()
            .collect();
        let (uid, gid) = (
            rustix::process::geteuid().as_raw(),
            rustix::process::getegid().as_raw(),
        );
        for p in changed.iter().chain(&new) {
            // The jail itself, a mount point or a directory on the way to one may have new
            // times (an entry made or removed in it), but stays the node it is.
            let held = self
                .mounts
                .iter()
                .any(|m| under_any(m, std::slice::from_ref(p)));
            let same = match (self.reference.0.get(p), now.0.get(p)) {
                (Some(a), Some(b)) => same_node(a, b),
                _ => false,
            };
            if held && !same {
                return Ok(false);
            }
        }
        for p in &changed {
            let Some(want) = self.reference.0.get(p) else {
                return Ok(false);
            };
            if (want.uid, want.gid) != (uid, gid)
                || (want.kind == "file" && !self.contents.contains_key(p))
                || !matches!(want.kind, "file" | "dir" | "symlink")
            {
                return Ok(false);
            }
        }
        // From here on the tool may still be running in its view (a persistent worker): every
        // write goes through a handle on the jail, never through a link it planted.
        let conf = Confined::open(jail.path())?;
        // Remove what is new (outermost first: what is under a removed path goes with it).
        let mut gone: Vec<&Vec<u8>> = Vec::new();
        for p in &new {
            if gone.iter().any(|g| under_any(p, std::slice::from_ref(*g))) {
                continue;
            }
            conf.remove(p)?;
            gone.push(p);
        }
        // Recreate what changed, parents before children (sorted order).
        changed.sort();
        let mut replaced: Vec<&Vec<u8>> = Vec::new();
        for p in &changed {
            let want = &self.reference.0[p];
            let unchanged_dir = now
                .0
                .get(p)
                .is_some_and(|b| want.kind == "dir" && same_node(want, b))
                && !replaced
                    .iter()
                    .any(|r| under_any(p, std::slice::from_ref(*r)));
            if unchanged_dir {
                // A directory whose entries changed: its entries are handled on their own,
                // its times below.
                continue;
            }
            conf.remove(p)?;
            replaced.push(p);
            match want.kind {
                // What it held as laid out is gone from `now`, so in `changed` too.
                "dir" => conf.create_dir(p, want.mode)?,
                "file" => conf.create_file(p, &self.contents[p], want.mode)?,
                _ => conf.create_symlink(p, want.target.as_deref().unwrap_or_default())?,
            }
        }
        // Times last, deepest first: making an entry changes its directory's mtime.
        let mut timed: Vec<&Vec<u8>> = changed.iter().collect();
        for p in changed.iter().chain(&new) {
            let dir = parent_of(p);
            if let Some((k, _)) = self.reference.0.get_key_value(dir) {
                if !skip(k) {
                    timed.push(k);
                }
            }
        }
        timed.sort();
        timed.dedup();
        for p in timed.iter().rev() {
            let want = &self.reference.0[*p];
            conf.set_mtime(p, want.mtime)?;
        }
        let fresh = jail.snapshot_whole(&at(jail, &self.skip[0]))?;
        let alike = |a: &StatKey, b: &StatKey| {
            (a.kind, a.mode, a.size, a.uid, a.gid, a.mtime, &a.target)
                == (b.kind, b.mode, b.size, b.uid, b.gid, b.mtime, &b.target)
        };
        let keys =
            |s: &Snapshot| -> Vec<Vec<u8>> { s.0.keys().filter(|k| !skip(k)).cloned().collect() };
        if keys(&fresh) != keys(&self.reference) {
            return Ok(false);
        }
        for (p, a) in &self.reference.0 {
            if skip(p) || *p == parent {
                continue;
            }
            if !fresh.0.get(p).is_some_and(|b| alike(a, b)) {
                return Ok(false);
            }
        }
        self.reference = fresh;
        Ok(true)
    }
}

/// The host path of jail-relative `rel`.
fn at(jail: &Jail, rel: &[u8]) -> PathBuf {
    if rel.is_empty() {
        jail.path().to_path_buf()
    } else {
        jail.path().join(OsStr::from_bytes(rel))
    }
}

/// `p` is one of `dirs` or under one.
fn under_any(p: &[u8], dirs: &[Vec<u8>]) -> bool {
    dirs.iter()
        .any(|d| p == d.as_slice() || (p.len() > d.len() && p.starts_with(d) && p[d.len()] == b'/'))
}

/// The directory holding jail-relative `p` (empty for the jail's own entries).
fn parent_of(p: &[u8]) -> &[u8] {
    p.iter()
        .rposition(|&b| b == b'/')
        .map_or(&p[..0], |i| &p[..i])
}

/// The same node: kind, mode, inode and owner.
fn same_node(a: &StatKey, b: &StatKey) -> bool {
    (a.kind, a.mode, a.ino, a.uid, a.gid) == (b.kind, b.mode, b.ino, b.uid, b.gid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jail::view::View;

    /// What a request's own steps change (the root reset, decoy directories planted, the
    /// backend's scratch, the archive rewritten) is not a change since the layout; an
    /// entry made, removed or rewritten anywhere else is, even a decoy's mode.
    #[test]
    fn changed_since_sees_all_but_a_requests_own_changes() {
        let jail = Jail::new(None).expect("jail");
        let view = View::prepare(&jail, &[], &[]).expect("view");
        let root = view.root();
        let archive = jail.archive();
        std::fs::write(&archive, b"").expect("archive");
        std::fs::write(root.join("a"), b"a").expect("prior");
        let laid = Laid::record(&jail, &root, &archive, view.mount_points()).expect("record");
        let now = || jail.snapshot_whole(&root).expect("snapshot");
        assert_eq!(laid.changed_since(&now(), &[]), Vec::<String>::new());
        // The request's own changes.
        remove_tree(&root);
        std::fs::create_dir(&root).expect("root");
        std::fs::write(&archive, b"other bytes").expect("archive");
        let planted = view
            .plant_decoys(&[b"etc/planted/deep".to_vec()])
            .expect("plant");
        assert_eq!(planted.len(), 2);
        assert_eq!(laid.changed_since(&now(), &planted), Vec::<String>::new());
        // Anything else.
        std::fs::write(jail.path().join("tmp/idle"), b"x").expect("idle write");
        let changed = laid.changed_since(&now(), &planted);
        assert!(
            changed.iter().any(|c| c.contains("tmp/idle")),
            "{changed:?}"
        );
        std::fs::remove_file(jail.path().join("tmp/idle")).expect("rm");
        let decoy = jail.path().join("etc/passwd");
        std::fs::set_permissions(&decoy, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .expect("chmod");
        let changed = laid.changed_since(&now(), &planted);
        assert!(
            changed.iter().any(|c| c.contains("etc/passwd")),
            "{changed:?}"
        );
    }

    fn remove_tree(p: &Path) {
        crate::workspace::materialise::remove_tree(p).expect("remove");
    }
}
