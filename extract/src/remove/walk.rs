//! The walk: the levels of one removal (or clearing) on a stack, emptied deepest first.
//!
//! System calls per directory: `openat2`, the `getdents64` reads, the `unlinkat` of each
//! entry, `close`, and the final `unlinkat(AT_REMOVEDIR)`; the directory is listed again
//! only if that last call finds it refilled (`ENOTEMPTY`).

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{seek, unlinkat, AtFlags, FileType, SeekFrom};
use rustix::io::Errno;

use super::level::{out_of_fds, reopen_parent, Level};
use super::open::Opened;
use crate::dirs::{entries, entries_until};

/// How many times a directory is listed and emptied before removal gives up on it (a
/// process that keeps creating entries in a tree being removed).
const ROUNDS: usize = 16;

/// One removal (or clearing) in progress.
pub(super) struct Walk<'a> {
    /// The directory holding the tree's top; `None` when clearing (the top is kept).
    pub(super) parent: Option<BorrowedFd<'a>>,
    /// How the top is named in messages.
    pub(super) shown: &'a [u8],
    /// Whether an opened directory must be on the mount of the directory it is opened
    /// from (always, but for `clear_dir`'s own directory). Every handle the walk holds is
    /// on the tree's mount, so this keeps the whole walk on it.
    pub(super) check_mounts: bool,
    pub(super) stack: Vec<Level>,
    /// `clear_dir`: the directory's original mode, if it was widened.
    pub(super) restore: Option<u32>,
}

impl<'a> Walk<'a> {
    pub(super) fn new(parent: Option<BorrowedFd<'a>>, shown: &'a [u8], check_mounts: bool) -> Self {
        Walk {
            parent,
            shown,
            check_mounts,
            stack: Vec::new(),
            restore: None,
        }
    }
}

impl Walk<'_> {
    /// Empties the levels on the stack, deepest first, removing each emptied level from the
    /// one above (or, for `clear_dir`, stopping at the bottom level once it lists empty).
    pub(super) fn run(&mut self) -> io::Result<()> {
        while let Some(level) = self.stack.last_mut() {
            match level.pending.pop() {
                Some((child, ft)) => self.remove_child(child, ft)?,
                None => self.finish_level()?,
            }
        }
        Ok(())
    }

    pub(super) fn current(&self) -> io::Result<BorrowedFd<'_>> {
        self.stack
            .last()
            .and_then(|l| l.fd.as_ref())
            .map(|fd| fd.as_fd())
            .ok_or_else(|| io::Error::other("remover: the current directory has no handle"))
    }

    pub(super) fn remove_child(&mut self, child: CString, ft: FileType) -> io::Result<()> {
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

    /// The current level is empty: remove it from the level above (reopened through `..`
    /// if its handle was closed), or list it again if it was refilled meanwhile.
    pub(super) fn finish_level(&mut self) -> io::Result<()> {
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
    pub(super) fn relist(
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
    pub(super) fn unlink_top(&self, parent: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
        match unlinkat(parent, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(self.error(None, e.into())),
        }
    }
}
