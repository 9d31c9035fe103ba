//! Writing into a jail from outside its filesystem view while a tool may still run in it
//! (the fuzzer's persistent worker lives on between requests, in a view that can write
//! the jail). A path-based write from this side would follow a link the tool planted in
//! the jail, to the host (`root/a -> /etc/...`), so every entry here is reached from a
//! handle on the jail, one component at a time, never through a symbolic link
//! ([`snapconf_extract::beneath::open_dir`]), and made anew (`O_CREAT | O_EXCL`,
//! `mkdirat`, `symlinkat`): a link or node the tool put in the way makes the write fail,
//! and the caller lays out a new jail. Modes are set on the handle of what was just made.

use rustix::fs::{AtFlags, Mode, OFlags, Timespec, Timestamps};
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

/// A handle on a jail's top directory, from which entries are made and removed.
#[derive(Debug)]
pub struct Confined(OwnedFd);

impl Confined {
    /// A handle on the directory `jail` (its path is the caller's own; only its last
    /// component is refused as a symlink).
    ///
    /// # Errors
    /// `jail` cannot be opened as a directory.
    pub fn open(jail: &Path) -> io::Result<Confined> {
        Ok(Confined(snapconf_extract::dirs::open_dir(
            rustix::fs::CWD,
            jail,
        )?))
    }

    /// The directory holding jail-relative `rel` (bytes, `/`-separated) and its last
    /// component; `InvalidInput` for an empty `rel`.
    fn parent<'a>(&self, rel: &'a [u8]) -> io::Result<(OwnedFd, &'a [u8])> {
        let (dir, name) = match rel.iter().rposition(|&b| b == b'/') {
            Some(i) => (&rel[..i], &rel[i + 1..]),
            None => (&rel[..0], rel),
        };
        if name.is_empty() || name == b"." || name == b".." {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not the name of an entry in the jail",
            ));
        }
        Ok((
            snapconf_extract::beneath::open_dir(self.0.as_fd(), dir)?,
            name,
        ))
    }

    /// Make the regular file `rel` with `bytes` and mode `mode` (permission bits); it must
    /// not exist.
    ///
    /// # Errors
    /// `EEXIST` if anything is at `rel` (a link included), the errors of reaching its
    /// directory ([`snapconf_extract::beneath::open_dir`]) or of writing.
    pub fn create_file(&self, rel: &[u8], bytes: &[u8], mode: u32) -> io::Result<()> {
        let (dir, name) = self.parent(rel)?;
        let fd = rustix::fs::openat(
            &dir,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::RUSR | Mode::WUSR,
        )?;
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))?;
        std::fs::File::from(fd).write_all(bytes)
    }

    /// Make the directory `rel` with mode `mode`; it must not exist.
    ///
    /// # Errors
    /// As [`Confined::create_file`].
    pub fn create_dir(&self, rel: &[u8], mode: u32) -> io::Result<()> {
        let (dir, name) = self.parent(rel)?;
        rustix::fs::mkdirat(&dir, name, Mode::RWXU)?;
        let made = snapconf_extract::dirs::open_dir(&dir, name)?;
        rustix::fs::fchmod(&made, Mode::from_raw_mode(mode))?;
        Ok(())
    }

    /// Make the symbolic link `rel` to `target`; it must not exist.
    ///
    /// # Errors
    /// As [`Confined::create_file`].
    pub fn create_symlink(&self, rel: &[u8], target: &[u8]) -> io::Result<()> {
        let (dir, name) = self.parent(rel)?;
        rustix::fs::symlinkat(target, &dir, name)?;
        Ok(())
    }

    /// Remove whatever is at `rel` (a tree, a file, a link: never followed); absent is
    /// success.
    ///
    /// # Errors
    /// As [`snapconf_extract::remove::remove_tree_at`], or reaching its directory.
    pub fn remove(&self, rel: &[u8]) -> io::Result<()> {
        let (dir, name) = self.parent(rel)?;
        snapconf_extract::remove::remove_tree_at(dir.as_fd(), name)
    }

    /// Set the access and modification times of `rel` (the jail itself when empty) to
    /// `mtime` (seconds, nanoseconds), not following a link.
    ///
    /// # Errors
    /// As `utimensat(2)`, or reaching its directory.
    pub fn set_mtime(&self, rel: &[u8], mtime: (i64, i64)) -> io::Result<()> {
        let t = Timespec {
            tv_sec: mtime.0,
            tv_nsec: mtime.1 as _,
        };
        let times = Timestamps {
            last_access: t,
            last_modification: t,
        };
        if rel.is_empty() {
            rustix::fs::futimens(&self.0, &times)?;
            return Ok(());
        }
        let (dir, name) = self.parent(rel)?;
        rustix::fs::utimensat(&dir, name, &times, AtFlags::SYMLINK_NOFOLLOW)?;
        Ok(())
    }
}
