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
use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// One jail; removed (with read-only and `0000` directories inside) when dropped.
pub struct Jail {
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
    counter: u32,
}

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
        Ok(Jail {
            dir: Some(dir),
            path,
            counter: 0,
        })
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
        snapshot_dir(&self.path, &[], &mut map, true)?;
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

fn snapshot_dir(
    dir: &Path,
    prefix: &[u8],
    map: &mut BTreeMap<Vec<u8>, StatKey>,
    top: bool,
) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let n = name.as_bytes();
        if top && (n == b"archive.tar" || n.starts_with(b"scratch-")) {
            continue;
        }
        let path = dir.join(&name);
        // `DirEntry::metadata` is an `fstatat` relative to the open directory, never
        // following a symlink, and cheaper than a path walk from `/`.
        let meta = entry.metadata()?;
        let ft = meta.file_type();
        let mut key = prefix.to_vec();
        if !key.is_empty() {
            key.push(b'/');
        }
        key.extend_from_slice(n);
        let kind = if ft.is_symlink() {
            "symlink"
        } else if ft.is_dir() {
            "dir"
        } else if ft.is_file() {
            "file"
        } else {
            "special"
        };
        map.insert(
            key.clone(),
            StatKey {
                kind,
                mode: meta.mode() & 0o7777,
                size: if ft.is_dir() { 0 } else { meta.size() },
                ino: meta.ino(),
                nlink: if ft.is_dir() { 0 } else { meta.nlink() },
                mtime: (meta.mtime(), meta.mtime_nsec()),
                ctime: (meta.ctime(), meta.ctime_nsec()),
                target: ft
                    .is_symlink()
                    .then(|| std::fs::read_link(&path).map(|t| t.as_os_str().as_bytes().to_vec()))
                    .transpose()?,
                sha256: (ft.is_file() && key.starts_with(b"out/"))
                    .then(|| std::fs::read(&path).map(|c| crate::observe::sha256_hex(&c)))
                    .transpose()?,
            },
        );
        // Hydration roots are compared by their own node only; their contents are the
        // extractor's to write.
        if ft.is_dir() && !(top && n.starts_with(b"h-")) {
            snapshot_dir(&path, &key, map, false)?;
        }
    }
    Ok(())
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
        // A tmpfs of the `enospc` fault is unmounted by its own guard; this sweep catches one
        // left by a panic or by a tool under test that mounted something itself.
        crate::cleanup::unmount_under(&self.path);
        // `remove_dir_all` is the fast path (root may enter 0000 directories); `remove_tree`
        // copes with what it leaves when not root (0000 and read-only directories).
        if std::fs::remove_dir_all(&self.path).is_err() {
            let _ = remove_tree(&self.path);
        }
        if let Some(d) = self.dir.take() {
            let _ = d.close();
        }
    }
}
