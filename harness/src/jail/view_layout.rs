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

/// Directories (absolute paths in the view) an archive may aim a link or a member at: the
/// decoys' directories, and empty decoy directories beside every ancestor of the root
/// ([`VIEW_SIBLINGS`]), so that the common one-`..` shapes (`../out`, `../x` from the root
/// or from any directory above it) and the root's own name with something after it
/// (`../root-x`, `../rootx`: the prefix check of tar-fs 3.1.0, CVE-2025-59343) land on
/// something `containment` sees.
pub const VIEW_DIRS: [&str; 17] = [
    "/",
    "/home/user",
    "/home/user/ws",
    "/etc",
    "/tmp",
    "/root",
    "/out",
    "/out/decoy",
    "/home/user/ws/out",
    "/home/user/ws/x",
    "/home/user/ws/root-x",
    "/home/user/ws/rootx",
    "/home/user/out",
    "/home/user/x",
    "/home/out",
    "/home/x",
    "/x",
];

/// The decoy directories of [`VIEW_DIRS`] beside an ancestor of the root (or the root
/// itself), made for shapes that climb one level and name a sibling.
pub const VIEW_SIBLINGS: [&str; 9] = [
    "/home/user/ws/out",
    "/home/user/ws/x",
    "/home/user/ws/root-x",
    "/home/user/ws/rootx",
    "/home/user/out",
    "/home/user/x",
    "/home/out",
    "/home/x",
    "/x",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sibling decoy directory is a view directory and a child of the root's parent
    /// or of one of its ancestors; each ancestor but `/`'s parent has `out` and `x` beside it.
    #[test]
    fn siblings_sit_beside_every_ancestor_of_the_root() {
        let root: Vec<&str> = VIEW_ROOT.split('/').collect();
        for s in VIEW_SIBLINGS {
            assert!(VIEW_DIRS.contains(&s), "{s}");
            let c: Vec<&str> = s.split('/').filter(|c| !c.is_empty()).collect();
            let (_, parent) = c.split_last().expect("not /");
            assert!(root.starts_with(parent) && parent.len() < root.len(), "{s}");
        }
        for depth in 0..root.len() {
            let parent = root[..depth].join("/");
            for name in ["out", "x"] {
                let p = if parent.is_empty() {
                    format!("/{name}")
                } else {
                    format!("/{parent}/{name}")
                };
                assert!(VIEW_DIRS.contains(&p.as_str()), "{p}");
            }
        }
    }
}
