//! Opening directories inside the staging tree with handles that cannot escape it.
//!
//! The primary path is `openat2(2)` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS` (Linux 5.6): the kernel refuses any resolution that leaves the
//! starting directory or meets a symlink, so even a tree changed behind our back cannot
//! redirect a write. Where `openat2` is unavailable (`ENOSYS`: old kernels, some seccomp
//! profiles) we walk component by component with `openat(O_NOFOLLOW | O_DIRECTORY)`; the
//! components come from `name::normalize`, so none is `.`, `..` or empty, and
//! `O_NOFOLLOW` makes every step refuse a symlink.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{openat, openat2, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// Set once `openat2` has answered `ENOSYS`, so later calls go straight to the fallback.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Opens the directory `path` (components joined by `/`, never `.`/`..`/empty, never
/// absolute) below `base` without following any symlink and without leaving `base`; an
/// empty `path` is `base` itself (a new handle).
///
/// # Errors
/// `ELOOP` (or `EXDEV` from `openat2`) when a component is a symlink or leads out of
/// `base`, `ENOTDIR`/`ENOENT` for a component that is not a directory, `InvalidInput`
/// for a `.`, `..` or empty component on the fallback walk, and the other errors of
/// `openat2(2)`/`openat(2)`.
pub fn open_dir(base: BorrowedFd<'_>, path: &[u8]) -> io::Result<OwnedFd> {
    if path.is_empty() {
        return Ok(rustix::io::fcntl_dupfd_cloexec(base, 0)?);
    }
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match openat2(base, path, dir_flags(), Mode::empty(), resolve) {
            Err(Errno::NOSYS) => NO_OPENAT2.store(true, Ordering::Relaxed),
            // A concurrent rename raced the lookup, or the path is longer than `PATH_MAX`:
            // walk instead (each step is one component).
            Err(Errno::AGAIN | Errno::NAMETOOLONG) => {}
            other => return Ok(other?),
        }
    }
    open_dir_walk(base, path)
}

/// The fallback: one `openat(O_NOFOLLOW | O_DIRECTORY)` per component.
pub(crate) fn open_dir_walk(base: BorrowedFd<'_>, path: &[u8]) -> io::Result<OwnedFd> {
    let mut cur: Option<OwnedFd> = None;
    for comp in path.split(|&b| b == b'/') {
        if comp.is_empty() || comp == b"." || comp == b".." {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "path component is empty, `.` or `..`",
            ));
        }
        let at = match cur.as_ref() {
            Some(fd) => fd.as_fd(),
            None => base,
        };
        cur = Some(openat(at, comp, dir_flags(), Mode::empty())?);
    }
    match cur {
        Some(fd) => Ok(fd),
        None => Ok(rustix::io::fcntl_dupfd_cloexec(base, 0)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// Both paths open plain directories and refuse a symlink at any component (the fallback
    /// must be as strict as `openat2`).
    #[test]
    fn both_paths_refuse_symlinks() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::create_dir_all(dir.path().join("a/b/c"))?;
        symlink("b", dir.path().join("a/l"))?;
        symlink("/", dir.path().join("abs"))?;
        let base = std::fs::File::open(dir.path())?;
        let base = base.as_fd();
        for open in [
            open_dir as fn(BorrowedFd<'_>, &[u8]) -> io::Result<OwnedFd>,
            open_dir_walk,
        ] {
            assert!(open(base, b"a/b/c").is_ok());
            assert!(open(base, b"a/l").is_err());
            assert!(open(base, b"a/l/c").is_err());
            assert!(open(base, b"abs").is_err());
            assert!(open(base, b"abs/tmp").is_err());
        }
        assert!(open_dir_walk(base, b"a/../a").is_err());
        assert!(open_dir_walk(base, b"a//b").is_err());
        assert!(open_dir(base, b"../").is_err());
        Ok(())
    }
}
