//! Removing a tree without ever following a symlink, coping with read-only directories and
//! never crossing into another mount. The reference extractor uses it for the old workspace
//! after the swap and for a failed staging tree; the harness and the adapters use it for
//! jails and for the "clear the root, then extract" resume path.
//!
//! Every step is relative to a directory handle; symlinks are unlinked as names, never
//! entered. Directories are opened with `openat2(2)` and `RESOLVE_NO_XDEV` (Linux 5.6), so
//! the kernel itself refuses to step onto another mount: a mount point inside the tree (say
//! a bind mount a user made in the prior workspace) is never entered, even if it appears
//! while the walk runs, and removal stops with an error naming it; nothing is unmounted.
//! Where `openat2` is unavailable (`ENOSYS`) the handle from `openat(O_NOFOLLOW)` is
//! checked with `statx` (`STATX_MNT_ID`, else the device) against the directory it was
//! opened from before it is used.
//!
//! The walk is iterative: depth costs heap, not stack. At most [`OPEN_LEVELS`] directory
//! handles are open at once, fewer when opening one more fails with `EMFILE`; deeper down,
//! the handles of the upper levels are closed and reopened through `..` on the way back,
//! checked against the inode and mount remembered, so a tree deeper than the open-file
//! limit allows handles for is removed too.
//!
//! Permissions: root needs no help. For other users a directory that cannot be entered
//! (`0400`, `0600`) or written (`0555`) is `fchmod`-ed `u+rwx` through its handle when an
//! open or `unlinkat` in it answers `EACCES`; one that cannot even be opened (`0000`,
//! `0300`) is opened as `O_PATH`, made `u+rwx` through `/proc/self/fd` (which names the inode
//! opened, never a path that could be swapped for a symlink) and reopened from that handle.
//! `clear_dir` gives its directory its mode back, also when it fails.
//!
//! System calls per directory: `openat2`, the `getdents64` reads, the `unlinkat` of each
//! entry, `close`, and the final `unlinkat(AT_REMOVEDIR)`; the directory is listed again
//! only if that last call finds it refilled (`ENOTEMPTY`).

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{
    fchmod, openat, openat2, seek, statx, unlinkat, AtFlags, FileType, Mode, OFlags, ResolveFlags,
    SeekFrom, StatxFlags, CWD,
};
use rustix::io::Errno;

use crate::dirs::{entries, entries_until};

/// How many times a directory is listed and emptied before removal gives up on it (a
/// process that keeps creating entries in a tree being removed).
const ROUNDS: usize = 16;

/// Directory handles a walk keeps open at most. Where the open-file limit is lower than that
/// plus what the process already holds, an `EMFILE` closes one more upper level and the open
/// is tried again, down to one handle.
pub const OPEN_LEVELS: usize = 64;

/// Set once `openat2` has answered `ENOSYS`, so later opens go straight to the fallback.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Removes `path` and everything under it. A symlink at `path` is removed itself, never
/// followed; a missing `path` is success. A `path` whose last component is `.` or `..` is
/// refused, as `rm -r` refuses it.
///
/// # Errors
/// `InvalidInput` for a `path` ending in `.` or `..`, and for `/`; else the first failing
/// `openat2`, `getdents64`, `fchmod` or `unlinkat`, with the entry's path in the message; an error
/// naming the directory if a mount point lies inside the tree (it and everything behind it
/// are left in place), if a directory keeps refilling while it is being removed, or if an
/// upper directory was moved while a deep tree was removed.
pub fn remove_tree(path: &Path) -> io::Result<()> {
    let (parent, name) = split(path)?;
    let dir = crate::dirs::open_dir(CWD, parent)?;
    let shown = path.as_os_str().as_encoded_bytes();
    remove_named(dir.as_fd(), name, shown)
}

/// Removes the entry `name` of the directory open at `parent`, recursively if it is a
/// directory. Absent is success.
///
/// # Errors
/// As [`remove_tree`]; messages name entries relative to `parent`.
pub fn remove_tree_at(parent: BorrowedFd<'_>, name: &[u8]) -> io::Result<()> {
    remove_named(parent, name, name)
}

/// As [`remove_tree_at`] for a directory that is most likely empty (a first hydration's
/// old root, an adapter's unused scratch directory): one `rmdir` first, and the remover
/// only if that fails (a full tree, a mount point, not a directory).
///
/// # Errors
/// As [`remove_tree_at`].
pub fn remove_likely_empty_at(parent: BorrowedFd<'_>, name: &[u8]) -> io::Result<()> {
    match rustix::fs::unlinkat(parent, name, rustix::fs::AtFlags::REMOVEDIR) {
        Ok(()) => Ok(()),
        Err(_) => remove_tree_at(parent, name),
    }
}

