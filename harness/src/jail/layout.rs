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

use crate::model::bytes::escape;
use crate::model::spec::Placeholders;
use crate::workspace::materialise::remove_tree;
use rustix::fs::{
    openat, readlinkat, statx, unlinkat, AtFlags, FileType, Mode, OFlags, StatxFlags, CWD,
};
use rustix::time::{ClockId, Timespec};
use snapconf_extract::dirs::{entries_until, fills_reads, names, open_dir};
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::io::{self, Read};
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
    /// The jail is on tmpfs or ramfs, where snapshots may keep what they read (see [`Memo`]).
    keeps: bool,
}

/// Names kept by [`Jail::reset`]: the decoys, the canary and the canary directory.
const FIXED: [&[u8]; 3] = [
    b"out",
    b"canary",
    crate::jail::canary::CANARY_DIR.as_bytes(),
];

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
            let mut content = crate::jail::canary::DECOY_PREFIX.to_vec();
            content.extend_from_slice(d.as_bytes());
            content.push(b' ');
            content.extend_from_slice(&stamp);
            let p = path.join("out").join(d);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(p, content)?;
        }
        let mut canary = crate::jail::canary::CANARY_PREFIX.to_vec();
        canary.extend_from_slice(&stamp);
        std::fs::write(path.join("canary"), canary)?;
        let handle = open_dir(CWD, &path)?;
        let fills = fills_reads(handle.as_fd());
        let keeps = nanosecond_times(handle.as_fd());
        Ok(Jail {
            fills,
            keeps,
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
        // What snapshots kept of the removed part would only grow with every case.
        let memo = self.memo.get_mut().unwrap_or_else(|e| e.into_inner());
        let fixed = |k: &Vec<u8>| {
            let first = k.split(|b| *b == b'/').next().unwrap_or_default();
            FIXED.contains(&first)
        };
        memo.digests.retain(|k, _| fixed(k));
        memo.targets.retain(|k, _| fixed(k));
        memo.listings.retain(|k, _| fixed(k));
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
        self.walk(b"")
    }

    /// As [`Jail::snapshot`], but of `root` (a directory directly in the jail, such as
    /// `src/`) only its own node is kept, not its contents: for the state before a step
    /// whose comparison ignores `root` anyway ([`Snapshot::changes`]). A `root` deeper in
    /// the jail is walked in full.
    pub fn snapshot_outside(&self, root: &Path) -> std::io::Result<Snapshot> {
        self.walk(&self.rel(root))
    }

    /// The walk of [`Jail::snapshot`], keeping only the node of the top-level entry `skip`
    /// (none if empty).
    fn walk(&self, skip: &[u8]) -> std::io::Result<Snapshot> {
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
            // The clock went back: a later change could stamp a ctime seen before.
            *memo = Memo::default();
        }
        memo.clock = began;
        let mut walk = Walk {
            top: top.as_fd(),
            skip,
            map: BTreeMap::new(),
            fills: self.fills,
            began,
            memo: &mut memo,
        };
        let listed = names(top.as_fd(), self.fills).map_err(|e| named(&[], e))?;
        walk.dir(At::Handle(top.as_fd()), &[], &listed)?;
        Ok(Snapshot(walk.map))
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

/// What one jail's snapshots remember from the last: the decoys' digests, symlink targets
/// and the names of directories, each kept with the `statx` identity (inode, size, mtime,
/// ctime) the entry had then, and used only while the entry still has it.
///
/// That is sound only for an entry that had *settled*: its ctime was older than the coarse
/// clock (`CLOCK_REALTIME_COARSE`, the kernel's timestamp source, `current_time()` in
/// `fs/inode.c`) read before the walk began. Every change to a file, and every name added,
/// removed or renamed in a directory, stamps a ctime of at least the coarse clock at that
/// moment, so a later change gives a settled entry a ctime it never had. An entry changed
/// within the clock tick of its last change may keep its ctime: on tmpfs an `rmdir` gives
/// the parent the removed directory's new ctime, which in the same tick can equal the
/// parent's own (seen on Linux 6.18). So unsettled entries are read in full every time.
/// (Since Linux 6.13, multigrain timestamps also give a fine-grained ctime to the first
/// change after a `statx`; the rule above does not rely on that.)
///
/// Kept only on tmpfs and ramfs (nanosecond timestamps; a filesystem that stores seconds
/// would give a same-second change the same ctime), dropped whole if the clock is ever seen
/// to go back, and emptied of everything outside the fixed decoys by [`Jail::reset`]. The
/// test `kept_listings_never_hide_a_change` makes every kind of change at every point of a
/// tick after snapshots that used what was kept.
///
/// Not covered, as by any `statx` snapshot: a write through a shared memory mapping made
/// before the last snapshot stamps no new time, so a kept digest misses it (a fresh read
/// would not). It needs a process that keeps the mapping across a step, which the straggler
/// reaper does not let a tool do.
#[derive(Default)]
struct Memo {
    /// Contents of the decoys already hashed, by jail-relative path.
    digests: HashMap<Vec<u8>, (Identity, String)>,
    /// Targets of symlinks already read, by jail-relative path.
    targets: HashMap<Vec<u8>, (Identity, Vec<u8>)>,
    /// Names in directories already listed, by jail-relative path.
    listings: HashMap<Vec<u8>, (Identity, Arc<[CString]>)>,
    /// The coarse clock at the start of the last walk.
    clock: Option<Timespec>,
}

type Identity = (u64, u64, (i64, u32), (i64, u32));

/// True if the filesystem of `dir` is tmpfs or ramfs, which stamp times in nanoseconds
/// (`statfs(2)` magic numbers); false if `fstatfs` fails.
fn nanosecond_times(dir: BorrowedFd<'_>) -> bool {
    const TMPFS: u64 = 0x0102_1994;
    const RAMFS: u64 = 0x8584_58f6;
    // `f_type` is signed on some targets; the magic numbers fit in 32 bits.
    rustix::fs::fstatfs(dir)
        .is_ok_and(|st| matches!((st.f_type as u64) & 0xffff_ffff, TMPFS | RAMFS))
}

/// The coarse realtime clock, as the kernel stamps file times.
fn coarse_now() -> Timespec {
    rustix::time::clock_gettime(ClockId::RealtimeCoarse)
}

/// The longest jail-relative path of a directory whose children a snapshot reaches by path
/// from the jail (see [`At::Path`]), in bytes: a child's path then stays under `PATH_MAX`.
const PATH_STEPS_UP_TO: usize = 2048;

/// One snapshot's walk over a jail open at `top`.
struct Walk<'a> {
    top: BorrowedFd<'a>,
    /// A top-level entry whose contents are not walked (none if empty).
    skip: &'a [u8],
    map: BTreeMap<Vec<u8>, StatKey>,
    /// The jail's filesystem [`fills_reads`], so a short directory read ends a listing.
    fills: bool,
    /// The coarse clock before the walk began, or `None` where nothing may be kept
    /// (see [`Memo`]).
    began: Option<Timespec>,
    memo: &'a mut Memo,
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
            if top && (n == b"archive.tar" || n.starts_with(b"scratch-")) {
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
            let kind = match ft {
                FileType::Symlink => "symlink",
                FileType::Directory => "dir",
                FileType::RegularFile => "file",
                _ => "special",
            };
            self.map.insert(
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
            if !is_dir || (top && (n.starts_with(b"h-") || n == self.skip)) {
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
            Ok(crate::workspace::observe::sha256_hex(&content))
        })
    }
}

