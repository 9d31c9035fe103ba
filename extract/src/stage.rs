//! The write pass: materialise a checked [`Plan`] inside the staging directory.
//!
//! Order matters and is the point of this file:
//! 1. directories, regular files and hardlinks in archive order; every file is created with
//!    `O_CREAT | O_EXCL | O_NOFOLLOW` relative to a handle on its parent directory, so an
//!    existing name (a link planted by anyone) is never written through (H10);
//! 2. symlinks, last, so no later write can meet one (H9, H11);
//! 3. directory modes and times, deepest first, after everything inside them exists (H7: a
//!    `0555` directory with children; applying it first fails with `EACCES` for non-root).
//!
//! Directory handles are cached: the staging tree is private to this call (mode `0700`
//! until step 3, created by us), so a handle obtained once stays valid for the whole pass.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{
    fchmod, futimens, linkat, mkdirat, openat, symlinkat, AtFlags, Mode, OFlags, Timestamps,
};

use crate::beneath::open_dir;
use crate::copy::Copier;
use crate::plan::{Action, Data, Plan};
use crate::tree::{NodeId, Tree, ROOT};
use crate::HydrateError;

/// Directory handles kept open at once; past this the cache is emptied (archives are mostly
/// grouped by directory, so a small cache hits almost always).
const CACHE_FDS: usize = 64;

/// Mode of directories while the pass runs: private to us.
const STAGING_DIR_MODE: u32 = 0o700;

/// Handles on staging directories by tree node.
struct DirCache<'a> {
    stage: BorrowedFd<'a>,
    tree: &'a Tree,
    fds: HashMap<NodeId, OwnedFd>,
}

impl DirCache<'_> {
    fn get(&mut self, dir: NodeId) -> io::Result<BorrowedFd<'_>> {
        if dir == ROOT {
            return Ok(self.stage);
        }
        if !self.fds.contains_key(&dir) {
            let fd = open_dir(self.stage, &self.tree.path(dir))?;
            self.insert(dir, fd);
        }
        match self.fds.get(&dir) {
            Some(fd) => Ok(fd.as_fd()),
            None => Err(io::Error::other("directory handle cache lost an entry")),
        }
    }

    fn insert(&mut self, dir: NodeId, fd: OwnedFd) {
        if self.fds.len() >= CACHE_FDS {
            self.fds.clear();
        }
        self.fds.insert(dir, fd);
    }
}

fn err(tree: &Tree, node: NodeId, what: &str, e: impl Into<io::Error>) -> HydrateError {
    HydrateError::Io {
        context: format!(
            "{what} `{}` in the staging directory",
            String::from_utf8_lossy(&tree.path(node))
        ),
        source: e.into(),
    }
}