/// Removes everything inside the directory `path`, keeping `path` itself and its mode
/// (given back also when clearing fails).
///
/// # Errors
/// As [`remove_tree`]; `InvalidInput` if `path` is not a directory (a symlink to one
/// included: it is refused, not followed, also as `link/` or `link/.`); `NotFound` if it is
/// missing.
pub fn clear_dir(path: &Path) -> io::Result<()> {
    let shown = path.as_os_str().as_encoded_bytes();
    // `link/.` or `link/` would resolve through a symlink; the last component must name
    // the directory itself.
    let (parent, name) = split(path)?;
    let not_dir = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is {what}, not a directory", path.display()),
        )
    };
    let parent = crate::dirs::open_dir(CWD, parent)?;
    // No mount to compare the directory itself with: any mount may be cleared.
    let mut walk = Walk::new(None, shown, false);
    let (fd, restore) = match walk.open(parent.as_fd(), name) {
        Ok(Opened::Dir(fd, restore)) => (fd, restore),
        Ok(Opened::Gone) => {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("`{}` does not exist", path.display()),
            ))
        }
        Ok(Opened::NotDir) => {
            let x = statx(&parent, name, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::TYPE)?;
            let is_link = FileType::from_raw_mode(u32::from(x.stx_mode)) == FileType::Symlink;
            return Err(not_dir(if is_link {
                "a symlink"
            } else {
                "something else"
            }));
        }
        Ok(Opened::Denied | Opened::TooMany) => return Err(walk.error(None, Errno::ACCESS.into())),
        Err(e) => return Err(e),
    };
    walk.restore = restore;
    // From here on every directory opened must be on the mount of the one it is opened
    // from, which is the cleared directory's.
    walk.check_mounts = true;
    // A second handle, to give the mode back whatever happens to the walk's.
    let keep = fd.try_clone()?;
    let result = entries_until(fd.as_fd(), true)
        .map_err(|e| walk.error(None, e))
        .and_then(|pending| {
            walk.stack.push(Level::new(fd, CString::default(), pending));
            walk.run()
        });
    // Put the mode back if it was widened (through the handle: never a path), also when
    // the walk failed.
    let restored = match walk.restore {
        Some(mode) => fchmod(&keep, Mode::from_raw_mode(mode)).map_err(io::Error::from),
        None => Ok(()),
    };
    result.and(restored)
}

fn remove_named(parent: BorrowedFd<'_>, name: &[u8], shown: &[u8]) -> io::Result<()> {
    let mut walk = Walk::new(Some(parent), shown, true);
    let name = cstring(name)?;
    match walk.open(parent, name.as_bytes())? {
        Opened::Gone => Ok(()),
        Opened::NotDir => walk.unlink_top(parent, &name),
        Opened::Dir(fd, _) => {
            let pending = entries_until(fd.as_fd(), true).map_err(|e| walk.error(None, e))?;
            walk.stack.push(Level::new(fd, name, pending));
            walk.run()
        }
        // Only returned below the top.
        Opened::Denied | Opened::TooMany => Err(walk.error(None, Errno::ACCESS.into())),
    }
}

/// Which mount a directory is on: the mount id (`statx` `STATX_MNT_ID`, Linux 5.8) where the
/// kernel gives one, else the device number. A bind mount of the same filesystem keeps the
/// device number, which is why the mount id is preferred (found by a test: a bind mount in
/// the prior workspace lost its source's files).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mount {
    Id(u64),
    Dev(u32, u32),
}

impl Mount {
    fn of(x: &rustix::fs::Statx) -> Mount {
        if x.stx_mask & StatxFlags::MNT_ID.bits() != 0 {
            Mount::Id(x.stx_mnt_id)
        } else {
            Mount::Dev(x.stx_dev_major, x.stx_dev_minor)
        }
    }
}

/// What opening an entry as a directory found.
enum Opened {
    Gone,
    /// Not a directory (a symlink included): unlink it as a name.
    NotDir,
    /// A directory on the tree's mount, and its original mode if it had to be widened to
    /// be opened at all.
    Dir(OwnedFd, Option<u32>),
    /// `EACCES` in a current directory not yet widened (not root, a `0600` or `0400`
    /// directory has no search permission): widen it and try again.
    Denied,
    /// Out of file descriptors (`EMFILE`, `ENFILE`): close an upper level and try again.
    TooMany,
}

/// One directory on the way down.
struct Level {
    /// Its handle; `None` while closed to save descriptors (reopened through `..`).
    fd: Option<OwnedFd>,
    /// Its inode and mount, remembered when the handle is closed.
    id: Option<(u64, Mount)>,
    /// Its name in the level above (empty for `clear_dir`'s directory).
    name: CString,
    /// Entries still to remove.
    pending: Vec<(CString, FileType)>,
    /// How many times it has been listed.
    rounds: usize,
    /// Whether it was already made `u+rwx` after an `EACCES`.
    widened: bool,
}