/// The value `memo` keeps for `key` if it was kept at identity `id`, else `read()`'s, which
/// is kept if `settled` (see [`Memo`]).
fn kept_or<T: Clone>(
    memo: &mut HashMap<Vec<u8>, (Identity, T)>,
    key: &[u8],
    id: Identity,
    settled: bool,
    read: impl FnOnce() -> io::Result<T>,
) -> io::Result<T> {
    if let Some((was, value)) = memo.get(key) {
        if *was == id {
            return Ok(value.clone());
        }
    }
    let value = read()?;
    if settled {
        memo.insert(key.to_vec(), (id, value.clone()));
    }
    Ok(value)
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
///
/// A name the listing types as a non-directory is first unlinked, and an adapter's
/// `scratch-*` directory (empty unless a tool left something) first removed with `rmdir`,
/// each by name in one call; the remover takes over where that fails.
fn prune(dir: BorrowedFd<'_>, keep: &[&[u8]], fills: bool) -> std::io::Result<()> {
    use snapconf_extract::remove::{remove_likely_empty_at, remove_tree_at};
    for (name, ft) in entries_until(dir, fills)? {
        let n = name.to_bytes();
        if keep.contains(&n) {
            continue;
        }
        match ft {
            FileType::Directory if n.starts_with(b"scratch-") => remove_likely_empty_at(dir, n)?,
            FileType::Directory | FileType::Unknown => remove_tree_at(dir, n)?,
            _ => {
                if unlinkat(dir, &name, AtFlags::empty()).is_err() {
                    remove_tree_at(dir, n)?;
                }
            }
        }
    }
    Ok(())
}

/// At most one spare jail, shared by the clones of one [`crate::run::case::Env`]: a case
/// whose adapters all ran in process and that ends without a `containment` or `hang`
/// finding hands its jail back (after [`Jail::reset`]) and the next case takes it, which
/// saves creating and removing the decoys and the canary directory for every case. The
/// spare is removed when the last clone is dropped.
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
            crate::jail::cleanup::unmount_under(&self.path);
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
        let spec = crate::model::spec::WorkspaceSpec::from_json(
            r#"{"entries": [{"path": "l", "kind": "symlink", "target": "{out}/deep/er"}]}"#,
        )
        .expect("spec");
        crate::jail::canary::plant(&jail, &[&spec]).expect("plant");
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
