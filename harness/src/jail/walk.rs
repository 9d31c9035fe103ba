//! The snapshot walk: every entry of a jail by `statx`, reusing what [`Memo`] kept.

use super::memo::{coarse_now, kept_or, Identity, Memo, Widened};
use super::{Jail, Snapshot, StatKey};
use crate::model::bytes::escape;
use rustix::fs::{openat, readlinkat, statx, AtFlags, FileType, Mode, OFlags, StatxFlags, CWD};
use rustix::time::Timespec;
use snapconf_extract::dirs::names;
use std::collections::BTreeMap;
use std::ffi::{CStr, CString};
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

impl Jail {
    /// The state `containment` compares: every entry in the jail, by `lstat` only, except
    /// `archive.tar` and the adapters' `scratch-*` dirs, and except the *contents* of
    /// hydration roots (`h-*`, only their own node is kept). `src/`, `out/` (the decoys) and
    /// `canary` are walked in full. Comparing `ctime` catches every write, chmod or link
    /// without reading contents (a process cannot set `ctime` back).
    pub fn snapshot(&self) -> std::io::Result<Snapshot> {
        self.walk(b"")
    }

    /// As [`Jail::snapshot`], but of `root` (a directory anywhere in the jail, such as
    /// `src/`) only its own node is kept, not its contents: for the state before a step
    /// whose comparison ignores `root` anyway ([`Snapshot::changes`]).
    pub fn snapshot_outside(&self, root: &Path) -> std::io::Result<Snapshot> {
        self.walk(&self.rel(root))
    }

    /// As [`Jail::snapshot`], but of everything: `archive.tar` and `scratch-*` too, and the
    /// jail directory's own node (key empty), except the contents of `root` (at any depth;
    /// its own node is kept), which the comparison ignores. For a step that can reach the
    /// whole jail (the fuzzer's filesystem view, where the jail is the tool's `/`).
    pub fn snapshot_whole(&self, root: &Path) -> std::io::Result<Snapshot> {
        self.walk_as(&self.rel(root), true)
    }

    /// The walk of [`Jail::snapshot`], keeping only the node of the entry at jail-relative
    /// path `skip` (none if empty).
    fn walk(&self, skip: &[u8]) -> std::io::Result<Snapshot> {
        self.walk_as(skip, false)
    }

    /// The walk, of everything when `whole` (see [`Jail::snapshot_whole`]).
    fn walk_as(&self, skip: &[u8], whole: bool) -> std::io::Result<Snapshot> {
        self.walk_with(skip, whole, crate::workspace::observe::is_root())
    }

    /// [`Jail::walk_as`], with the "reads every directory" decision made by the caller
    /// (tests take the widening path while running as root).
    fn walk_with(&self, skip: &[u8], whole: bool, is_root: bool) -> std::io::Result<Snapshot> {
        let top = openat(
            CWD,
            &self.path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        let began = self.keeps.then(coarse_now);
        if memo
            .clock
            .zip(began)
            .is_some_and(|(last, now)| (now.tv_sec, now.tv_nsec) < (last.tv_sec, last.tv_nsec))
        {
            // The clock went back: a later change could stamp a ctime seen before. What the
            // walks' own chmods did is matched by exact inode and ctime, and stays.
            let widened = std::mem::take(&mut memo.widened);
            *memo = Memo {
                widened,
                ..Memo::default()
            };
        }
        memo.clock = began;
        let mut walk = Walk {
            top: top.as_fd(),
            skip,
            whole,
            map: BTreeMap::new(),
            fills: self.fills,
            began,
            memo: &mut memo,
            is_root,
        };
        let listed = names(top.as_fd(), self.fills).map_err(|e| named(&[], e))?;
        walk.dir(At::Handle(top.as_fd()), &[], &listed)?;
        if whole {
            let x = statx(
                top.as_fd(),
                c"",
                AtFlags::EMPTY_PATH | AtFlags::SYMLINK_NOFOLLOW,
                StatxFlags::BASIC_STATS,
            )
            .map_err(|e| named(&[], e.into()))?;
            walk.map.insert(Vec::new(), stat_key(&x, None, None));
        }
        Ok(Snapshot(walk.map))
    }
}

/// The [`StatKey`] of one `statx` result, with a symlink's `target` and a decoy's
/// `sha256` where the walk read them. Directories get size and link count 0 (they change
/// with entries made and removed inside, which are compared on their own).
fn stat_key(x: &rustix::fs::Statx, target: Option<Vec<u8>>, sha256: Option<String>) -> StatKey {
    let ft = FileType::from_raw_mode(u32::from(x.stx_mode));
    let is_dir = ft == FileType::Directory;
    StatKey {
        kind: match ft {
            FileType::Symlink => "symlink",
            FileType::Directory => "dir",
            FileType::RegularFile => "file",
            _ => "special",
        },
        mode: u32::from(x.stx_mode) & 0o7777,
        size: if is_dir { 0 } else { x.stx_size },
        ino: x.stx_ino,
        nlink: if is_dir { 0 } else { u64::from(x.stx_nlink) },
        uid: x.stx_uid,
        gid: x.stx_gid,
        mtime: (x.stx_mtime.tv_sec, i64::from(x.stx_mtime.tv_nsec)),
        ctime: (x.stx_ctime.tv_sec, i64::from(x.stx_ctime.tv_nsec)),
        target,
        sha256,
    }
}

/// The longest jail-relative path of a directory whose children a snapshot reaches by path
/// from the jail (see [`At::Path`]), in bytes: a child's path then stays under `PATH_MAX`.
const PATH_STEPS_UP_TO: usize = 2048;

/// One snapshot's walk over a jail open at `top`.
struct Walk<'a> {
    top: BorrowedFd<'a>,
    /// The jail-relative path of an entry whose contents are not walked (none if empty).
    skip: &'a [u8],
    /// Walk `archive.tar` and `scratch-*` too ([`Jail::snapshot_whole`]).
    whole: bool,
    map: BTreeMap<Vec<u8>, StatKey>,
    /// The jail's filesystem [`fills_reads`](snapconf_extract::dirs::fills_reads), so a short
    /// directory read ends a listing.
    fills: bool,
    /// The coarse clock before the walk began, or `None` where nothing may be kept
    /// (see [`Memo`]).
    began: Option<Timespec>,
    memo: &'a mut Memo,
    /// The walk runs as root, which reads every directory whatever its mode; any other
    /// user widens a directory it may not list or enter ([`Walk::widened`]).
    is_root: bool,
}

