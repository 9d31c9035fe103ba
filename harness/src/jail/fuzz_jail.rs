//! A small jail for in-process fuzzing: cheap to check and to reset, on `/dev/shm` when it
//! is writable.
//!
//! Layout (one directory per jail):
//! ```text
//! root/           the workspace; holds the prior PRIOR between executions
//! out/            decoys `target`, `x`, `decoy/file` (the prior's link `l` points at one)
//! x/, root-x/,    empty decoy directories beside the root, for `../x` and the root's own
//! rootx/          name with more after it (`../root-x`, `../rootx`)
//! canary          a file beside the root
//! ```
//! The jail is removed on drop. A process killed by libFuzzer never drops it, so the first
//! jail of a process in a base first removes jails of processes that no longer exist
//! (`snapconf-fuzz-<pid>-*` and the other pid-named dirs; see [`super::leftovers`]).

use crate::workspace::materialise::remove_tree;
use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The prior workspace every execution hydrates over: `(path, kind, content or target)`,
/// in creation order. `d` is a directory, `l` a planted symlink to a decoy outside the
/// root (a write through it would be a `containment` finding).
pub const PRIOR: [(&str, char, &str); 4] = [
    ("a", 'f', "old a\n"),
    ("d", 'd', ""),
    ("d/f", 'f', "old d/f\n"),
    ("l", 'l', "../out/target"),
];

/// Empty decoy directories beside the root (a new entry in one changes its times).
pub const SIBLINGS: [&str; 3] = ["x", "root-x", "rootx"];

/// What is compared for one path outside the root: inode, mode, size (0 for directories),
/// mtime and ctime (seconds, nanoseconds).
type StatKey = (u64, u32, u64, i64, i64, i64, i64);

/// One fuzzing jail; see the module docs.
#[derive(Debug)]
pub struct FuzzJail {
    path: PathBuf,
    outside: BTreeMap<Vec<u8>, StatKey>,
    /// `lstat` state of the prior right after [`FuzzJail::reset_prior`].
    prior: BTreeMap<Vec<u8>, StatKey>,
    /// This process's lock in the base, held while the jail exists.
    _lease: super::leftovers::BaseLease,
}