impl Level {
    /// Closes its handle, if open, after remembering its inode and mount for the reopening
    /// through `..`.
    fn close(&mut self) -> io::Result<()> {
        if let Some(fd) = self.fd.take() {
            self.id = Some(identity(fd.as_fd())?);
        }
        Ok(())
    }

    fn new(fd: OwnedFd, name: CString, pending: Vec<(CString, FileType)>) -> Level {
        Level {
            fd: Some(fd),
            id: None,
            name,
            pending,
            rounds: 1,
            widened: false,
        }
    }
}

/// One removal (or clearing) in progress.
struct Walk<'a> {
    /// The directory holding the tree's top; `None` when clearing (the top is kept).
    parent: Option<BorrowedFd<'a>>,
    /// How the top is named in messages.
    shown: &'a [u8],
    /// Whether an opened directory must be on the mount of the directory it is opened
    /// from (always, but for `clear_dir`'s own directory). Every handle the walk holds is
    /// on the tree's mount, so this keeps the whole walk on it.
    check_mounts: bool,
    stack: Vec<Level>,
    /// `clear_dir`: the directory's original mode, if it was widened.
    restore: Option<u32>,
}

impl<'a> Walk<'a> {
    fn new(parent: Option<BorrowedFd<'a>>, shown: &'a [u8], check_mounts: bool) -> Self {
        Walk {
            parent,
            shown,
            check_mounts,
            stack: Vec::new(),
            restore: None,
        }
    }

    /// Empties the levels on the stack, deepest first, removing each emptied level from the
    /// one above (or, for `clear_dir`, stopping at the bottom level once it lists empty).
    fn run(&mut self) -> io::Result<()> {
        while let Some(level) = self.stack.last_mut() {
            match level.pending.pop() {
                Some((child, ft)) => self.remove_child(child, ft)?,
                None => self.finish_level()?,
            }
        }
        Ok(())
    }

