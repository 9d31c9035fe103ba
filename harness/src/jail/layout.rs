//! The jail: a scratch directory holding every root, the archive and the canaries of one case.
//!
//! Layout (all inside one `snapconf-jail-<pid>-*` temporary directory; see
//! [`super::leftovers`] for the naming and the sweep of a killed process's jails):
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

use super::memo::{nanosecond_times, Memo};
use crate::model::spec::Placeholders;
use crate::workspace::materialise::remove_tree;
use rustix::fs::{unlinkat, AtFlags, FileType, Mode, CWD};
use snapconf_extract::dirs::{entries_until, fills_reads, open_dir};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One jail; removed (with read-only and `0000` directories inside) when dropped.
pub struct Jail {
    dir: Option<tempfile::TempDir>,
    pub(super) path: PathBuf,
    counter: u32,
    pub(super) memo: Mutex<Memo>,
    /// The `base` it was created under, so a [`JailPool`](super::JailPool) only hands it out
    /// for the same one.
    pub(super) base: Option<PathBuf>,
    /// The jail's filesystem [`fills_reads`] (asked once, when the jail is made).
    pub(super) fills: bool,
    /// The jail is on tmpfs or ramfs, where snapshots may keep what they read (see [`Memo`]).
    pub(super) keeps: bool,
    /// This process's lock in the base, held while the jail exists (dropped after the
    /// jail's removal: fields drop after [`Drop::drop`]).
    _lease: super::leftovers::BaseLease,
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
    /// Create a jail `snapconf-jail-<pid>-<random>` under `base` (the system temp dir when
    /// `None`), with `src/`, `out/` holding decoys and a `canary` file, each with content
    /// unique to this jail. The first jail of this process in a base sweeps what dead
    /// processes left there ([`super::leftovers`]).
    ///
    /// # Errors
    /// Any failure to create the directory or what goes in it.
    pub fn new(base: Option<&Path>) -> std::io::Result<Jail> {
        let in_base = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let lease = super::leftovers::BaseLease::take(&in_base);
        let dir = tempfile::Builder::new()
            .prefix(&super::leftovers::dir_prefix("jail"))
            .tempdir_in(&in_base)?;
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
            _lease: lease,
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
        memo.widened.retain(|k, _| fixed(k));
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

    /// The name of `root` relative to the jail, for
    /// [`Snapshot::changes`](super::Snapshot::changes).
    pub fn rel(&self, root: &Path) -> Vec<u8> {
        root.strip_prefix(&self.path)
            .map(|p| p.as_os_str().as_bytes().to_vec())
            .unwrap_or_default()
    }
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
}