/// A unique number per jail in this process.
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl FuzzJail {
    /// Create a jail under `base` (`/dev/shm` when writable, else the system temp dir, when
    /// `None`) with the prior workspace in `root/`.
    ///
    /// # Errors
    /// Any failure to create the directories and files.
    pub fn new(base: Option<&Path>) -> io::Result<FuzzJail> {
        let base = match base {
            Some(b) => b.to_path_buf(),
            None => crate::jail::default_jail_base().unwrap_or_else(std::env::temp_dir),
        };
        let lease = super::leftovers::BaseLease::take(&base);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = base.join(format!("{}{n}", super::leftovers::dir_prefix("fuzz")));
        if path.exists() {
            remove_tree(&path)?;
        }
        std::fs::create_dir(&path)?;
        std::fs::create_dir(path.join("out"))?;
        for d in crate::jail::DECOYS {
            let decoy = path.join("out").join(d);
            // Some decoys sit in a directory of their own (`decoy/file`).
            if let Some(dir) = decoy.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(decoy, format!("decoy {d}\n"))?;
        }
        for d in SIBLINGS {
            std::fs::create_dir(path.join(d))?;
        }
        std::fs::write(path.join("canary"), "canary\n")?;
        let mut jail = FuzzJail {
            path,
            outside: BTreeMap::new(),
            prior: BTreeMap::new(),
            _lease: lease,
        };
        jail.reset_prior()?;
        jail.outside = jail.outside_state()?;
        Ok(jail)
    }

    /// The jail directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The workspace root.
    pub fn root(&self) -> PathBuf {
        self.path.join("root")
    }

    /// Replace whatever is at `root/` with the prior workspace [`PRIOR`].
    ///
    /// # Errors
    /// Any failure to remove or create.
    pub fn reset_prior(&mut self) -> io::Result<()> {
        let root = self.root();
        if std::fs::symlink_metadata(&root).is_ok() {
            remove_tree(&root)?;
        }
        std::fs::create_dir(&root)?;
        for (p, kind, what) in PRIOR {
            let at = root.join(p);
            match kind {
                'f' => std::fs::write(at, what)?,
                'd' => std::fs::create_dir(at)?,
                _ => std::os::unix::fs::symlink(what, at)?,
            }
        }
        self.prior = self.root_state()?;
        Ok(())
    }

    /// True if `root/` is exactly as [`FuzzJail::reset_prior`] left it: the same paths
    /// with the same inode, mode, size, mtime and ctime (any write, chmod, rename or
    /// replacement changes one of them). Cheaper than [`crate::workspace::observe::observe`], which
    /// reads and hashes contents.
    ///
    /// # Errors
    /// A failing `lstat` or `readdir` under the root.
    pub fn prior_intact(&self) -> io::Result<bool> {
        Ok(self.root_state()? == self.prior)
    }

    fn root_state(&self) -> io::Result<BTreeMap<Vec<u8>, StatKey>> {
        let mut map = BTreeMap::new();
        let root = self.root();
        map.insert(Vec::new(), stat_key(&root)?);
        walk(&root, &mut Vec::new(), &mut map)?;
        Ok(map)
    }

    /// Lines naming what changed outside `root/` since the jail was made (empty if nothing):
    /// entries of the jail directory, `out/` and its decoys, and `canary`, compared by
    /// inode, mode, size, mtime and ctime (a write, chmod or link changes ctime).
    ///
    /// # Errors
    /// A failing `lstat` or `readdir` of the jail itself.
    pub fn outside_changes(&self) -> io::Result<Vec<String>> {
        let now = self.outside_state()?;
        let mut out = Vec::new();
        for (p, a) in &self.outside {
            match now.get(p) {
                None => out.push(format!("removed `{}`", crate::model::bytes::escape(p))),
                Some(b) if a != b => {
                    out.push(format!("changed `{}`", crate::model::bytes::escape(p)))
                }
                Some(_) => {}
            }
        }
        for p in now.keys() {
            if !self.outside.contains_key(p) {
                out.push(format!("new `{}`", crate::model::bytes::escape(p)));
            }
        }
        Ok(out)
    }

    fn outside_state(&self) -> io::Result<BTreeMap<Vec<u8>, StatKey>> {
        use std::os::unix::ffi::OsStrExt;
        let mut map = BTreeMap::new();
        let mut add = |key: Vec<u8>, p: &Path| -> io::Result<()> {
            map.insert(key, stat_key(p)?);
            Ok(())
        };
        for e in std::fs::read_dir(&self.path)? {
            let e = e?;
            let name = e.file_name();
            if name.as_bytes() == b"root" {
                continue;
            }
            add(name.as_bytes().to_vec(), &e.path())?;
            if name.as_bytes() == b"out" {
                for d in std::fs::read_dir(e.path())? {
                    let d = d?;
                    let mut key = b"out/".to_vec();
                    key.extend_from_slice(d.file_name().as_bytes());
                    add(key, &d.path())?;
                }
            }
        }
        Ok(map)
    }
}

impl Drop for FuzzJail {
    fn drop(&mut self) {
        let _ = remove_tree(&self.path);
    }
}

fn stat_key(p: &Path) -> io::Result<StatKey> {
    let m = std::fs::symlink_metadata(p)?;
    Ok((
        m.ino(),
        m.mode(),
        if m.is_dir() { 0 } else { m.size() },
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    ))
}

fn walk(dir: &Path, prefix: &mut Vec<u8>, map: &mut BTreeMap<Vec<u8>, StatKey>) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let len = prefix.len();
        if len > 0 {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(e.file_name().as_bytes());
        let key = stat_key(&e.path())?;
        let is_dir = e.file_type()?.is_dir();
        map.insert(prefix.clone(), key);
        if is_dir {
            walk(&e.path(), prefix, map)?;
        }
        prefix.truncate(len);
    }
    Ok(())
}
