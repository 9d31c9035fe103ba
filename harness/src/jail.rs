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

use crate::bytes::RelPath;
use crate::materialise::remove_tree;
use crate::observe::observe;
use crate::spec::Placeholders;
use crate::tree::Tree;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// One jail; removed (with read-only and `0000` directories inside) when dropped.
pub struct Jail {
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
    counter: u32,
}

/// The decoy files placed in `out/`: names a generated `{out}/...` link may point at.
pub const DECOYS: [&str; 3] = ["target", "x", "decoy"];

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
            std::fs::write(path.join("out").join(d), content)?;
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

    /// Everything in the jail except `root` (and the archive and scratch dirs, which
    /// adapters may write): the state `containment` compares.
    pub fn outside(&self, root: &Path) -> std::io::Result<Tree> {
        let mut tree = observe(&self.path)?;
        let skip: Vec<RelPath> = std::fs::read_dir(&self.path)?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p == root
                    || p.file_name().is_some_and(|n| {
                        let n = n.as_bytes();
                        n == b"archive.tar" || n.starts_with(b"scratch-")
                    })
            })
            .filter_map(|p| RelPath::new(p.file_name().map(|n| n.as_bytes().to_vec()).unwrap_or_default()).ok())
            .collect();
        tree.nodes.retain(|path, _| !skip.iter().any(|s| path.starts_with(s)));
        tree.shared_inodes
            .retain(|g| g.iter().all(|path| !skip.iter().any(|s| path.starts_with(s))));
        Ok(tree)
    }
}

impl Drop for Jail {
    fn drop(&mut self) {
        // remove_tree copes with 0000 directories a case may leave; TempDir's own removal
        // then finds nothing left.
        let _ = remove_tree(&self.path);
        if let Some(d) = self.dir.take() {
            let _ = d.close();
        }
    }
}
