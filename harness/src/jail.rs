//! The jail: a scratch directory holding every root, the archive and the canaries of one case.
//!
//! Layout (all inside one `snapconf-jail-*` temporary directory):
//! ```text
//! src/            capture root (W1 materialised)
//! out/            decoys: the targets of `{out}` symlinks, each with unique content
//! canary          a file beside the roots, unique content
//! archive.tar     the producer's output
//! scratch-*/      private scratch dirs handed to adapters
//! h-<n>/          hydration roots (empty, or holding the prior W0)
//! ```
//! Nothing a case does is meant to reach outside the jail; `containment` compares
//! everything in the jail outside the root under test before and after each step.

use crate::bytes::escape;
use crate::materialise::remove_tree;
use crate::spec::Placeholders;
use rustix::fs::{openat, readlinkat, statx, AtFlags, FileType, Mode, OFlags, StatxFlags, CWD};
use snapconf_extract::dirs::{fills_reads, names, open_dir};
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One jail; removed (with read-only and `0000` directories inside) when dropped.
pub struct Jail {
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
    counter: u32,
    memo: Mutex<Memo>,
    /// The `base` it was created under, so a [`JailPool`] only hands it out for the same one.
    base: Option<PathBuf>,
    /// The jail's filesystem [`fills_reads`] (asked once, when the jail is made).
    fills: bool,
}

/// Names kept by [`Jail::reset`]: the decoys, the canary and the canary directory.
const FIXED: [&[u8]; 3] = [b"out", b"canary", crate::canary::CANARY_DIR.as_bytes()];

/// The decoy files placed in `out/`: names a generated `{out}/...` link may point at
/// (`decoy/file` is what `gen` writes for a link into a decoy directory).
pub const DECOYS: [&str; 3] = ["target", "x", "decoy/file"];

impl Jail {
    /// Create a jail under `base` (the system temp dir when `None`), with `src/`, `out/`
    /// holding decoys and a `canary` file, each with content unique to this jail.
    pub fn new(base: Option<&Path>) -> std::io::Result<Jail> {
        let mut b = tempfile::Builder::new();
        b.prefix("snapconf-jail-");
        let dir = match base {
            Some(base) => b.tempdir_in(base)?,
            None => b.tempdir()?,
        };
        let path = dir.path().canonicalize()?;
        std::fs::create_dir(path.join("src"))?;
        std::fs::create_dir(path.join("out"))?;
        let stamp = path.as_os_str().as_bytes().to_vec();
        for d in DECOYS {
            let mut content = b"decoy ".to_vec();
            content.extend_from_slice(d.as_bytes());
            content.push(b' ');
            content.extend_from_slice(&stamp);
            let p = path.join("out").join(d);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(p, content)?;
        }
        let mut canary = b"canary ".to_vec();
        canary.extend_from_slice(&stamp);
        std::fs::write(path.join("canary"), canary)?;
        let fills = fills_reads(open_dir(CWD, &path)?.as_fd());
        Ok(Jail {
            fills,
            dir: Some(dir),
            path,
            counter: 0,
            memo: Mutex::default(),
            base: base.map(Path::to_path_buf),
        })
    }

    /// Make the jail as [`Jail::new`] left it, for the next case: everything but `out/`,
    /// `canary` and `canary-dir/` is removed (roots, scratch dirs, the archive), `src/` is
    /// created anew, and `out/` keeps only the fixed [`DECOYS`] (a case's planted decoys go).
    /// The decoys themselves are not rewritten: a caller only resets a jail whose case found
    /// no `containment` change, so they hold what they were created with.
    ///
    /// # Errors
    /// The first failing removal or `mkdir`; the jail should then be dropped.
    pub fn reset(&mut self) -> std::io::Result<()> {
        let top = open_dir(CWD, &self.path)?;
        prune(top.as_fd(), &FIXED, self.fills)?;
        rustix::fs::mkdirat(&top, "src", Mode::from_raw_mode(0o755))?;
        let out = open_dir(&top, "out")?;
        prune(out.as_fd(), &[b"target", b"x", b"decoy"], self.fills)?;
        let decoy = open_dir(&out, "decoy")?;
        prune(decoy.as_fd(), &[b"file"], self.fills)?;
        // Root names (`h-1`, ...) start again, so a case's messages do not depend on the
        // cases before it.
        self.counter = 0;
        Ok(())
    }

