//! Removing a tree without ever following a symlink, coping with read-only directories and
//! never crossing into another mount. The reference extractor uses it for the old workspace
//! after the swap and for a failed staging tree; the harness and the adapters use it for
//! jails and for the "clear the root, then extract" resume path.
//!
//! # Security
//! Every step is relative to a directory handle, and a symlink is unlinked as a name, never
//! entered. Another mount is never entered either (`openat2(RESOLVE_NO_XDEV)`, or a `statx`
//! check of each handle where there is no `openat2`): a mount point inside the tree stops
//! removal with an error naming it, and it and everything behind it are left in place;
//! nothing is unmounted. A mode is widened (not as root) only through a handle, never
//! through a path. Depth costs heap, not stack or descriptors; an upper directory reopened
//! through `..` must be the one left (inode and mount), else removal stops. Not guaranteed:
//! a tree another process keeps filling is given up on, with an error, after a few rounds.
//! The reasoning sits beside the code: `open.rs`, `widen.rs`, `level.rs`, `walk.rs`.

mod clear;
mod level;
mod message;
mod open;
mod path;
mod tree;
mod walk;
mod widen;

#[cfg(test)]
mod tests;

pub use clear::clear_dir;
pub use level::OPEN_LEVELS;
pub use tree::{remove_likely_empty_at, remove_tree, remove_tree_at};
