//! Opening an entry as a directory: never through a symlink, never onto another mount.
//!
//! Every step is relative to a directory handle; symlinks are unlinked as names, never
//! entered. Directories are opened with `openat2(2)` and `RESOLVE_NO_XDEV` (Linux 5.6), so
//! the kernel itself refuses to step onto another mount: a mount point inside the tree (say
//! a bind mount a user made in the prior workspace) is never entered, even if it appears
//! while the walk runs, and removal stops with an error naming it; nothing is unmounted.
//! Where `openat2` is unavailable (`ENOSYS`) the handle from `openat(O_NOFOLLOW)` is
//! checked with `statx` (`STATX_MNT_ID`, else the device) against the directory it was
//! opened from before it is used.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{openat, openat2, statx, AtFlags, Mode, OFlags, ResolveFlags, StatxFlags};
use rustix::io::Errno;

use super::walk::Walk;

/// Set once `openat2` has answered `ENOSYS`, so later opens go straight to the fallback.
pub(super) static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Which mount a directory is on: the mount id (`statx` `STATX_MNT_ID`, Linux 5.8) where the
/// kernel gives one, else the device number. A bind mount of the same filesystem keeps the
/// device number, which is why the mount id is preferred (found by a test: a bind mount in
/// the prior workspace lost its source's files).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Mount {
    Id(u64),
    Dev(u32, u32),
}

impl Mount {
    pub(super) fn of(x: &rustix::fs::Statx) -> Mount {
        if x.stx_mask & StatxFlags::MNT_ID.bits() != 0 {
            Mount::Id(x.stx_mnt_id)
        } else {
            Mount::Dev(x.stx_dev_major, x.stx_dev_minor)
        }
    }
}

/// What opening an entry as a directory found.
pub(super) enum Opened {
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

impl Walk<'_> {
    /// Opens `name` of `dir` as a directory on the tree's mount, without following a
    /// symlink; see [`Opened`].
    pub(super) fn open(&self, dir: BorrowedFd<'_>, name: &[u8]) -> io::Result<Opened> {
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
    pub(super) fn open_raw(
        &self,
        dir: BorrowedFd<'_>,
        name: &[u8],
        flags: OFlags,
    ) -> Result<OwnedFd, Errno> {
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
}
