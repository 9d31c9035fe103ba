//! The write passes: materialise a checked [`Plan`] inside the staging directory, after
//! the validation pass ([`write`], for an archive file read by offset) or during it
//! ([`Direct`], for a stream).
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
    chmodat, fchmod, futimens, linkat, mkdirat, openat, symlinkat, unlinkat, AtFlags, Mode, OFlags,
    Timestamps,
};

use crate::beneath::open_dir;
use crate::copy::{self, Copier, Regions};
use crate::plan::{Action, Data, Payload, Plan, ReadPayload, Sink};
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
    fds: HashMap<NodeId, OwnedFd>,
}

impl DirCache<'_> {
    fn get(&mut self, tree: &Tree, dir: NodeId) -> io::Result<BorrowedFd<'_>> {
        if dir == ROOT {
            return Ok(self.stage);
        }
        if !self.fds.contains_key(&dir) {
            let fd = open_dir(self.stage, &tree.path(dir))?;
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
                    .get(tree, parent)
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
                let file = NewFile {
                    node: *node,
                    data: d.clone(),
                    mode: *mode,
                    mtime: *mtime,
                };
                write_file(&mut cache, tree, &mut copier, data, file)?;
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
                            .get(tree, tree.parent(*node))
                            .map_err(|x| err(tree, *node, "opening the parent of", x))?;
                        // Flags empty: never AT_SYMLINK_FOLLOW; the target is a regular file
                        // we created a moment ago.
                        linkat(&tfd, tree.name(t), pfd, tree.name(*node), AtFlags::empty())
                            .map_err(|x| err(tree, *node, "creating hardlink", x))?;
                    }
                    None => {
                        let file = NewFile {
                            node: *node,
                            data: d.clone(),
                            mode: *mode,
                            mtime: *mtime,
                        };
                        write_file(&mut cache, tree, &mut copier, data, file)?
                    }
                }
            }
            Action::Symlink { .. } => symlinks.push(index),
            Action::Skip => {}
        }
    }
    finish(&mut cache, plan, &symlinks)
}

