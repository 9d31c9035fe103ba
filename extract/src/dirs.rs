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
    entries_until(dir, false)
}

/// As [`entries`], but if `short_read_ends`, a `getdents64` read that left room for
/// another entry of the longest name is taken as the end of the directory, which saves the
/// final read that returns nothing. Pass true only where that holds: on filesystems that
/// [`fills_reads`], or where a missed entry is caught later (a remover whose `rmdir` then
/// fails with `ENOTEMPTY` and lists again in full).
///
/// # Errors
/// As [`entries`].
pub fn entries_until(
    dir: BorrowedFd<'_>,
    short_read_ends: bool,
) -> io::Result<Vec<(CString, FileType)>> {
    let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
    // `RawDir` may give up to 7 bytes of the buffer to alignment.
    let usable = buf.len() - 8;
    let mut raw = RawDir::new(dir, &mut buf);
    let mut out = Vec::new();
    let mut batch = 0;
    while let Some(entry) = raw.next() {
        let entry = entry?;
        let name = entry.file_name();
        batch += record_len(name.to_bytes().len());
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            out.push((name.to_owned(), entry.file_type()));
        }
        if raw.is_buffer_empty() {
            if short_read_ends && usable - batch.min(usable) >= record_len(255) {
                break;
            }
            batch = 0;
        }
    }
    Ok(out)
}

/// The size of a `linux_dirent64` record for a name of `len` bytes: 19 bytes of header,
/// the name and its NUL, rounded up to 8 (the kernel's `filldir64`).
fn record_len(len: usize) -> usize {
    (19 + len + 1 + 7) & !7
}

/// True if the filesystem of `dir` fills every `getdents64` read as far as the buffer
/// allows, so that a read with room left means the end of the directory: tmpfs and ramfs
/// (`offset_readdir` / `dcache_readdir` in `fs/libfs.c` stop only when `dir_emit` fails)
/// and ext2/3/4 (`ext4_readdir`, `ext4_dx_readdir`). False for everything else (FUSE and
/// network filesystems may answer a read with one server batch), and if `fstatfs` fails.
pub fn fills_reads(dir: BorrowedFd<'_>) -> bool {
    const TMPFS: u64 = 0x0102_1994;
    const RAMFS: u64 = 0x8584_58f6;
    const EXT: u64 = 0xef53;
    rustix::fs::fstatfs(dir).is_ok_and(|st| {
        // `f_type` is signed on some targets; the magic numbers fit in 32 bits.
        let t = (st.f_type as u64) & 0xffff_ffff;
        matches!(t, TMPFS | RAMFS | EXT)
    })
}

/// The names of [`entries_until`].
///
/// # Errors
/// As [`entries`].
pub fn names(dir: BorrowedFd<'_>, short_read_ends: bool) -> io::Result<Vec<CString>> {
    Ok(entries_until(dir, short_read_ends)?
        .into_iter()
        .map(|(n, _)| n)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// With `short_read_ends`, listings of directories spanning many reads (names of every
    /// length from 1 to 255 bytes, so reads end at every kind of boundary) are complete on
    /// the filesystems [`fills_reads`] names: on `/dev/shm` (tmpfs) and the temp dir.
    #[test]
    fn short_reads_end_listings_only_where_complete() {
        let mut bases = vec![std::env::temp_dir()];
        if std::path::Path::new("/dev/shm").is_dir() {
            bases.push("/dev/shm".into());
        }
        for base in bases {
            let t = tempfile::tempdir_in(&base).expect("tempdir");
            let fd = open_dir(rustix::fs::CWD, t.path()).expect("open");
            if base == std::path::Path::new("/dev/shm") {
                assert!(fills_reads(fd.as_fd()), "tmpfs fills its reads");
            }
            let mut want = BTreeSet::new();
            for n in 0..1500usize {
                let len = 1 + (n * 37) % 255;
                let mut name = format!("{n}-");
                while name.len() < len {
                    name.push('x');
                }
                name.truncate(len.max(n.to_string().len() + 1));
                std::fs::write(t.path().join(&name), "").expect("create");
                want.insert(name);
                if n % 300 == 0 || n < 3 {
                    for short in [false, fills_reads(fd.as_fd())] {
                        rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(0)).expect("seek");
                        let got: BTreeSet<String> = entries_until(fd.as_fd(), short)
                            .expect("list")
                            .into_iter()
                            .map(|(n, _)| n.into_string().expect("utf-8"))
                            .collect();
                        assert_eq!(got, want, "{} entries in {}", n + 1, base.display());
                    }
                }
            }
        }
    }
}
