//! Removing a tree (the old workspace after the swap, or a failed staging tree) without ever
//! following a symlink, and coping with read-only directories inside it.
//!
//! Every step is relative to a directory handle opened with `O_NOFOLLOW | O_DIRECTORY`;
//! symlinks are unlinked as names, never entered. A directory without owner `rwx` (H7's
//! `0555`, or `0000`) is `chmod u+rwx`-ed through its handle before its entries are removed.
//! Mount points inside the tree make removal fail with `EBUSY`; nothing is unmounted.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{fchmod, fstat, openat, statat, unlinkat, AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;

/// Removes the entry `name` of `parent`, recursively if it is a directory. Absent is success.
pub(crate) fn remove_tree(parent: BorrowedFd<'_>, name: &[u8]) -> io::Result<()> {
    let st = match statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return match unlinkat(parent, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(e.into()),
        };
    }
    let fd = openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let st = fstat(&fd)?;
    if st.st_mode & 0o700 != 0o700 {
        fchmod(&fd, Mode::from_raw_mode((st.st_mode | 0o700) & 0o7777))?;
    }
    // Read names first, then remove: deleting while iterating `getdents` may skip entries on
    // some filesystems. Repeat until a read comes back empty.
    let mut rounds = 0;
    loop {
        let names = list(fd.as_fd())?;
        if names.is_empty() {
            break;
        }
        rounds += 1;
        if rounds > 16 {
            return Err(io::Error::other(
                "directory keeps refilling while being removed",
            ));
        }
        for (child, is_dir) in names {
            if is_dir {
                remove_tree(fd.as_fd(), child.as_bytes())?;
            } else {
                match unlinkat(&fd, child.as_c_str(), AtFlags::empty()) {
                    Ok(()) | Err(Errno::NOENT) => {}
                    // `d_type` said "not a directory" but it is one (or DT_UNKNOWN lied).
                    Err(Errno::ISDIR) => remove_tree(fd.as_fd(), child.as_bytes())?,
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }
    drop(fd);
    match unlinkat(parent, name, AtFlags::REMOVEDIR) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Entry names of a directory (without `.` and `..`) and whether each may be a directory
/// (`DT_DIR` or `DT_UNKNOWN`).
fn list(dir: BorrowedFd<'_>) -> io::Result<Vec<(CString, bool)>> {
    let mut out = Vec::new();
    for entry in Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_bytes() == b"." || name.to_bytes() == b".." {
            continue;
        }
        let ft = entry.file_type();
        let maybe_dir = ft == FileType::Directory || ft == FileType::Unknown;
        out.push((name.to_owned(), maybe_dir));
    }
    Ok(out)
}