    fn current(&self) -> io::Result<BorrowedFd<'_>> {
        self.stack
            .last()
            .and_then(|l| l.fd.as_ref())
            .map(|fd| fd.as_fd())
            .ok_or_else(|| io::Error::other("remover: the current directory has no handle"))
    }

    fn remove_child(&mut self, child: CString, ft: FileType) -> io::Result<()> {
        if ft != FileType::Directory && ft != FileType::Unknown {
            match unlinkat(self.current()?, child.as_c_str(), AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => return Ok(()),
                // `d_type` said "not a directory" but it is one now.
                Err(Errno::ISDIR) => {}
                Err(e) => return self.retry_widened(child, ft, e),
            }
        }
        let opened = self.open(self.current()?, child.as_bytes())?;
        match opened {
            Opened::Gone => Ok(()),
            Opened::Denied => {
                let i = self.stack.len() - 1;
                self.widen(i)?;
                self.stack[i].pending.push((child, ft));
                Ok(())
            }
            Opened::TooMany => {
                if !self.close_oldest()? {
                    return Err(self.error(Some(&child), Errno::MFILE.into()));
                }
                if let Some(l) = self.stack.last_mut() {
                    l.pending.push((child, ft));
                }
                Ok(())
            }
            Opened::NotDir => match unlinkat(self.current()?, child.as_c_str(), AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => Ok(()),
                Err(e) => self.retry_widened(child, FileType::RegularFile, e),
            },
            Opened::Dir(fd, _) => {
                // A short first read is taken as the end: an entry it missed makes the
                // `rmdir` fail with `ENOTEMPTY`, and the level is then listed in full.
                let pending =
                    entries_until(fd.as_fd(), true).map_err(|e| self.error(Some(&child), e))?;
                self.push(Level::new(fd, child, pending))
            }
        }
    }

    /// After `EACCES` from an `unlinkat` in the current directory (not root, a `0555`
    /// directory): make it `u+rwx` through its handle once and try `child` again.
    fn retry_widened(&mut self, child: CString, ft: FileType, e: Errno) -> io::Result<()> {
        let i = self.stack.len() - 1;
        if e != Errno::ACCESS || self.stack[i].widened {
            return Err(self.error(Some(&child), e.into()));
        }
        self.widen(i)?;
        self.stack[i].pending.push((child, ft));
        Ok(())
    }

    /// `fchmod u+rwx` the level `i` through its (open) handle.
    fn widen(&mut self, i: usize) -> io::Result<()> {
        let fd = self.stack[i]
            .fd
            .as_ref()
            .ok_or_else(|| io::Error::other("remover: widening a closed directory"))?;
        let x = statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::MODE)?;
        let mode = u32::from(x.stx_mode) & 0o7777;
        fchmod(fd, Mode::from_raw_mode(mode | 0o700)).map_err(|e| self.error(None, e.into()))?;
        if i == 0 && self.parent.is_none() && self.restore.is_none() {
            self.restore = Some(mode);
        }
        self.stack[i].widened = true;
        Ok(())
    }

    /// Closes the handle of the uppermost level that still has one (not the current
    /// level), after remembering its inode and mount; false if there is none to close.
    fn close_oldest(&mut self) -> io::Result<bool> {
        let n = self.stack.len();
        let Some(far) = self.stack[..n.saturating_sub(1)]
            .iter_mut()
            .find(|l| l.fd.is_some())
        else {
            return Ok(false);
        };
        far.close()?;
        Ok(true)
    }

    /// Goes one level down; past [`OPEN_LEVELS`] the handle of the level that many above is
    /// closed, after remembering its inode and mount.
    fn push(&mut self, level: Level) -> io::Result<()> {
        let n = self.stack.len();
        if n >= OPEN_LEVELS {
            self.stack[n - OPEN_LEVELS].close()?;
        }
        self.stack.push(level);
        Ok(())
    }

    /// The current level is empty: remove it from the level above (reopened through `..`
    /// if its handle was closed), or list it again if it was refilled meanwhile.
    fn finish_level(&mut self) -> io::Result<()> {
        let Some(mut level) = self.stack.pop() else {
            return Ok(());
        };
        let fd = level
            .fd
            .take()
            .ok_or_else(|| io::Error::other("remover: the current directory has no handle"))?;
        let removed = match (self.stack.last_mut(), self.parent) {
            (Some(up), _) => {
                let up_id = up.id;
                if up.fd.is_none() {
                    let reopened = loop {
                        match reopen_parent(fd.as_fd(), up_id) {
                            Err(e) if out_of_fds(&e) => {
                                if !self.close_oldest()? {
                                    return Err(e);
                                }
                            }
                            other => break other?,
                        }
                    };
                    if let Some(up) = self.stack.last_mut() {
                        up.fd = Some(reopened);
                    }
                }
                match self.stack.last().and_then(|up| up.fd.as_ref()) {
                    Some(up_fd) => unlinkat(up_fd, level.name.as_c_str(), AtFlags::REMOVEDIR),
                    None => Err(Errno::BADF),
                }
            }
            (None, Some(parent)) => unlinkat(parent, level.name.as_c_str(), AtFlags::REMOVEDIR),
            // `clear_dir`'s own directory stays; it is done once a fresh listing is empty.
            (None, None) => {
                seek(&fd, SeekFrom::Start(0))?;
                let again = entries(fd.as_fd()).map_err(|e| self.error(None, e))?;
                if again.is_empty() {
                    return Ok(());
                }
                return self.relist(level, fd, Some(again));
            }
        };
        match removed {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            // Refilled behind our back: list it again from the start.
            Err(Errno::NOTEMPTY) => self.relist(level, fd, None),
            // Not root and the level above is read-only: widen it once and try again.
            Err(Errno::ACCESS) if self.stack.last().is_some_and(|up| !up.widened) => {
                let i = self.stack.len() - 1;
                self.widen(i)?;
                level.fd = Some(fd);
                self.stack.push(level);
                Ok(())
            }
            Err(e) => {
                let name = std::mem::take(&mut level.name);
                Err(self.error(Some(&name), e.into()))
            }
        }
    }

    /// Puts `level` back on the stack to be emptied again (its removal found it refilled).
    fn relist(
        &mut self,
        mut level: Level,
        fd: OwnedFd,
        listed: Option<Vec<(CString, FileType)>>,
    ) -> io::Result<()> {
        level.rounds += 1;
        if level.rounds > ROUNDS {
            let name = std::mem::take(&mut level.name);
            let child = (!name.as_bytes().is_empty()).then_some(name.as_c_str());
            return Err(io::Error::other(format!(
                "`{}` keeps refilling while being removed",
                self.shown_path(child)
            )));
        }
        level.pending = match listed {
            Some(l) => l,
            None => {
                seek(&fd, SeekFrom::Start(0))?;
                entries(fd.as_fd())?
            }
        };
        level.fd = Some(fd);
        self.stack.push(level);
        Ok(())
    }

    /// Unlinks the tree's top, which is not a directory.
    fn unlink_top(&self, parent: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
        match unlinkat(parent, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(self.error(None, e.into())),
        }
    }

    /// Opens `name` of `dir` as a directory on the tree's mount, without following a
    /// symlink; see [`Opened`].
    fn open(&self, dir: BorrowedFd<'_>, name: &[u8]) -> io::Result<Opened> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match self.open_raw(dir, name, flags) {
            Ok(fd) => Ok(Opened::Dir(fd, None)),
            Err(Errno::NOENT) => Ok(Opened::Gone),
            Err(Errno::NOTDIR | Errno::LOOP) => Ok(Opened::NotDir),
            Err(Errno::XDEV) => Err(self.mount_point(name)),
            Err(Errno::MFILE | Errno::NFILE) if !self.stack.is_empty() => Ok(Opened::TooMany),
            // Not root, and the directory we open from has no `x` for us (`0600`, `0400`):
            // it is widened first.
            Err(Errno::ACCESS) if self.stack.last().is_some_and(|l| !l.widened) => {
                Ok(Opened::Denied)
            }
            // Not root, and the directory has no `r` or no `x` for us: open it as a path,
            // widen it through that handle, and open it for reading from the same handle.
            Err(Errno::ACCESS) => {
                let path_flags =
                    OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let p = self
                    .open_raw(dir, name, path_flags)
                    .map_err(|e| self.error_named(name, e.into()))?;
                let x = statx(&p, "", AtFlags::EMPTY_PATH, StatxFlags::MODE)?;
                let mode = u32::from(x.stx_mode) & 0o7777;
                let magic = format!("/proc/self/fd/{}", p.as_raw_fd());
                rustix::fs::chmod(magic.as_str(), Mode::from_raw_mode(mode | 0o700))
                    .map_err(|e| self.error_named(name, e.into()))?;
                let fd = openat(&p, ".", flags, Mode::empty())
                    .map_err(|e| self.error_named(name, e.into()))?;
                Ok(Opened::Dir(fd, Some(mode)))
            }
            Err(e) => Err(self.error_named(name, e.into())),
        }
    }

    /// `openat2(RESOLVE_NO_XDEV)`, or where there is no `openat2`, `openat` and a check that
    /// the opened handle is on the mount of `dir`; `EXDEV` means "on another mount" either
    /// way.
    fn open_raw(&self, dir: BorrowedFd<'_>, name: &[u8], flags: OFlags) -> Result<OwnedFd, Errno> {
        if !self.check_mounts {
            return openat(dir, name, flags, Mode::empty());
        }
        if !NO_OPENAT2.load(Ordering::Relaxed) {
            match openat2(dir, name, flags, Mode::empty(), ResolveFlags::NO_XDEV) {
                Err(Errno::NOSYS) => NO_OPENAT2.store(true, Ordering::Relaxed),
                // A concurrent rename raced the lookup: try again the plain way.
                Err(Errno::AGAIN) => {}
                other => return other,
            }
        }
        let fd = openat(dir, name, flags, Mode::empty())?;
        let x = statx(&fd, "", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID)?;
        let here = statx(dir, "", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID)?;
        // Both answers come from one kernel: both carry a mount id, or neither does.
        if Mount::of(&here) == Mount::of(&x) {
            Ok(fd)
        } else {
            Err(Errno::XDEV)
        }
    }

    /// The path of the current level (and `child` in it) for messages, from the top.
    fn shown_path(&self, child: Option<&CStr>) -> String {
        let mut p = String::from_utf8_lossy(self.shown).into_owned();
        let skip = usize::from(self.parent.is_some());
        for l in self.stack.iter().skip(skip) {
            if !l.name.as_bytes().is_empty() {
                p.push('/');
                p.push_str(&String::from_utf8_lossy(l.name.as_bytes()));
            }
        }
        if let Some(c) = child {
            p.push('/');
            p.push_str(&String::from_utf8_lossy(c.to_bytes()));
        }
        p
    }

    /// `e` with the path of the current level (or `child` in it) prefixed, kind kept.
    fn error(&self, child: Option<&CStr>, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("`{}`: {e}", self.shown_path(child)))
    }

    /// As [`Walk::error`] for an entry named by bytes (the top itself when the stack is
    /// empty).
    fn error_named(&self, name: &[u8], e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("`{}`: {e}", self.shown_named(name)))
    }

    fn mount_point(&self, name: &[u8]) -> io::Error {
        io::Error::other(format!(
            "`{}` is a mount point inside the tree; not removed",
            self.shown_named(name)
        ))
    }

    /// [`Walk::shown_path`] of the entry `name` of the current level (the top itself when
    /// the stack is empty).
    fn shown_named(&self, name: &[u8]) -> String {
        match CString::new(name) {
            Ok(c) if !self.stack.is_empty() => self.shown_path(Some(&c)),
            _ => self.shown_path(None),
        }
    }
}

