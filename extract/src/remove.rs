//! Removing a tree (the old workspace after the swap, or a failed staging tree) without ever
//! following a symlink, and coping with read-only directories inside it.
//!
//! Every step is relative to a directory handle opened with `O_NOFOLLOW | O_DIRECTORY`;
//! symlinks are unlinked as names, never entered. A directory without owner `rwx` (H7's
//! `0555`, or `0000`) is `chmod u+rwx`-ed through its handle before its entries are removed.
//! A directory on another filesystem (a mount point inside the tree, say a bind mount a user
//! made in the prior workspace) is never entered: removal stops with an error naming it, so
//! the data behind the mount survives; nothing is unmounted.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{
    fchmod, fstat, openat, statat, statx, unlinkat, AtFlags, Dir, FileType, Mode, OFlags,
    StatxFlags,
};
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
    // Crossing into another mount would delete files that are not part of the tree (found by
    // a test: a bind mount in the prior workspace lost its source's files). A bind mount of
    // the same filesystem keeps `st_dev`, so the mount id (`statx` `STATX_MNT_ID`, Linux 5.8)
    // is compared, with `st_dev` as the fallback where it is unavailable.
    let mount_of = |fd: BorrowedFd<'_>, child: Option<&[u8]>| -> io::Result<(u64, bool)> {
        let x = match child {
            Some(n) => statx(fd, n, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::MNT_ID)?,
            None => statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID)?,
        };
        Ok((x.stx_mnt_id, x.stx_mask & StatxFlags::MNT_ID.bits() != 0))
    };
    let crosses = match (mount_of(parent, None), mount_of(parent, Some(name))) {
        (Ok((p, true)), Ok((c, true))) => p != c,
        _ => st.st_dev != fstat(parent)?.st_dev,
    };
    if crosses {
        return Err(io::Error::other(format!(
            "`{}` is a mount point inside the tree; not removed",
            String::from_utf8_lossy(name)
        )));
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