/// Access and modification times both `mtime` (seconds), or `None` if that does not fit
/// a `time_t`.
pub(crate) fn times(mtime: u64) -> Option<Timestamps> {
    let secs = i64::try_from(mtime).ok()?;
    let t = rustix::fs::Timespec {
        tv_sec: secs,
        tv_nsec: 0,
    };
    Some(Timestamps {
        last_access: t,
        last_modification: t,
    })
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Writes every action of `plan` below `stage`, reading payloads from `data`.
pub(crate) fn write(stage: BorrowedFd<'_>, plan: &Plan, data: &File) -> Result<(), HydrateError> {
    let tree = &plan.tree;
    let mut cache = DirCache {
        stage,
        tree,
        fds: HashMap::new(),
    };
    let mut copier = Copier::new();
    let mut symlinks = Vec::new();
    for (index, action) in plan.actions.iter().enumerate() {
        match action {
            Action::Dir { node, .. } => {
                let (parent, name) = (tree.parent(*node), tree.name(*node));
                let e = |what, e| err(tree, *node, what, e);
                let pfd = cache
                    .get(parent)
                    .map_err(|x| e("opening the parent of", x))?;
                mkdirat(pfd, name, Mode::from_raw_mode(STAGING_DIR_MODE))
                    .map_err(|x| e("creating directory", x.into()))?;
                let fd = openat(pfd, name, dir_flags(), Mode::empty())
                    .map_err(|x| e("opening directory", x.into()))?;
                cache.insert(*node, fd);
            }
            Action::File {
                node,
                data: d,
                mode,
                mtime,
            } => {
                write_file(&mut cache, &mut copier, data, *node, *d, *mode, *mtime)?;
            }
            Action::Hardlink {
                node,
                target,
                data: d,
                mode,
                mtime,
                link,
            } => {
                let target_node = match &plan.actions[*target] {
                    Action::File { node, .. } | Action::Hardlink { node, .. } if *link => {
                        Some(*node)
                    }
                    _ => None,
                };
                match target_node {
                    Some(t) => {
                        let tfd = open_dir(stage, &tree.path(tree.parent(t)))
                            .map_err(|x| err(tree, t, "opening the parent of", x))?;
                        let pfd = cache
                            .get(tree.parent(*node))
                            .map_err(|x| err(tree, *node, "opening the parent of", x))?;
                        // Flags empty: never AT_SYMLINK_FOLLOW; the target is a regular file
                        // we created a moment ago.
                        linkat(&tfd, tree.name(t), pfd, tree.name(*node), AtFlags::empty())
                            .map_err(|x| err(tree, *node, "creating hardlink", x))?;
                    }
                    None => write_file(&mut cache, &mut copier, data, *node, *d, *mode, *mtime)?,
                }
            }
            Action::Symlink { .. } => symlinks.push(index),
            Action::Skip => {}
        }
    }
    for index in symlinks {
        if let Action::Symlink { node, target, .. } = &plan.actions[index] {
            let pfd = cache
                .get(tree.parent(*node))
                .map_err(|x| err(tree, *node, "opening the parent of", x))?;
            symlinkat(target.as_slice(), pfd, tree.name(*node))
                .map_err(|x| err(tree, *node, "creating symlink", x))?;
        }
    }
    // Deepest first. A handle still cached from the write pass is the same directory (the
    // staging tree is ours alone), so only evicted ones are opened again.
    for action in plan.actions.iter().rev() {
        if let Action::Dir { node, mode, mtime } = action {
            let e = |what, x| err(tree, *node, what, x);
            let fd = match cache.fds.remove(node) {
                Some(fd) => fd,
                None => {
                    open_dir(stage, &tree.path(*node)).map_err(|x| e("reopening directory", x))?
                }
            };
            fchmod(&fd, Mode::from_raw_mode(*mode))
                .map_err(|x| e("setting the mode of", x.into()))?;
            if let Some(t) = mtime.and_then(times) {
                futimens(&fd, &t).map_err(|x| e("setting the time of", x.into()))?;
            }
        }
    }
    Ok(())
}

fn write_file(
    cache: &mut DirCache<'_>,
    copier: &mut Copier,
    data: &File,
    node: NodeId,
    d: Data,
    mode: u32,
    mtime: u64,
) -> Result<(), HydrateError> {
    let tree = cache.tree;
    let e = |what, x| err(tree, node, what, x);
    let pfd = cache
        .get(tree.parent(node))
        .map_err(|x| e("opening the parent of", x))?;
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = openat(pfd, tree.name(node), flags, Mode::from_raw_mode(0o600))
        .map_err(|x| e("creating file", x.into()))?;
    let mut file = File::from(fd);
    if d.size > 0 {
        copier
            .copy(data, d.offset, d.size, &mut file)
            .map_err(|x| e("writing", x))?;
    }
    // After the data: a write by a non-owner would clear setuid/setgid anyway.
    fchmod(&file, Mode::from_raw_mode(mode)).map_err(|x| e("setting the mode of", x.into()))?;
    if let Some(t) = times(mtime) {
        futimens(&file, &t).map_err(|x| e("setting the time of", x.into()))?;
    }
    Ok(())
}