/// Where a directory's entries are reached: through a handle on the directory, or (for a
/// directory whose kept names were used, which is not opened, and whose path is at most
/// [`PATH_STEPS_UP_TO`] bytes) by its path from the jail.
#[derive(Clone, Copy)]
enum At<'a> {
    Handle(BorrowedFd<'a>),
    Path,
}

impl Walk<'_> {
    /// Records every entry of the directory at jail-relative path `prefix` (the jail itself
    /// when empty), reached through `at`, whose names are `listed`, and walks its
    /// subdirectories: every step is relative to a handle on the jail or on the directory
    /// (`statx`, `readlinkat` and `openat` with `O_NOFOLLOW` on the last component), so a
    /// path is never resolved from `/` and a link is never followed. Path steps go only
    /// through directories this walk has just seen as directories, while nothing else runs.
    fn dir(&mut self, at: At<'_>, prefix: &[u8], listed: &[CString]) -> io::Result<()> {
        let top = prefix.is_empty();
        for name in listed {
            let n = name.to_bytes();
            if top && !self.whole && (n == b"archive.tar" || n.starts_with(b"scratch-")) {
                continue;
            }
            let mut key = prefix.to_vec();
            if !key.is_empty() {
                key.push(b'/');
            }
            key.extend_from_slice(n);
            let path;
            let (fd, rel): (BorrowedFd<'_>, &CStr) = match at {
                At::Handle(fd) => (fd, name.as_c_str()),
                At::Path => {
                    path = CString::new(key.clone()).map_err(|e| named(&key, e.into()))?;
                    (self.top, path.as_c_str())
                }
            };
            let x = statx(fd, rel, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::BASIC_STATS)
                .map_err(|e| named(&key, e.into()))?;
            let ft = FileType::from_raw_mode(u32::from(x.stx_mode));
            let mtime = (x.stx_mtime.tv_sec, x.stx_mtime.tv_nsec);
            let ctime = (x.stx_ctime.tv_sec, x.stx_ctime.tv_nsec);
            let id: Identity = (x.stx_ino, x.stx_size, mtime, ctime);
            let settled = self.began.is_some_and(|b| {
                (i128::from(ctime.0), i128::from(ctime.1))
                    < (i128::from(b.tv_sec), i128::from(b.tv_nsec))
            });
            let target = match ft {
                FileType::Symlink => Some(self.target(fd, rel, &key, id, settled)?),
                _ => None,
            };
            let sha256 = if ft == FileType::RegularFile && key.starts_with(b"out/") {
                Some(self.digest(fd, rel, &key, id, settled)?)
            } else {
                None
            };
            let is_dir = ft == FileType::Directory;
            let mut stat = stat_key(&x, target, sha256);
            if is_dir {
                // The ctime this directory had before a walk's own chmod, if that chmod is
                // the last thing that changed it.
                if let Some(w) = self.memo.widened.get(&key) {
                    if w.ino == x.stx_ino && w.left == ctime {
                        stat.ctime = (w.real.0, i64::from(w.real.1));
                    }
                }
            }
            let real = (stat.ctime.0, u32::try_from(stat.ctime.1).unwrap_or(0));
            self.map.insert(key.clone(), stat);
            // Hydration roots are compared by their own node only; their contents are the
            // extractor's to write.
            if !is_dir || (top && n.starts_with(b"h-")) || key == self.skip {
                continue;
            }
            if !self.is_root && u32::from(x.stx_mode) & 0o500 != 0o500 {
                self.widened(fd, rel, &key, &x, real)?;
                continue;
            }
            let kept = self
                .memo
                .listings
                .get(&key)
                .filter(|(was, _)| *was == id)
                .map(|(_, names)| Arc::clone(names));
            if let Some(names) = kept {
                // Its children are reached by path from the jail while the path stays well
                // short of `PATH_MAX` (4096 bytes; a name may add 256); deeper down through
                // an `O_PATH` handle on the directory, which needs no listing.
                if key.len() <= PATH_STEPS_UP_TO {
                    self.dir(At::Path, &key, &names)?;
                } else {
                    let sub = open_dir_at(fd, rel, &key, OFlags::PATH)?;
                    self.dir(At::Handle(sub.as_fd()), &key, &names)?;
                }
                continue;
            }
            let sub = open_dir_at(fd, rel, &key, OFlags::RDONLY)?;
            let listed: Arc<[CString]> = names(sub.as_fd(), self.fills)
                .map_err(|e| named(&key, e))?
                .into();
            if settled {
                self.memo
                    .listings
                    .insert(key.clone(), (id, Arc::clone(&listed)));
            }
            self.dir(At::Handle(sub.as_fd()), &key, &listed)?;
        }
        Ok(())
    }

    /// Walks the directory `rel` under `fd` (jail-relative `key`, `statx` result `x`,
    /// recorded ctime `real`), which this user may not list or enter: it is opened as a
    /// path, made `u+rx` through `/proc/self/fd` (the inode opened, never a path that could
    /// be swapped), walked, and given its mode back, also when the walk fails. Its names
    /// are never kept (its children are reached only while it is open to us). The ctime the
    /// restore leaves is remembered with `real`, so the next walk records `real` while
    /// nothing else changed the directory ([`Widened`]).
    fn widened(
        &mut self,
        fd: BorrowedFd<'_>,
        rel: &CStr,
        key: &[u8],
        x: &rustix::fs::Statx,
        real: (i64, u32),
    ) -> io::Result<()> {
        let path = open_dir_at(fd, rel, key, OFlags::PATH)?;
        let mode = u32::from(x.stx_mode) & 0o7777;
        let magic = format!("/proc/self/fd/{}", path.as_raw_fd());
        let chmod = |m: u32| {
            rustix::fs::chmod(magic.as_str(), Mode::from_raw_mode(m))
                .map_err(|e| named(key, e.into()))
        };
        chmod(mode | 0o500)?;
        let walked = (|| {
            let sub = openat(
                &path,
                c".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| named(key, e.into()))?;
            let listed = names(sub.as_fd(), self.fills).map_err(|e| named(key, e))?;
            self.dir(At::Handle(sub.as_fd()), key, &listed)
        })();
        let restored = chmod(mode);
        if restored.is_ok() {
            if let Ok(after) = statx(&path, c"", AtFlags::EMPTY_PATH, StatxFlags::BASIC_STATS) {
                let left = (after.stx_ctime.tv_sec, after.stx_ctime.tv_nsec);
                self.memo.widened.insert(
                    key.to_vec(),
                    Widened {
                        ino: x.stx_ino,
                        left,
                        real,
                    },
                );
            }
        }
        walked.and(restored)
    }

    /// The target of the symlink `rel` under `fd` (jail-relative `key`, identity `id`): the
    /// kept one if the link still has the identity it had when read, else read (and kept if
    /// `settled`).
    fn target(
        &mut self,
        fd: BorrowedFd<'_>,
        rel: &CStr,
        key: &[u8],
        id: Identity,
        settled: bool,
    ) -> io::Result<Vec<u8>> {
        kept_or(&mut self.memo.targets, key, id, settled, || {
            Ok(readlinkat(fd, rel, Vec::new())
                .map_err(|e| named(key, e.into()))?
                .into_bytes())
        })
    }

    /// SHA-256 of the decoy `rel` under `fd` (jail-relative `key`, identity `id`): the kept
    /// digest if the decoy still has the identity it had when hashed, else read and hashed
    /// (and kept if `settled`).
    fn digest(
        &mut self,
        fd: BorrowedFd<'_>,
        rel: &CStr,
        key: &[u8],
        id: Identity,
        settled: bool,
    ) -> io::Result<String> {
        kept_or(&mut self.memo.digests, key, id, settled, || {
            let file =
                crate::workspace::observe::open_regular(fd, rel).map_err(|e| named(key, e))?;
            let mut content = Vec::new();
            std::fs::File::from(file)
                .read_to_end(&mut content)
                .map_err(|e| named(key, e))?;
            Ok(crate::model::tree::sha256_hex(&content))
        })
    }
}

/// Open directory `rel` under `fd` without following a symlink: `how` is `RDONLY` to list
/// it, `PATH` for a handle to reach below it; an error names `key`.
fn open_dir_at(fd: BorrowedFd<'_>, rel: &CStr, key: &[u8], how: OFlags) -> io::Result<OwnedFd> {
    openat(
        fd,
        rel,
        how | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| named(key, e.into()))
}

/// `e` with the jail-relative path it is about (`.` for the jail itself).
fn named(key: &[u8], e: std::io::Error) -> std::io::Error {
    let shown = if key.is_empty() {
        ".".into()
    } else {
        escape(key)
    };
    std::io::Error::new(e.kind(), format!("`{shown}`: {e}"))
}

#[cfg(test)]
mod tests;
