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
use crate::name::MemberPath;
use crate::plan::{Action, Data, Plan};
use crate::HydrateError;

/// Directory handles kept open at once; past this the cache is emptied (archives are mostly
/// grouped by directory, so a small cache hits almost always).
const CACHE_FDS: usize = 64;

/// Mode of directories while the pass runs: private to us.
const STAGING_DIR_MODE: u32 = 0o700;

struct DirCache<'a> {
    stage: BorrowedFd<'a>,
    fds: HashMap<Vec<u8>, OwnedFd>,
}

impl<'a> DirCache<'a> {
    fn get(&mut self, path: &[u8]) -> io::Result<BorrowedFd<'_>> {
        if path.is_empty() {
            return Ok(self.stage);
        }
        if !self.fds.contains_key(path) {
            let fd = open_dir(self.stage, path)?;
            self.insert(path, fd);
        }
        match self.fds.get(path) {
            Some(fd) => Ok(fd.as_fd()),
            None => Err(io::Error::other("directory handle cache lost an entry")),
        }
    }

    fn insert(&mut self, path: &[u8], fd: OwnedFd) {
        if self.fds.len() >= CACHE_FDS {
            self.fds.clear();
        }
        self.fds.insert(path.to_vec(), fd);
    }
}

fn err(path: &MemberPath, what: &str, e: impl Into<io::Error>) -> HydrateError {
    HydrateError::Io {
        context: format!(
            "{what} `{}` in the staging directory",
            String::from_utf8_lossy(&path.0)
        ),
        source: e.into(),
    }
}

fn times(mtime: u64) -> Option<Timestamps> {
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

/// Writes every action of `plan` below `stage`, reading payloads from `data`.
pub(crate) fn write(stage: BorrowedFd<'_>, plan: &Plan, data: &File) -> Result<(), HydrateError> {
    let mut cache = DirCache {
        stage,
        fds: HashMap::new(),
    };
    let mut copier = Copier::new();
    let mut symlinks = Vec::new();
    for (index, action) in plan.actions.iter().enumerate() {
        match action {
            Action::Dir { path, .. } => {
                let (parent, name) = path.split_last();
                let pfd = cache
                    .get(parent)
                    .map_err(|e| err(path, "opening the parent of", e))?;
                mkdirat(pfd, name, Mode::from_raw_mode(STAGING_DIR_MODE))
                    .map_err(|e| err(path, "creating directory", e))?;
                let fd = openat(
                    pfd,
                    name,
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(|e| err(path, "opening directory", e))?;
                cache.insert(&path.0, fd);
            }
            Action::File {
                path,
                data: d,
                mode,
                mtime,
            } => {
                write_file(&mut cache, &mut copier, data, path, *d, *mode, *mtime)?;
            }
            Action::Hardlink {
                path,
                target,
                data: d,
                mode,
                mtime,
                link,
            } => {
                let target_path = match &plan.actions[*target] {
                    Action::File { path, .. } | Action::Hardlink { path, .. } if *link => {
                        Some(path)
                    }
                    _ => None,
                };
                match target_path {
                    Some(tpath) => {
                        let (tparent, tname) = tpath.split_last();
                        let tfd = open_dir(stage, tparent)
                            .map_err(|e| err(tpath, "opening the parent of", e))?;
                        let (parent, name) = path.split_last();
                        let pfd = cache
                            .get(parent)
                            .map_err(|e| err(path, "opening the parent of", e))?;
                        // Flags empty: never AT_SYMLINK_FOLLOW; the target is a regular file
                        // we created a moment ago.
                        linkat(&tfd, tname, pfd, name, AtFlags::empty())
                            .map_err(|e| err(path, "creating hardlink", e))?;
                    }
                    None => write_file(&mut cache, &mut copier, data, path, *d, *mode, *mtime)?,
                }
            }
            Action::Symlink { .. } => symlinks.push(index),
            Action::Skip => {}
        }
    }
    for index in symlinks {
        if let Action::Symlink { path, target } = &plan.actions[index] {
            let (parent, name) = path.split_last();
            let pfd = cache
                .get(parent)
                .map_err(|e| err(path, "opening the parent of", e))?;
            symlinkat(target.as_slice(), pfd, name)
                .map_err(|e| err(path, "creating symlink", e))?;
        }
    }
    drop(cache);
    for action in plan.actions.iter().rev() {
        if let Action::Dir { path, mode, mtime } = action {
            let fd = open_dir(stage, &path.0).map_err(|e| err(path, "reopening directory", e))?;
            fchmod(&fd, Mode::from_raw_mode(*mode))
                .map_err(|e| err(path, "setting the mode of", e))?;
            if let Some(t) = mtime.and_then(times) {
                futimens(&fd, &t).map_err(|e| err(path, "setting the time of", e))?;
            }
        }
    }
    Ok(())
}

fn write_file(
    cache: &mut DirCache<'_>,
    copier: &mut Copier,
    data: &File,
    path: &MemberPath,
    d: Data,
    mode: u32,
    mtime: u64,
) -> Result<(), HydrateError> {
    let (parent, name) = path.split_last();
    let pfd = cache
        .get(parent)
        .map_err(|e| err(path, "opening the parent of", e))?;
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = openat(pfd, name, flags, Mode::from_raw_mode(0o600))
        .map_err(|e| err(path, "creating file", e))?;
    let mut file = File::from(fd);
    if d.size > 0 {
        copier
            .copy(data, d.offset, d.size, &mut file)
            .map_err(|e| err(path, "writing", e))?;
    }
    // After the data: a write by a non-owner would clear setuid/setgid anyway.
    fchmod(&file, Mode::from_raw_mode(mode)).map_err(|e| err(path, "setting the mode of", e))?;
    if let Some(t) = times(mtime) {
        futimens(&file, &t).map_err(|e| err(path, "setting the time of", e))?;
    }
    Ok(())
}