/// The inode and mount of the directory open at `fd`.
fn identity(fd: BorrowedFd<'_>) -> io::Result<(u64, Mount)> {
    let x = statx(
        fd,
        "",
        AtFlags::EMPTY_PATH,
        StatxFlags::INO | StatxFlags::MNT_ID,
    )?;
    Ok((x.stx_ino, Mount::of(&x)))
}

/// Opens `..` of `child` as the level above, whose handle was closed; its inode and mount
/// must be those remembered (else the tree was moved while being removed).
fn reopen_parent(child: BorrowedFd<'_>, id: Option<(u64, Mount)>) -> io::Result<OwnedFd> {
    let fd = openat(
        child,
        "..",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    if id == Some(identity(fd.as_fd())?) {
        Ok(fd)
    } else {
        Err(io::Error::other(
            "a directory was moved while the tree under it was being removed; stopped",
        ))
    }
}

/// `EMFILE` or `ENFILE`.
fn out_of_fds(e: &io::Error) -> bool {
    let code = e.raw_os_error();
    code == Some(Errno::MFILE.raw_os_error()) || code == Some(Errno::NFILE.raw_os_error())
}

fn cstring(name: &[u8]) -> io::Result<CString> {
    CString::new(name).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` holds a NUL byte", String::from_utf8_lossy(name)),
        )
    })
}

/// `path` as (parent directory, last component), trailing `/`s ignored. A last component
/// `.` or `..`, an empty path and `/` are refused.
fn split(path: &Path) -> io::Result<(&Path, &[u8])> {
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` does not name an entry to remove", path.display()),
        )
    };
    let mut raw = path.as_os_str().as_encoded_bytes();
    while let [rest @ .., b'/'] = raw {
        raw = rest;
    }
    let last = raw.rsplit(|&b| b == b'/').next().unwrap_or_default();
    if last.is_empty() || last == b"." || last == b".." {
        return Err(bad());
    }
    let name = path.file_name().ok_or_else(bad)?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok((parent, name.as_encoded_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};
    use std::path::PathBuf;

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }

    /// `remove_tree` removes `0000` and `0555` directories with children, unlinks a symlink
    /// to a directory without touching the directory behind it, and accepts a missing path.
    #[test]
    fn removes_unreadable_dirs_and_never_follows_links() {
        let t = tempfile::tempdir().expect("tempdir");
        let keep = t.path().join("keep");
        std::fs::create_dir(&keep).expect("mkdir");
        std::fs::write(keep.join("canary"), "c").expect("write");
        let root = t.path().join("root");
        std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
        std::fs::write(root.join("a/b/c"), "x").expect("write");
        symlink(&keep, root.join("a/link")).expect("symlink");
        symlink(&keep, t.path().join("top-link")).expect("symlink");
        chmod(&root.join("a/b/c"), 0o000);
        chmod(&root.join("a/b"), 0o555);
        chmod(&root.join("a"), 0o000);
        remove_tree(&t.path().join("top-link")).expect("remove a symlink");
        remove_tree(&root).expect("remove root");
        assert!(!root.exists() && !t.path().join("top-link").exists());
        assert_eq!(std::fs::read(keep.join("canary")).expect("canary"), b"c");
        remove_tree(&root).expect("a missing path is fine");
    }

    /// `clear_dir` empties a read-only directory, keeps it and its mode, and refuses a
    /// symlink and a file.
    #[test]
    fn clear_dir_keeps_the_directory_and_refuses_links() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path().join("root");
        std::fs::create_dir_all(root.join("d/e")).expect("mkdir");
        std::fs::write(root.join("f"), "x").expect("write");
        chmod(&root, 0o555);
        clear_dir(&root).expect("clear");
        let mode = std::fs::metadata(&root).expect("stat").permissions().mode() & 0o7777;
        assert_eq!(mode, 0o555);
        assert_eq!(std::fs::read_dir(&root).expect("read").count(), 0);
        let link = t.path().join("link");
        symlink(&root, &link).expect("symlink");
        std::fs::write(root.join("kept"), "k").expect("write");
        for via in [link.clone(), link.join("."), t.path().join("link/")] {
            let e = clear_dir(&via).expect_err("a symlink is refused");
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{}", via.display());
        }
        assert!(
            root.join("kept").exists(),
            "nothing behind the link was removed"
        );
        std::fs::remove_file(root.join("kept")).expect("rm");
        assert_eq!(
            clear_dir(&root.join("nope")).expect_err("missing").kind(),
            io::ErrorKind::NotFound
        );
        std::fs::write(t.path().join("file"), "x").expect("write");
        let e = clear_dir(&t.path().join("file")).expect_err("a file is refused");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    /// A directory larger than one `getdents64` buffer is emptied in one pass.
    #[test]
    fn removes_directories_larger_than_one_read() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path().join("root");
        std::fs::create_dir(&root).expect("mkdir");
        for i in 0..600 {
            std::fs::write(root.join(format!("a-rather-long-file-name-{i:04}")), "")
                .expect("write");
        }
        remove_tree(&root).expect("remove");
        assert!(!root.exists());
    }

    /// A chain of `depth` directories `d` under `top`, each made relative to the one above
    /// (the whole path is far longer than `PATH_MAX`), with a file at the bottom.
    fn deep_chain(top: &Path, depth: usize) {
        let mut fd = crate::dirs::open_dir(CWD, top).expect("open top");
        for _ in 0..depth {
            rustix::fs::mkdirat(&fd, "d", Mode::from_raw_mode(0o755)).expect("mkdirat");
            fd = crate::dirs::open_dir(&fd, "d").expect("open level");
        }
        let f = openat(
            &fd,
            "bottom",
            OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .expect("create bottom");
        drop(f);
    }

    /// Depth costs neither stack nor descriptors: a chain 10,000 directories deep (the
    /// recursive remover overflowed its stack at 8,000) is removed, and cleared.
    #[test]
    fn removes_trees_deeper_than_any_stack() {
        let t = tempfile::tempdir().expect("tempdir");
        clear_then_remove_a_chain(&t.path().join("root"), 10_000);
    }

    /// Under a new directory `root`: a chain `depth` deep is cleared (`root` stays, empty),
    /// then a new chain is removed with `root`.
    fn clear_then_remove_a_chain(root: &Path, depth: usize) {
        std::fs::create_dir(root).expect("mkdir");
        deep_chain(root, depth);
        clear_dir(root).expect("clear a deep tree");
        assert_eq!(std::fs::read_dir(root).expect("list").count(), 0);
        deep_chain(root, depth);
        remove_tree(root).expect("remove a deep tree");
        assert!(!root.exists());
    }

    /// Run by [`deep_trees_need_few_descriptors`] in a child process: with at most 24 open
    /// files (fewer than `OPEN_LEVELS`, so `EMFILE` makes the walk close more levels), a
    /// chain 3,000 deep (the recursive remover needed one descriptor per level) is removed
    /// and cleared.
    #[test]
    #[ignore = "run by deep_trees_need_few_descriptors in a child with a low RLIMIT_NOFILE"]
    fn inner_deep_tree_under_a_low_open_file_limit() {
        let t = tempfile::tempdir().expect("tempdir");
        let limit = 24;
        let old = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        rustix::process::setrlimit(
            rustix::process::Resource::Nofile,
            rustix::process::Rlimit {
                current: Some(limit),
                maximum: old.maximum,
            },
        )
        .expect("lower RLIMIT_NOFILE");
        clear_then_remove_a_chain(&t.path().join("root"), 3_000);
    }

    #[test]
    fn deep_trees_need_few_descriptors() {
        let exe = std::env::current_exe().expect("test binary");
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "remove::tests::inner_deep_tree_under_a_low_open_file_limit",
                "--ignored",
                "--test-threads",
                "1",
            ])
            .output()
            .expect("run the inner test");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("1 passed"),
            "inner test: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// As a user without root's `CAP_DAC_OVERRIDE` (the test drops its own thread to
    /// `nobody` when it runs as root): `0000`, `0300` and `0555` directories with children
    /// are removed; `clear_dir` empties `0555` and `0000` directories and gives each its
    /// mode back; a symlinked directory's mode is never touched.
    #[test]
    fn removes_protected_dirs_without_root() {
        let t = tempfile::tempdir().expect("tempdir");
        let base = t.path().to_path_buf();
        let root_user = rustix::process::geteuid().is_root();
        // As root, also a directory the unprivileged user may enter but not change, inside
        // one it owns: clearing the outer one then fails, and must give its mode back.
        let stuck = base.join("stuck");
        if root_user {
            let nobody = Some(rustix::process::Uid::from_raw(65534));
            let nogroup = Some(rustix::process::Gid::from_raw(65534));
            std::fs::create_dir_all(stuck.join("roots")).expect("mkdir");
            std::fs::write(stuck.join("roots/f"), "x").expect("write");
            rustix::fs::chown(&stuck, nobody, nogroup).expect("chown");
            rustix::fs::chown(&base, nobody, nogroup).expect("chown the temp dir");
        }
        let worker = std::thread::spawn(move || {
            if root_user {
                let gid = rustix::process::Gid::from_raw(65534);
                let uid = rustix::process::Uid::from_raw(65534);
                rustix::thread::set_thread_groups(&[]).expect("drop groups");
                rustix::thread::set_thread_res_gid(gid, gid, gid).expect("setresgid");
                rustix::thread::set_thread_res_uid(uid, uid, uid).expect("setresuid");
            }
            let keep = base.join("keep");
            std::fs::create_dir(&keep).expect("mkdir keep");
            chmod(&keep, 0o751);
            let root = base.join("root");
            // Every mode without full owner rights, each with a file, a link and a
            // subdirectory (a directory without `x`, 0400 or 0600, cannot even be entered).
            let modes = [0o000, 0o100, 0o200, 0o300, 0o400, 0o500, 0o555, 0o600];
            for mode in modes {
                let dir = root.join(format!("m{mode:o}"));
                std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
                std::fs::write(dir.join("f"), "x").expect("write");
                std::fs::write(dir.join("sub/g"), "y").expect("write");
                symlink(&keep, dir.join("link")).expect("symlink");
            }
            for mode in modes {
                chmod(&root.join(format!("m{mode:o}/sub")), mode);
                chmod(&root.join(format!("m{mode:o}")), mode);
            }
            remove_tree(&root).expect("remove protected dirs");
            assert!(!root.exists());
            for mode in [0o555, 0o000, 0o400, 0o600] {
                std::fs::create_dir_all(root.join("sub")).expect("mkdir");
                std::fs::write(root.join("sub/f"), "x").expect("write");
                symlink(&keep, root.join("link")).expect("symlink");
                chmod(&root.join("sub"), 0o500);
                chmod(&root, mode);
                clear_dir(&root).expect("clear a protected dir");
                let got = std::fs::symlink_metadata(&root)
                    .expect("stat")
                    .permissions()
                    .mode();
                assert_eq!(got & 0o7777, mode, "clear_dir gives the mode back");
                chmod(&root, 0o700);
                assert_eq!(std::fs::read_dir(&root).expect("list").count(), 0);
                std::fs::remove_dir(&root).expect("rmdir");
            }
            if root_user {
                // 0400: entering `roots` needs `stuck` widened first.
                chmod(&stuck, 0o400);
                clear_dir(&stuck).expect_err("a root-owned directory inside cannot be emptied");
                let got = std::fs::symlink_metadata(&stuck)
                    .expect("stat")
                    .permissions();
                assert_eq!(
                    got.mode() & 0o7777,
                    0o400,
                    "a failed clear_dir gives it back"
                );
            }
            let got = std::fs::metadata(&keep)
                .expect("stat keep")
                .permissions()
                .mode();
            assert_eq!(got & 0o7777, 0o751, "a link's target keeps its mode");
        });
        worker.join().expect("the unprivileged thread's checks");
    }

    /// `remove_tree` refuses a path ending in `.` or `..` (as `rm -r` does) and accepts a
    /// trailing `/`.
    #[test]
    fn dot_names_are_refused() {
        let t = tempfile::tempdir().expect("tempdir");
        let dir = t.path().join("dir");
        std::fs::create_dir(&dir).expect("mkdir");
        for bad in [dir.join("."), dir.join(".."), PathBuf::from("/")] {
            let e = remove_tree(&bad).expect_err("refused");
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{}", bad.display());
        }
        assert!(dir.exists());
        remove_tree(&t.path().join("dir/")).expect("a trailing slash is fine");
        assert!(!dir.exists());
    }

    /// Errors name the entry by its path from the top, not only its last component.
    #[test]
    fn errors_name_the_whole_path() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path().join("root");
        std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
        let walk = Walk {
            parent: None,
            shown: b"top",
            check_mounts: false,
            stack: vec![],
            restore: None,
        };
        let mut walk = walk;
        for name in ["", "a", "b"] {
            let fd = crate::dirs::open_dir(CWD, &root).expect("open");
            walk.stack
                .push(Level::new(fd, CString::new(name).expect("name"), vec![]));
        }
        let e = walk.mount_point(b"m");
        assert!(
            e.to_string().contains("`top/a/b/m` is a mount point"),
            "{e}"
        );
    }

    /// Unmounts (lazily) what a test bind-mounted, when dropped.
    struct Bind(PathBuf);

    impl Drop for Bind {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(&self.0)
                .status();
        }
    }

    /// A bind mount deep in the tree is never entered, with `openat2(RESOLVE_NO_XDEV)` and
    /// with the fallback's check of each opened handle: the error names the mount point by
    /// its whole path, and the mount source keeps its files. Needs root (skipped, saying
    /// so, where `mount --bind` is refused).
    #[test]
    fn mount_points_are_never_entered_with_or_without_openat2() {
        for fallback in [false, true] {
            let t = tempfile::tempdir().expect("tempdir");
            let src = t.path().join("src");
            std::fs::create_dir(&src).expect("mkdir");
            std::fs::write(src.join("precious"), "keep").expect("write");
            let root = t.path().join("root");
            let m = root.join("a/b/m");
            std::fs::create_dir_all(&m).expect("mkdir");
            let ok = std::process::Command::new("mount")
                .arg("--bind")
                .arg(&src)
                .arg(&m)
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                eprintln!("skipping: cannot bind-mount here (needs root)");
                return;
            }
            let _guard = Bind(m.clone());
            // Other tests of this binary may take the fallback meanwhile; it is as strict.
            NO_OPENAT2.store(fallback, Ordering::Relaxed);
            let e = remove_tree(&root).expect_err("a mount point stops removal");
            NO_OPENAT2.store(false, Ordering::Relaxed);
            let shown = format!("`{}/a/b/m` is a mount point", root.display());
            assert!(e.to_string().contains(&shown), "fallback {fallback}: {e}");
            assert_eq!(std::fs::read(src.join("precious")).expect("kept"), b"keep");
            let e = clear_dir(&root.join("a")).expect_err("clearing stops there too");
            assert!(e.to_string().contains("/a/b/m` is a mount point"), "{e}");
            assert_eq!(std::fs::read(src.join("precious")).expect("kept"), b"keep");
        }
    }
}
