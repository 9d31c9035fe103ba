//! Widening a directory the walk may not enter or change, through its handle only.
//!
//! Permissions: root needs no help. For other users a directory that cannot be entered
//! (`0400`, `0600`) or written (`0555`) is `fchmod`-ed `u+rwx` through its handle when an
//! open or `unlinkat` in it answers `EACCES`; one that cannot even be opened (`0000`,
//! `0300`) is opened as `O_PATH`, made `u+rwx` through `/proc/self/fd` (which names the inode
//! opened, never a path that could be swapped for a symlink) and reopened from that handle.
//! `clear_dir` gives its directory its mode back, also when it fails. The `O_PATH` route
//! is taken where the open fails, in [`Walk::open`].

use std::ffi::CString;
use std::io;

use rustix::fs::{fchmod, statx, AtFlags, FileType, Mode, StatxFlags};
use rustix::io::Errno;

use super::walk::Walk;

impl Walk<'_> {
    /// After `EACCES` from an `unlinkat` in the current directory (not root, a `0555`
    /// directory): make it `u+rwx` through its handle once and try `child` again.
    pub(super) fn retry_widened(
        &mut self,
        child: CString,
        ft: FileType,
        e: Errno,
    ) -> io::Result<()> {
        let i = self.stack.len() - 1;
        if e != Errno::ACCESS || self.stack[i].widened {
            return Err(self.error(Some(&child), e.into()));
        }
        self.widen(i)?;
        self.stack[i].pending.push((child, ft));
        Ok(())
    }

    /// `fchmod u+rwx` the level `i` through its (open) handle.
    pub(super) fn widen(&mut self, i: usize) -> io::Result<()> {
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
}
