//! Removing a tree without ever following a symlink, coping with read-only directories and
//! never crossing into another mount. The reference extractor uses it for the old workspace
//! after the swap and for a failed staging tree; the harness and the adapters use it for
//! jails and for the "clear the root, then extract" resume path.
//!
//! Every step is relative to a directory handle opened with `O_NOFOLLOW | O_DIRECTORY`;
//! symlinks are unlinked as names, never entered. A directory without owner `rwx` (H7's
//! `0555`, or `0000`) is `chmod u+rwx`-ed through its handle before its entries are removed
//! (root needs no such help, but other users do). A directory on another mount (a mount
//! point inside the tree, say a bind mount a user made in the prior workspace) is never
//! entered: removal stops with an error naming it, so the data behind the mount survives;
//! nothing is unmounted.
//!
//! System calls per directory: one `statx` (kind, mode and mount id together), `openat`,
//! the `getdents64` reads, the `unlinkat` of each entry, `close`, and the final
//! `unlinkat(AT_REMOVEDIR)`; the directory is listed again only if that last call finds it
//! refilled (`ENOTEMPTY`).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use rustix::fs::{
    fchmod, seek, statx, unlinkat, AtFlags, FileType, Mode, SeekFrom, StatxFlags, CWD,
};

use crate::dirs::{entries, open_dir};
use rustix::io::Errno;

/// How many times a directory is listed and emptied before removal gives up on it (a
/// process that keeps creating entries in a tree being removed).
const ROUNDS: usize = 16;

/// Removes `path` and everything under it. A symlink at `path` is removed itself, never
/// followed; a missing `path` is success.
///
/// # Errors
/// The first failing `statx`, `openat`, `getdents64`, `fchmod` or `unlinkat`; an error
/// naming the directory if a mount point lies inside the tree (it and everything behind it
/// are left in place), or if a directory keeps refilling while it is being removed.
pub fn remove_tree(path: &Path) -> io::Result<()> {
    let (parent, name) = split(path)?;
    let dir = open_dir(CWD, parent)?;
    remove_tree_at(dir.as_fd(), name)
}

/// Removes everything inside the directory `path`, keeping `path` itself and its mode.
///
/// # Errors
/// As [`remove_tree`]; `InvalidInput` if `path` is not a directory (a symlink to one
/// included: it is refused, not followed).
pub fn clear_dir(path: &Path) -> io::Result<()> {
    let not_dir = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is {what}, not a directory", path.display()),
        )
    };
    let here = statx(CWD, path, AtFlags::SYMLINK_NOFOLLOW, wanted())?;
    match FileType::from_raw_mode(u32::from(here.stx_mode)) {
        FileType::Directory => {}
        FileType::Symlink => return Err(not_dir("a symlink")),
        _ => return Err(not_dir("something else")),
    }
    let mode = u32::from(here.stx_mode) & 0o7777;
    let opened = mode & 0o700 != 0o700;
    if opened {
        // By path: a `0000` directory cannot be opened first. `path` was just seen as a
        // directory, and the `O_NOFOLLOW` open below refuses it if it was swapped since.
        rustix::fs::chmod(path, Mode::from_raw_mode(mode | 0o700))?;
    }
    let fd = match open_dir(CWD, path) {
        Ok(fd) => fd,
        Err(e) => {
            if opened {
                let _ = rustix::fs::chmod(path, Mode::from_raw_mode(mode));
            }
            return Err(e);
        }
    };
    let mount = Mount::of(&here);
    let result = (|| {
        for _ in 0..ROUNDS {
            if empty_dir(fd.as_fd(), &mount)? == 0 {
                return Ok(());
            }
            seek(&fd, SeekFrom::Start(0))?;
        }
        Err(refilling(path.as_os_str().as_encoded_bytes()))
    })();
    if opened {
        fchmod(&fd, Mode::from_raw_mode(mode))?;
    }
    result
}

/// Removes the entry `name` of the directory open at `parent`, recursively if it is a
/// directory. Absent is success.
///
/// # Errors
/// As [`remove_tree`].
pub fn remove_tree_at(parent: BorrowedFd<'_>, name: &[u8]) -> io::Result<()> {
    let here = statx(parent, "", AtFlags::EMPTY_PATH, wanted())?;
    remove_entry(parent, name, &Mount::of(&here))
}

