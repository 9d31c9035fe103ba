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
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
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
                    let sub = openat(
                        fd,
                        rel,
                        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .map_err(|e| named(&key, e.into()))?;
                    self.dir(At::Handle(sub.as_fd()), &key, &names)?;
                }
                continue;
            }
            let sub = openat(
                fd,
                rel,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| named(&key, e.into()))?;
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
        let path = openat(
            fd,
            rel,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| named(key, e.into()))?;
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
            let file = openat(
                fd,
                rel,
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| named(key, e.into()))?;
            let mut content = Vec::new();
            std::fs::File::from(file)
                .read_to_end(&mut content)
                .map_err(|e| named(key, e))?;
            Ok(crate::model::tree::sha256_hex(&content))
        })
    }
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
mod tests {
    use super::*;
    use crate::jail::default_jail_base;
    use snapconf_extract::dirs::open_dir;

    /// Digests kept between snapshots never hide a write: a decoy rewritten with other
    /// bytes of the same length is a change, a second name for it is not.
    #[test]
    fn decoy_writes_are_seen_through_the_digest_cache() {
        let mut jail = Jail::new(None).expect("jail");
        let target = jail.path().join("out/target");
        let first = jail.snapshot().expect("snapshot");
        let second = jail.snapshot().expect("snapshot");
        assert!(first.changes(&second, &[]).is_empty());
        let link = jail.fresh_dir("h").expect("h").join("link");
        std::fs::hard_link(&target, &link).expect("link");
        let linked = jail.snapshot().expect("snapshot");
        assert!(
            second.changes(&linked, &[b"h-1"]).is_empty(),
            "a new name only"
        );
        let len = std::fs::read(&target).expect("read").len();
        std::fs::write(&target, vec![b'#'; len]).expect("write");
        let written = jail.snapshot().expect("snapshot");
        let changes = linked.changes(&written, &[b"h-1"]);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert!(changes[0].starts_with("changed out/target"), "{changes:?}");
    }

    /// Snapshots taken in quick succession see every entry change: a rename inside a
    /// directory (same number of entries), and a directory removed and made again at the
    /// same path with other contents, each right after a snapshot, are seen every time.
    #[test]
    fn entry_changes_are_seen_by_every_snapshot() {
        // On `/dev/shm` where there is one: tmpfs, where timestamps alone would miss some.
        let jail = Jail::new(default_jail_base().as_deref()).expect("jail");
        let d = jail.src().join("d");
        std::fs::create_dir_all(d.join("sub")).expect("mkdir");
        std::fs::write(d.join("f-0"), "x").expect("write");
        let mut last = jail.snapshot().expect("snapshot");
        for i in 1..200 {
            std::fs::rename(d.join(format!("f-{}", i - 1)), d.join(format!("f-{i}")))
                .expect("rename");
            let now = jail.snapshot().expect("snapshot");
            let changes = last.changes(&now, &[]);
            assert!(
                changes
                    .iter()
                    .any(|c| c.starts_with(&format!("new src/d/f-{i} "))),
                "round {i}: {changes:?}"
            );
            std::fs::remove_dir_all(d.join("sub")).expect("rmdir");
            std::fs::create_dir(d.join("sub")).expect("mkdir");
            std::fs::write(d.join("sub").join(format!("g-{i}")), "y").expect("write");
            let again = jail.snapshot().expect("snapshot");
            let changes = now.changes(&again, &[]);
            assert!(
                changes
                    .iter()
                    .any(|c| c.starts_with(&format!("new src/d/sub/g-{i} "))),
                "round {i}: {changes:?}"
            );
            last = again;
        }
    }