/// The end of a write pass: the symlinks (action indices `symlinks`), then directory modes
/// and times, deepest first.
fn finish(cache: &mut DirCache<'_>, plan: &Plan, symlinks: &[usize]) -> Result<(), HydrateError> {
    let tree = &plan.tree;
    for &index in symlinks {
        if let Action::Symlink { node, target, .. } = &plan.actions[index] {
            let pfd = cache
                .get(tree, tree.parent(*node))
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
                None => open_dir(cache.stage, &tree.path(*node))
                    .map_err(|x| e("reopening directory", x))?,
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

/// A regular file for [`write_file`]: the node it becomes, where its bytes are in the
/// archive, its mode and its modification time (seconds).
#[derive(Clone, Debug)]
struct NewFile {
    node: NodeId,
    data: Data,
    mode: u32,
    mtime: u64,
}

/// Creates `new` (`O_EXCL`, never through a link) and copies its bytes from `data`, then
/// gives it its mode and time.
fn write_file(
    cache: &mut DirCache<'_>,
    tree: &Tree,
    copier: &mut Copier,
    data: &File,
    new: NewFile,
) -> Result<(), HydrateError> {
    let NewFile {
        node,
        data: d,
        mode,
        mtime,
    } = new;
    let e = |what, x| err(tree, node, what, x);
    let pfd = cache
        .get(tree, tree.parent(node))
        .map_err(|x| e("opening the parent of", x))?;
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = openat(pfd, tree.name(node), flags, Mode::from_raw_mode(0o600))
        .map_err(|x| e("creating file", x.into()))?;
    let mut file = File::from(fd);
    match &d.sparse {
        Some(map) => copier.copy_sparse(data, Regions::Packed(d.offset), map, &mut file),
        None if d.size > 0 => copier.copy(data, d.offset, d.size, &mut file),
        None => Ok(()),
    }
    .map_err(|x| e("writing", x))?;
    // After the data: a write by a non-owner would clear setuid/setgid anyway.
    fchmod(&file, Mode::from_raw_mode(mode)).map_err(|x| e("setting the mode of", x.into()))?;
    if let Some(t) = times(mtime) {
        futimens(&file, &t).map_err(|x| e("setting the time of", x.into()))?;
    }
    Ok(())
}

/// Bytes of the buffer a [`Direct`] writer reads payloads through.
const PAYLOAD_BUF: usize = 256 * 1024;

/// The writer of the single pass ([`crate::hydrate`] of a stream): the validation pass
/// hands it each checked member as it reads it (see [`Sink`]), so a regular file's payload
/// goes straight from the stream into its file in the staging tree, and [`Direct::finish`]
/// is left only with what needs the whole archive known: hardlinks (`Hardlinks::Link`),
/// symlinks, and directory modes and times.
///
/// Writing ahead of the verdict is safe because the staging tree is private (mode `0700`,
/// flocked, see [`crate::sibling`]), holds no symlink until [`Direct::finish`], and is
/// removed whole if the archive is refused later.
///
/// Files are created `0600` and given their mode after their data; a mode without owner
/// read (`0o400`) is applied only at the end, so that a later hardlink member can still
/// copy the file. A hardlink member is copied at once from the file its target names then
/// (a later duplicate of the target under `Duplicates::LastWins` cannot change what it
/// holds); under `Hardlinks::Link` the copy is replaced by a link at the end when the
/// target's member still stands, as the two-pass [`write`] does.
///
/// A fault of the target filesystem (`ENOSPC`, `EFBIG`, ...) does not stop the validation
/// pass: it is kept, nothing more is written, and [`Direct::finish`] returns it, so a
/// refusal later in the archive wins and the verdict stays [`crate::validate`]'s.
pub(crate) struct Direct<'a> {
    cache: DirCache<'a>,
    copier: Copier,
    buf: Vec<u8>,
    /// Files whose mode is applied at the end, with that mode.
    deferred: HashMap<NodeId, u32>,
    failed: Option<HydrateError>,
}

impl<'a> Direct<'a> {
    /// A writer into the empty staging directory `stage`.
    pub(crate) fn new(stage: BorrowedFd<'a>) -> Self {
        Direct {
            cache: DirCache {
                stage,
                fds: HashMap::new(),
            },
            copier: Copier::new(),
            buf: Vec::new(),
            deferred: HashMap::new(),
            failed: None,
        }
    }

    /// Keeps the first fault.
    fn fail(&mut self, e: HydrateError) {
        if self.failed.is_none() {
            self.failed = Some(e);
        }
    }

    /// Creates the file `node` (mode `0600`, `O_EXCL`).
    fn create(&mut self, tree: &Tree, node: NodeId) -> Result<File, HydrateError> {
        let pfd = self
            .cache
            .get(tree, tree.parent(node))
            .map_err(|x| err(tree, node, "opening the parent of", x))?;
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = openat(pfd, tree.name(node), flags, Mode::from_raw_mode(0o600))
            .map_err(|x| err(tree, node, "creating file", x))?;
        Ok(File::from(fd))
    }

    /// Gives a written file its mode (or defers it) and time.
    fn seal(
        &mut self,
        tree: &Tree,
        node: NodeId,
        file: &File,
        mode: u32,
        mtime: u64,
    ) -> Result<(), HydrateError> {
        let e = |what, x: rustix::io::Errno| err(tree, node, what, x);
        if mode & 0o400 == 0 {
            self.deferred.insert(node, mode);
        } else {
            fchmod(file, Mode::from_raw_mode(mode)).map_err(|x| e("setting the mode of", x))?;
        }
        if let Some(t) = times(mtime) {
            futimens(file, &t).map_err(|x| e("setting the time of", x))?;
        }
        Ok(())
    }

    fn copy_of(&mut self, tree: &Tree, f: &Payload, target: NodeId) -> Result<(), HydrateError> {
        let tfd = self
            .cache
            .get(tree, tree.parent(target))
            .map_err(|x| err(tree, target, "opening the parent of", x))?;
        let src = openat(
            tfd,
            tree.name(target),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|x| err(tree, target, "opening", x))?;
        let src = File::from(src);
        let len = src
            .metadata()
            .map_err(|x| err(tree, target, "inspecting", x))?
            .len();
        let mut dst = self.create(tree, f.node)?;
        let copied = match f.sparse.as_deref() {
            Some(map) => self
                .copier
                .copy_sparse(&src, Regions::InPlace, map, &mut dst),
            None if len > 0 => self.copier.copy(&src, 0, len, &mut dst),
            None => Ok(()),
        };
        copied.map_err(|x| err(tree, f.node, "writing", x))?;
        self.seal(tree, f.node, &dst, f.mode, f.mtime)
    }

    /// The end of the pass, once the whole archive was read and accepted as `plan`: links
    /// (`Hardlinks::Link`), deferred file modes, symlinks, directory modes and times.
    ///
    /// # Errors
    /// The first fault kept during the pass, or one of these steps' own.
    pub(crate) fn finish(mut self, plan: &Plan) -> Result<(), HydrateError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let tree = &plan.tree;
        let mut symlinks = Vec::new();
        for (index, action) in plan.actions.iter().enumerate() {
            match action {
                Action::Hardlink {
                    node,
                    target,
                    link: true,
                    ..
                } => {
                    let t = match &plan.actions[*target] {
                        Action::File { node, .. } | Action::Hardlink { node, .. } => *node,
                        _ => continue,
                    };
                    let tfd = open_dir(self.cache.stage, &tree.path(tree.parent(t)))
                        .map_err(|x| err(tree, t, "opening the parent of", x))?;
                    let pfd = self
                        .cache
                        .get(tree, tree.parent(*node))
                        .map_err(|x| err(tree, *node, "opening the parent of", x))?;
                    unlinkat(pfd, tree.name(*node), AtFlags::empty())
                        .map_err(|x| err(tree, *node, "replacing the copy", x))?;
                    // Never AT_SYMLINK_FOLLOW: the target is a regular file of ours.
                    linkat(&tfd, tree.name(t), pfd, tree.name(*node), AtFlags::empty())
                        .map_err(|x| err(tree, *node, "creating hardlink", x))?;
                }
                Action::Symlink { .. } => symlinks.push(index),
                _ => {}
            }
        }
        for (&node, &mode) in &self.deferred {
            let pfd = self
                .cache
                .get(tree, tree.parent(node))
                .map_err(|x| err(tree, node, "opening the parent of", x))?;
            // By name, not by opening it: after the relinking above, two names may share
            // one inode, and once the first is given a mode without owner read, opening
            // the second fails for anyone but root (a hostile review found it as uid
            // 65534). `chmodat` follows symlinks, and none exists in the staging tree
            // yet: they are made by `finish` below, last.
            chmodat(
                pfd,
                tree.name(node),
                Mode::from_raw_mode(mode),
                AtFlags::empty(),
            )
            .map_err(|x| err(tree, node, "setting the mode of", x))?;
        }
        finish(&mut self.cache, plan, &symlinks)
    }
}

impl Sink for Direct<'_> {
    fn dir(&mut self, tree: &Tree, node: NodeId) {
        if self.failed.is_some() {
            return;
        }
        let e = |what, x: io::Error| err(tree, node, what, x);
        let made = self
            .cache
            .get(tree, tree.parent(node))
            .map_err(|x| e("opening the parent of", x))
            .and_then(|pfd| {
                mkdirat(pfd, tree.name(node), Mode::from_raw_mode(STAGING_DIR_MODE))
                    .map_err(|x| e("creating directory", x.into()))?;
                openat(pfd, tree.name(node), dir_flags(), Mode::empty())
                    .map_err(|x| e("opening directory", x.into()))
            });
        match made {
            Ok(fd) => self.cache.insert(node, fd),
            Err(x) => self.fail(x),
        }
    }

    fn file(
        &mut self,
        tree: &Tree,
        f: &Payload,
        read: &mut ReadPayload<'_>,
    ) -> Result<(), HydrateError> {
        if self.failed.is_some() {
            // The reader skips the payload.
            return Ok(());
        }
        let mut file = match self.create(tree, f.node) {
            Ok(file) => file,
            Err(x) => {
                self.fail(x);
                return Ok(());
            }
        };
        if self.buf.is_empty() {
            self.buf = vec![0; PAYLOAD_BUF];
        }
        let mut buf = std::mem::take(&mut self.buf);
        let written = copy::write_payload(read, &mut buf, f.sparse.as_deref(), &mut file);
        self.buf = buf;
        match written?
            .map_err(|x| err(tree, f.node, "writing", x))
            .and_then(|()| self.seal(tree, f.node, &file, f.mode, f.mtime))
        {
            Ok(()) => {}
            Err(x) => self.fail(x),
        }
        Ok(())
    }

    fn copy(&mut self, tree: &Tree, f: &Payload, target: NodeId) {
        if self.failed.is_some() {
            return;
        }
        if let Err(x) = self.copy_of(tree, f, target) {
            self.fail(x);
        }
    }

    fn remove(&mut self, tree: &Tree, node: NodeId, dir: bool) {
        if self.failed.is_some() {
            return;
        }
        self.deferred.remove(&node);
        let flags = if dir {
            self.cache.fds.remove(&node);
            AtFlags::REMOVEDIR
        } else {
            AtFlags::empty()
        };
        let removed = self
            .cache
            .get(tree, tree.parent(node))
            .map_err(|x| err(tree, node, "opening the parent of", x))
            .and_then(|pfd| {
                unlinkat(pfd, tree.name(node), flags)
                    .map_err(|x| err(tree, node, "removing superseded", x))
            });
        if let Err(x) = removed {
            self.fail(x);
        }
    }
}