/// Which mount a directory is on: the mount id (`statx` `STATX_MNT_ID`, Linux 5.8) where the
/// kernel gives one, else the device number. A bind mount of the same filesystem keeps the
/// device number, which is why the mount id is preferred (found by a test: a bind mount in
/// the prior workspace lost its source's files).
#[derive(Clone, Copy, PartialEq, Eq)]
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

    fn same(&self, x: &rustix::fs::Statx) -> bool {
        match (self, Mount::of(x)) {
            (Mount::Id(a), Mount::Id(b)) => *a == b,
            _ => *self == Mount::Dev(x.stx_dev_major, x.stx_dev_minor),
        }
    }
}

fn wanted() -> StatxFlags {
    StatxFlags::TYPE | StatxFlags::MODE | StatxFlags::MNT_ID
}

fn remove_entry(parent: BorrowedFd<'_>, name: &[u8], mount: &Mount) -> io::Result<()> {
    let x = match statx(parent, name, AtFlags::SYMLINK_NOFOLLOW, wanted()) {
        Ok(x) => x,
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if FileType::from_raw_mode(u32::from(x.stx_mode)) != FileType::Directory {
        return match unlinkat(parent, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(e.into()),
        };
    }
    if !mount.same(&x) {
        return Err(io::Error::other(format!(
            "`{}` is a mount point inside the tree; not removed",
            String::from_utf8_lossy(name)
        )));
    }
    let mode = u32::from(x.stx_mode) & 0o7777;
    let fd = match open_dir(parent, name) {
        Ok(fd) => fd,
        // Not root and the directory is `0000` or `0300`: it cannot be opened to be
        // `fchmod`-ed, so it is made `u+rwx` by name first. `name` was just seen as a
        // directory, and the `O_NOFOLLOW` open refuses it if it was swapped for a link since.
        Err(e) if e.raw_os_error() == Some(Errno::ACCESS.raw_os_error()) => {
            rustix::fs::chmodat(
                parent,
                name,
                Mode::from_raw_mode(mode | 0o700),
                AtFlags::empty(),
            )?;
            open_dir(parent, name)?
        }
        Err(e) => return Err(e),
    };
    if mode & 0o700 != 0o700 {
        fchmod(&fd, Mode::from_raw_mode(mode | 0o700))?;
    }
    for _ in 0..ROUNDS {
        empty_dir(fd.as_fd(), mount)?;
        match unlinkat(parent, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => return Ok(()),
            // Refilled behind our back: list it again from the start.
            Err(Errno::NOTEMPTY) => seek(&fd, SeekFrom::Start(0)).map(drop)?,
            Err(e) => return Err(e.into()),
        }
    }
    Err(refilling(name))
}

/// Reads every name of the directory open at `dir` (from its current offset), then removes
/// each; returns how many there were. Names are read before anything is removed: deleting
/// while iterating `getdents` may skip entries on some filesystems.
fn empty_dir(dir: BorrowedFd<'_>, mount: &Mount) -> io::Result<usize> {
    let names = list(dir)?;
    for (child, maybe_dir) in &names {
        if *maybe_dir {
            remove_entry(dir, child.as_bytes(), mount)?;
        } else {
            match unlinkat(dir, child.as_c_str(), AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => {}
                // `d_type` said "not a directory" but it is one now.
                Err(Errno::ISDIR) => remove_entry(dir, child.as_bytes(), mount)?,
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(names.len())
}

/// Entry names of a directory and whether each may be a directory (`DT_DIR` or
/// `DT_UNKNOWN`).
fn list(dir: BorrowedFd<'_>) -> io::Result<Vec<(CString, bool)>> {
    Ok(entries(dir)?
        .into_iter()
        .map(|(name, ft)| (name, ft == FileType::Directory || ft == FileType::Unknown))
        .collect())
}

/// `path` as (parent directory, last component); `.`, `..` and `/` are refused.
fn split(path: &Path) -> io::Result<(&Path, &[u8])> {
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` does not name an entry to remove", path.display()),
        )
    };
    let name = path.file_name().ok_or_else(bad)?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok((parent, name.as_encoded_bytes()))
}

fn refilling(name: &[u8]) -> io::Error {
    io::Error::other(format!(
        "`{}` keeps refilling while being removed",
        String::from_utf8_lossy(name)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

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
        let e = clear_dir(&link).expect_err("a symlink is refused");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
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
}
