//! Emptying a directory in place, keeping the directory and its mode.

use std::ffi::CString;
use std::io;
use std::os::fd::AsFd;
use std::path::Path;

use rustix::fs::{fchmod, statx, AtFlags, FileType, Mode, StatxFlags, CWD};
use rustix::io::Errno;

use super::level::Level;
use super::open::Opened;
use super::path::split;
use super::walk::Walk;
use crate::dirs::entries_until;

/// Removes everything inside the directory `path`, keeping `path` itself and its mode
/// (given back also when clearing fails).
///
/// # Errors
/// As [`remove_tree`](super::remove_tree); `InvalidInput` if `path` is not a directory (a
/// symlink to one included: it is refused, not followed, also as `link/` or `link/.`);
/// `NotFound` if it is missing.
pub fn clear_dir(path: &Path) -> io::Result<()> {
    let shown = path.as_os_str().as_encoded_bytes();
    // `link/.` or `link/` would resolve through a symlink; the last component must name
    // the directory itself.
    let (parent, name) = split(path)?;
    let not_dir = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is {what}, not a directory", path.display()),
        )
    };
    let parent = crate::dirs::open_dir(CWD, parent)?;
    // No mount to compare the directory itself with: any mount may be cleared.
    let mut walk = Walk::new(None, shown, false);
    let (fd, restore) = match walk.open(parent.as_fd(), name) {
        Ok(Opened::Dir(fd, restore)) => (fd, restore),
        Ok(Opened::Gone) => {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("`{}` does not exist", path.display()),
            ))
        }
        Ok(Opened::NotDir) => {
            let x = statx(&parent, name, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::TYPE)?;
            let is_link = FileType::from_raw_mode(u32::from(x.stx_mode)) == FileType::Symlink;
            return Err(not_dir(if is_link {
                "a symlink"
            } else {
                "something else"
            }));
        }
        Ok(Opened::Denied | Opened::TooMany) => return Err(walk.error(None, Errno::ACCESS.into())),
        Err(e) => return Err(e),
    };
    walk.restore = restore;
    // From here on every directory opened must be on the mount of the one it is opened
    // from, which is the cleared directory's.
    walk.check_mounts = true;
    // A second handle, to give the mode back whatever happens to the walk's.
    let keep = fd.try_clone()?;
    let result = entries_until(fd.as_fd(), true)
        .map_err(|e| walk.error(None, e))
        .and_then(|pending| {
            walk.stack.push(Level::new(fd, CString::default(), pending));
            walk.run()
        });
    // Put the mode back if it was widened (through the handle: never a path), also when
    // the walk failed.
    let restored = match walk.restore {
        Some(mode) => fchmod(&keep, Mode::from_raw_mode(mode)).map_err(io::Error::from),
        None => Ok(()),
    };
    result.and(restored)
}
