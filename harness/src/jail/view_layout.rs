//! Where things sit in the fuzzer's filesystem view (see [`super::view`]): the root under
//! test and the decoys an archive may aim at, as absolute paths inside the view.
//!
//! The view is the jail itself, seen by the extractor as `/`. The root sits four levels
//! down so that its parent and grandparent are directories of their own, each with a
//! decoy; common absolute targets (`/etc`, `/tmp`, `$HOME` of root) hold decoys too.

/// The hydration root, relative to the view's `/`.
pub const VIEW_ROOT: &str = "home/user/ws/root";

/// How many `..` lead from the root to the view's `/`.
pub const VIEW_ROOT_DEPTH: usize = 4;

/// Decoy files (absolute paths in the view) an archive may try to write, overwrite or
/// link to. Each holds `decoy <path>\n`; any change to one, and any new entry anywhere in
/// the view outside the root, is a `containment` finding.
pub const VIEW_DECOYS: [&str; 9] = [
    "/decoy",
    "/home/user/decoy",
    "/home/user/ws/decoy",
    "/etc/passwd",
    "/etc/decoy",
    "/tmp/decoy",
    "/root/.bashrc",
    "/out/target",
    "/out/decoy/file",
];

/// Directories (absolute paths in the view) an archive may aim a link or a member at.
pub const VIEW_DIRS: [&str; 8] = [
    "/",
    "/home/user",
    "/home/user/ws",
    "/etc",
    "/tmp",
    "/root",
    "/out",
    "/out/decoy",
];
