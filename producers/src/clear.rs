//! Clearing a workspace root before an external extractor runs: the common, non-atomic
//! "rm -rf root/*; tar -xf snapshot -C root" resume path.
//!
//! Most backends hydrate by emptying the workspace and then extracting into it. If the
//! extraction then fails (a refused member, a truncated archive, a killed tool), the prior
//! workspace is already gone. That is exactly the `atomic-hydration` violation the suite is
//! there to catch, so the built-in external extractors reproduce the pattern faithfully
//! instead of hiding it.

use crate::adapter::ToolError;
use std::path::Path;

/// Remove everything inside `root`, keeping `root` itself (and its mode).
///
/// Never follows symlinks: a symlink (even one to a directory) is removed as a link. A
/// directory is made `u+rwx` before it is read and emptied, so `0555` and `0000`
/// directories of a prior workspace do not stop the clear; a mount point inside the root
/// stops it with an error instead of deleting what is behind the mount. This is
/// [`snapconf_extract::remove::clear_dir`], the reference extractor's own remover.
///
/// # Errors
/// [`ToolError::Io`] naming the root, with the failing call's error (which names the entry
/// for a mount point).
pub fn clear_root(root: &Path) -> Result<(), ToolError> {
    snapconf_extract::remove::clear_dir(root).map_err(|source| ToolError::Io {
        context: format!("clearing the workspace `{}`", root.display()),
        source,
    })
}
