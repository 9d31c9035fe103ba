//! The levels of a walk, and how few descriptors they hold.
//!
//! The walk is iterative: depth costs heap, not stack. At most [`OPEN_LEVELS`] directory
//! handles are open at once, fewer when opening one more fails with `EMFILE`; deeper down,
//! the handles of the upper levels are closed and reopened through `..` on the way back,
//! checked against the inode and mount remembered, so a tree deeper than the open-file
//! limit allows handles for is removed too.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{openat, statx, AtFlags, FileType, Mode, OFlags, StatxFlags};
use rustix::io::Errno;

use super::open::Mount;
use super::walk::Walk;

/// Directory handles a walk keeps open at most. Where the open-file limit is lower than that
/// plus what the process already holds, an `EMFILE` closes one more upper level and the open
/// is tried again, down to one handle.
pub const OPEN_LEVELS: usize = 64;

/// One directory on the way down.
pub(super) struct Level {
    /// Its handle; `None` while closed to save descriptors (reopened through `..`).
    pub(super) fd: Option<OwnedFd>,
    /// Its inode and mount, remembered when the handle is closed.
    pub(super) id: Option<(u64, Mount)>,
    /// Its name in the level above (empty for `clear_dir`'s directory).
    pub(super) name: CString,
    /// Entries still to remove.
    pub(super) pending: Vec<(CString, FileType)>,
    /// How many times it has been listed.
    pub(super) rounds: usize,
    /// Whether it was already made `u+rwx` after an `EACCES`.
    pub(super) widened: bool,
}

impl Level {
    /// Closes its handle, if open, after remembering its inode and mount for the reopening
    /// through `..`.
    pub(super) fn close(&mut self) -> io::Result<()> {
        if let Some(fd) = self.fd.take() {
            self.id = Some(identity(fd.as_fd())?);
        }
        Ok(())
    }

    pub(super) fn new(fd: OwnedFd, name: CString, pending: Vec<(CString, FileType)>) -> Level {
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

impl Walk<'_> {
    /// Closes the handle of the uppermost level that still has one (not the current
    /// level), after remembering its inode and mount; false if there is none to close.
    pub(super) fn close_oldest(&mut self) -> io::Result<bool> {
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
    pub(super) fn push(&mut self, level: Level) -> io::Result<()> {
        let n = self.stack.len();
        if n >= OPEN_LEVELS {
            self.stack[n - OPEN_LEVELS].close()?;
        }
        self.stack.push(level);
        Ok(())
    }
}

/// The inode and mount of the directory open at `fd`.
pub(super) fn identity(fd: BorrowedFd<'_>) -> io::Result<(u64, Mount)> {
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
pub(super) fn reopen_parent(
    child: BorrowedFd<'_>,
    id: Option<(u64, Mount)>,
) -> io::Result<OwnedFd> {
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
pub(super) fn out_of_fds(e: &io::Error) -> bool {
    let code = e.raw_os_error();
    code == Some(Errno::MFILE.raw_os_error()) || code == Some(Errno::NFILE.raw_os_error())
}
