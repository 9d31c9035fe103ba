//! Clearing a workspace root before an external extractor runs: the common, non-atomic
//! "rm -rf root/*; tar -xf snapshot -C root" resume path.
//!
//! Most backends hydrate by emptying the workspace and then extracting into it. If the
//! extraction then fails (a refused member, a truncated archive, a killed tool), the prior
//! workspace is already gone. That is exactly the `atomic-hydration` violation the suite is
//! there to catch, so the built-in external extractors reproduce the pattern faithfully
//! instead of hiding it.

use crate::adapter::ToolError;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Remove everything inside `root`, keeping `root` itself.
///
/// Never follows symlinks: a symlink (even one to a directory) is removed as a link. A
/// directory is made `0700` before it is read and emptied, so `0555` and `0000` directories
/// of a prior workspace do not stop the clear (as root this only matters on filesystems that
/// enforce modes for root, but it keeps the function correct for other users too).
///
/// The kind check (`lstat`) and the removal are separate system calls; the workspace is a
/// jail the suite owns, so a concurrent swap of a directory for a link is not a concern here.
///
/// # Errors
/// [`ToolError::Io`] naming the path that could not be read, chmodded or removed.
pub fn clear_root(root: &Path) -> Result<(), ToolError> {
    let entries = fs::read_dir(root).map_err(io_ctx("reading", root))?;
    for entry in entries {
        let entry = entry.map_err(io_ctx("reading", root))?;
        remove_tree(&entry.path())?;
    }
    Ok(())
}

/// Remove `path` and, if it is a real directory (not a link to one), everything below it.
fn remove_tree(path: &Path) -> Result<(), ToolError> {
    let meta = fs::symlink_metadata(path).map_err(io_ctx("inspecting", path))?;
    if !meta.file_type().is_dir() {
        return fs::remove_file(path).map_err(io_ctx("removing", path));
    }
    if meta.permissions().mode() & 0o700 != 0o700 {
        // `set_permissions` follows links, but `path` was just seen as a real directory.
        fs::set_permissions(path, fs::Permissions::from_mode(0o700))
            .map_err(io_ctx("making writable", path))?;
    }
    for entry in fs::read_dir(path).map_err(io_ctx("reading", path))? {
        let entry = entry.map_err(io_ctx("reading", path))?;
        remove_tree(&entry.path())?;
    }
    fs::remove_dir(path).map_err(io_ctx("removing", path))
}

fn io_ctx<'a>(verb: &'a str, path: &'a Path) -> impl FnOnce(io::Error) -> ToolError + 'a {
    move |source| ToolError::Io {
        context: format!("clearing the workspace: {verb} `{}`", path.display()),
        source,
    }
}
