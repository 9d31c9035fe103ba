//! A small tmpfs mounted inside the jail for the `enospc` fault, unmounted when dropped.

use rustix::mount::{mount, mount_remount, unmount, MountFlags, UnmountFlags};
use std::path::{Path, PathBuf};

/// A mounted tmpfs; dropping it unmounts (lazily, `MNT_DETACH`, so a straggling process
/// cannot keep it alive), also while a panic unwinds.
#[derive(Debug)]
pub struct Tmpfs {
    at: PathBuf,
}

impl Tmpfs {
    /// Mount a tmpfs of `bytes` at the existing empty directory `at` (mode `0755`).
    ///
    /// # Errors
    /// The `mount(2)` error: `EPERM` when not root, for instance.
    pub fn mount(at: &Path, bytes: u64) -> std::io::Result<Tmpfs> {
        let data = cstring(format!("size={bytes},mode=0755"))?;
        mount(
            "snapconf-enospc",
            at,
            "tmpfs",
            MountFlags::NOSUID | MountFlags::NODEV,
            Some(data.as_c_str()),
        )?;
        Ok(Tmpfs {
            at: at.to_path_buf(),
        })
    }

    /// Change the size to `bytes` (it must hold what is already stored).
    ///
    /// # Errors
    /// The `mount(2)` error (`EINVAL` when smaller than the used space).
    pub fn resize(&self, bytes: u64) -> std::io::Result<()> {
        let data = format!("size={bytes}");
        mount_remount(
            &self.at,
            MountFlags::NOSUID | MountFlags::NODEV,
            data.as_str(),
        )?;
        Ok(())
    }

    /// Bytes in use (`statvfs`: total minus free blocks).
    ///
    /// # Errors
    /// The `statvfs(2)` error.
    pub fn used(&self) -> std::io::Result<u64> {
        let s = rustix::fs::statvfs(&self.at)?;
        Ok((s.f_blocks - s.f_bfree) * s.f_frsize)
    }

    /// The mount point.
    pub fn path(&self) -> &Path {
        &self.at
    }
}

fn cstring(s: String) -> std::io::Result<std::ffi::CString> {
    std::ffi::CString::new(s).map_err(std::io::Error::other)
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = unmount(&self.at, UnmountFlags::DETACH);
    }
}