    /// What snapshots keep (directory names, symlink targets, decoy digests) never hides
    /// a change: every kind of change, made at every offset into the clock tick after a
    /// snapshot that used kept names, is seen by the next snapshot. On `/dev/shm` where
    /// there is one (tmpfs, where snapshots keep); elsewhere it checks plain walks.
    #[test]
    fn kept_listings_never_hide_a_change() {
        let jail = Jail::new(default_jail_base().as_deref()).expect("jail");
        let deep = jail.src().join("a/b/c");
        std::fs::create_dir_all(deep.join("sub")).expect("mkdir");
        std::fs::write(deep.join("f"), "x").expect("write");
        std::os::unix::fs::symlink("target-1", deep.join("l")).expect("symlink");
        let decoy_dir = jail.path().join("out/decoy");
        let mut last = jail.snapshot().expect("snapshot");
        let mut kept = 0;
        let mut moved = "f".to_string();
        for i in 0..240u32 {
            // Let the last change settle (or not), then snapshot, so kept names are used.
            std::thread::sleep(std::time::Duration::from_micros(u64::from(i % 12) * 500));
            let before = jail.snapshot().expect("snapshot");
            assert!(last.changes(&before, &[]).is_empty(), "round {i}");
            kept += jail.memo.lock().expect("memo").listings.len();
            std::thread::sleep(std::time::Duration::from_micros(u64::from(i % 5) * 300));
            let (what, want) = match i % 8 {
                0 => {
                    std::fs::write(deep.join(format!("n-{i}")), "y").expect("write");
                    ("create", format!("new src/a/b/c/n-{i} "))
                }
                1 => {
                    std::fs::remove_file(deep.join(format!("n-{}", i - 1))).expect("unlink");
                    ("unlink", format!("removed src/a/b/c/n-{} ", i - 1))
                }
                2 => {
                    std::fs::remove_dir(deep.join("sub")).expect("rmdir");
                    ("rmdir", "removed src/a/b/c/sub ".to_string())
                }
                3 => {
                    std::fs::create_dir(deep.join("sub")).expect("mkdir");
                    ("mkdir", "new src/a/b/c/sub ".to_string())
                }
                4 => {
                    let to = format!("f-{i}");
                    std::fs::rename(deep.join(&moved), deep.join(&to)).expect("rename");
                    moved = to;
                    ("rename", format!("new src/a/b/c/{moved} "))
                }
                5 => {
                    std::fs::remove_file(deep.join("l")).expect("unlink");
                    std::os::unix::fs::symlink(format!("target-{}", i % 10), deep.join("l"))
                        .expect("symlink");
                    ("replace a symlink", "changed src/a/b/c/l ".to_string())
                }
                6 => {
                    std::fs::write(decoy_dir.join(format!("d-{i}")), "w").expect("write");
                    ("create a decoy", format!("new out/decoy/d-{i} "))
                }
                _ => {
                    std::fs::remove_file(decoy_dir.join(format!("d-{}", i - 1))).expect("rm");
                    ("remove a decoy", format!("removed out/decoy/d-{} ", i - 1))
                }
            };
            let after = jail.snapshot().expect("snapshot");
            let changes = before.changes(&after, &[]);
            assert!(
                changes.iter().any(|c| c.starts_with(&want)),
                "round {i} ({what}): want `{want}` in {changes:?}"
            );
            last = after;
        }
        if jail.keeps {
            assert!(kept > 0, "snapshots on tmpfs kept no listing");
        }
    }

    /// A deep tree outside the roots, whose paths pass `PATH_MAX`, is walked the same with
    /// kept listings as without.
    #[test]
    fn kept_listings_reach_trees_deeper_than_path_max() {
        let jail = Jail::new(default_jail_base().as_deref()).expect("jail");
        // `create_dir_all` resolves the whole path; build it one level at a time instead.
        let mut dir = std::fs::File::open(jail.path()).expect("open");
        for name in std::iter::once("escaped".to_string()).chain((0..25).map(|_| "d".repeat(200))) {
            rustix::fs::mkdirat(&dir, name.as_str(), Mode::from_raw_mode(0o755)).expect("mkdir");
            dir = std::fs::File::from(open_dir(&dir, name.as_str()).expect("open"));
        }
        rustix::fs::symlinkat("t", &dir, "l").expect("symlink");
        let first = jail.snapshot().expect("first snapshot");
        std::thread::sleep(std::time::Duration::from_millis(30));
        let second = jail.snapshot().expect("second snapshot (names kept)");
        let third = jail.snapshot().expect("third snapshot (names used)");
        assert!(jail.memo.lock().expect("memo").listings.len() > 20 || !jail.keeps);
        assert_eq!(first, second);
        assert_eq!(second, third);
        assert!(third.0.keys().any(|k| k.len() > 5000 && k.ends_with(b"/l")));
    }

