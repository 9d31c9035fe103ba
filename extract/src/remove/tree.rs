//! The removal entry points: a tree by path, or the entry of an open directory.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use rustix::fs::CWD;
use rustix::io::Errno;

use super::level::Level;
use super::open::Opened;
use super::path::{cstring, split};
use super::walk::Walk;
use crate::dirs::entries_until;

/// Removes `path` and everything under it. A symlink at `path` is removed itself, never
/// followed; a missing `path` is success. A `path` whose last component is `.` or `..` is
/// refused, as `rm -r` refuses it.
///
/// # Errors
/// `InvalidInput` for a `path` ending in `.` or `..`, and for `/`; else the first failing
/// `openat2`, `getdents64`, `fchmod` or `unlinkat`, with the entry's path in the message; an error
/// naming the directory if a mount point lies inside the tree (it and everything behind it
/// are left in place), if a directory keeps refilling while it is being removed, or if an
/// upper directory was moved while a deep tree was removed.
pub fn remove_tree(path: &Path) -> io::Result<()> {
    let (parent, name) = split(path)?;
    let dir = crate::dirs::open_dir(CWD, parent)?;
    let shown = path.as_os_str().as_encoded_bytes();
    remove_named(dir.as_fd(), name, shown)
}

/// Removes the entry `name` of the directory open at `parent`, recursively if it is a
/// directory. Absent is success.
///
/// # Errors
/// As [`remove_tree`]; messages name entries relative to `parent`.
pub fn remove_tree_at(parent: BorrowedFd<'_>, name: &[u8]) -> io::Result<()> {
    remove_named(parent, name, name)
}

/// As [`remove_tree_at`] for a directory that is most likely empty (a first hydration's
/// old root, an adapter's unused scratch directory): one `rmdir` first, and the remover
/// only if that fails (a full tree, a mount point, not a directory).
///
/// # Errors
/// As [`remove_tree_at`].
pub fn remove_likely_empty_at(parent: BorrowedFd<'_>, name: &[u8]) -> io::Result<()> {
    match rustix::fs::unlinkat(parent, name, rustix::fs::AtFlags::REMOVEDIR) {
        Ok(()) => Ok(()),
        Err(_) => remove_tree_at(parent, name),
    }
}

fn remove_named(parent: BorrowedFd<'_>, name: &[u8], shown: &[u8]) -> io::Result<()> {
    let mut walk = Walk::new(Some(parent), shown, true);
    let name = cstring(name)?;
    match walk.open(parent, name.as_bytes())? {
        Opened::Gone => Ok(()),
        Opened::NotDir => walk.unlink_top(parent, &name),
        Opened::Dir(fd, _) => {
            let pending = entries_until(fd.as_fd(), true).map_err(|e| walk.error(None, e))?;
            walk.stack.push(Level::new(fd, name, pending));
            walk.run()
        }
        // Only returned below the top.
        Opened::Denied | Opened::TooMany => Err(walk.error(None, Errno::ACCESS.into())),
    }
}
