//! Directory handles, as every tree walk of snapconf uses them: opened relative to a parent
//! handle without following a symlink, and read with `getdents64` straight from the handle.

use std::ffi::CString;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{openat, FileType, Mode, OFlags, RawDir};

/// Opens the directory `name` of `dir` (`rustix::fs::CWD` for a path) with
/// `O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC`.
///
/// # Errors
/// `ELOOP` if `name` is a symlink, `ENOTDIR` if it is not a directory, and the other errors
/// of `openat(2)`.
pub fn open_dir<P: rustix::path::Arg>(dir: impl AsFd, name: P) -> io::Result<OwnedFd> {
    Ok(openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// The entries of the directory open at `dir`, from the handle's current offset to the end,
/// without `.` and `..`: each name with the type `getdents64` gives (`FileType::Unknown`
/// where the filesystem does not fill `d_type`). The order is the filesystem's.
///
/// # Errors
/// The error of `getdents64(2)`.
pub fn entries(dir: BorrowedFd<'_>) -> io::Result<Vec<(CString, FileType)>> {
    let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
    let mut raw = RawDir::new(dir, &mut buf);
    let mut out = Vec::new();
    while let Some(entry) = raw.next() {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            out.push((name.to_owned(), entry.file_type()));
        }
    }
    Ok(out)
}

/// The names of [`entries`].
///
/// # Errors
/// As [`entries`].
pub fn names(dir: BorrowedFd<'_>) -> io::Result<Vec<CString>> {
    Ok(entries(dir)?.into_iter().map(|(n, _)| n).collect())
}