    /// The jail directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The capture root `src/`.
    pub fn src(&self) -> PathBuf {
        self.path.join("src")
    }

    /// The archive path `archive.tar`.
    pub fn archive(&self) -> PathBuf {
        self.path.join("archive.tar")
    }

    /// Placeholders for a spec materialised at `root` inside this jail.
    pub fn placeholders(&self, root: &Path) -> Placeholders {
        Placeholders {
            root: root.as_os_str().as_bytes().to_vec(),
            out: self.path.join("out").as_os_str().as_bytes().to_vec(),
        }
    }

    /// A new, empty directory `<prefix>-<n>` inside the jail.
    pub fn fresh_dir(&mut self, prefix: &str) -> std::io::Result<PathBuf> {
        self.counter += 1;
        let p = self.path.join(format!("{prefix}-{}", self.counter));
        std::fs::create_dir(&p)?;
        Ok(p)
    }

    /// The state `containment` compares: every entry in the jail, by `lstat` only, except
    /// `archive.tar` and the adapters' `scratch-*` dirs, and except the *contents* of
    /// hydration roots (`h-*`, only their own node is kept). `src/`, `out/` (the decoys) and
    /// `canary` are walked in full. Comparing `ctime` catches every write, chmod or link
    /// without reading contents (a process cannot set `ctime` back).
    pub fn snapshot(&self) -> std::io::Result<Snapshot> {
        let mut map = BTreeMap::new();
        let top = openat(
            CWD,
            &self.path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        snapshot_dir(top.as_fd(), &[], &mut map, true, self.fills, &mut memo)?;
        Ok(Snapshot(map))
    }

    /// The name of `root` relative to the jail, for [`Snapshot::changes`].
    pub fn rel(&self, root: &Path) -> Vec<u8> {
        root.strip_prefix(&self.path)
            .map(|p| p.as_os_str().as_bytes().to_vec())
            .unwrap_or_default()
    }
}

/// What `containment` compares for one path: kind, permission bits, size, inode, link
/// count, mtime and ctime (seconds and nanoseconds), and a symlink's target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatKey {
    pub kind: &'static str,
    pub mode: u32,
    pub size: u64,
    pub ino: u64,
    pub nlink: u64,
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
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
        let skip = |p: &[u8]| {
            ignore
                .iter()
                .any(|i| p == *i || (p.len() > i.len() && p.starts_with(i) && p[i.len()] == b'/'))
        };
        let mut out = Vec::new();
        for (p, a) in &self.0 {
            if skip(p) {
                continue;
            }
            match after.0.get(p) {
                None => out.push(format!("removed {} ({})", escape(p), a.kind)),
                Some(b) if a != b && !a.same_but_links(b) => {
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
    if a.nlink != b.nlink {
        what.push(format!("links {} -> {}", a.nlink, b.nlink));
    }
    if what.is_empty() {
        what.push("content or metadata written".to_string());
    }
    what.join(", ")
}

/// What one jail's snapshots remember from the last: the decoys' digests.
///
/// (Directory listings are not kept: a kept listing needs something that says when a
/// directory's names changed. Timestamps cannot: on tmpfs an `rmdir` may leave the
/// parent's ctime as it was, seen here with multigrain timestamps on Linux 6.18. An inotify
/// watch per directory can, but measured no faster than listing again.)
#[derive(Default)]
struct Memo {
    /// Contents of the decoys already hashed, by jail-relative path and the `statx`
    /// identity they had then (inode, size, mtime, ctime): a file whose identity is
    /// unchanged has unchanged content (any write moves its ctime, which no process can set
    /// back), so it is not read again.
    digests: HashMap<Vec<u8>, (Identity, String)>,
}

type Identity = (u64, u64, (i64, u32), (i64, u32));

/// Walks the directory open at `dir` (jail-relative path `prefix`; `fills`: the jail's
/// filesystem [`fills_reads`], so a short directory read ends a listing),
/// every step relative to a handle (`statx`, `readlinkat` and `openat` with `O_NOFOLLOW` on
/// the entry's name), so a path is never resolved from `/` and a link is never followed.
fn snapshot_dir(
    dir: BorrowedFd<'_>,
    prefix: &[u8],
    map: &mut BTreeMap<Vec<u8>, StatKey>,
    top: bool,
    fills: bool,
    memo: &mut Memo,
) -> std::io::Result<()> {
    let listed = names(dir, fills).map_err(|e| named(prefix, e))?;
    for name in listed {
        let n = name.to_bytes();
        if top && (n == b"archive.tar" || n.starts_with(b"scratch-")) {
            continue;
        }
        let mut key = prefix.to_vec();
        if !key.is_empty() {
            key.push(b'/');
        }
        key.extend_from_slice(n);
        let x = statx(
            dir,
            name.as_c_str(),
            AtFlags::SYMLINK_NOFOLLOW,
            StatxFlags::BASIC_STATS,
        )
        .map_err(|e| named(&key, e.into()))?;
        let ft = FileType::from_raw_mode(u32::from(x.stx_mode));
        let kind = match ft {
            FileType::Symlink => "symlink",
            FileType::Directory => "dir",
            FileType::RegularFile => "file",
            _ => "special",
        };
        let is_dir = ft == FileType::Directory;
        let mtime = (x.stx_mtime.tv_sec, x.stx_mtime.tv_nsec);
        let ctime = (x.stx_ctime.tv_sec, x.stx_ctime.tv_nsec);
        let target = match ft {
            FileType::Symlink => Some(
                readlinkat(dir, name.as_c_str(), Vec::new())
                    .map_err(|e| named(&key, e.into()))?
                    .into_bytes(),
            ),
            _ => None,
        };
        let sha256 = if ft == FileType::RegularFile && key.starts_with(b"out/") {
            let id = (x.stx_ino, x.stx_size, mtime, ctime);
            match memo.digests.get(&key) {
                Some((seen, sha)) if *seen == id => Some(sha.clone()),
                _ => {
                    let fd = openat(
                        dir,
                        name.as_c_str(),
                        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .map_err(|e| named(&key, e.into()))?;
                    let mut content = Vec::new();
                    std::fs::File::from(fd)
                        .read_to_end(&mut content)
                        .map_err(|e| named(&key, e))?;
                    let sha = crate::observe::sha256_hex(&content);
                    memo.digests.insert(key.clone(), (id, sha.clone()));
                    Some(sha)
                }
            }
        } else {
            None
        };
        map.insert(
            key.clone(),
            StatKey {
                kind,
                mode: u32::from(x.stx_mode) & 0o7777,
                size: if is_dir { 0 } else { x.stx_size },
                ino: x.stx_ino,
                nlink: if is_dir { 0 } else { u64::from(x.stx_nlink) },
                mtime: (mtime.0, i64::from(mtime.1)),
                ctime: (ctime.0, i64::from(ctime.1)),
                target,
                sha256,
            },
        );
        // Hydration roots are compared by their own node only; their contents are the
        // extractor's to write.
        if is_dir && !(top && n.starts_with(b"h-")) {
            let sub = openat(
                dir,
                name.as_c_str(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| named(&key, e.into()))?;
            snapshot_dir(sub.as_fd(), &key, map, false, fills, memo)?;
        }
    }
    Ok(())
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

/// Removes every entry of the directory open at `dir` whose name is not in `keep`.
fn prune(dir: BorrowedFd<'_>, keep: &[&[u8]], fills: bool) -> std::io::Result<()> {
    for name in names(dir, fills)? {
        if !keep.contains(&name.to_bytes()) {
            snapconf_extract::remove::remove_tree_at(dir, name.to_bytes())?;
        }
    }
    Ok(())
}

/// At most one spare jail, shared by the clones of one [`crate::pipeline::Env`]: a case
/// whose adapters all ran in process and that ends without a `containment` or `hang`
/// finding hands its jail back (after [`Jail::reset`]) and the next case takes it, which saves creating and removing the decoys and the canary
/// directory for every case. The spare is removed when the last clone is dropped.
#[derive(Clone, Default)]
pub struct JailPool(Arc<Mutex<Option<Jail>>>);

impl std::fmt::Debug for JailPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JailPool")
    }
}

impl JailPool {
    /// The spare jail if it was made under `base`, else a new one ([`Jail::new`]).
    ///
    /// # Errors
    /// As [`Jail::new`].
    pub fn take(&self, base: Option<&Path>) -> std::io::Result<Jail> {
        let spare = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        match spare {
            Some(j) if j.base.as_deref() == base => Ok(j),
            _ => Jail::new(base),
        }
    }

    /// The path of the spare jail, if there is one.
    pub fn spare(&self) -> Option<PathBuf> {
        let spare = self.0.lock().unwrap_or_else(|e| e.into_inner());
        spare.as_ref().map(|j| j.path.clone())
    }

    /// Keep `jail` as the spare after [`Jail::reset`]; a jail that cannot be reset is
    /// dropped (removed) instead.
    pub fn give_back(&self, mut jail: Jail) {
        if jail.reset().is_ok() {
            *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(jail);
        }
    }
}

/// Where jails go by default: `/dev/shm` when it is a writable directory (a tmpfs: cases
/// run several times faster than on a disk), else the system temp dir.
pub fn default_jail_base() -> Option<PathBuf> {
    let shm = Path::new("/dev/shm");
    let writable = shm.is_dir() && rustix::fs::access(shm, rustix::fs::Access::WRITE_OK).is_ok();
    writable.then(|| shm.to_path_buf())
}

impl Drop for Jail {
    fn drop(&mut self) {
        // The remover never crosses into another mount; a mount inside the jail (a tmpfs of
        // the `enospc` fault left by a panic, or one a tool under test made) makes it stop
        // with an error, and only then is `/proc/self/mountinfo` read to unmount what is
        // under the jail before trying again. Reading it on every drop cost more than the
        // rest of the removal.
        if remove_tree(&self.path).is_err() {
            crate::cleanup::unmount_under(&self.path);
            let _ = remove_tree(&self.path);
        }
        if let Some(d) = self.dir.take() {
            let _ = d.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// `reset` leaves exactly what `Jail::new` and the canary directory made: roots,
    /// scratch dirs, the archive and planted decoys go, `src/` is empty again, and the
    /// decoys keep their inode and content.
    #[test]
    fn reset_keeps_only_the_fixed_part() {
        let mut jail = Jail::new(None).expect("jail");
        let spec = crate::spec::WorkspaceSpec::from_json(
            r#"{"entries": [{"path": "l", "kind": "symlink", "target": "{out}/deep/er"}]}"#,
        )
        .expect("spec");
        crate::canary::plant(&jail, &[&spec]).expect("plant");
        let before = jail.snapshot().expect("snapshot");
        std::fs::write(jail.src().join("f"), "x").expect("write");
        std::fs::write(jail.archive(), "tar").expect("write");
        let h = jail.fresh_dir("h").expect("h");
        std::fs::create_dir_all(h.join("a/b")).expect("mkdir");
        std::fs::set_permissions(
            h.join("a"),
            std::os::unix::fs::PermissionsExt::from_mode(0o000),
        )
        .expect("chmod");
        jail.fresh_dir("scratch-h").expect("scratch");
        jail.reset().expect("reset");
        assert_eq!(listing(jail.path()), ["canary", "canary-dir", "out", "src"]);
        assert!(listing(&jail.src()).is_empty());
        assert_eq!(listing(&jail.path().join("out")), ["decoy", "target", "x"]);
        let after = jail.snapshot().expect("snapshot");
        for name in [
            "out/target",
            "out/x",
            "out/decoy/file",
            "canary",
            "canary-dir/file",
        ] {
            let (a, b) = (&before.0[name.as_bytes()], &after.0[name.as_bytes()]);
            assert_eq!(
                (a.ino, &a.sha256, a.size),
                (b.ino, &b.sha256, b.size),
                "{name}"
            );
        }
        assert_eq!(jail.fresh_dir("h").expect("h"), jail.path().join("h-1"));
    }

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

    /// The pool hands the same jail back for the same base, a new one for another base,
    /// and removes its spare when the last clone goes.
    #[test]
    fn pool_reuses_a_jail_and_removes_it_when_dropped() {
        let pool = JailPool::default();
        let other = tempfile::tempdir().expect("tempdir");
        let first = pool.take(None).expect("take");
        let path = first.path().to_path_buf();
        pool.give_back(first);
        assert_eq!(pool.spare(), Some(path.clone()));
        let again = pool.take(None).expect("take");
        assert_eq!(again.path(), path);
        pool.give_back(again);
        let elsewhere = pool.take(Some(other.path())).expect("take");
        assert!(elsewhere
            .path()
            .starts_with(other.path().canonicalize().expect("canon")));
        assert!(
            !path.exists(),
            "a spare of another base is dropped, not kept"
        );
        pool.give_back(elsewhere);
        let spare = pool.spare().expect("spare");
        let clone = pool.clone();
        drop(pool);
        assert!(spare.exists(), "a clone still holds the spare");
        drop(clone);
        assert!(!spare.exists(), "the spare is removed with the last clone");
    }
}