    /// The non-root path: directories of mode `0000`, `0100` and `0300` are widened to be
    /// walked and given their mode back; snapshots record the real modes, see no change of
    /// their own making however often they are taken, and still see every other change
    /// (inside a widened directory, and a chmod of one).
    #[test]
    fn widened_directories_are_walked_and_never_seen_as_changed() {
        let jail = Jail::new(default_jail_base().as_deref()).expect("jail");
        let src = jail.src();
        std::fs::create_dir_all(src.join("a/b/c")).expect("mkdir");
        std::fs::write(src.join("a/b/c/f"), "x").expect("write");
        std::fs::create_dir(src.join("ro")).expect("mkdir");
        let chmod = |p: &str, m: u32| {
            rustix::fs::chmod(src.join(p), Mode::from_raw_mode(m)).expect("chmod");
        };
        chmod("a/b/c", 0o300);
        chmod("a/b", 0o100);
        chmod("a", 0o000);
        chmod("ro", 0o555);
        let mode_of = |p: &str| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::symlink_metadata(src.join(p))
                .expect("stat")
                .permissions()
                .mode()
                & 0o7777
        };
        let user = || {
            jail.walk_with(b"", false, false)
                .expect("snapshot as a user")
        };
        let first = user();
        let modes: Vec<u32> = ["src/a", "src/a/b", "src/a/b/c", "src/ro"]
            .iter()
            .map(|k| first.0[k.as_bytes()].mode)
            .collect();
        assert_eq!(modes, [0o000, 0o100, 0o300, 0o555]);
        assert!(first.0.contains_key(b"src/a/b/c/f".as_slice()));
        assert_eq!(
            ["a", "a/b", "a/b/c"].map(mode_of),
            [0o000, 0o100, 0o300],
            "modes given back"
        );
        let mut last = first;
        for round in 0..5 {
            std::thread::sleep(std::time::Duration::from_millis(5));
            let now = user();
            assert!(last.changes(&now, &[]).is_empty(), "round {round}");
            assert_eq!(jail.snapshot().expect("snapshot as root"), now);
            last = now;
        }
        // Changes made by someone else are seen, inside and of a widened directory.
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::fs::write(src.join("a/b/c/f"), "y").expect("write as root");
        chmod("a/b", 0o700);
        chmod("a/b", 0o100);
        let after = user();
        let changes = last.changes(&after, &[]);
        assert!(
            changes
                .iter()
                .any(|c| c.starts_with("changed src/a/b/c/f ")),
            "{changes:?}"
        );
        assert!(
            changes.iter().any(|c| c.starts_with("changed src/a/b ")),
            "{changes:?}"
        );
        assert!(
            !changes.iter().any(|c| c.starts_with("changed src/a ")),
            "{changes:?}"
        );
        for p in ["a", "a/b", "a/b/c"] {
            chmod(p, 0o755);
        }
    }

    /// `snapshot_outside(src)` keeps `src`'s node and nothing under it, and agrees with a
    /// full snapshot everywhere else.
    #[test]
    fn snapshot_outside_a_root_leaves_out_only_its_contents() {
        let mut jail = Jail::new(None).expect("jail");
        std::fs::create_dir_all(jail.src().join("a/b")).expect("mkdir");
        std::fs::write(jail.src().join("a/f"), "x").expect("write");
        let h = jail.fresh_dir("h").expect("h");
        std::fs::write(h.join("g"), "y").expect("write");
        let outside = jail.snapshot_outside(&jail.src()).expect("snapshot");
        let full = jail.snapshot().expect("snapshot");
        assert!(outside.0.contains_key(b"src".as_slice()));
        assert!(full.0.contains_key(b"src/a/f".as_slice()));
        assert!(!outside.0.keys().any(|k| k.starts_with(b"src/")));
        assert!(outside.changes(&full, &[b"src"]).is_empty());
        assert_eq!(
            outside.changes(&full, &[]).len(),
            3,
            "src/a, src/a/b, src/a/f"
        );
    }
}
