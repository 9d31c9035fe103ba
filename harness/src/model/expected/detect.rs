//! [`features`]: which [`Feature`]s a spec has.

use super::index::{Index, Resolution};
use super::lexical::{escapes, parent_components};
use super::Feature;
use crate::model::bytes::RelPath;
use crate::model::spec::{EntryKind, WorkspaceSpec};
use std::collections::BTreeSet;

/// The features `spec` has (see [`Feature`] for each definition). Symlink resolution for
/// [`Feature::DanglingSymlink`] and [`Feature::SymlinkLoop`] is simulated on the spec
/// (`{root}/...` targets resolve inside it; other absolute targets are outside and never
/// dangling); [`Feature::EscapingSymlink`] is judged on the target string alone.
pub fn features(spec: &WorkspaceSpec) -> BTreeSet<Feature> {
    let index = Index::new(spec);
    let mut out = BTreeSet::new();
    let has_children: BTreeSet<RelPath> = index
        .entries
        .iter()
        .filter_map(|e| e.path.parent())
        .collect();
    for entry in &index.entries {
        let path = entry.path.as_bytes();
        if path.len() > 100 || entry.path.components().any(|c| c.len() >= 100) {
            out.insert(Feature::LongName);
        }
        match std::str::from_utf8(path) {
            Err(_) => {
                out.insert(Feature::NonUtf8Name);
            }
            Ok(text) if text.chars().any(char::is_control) => {
                out.insert(Feature::ControlCharName);
            }
            Ok(_) => {}
        }
        if path.iter().any(|b| *b < 0x20 || *b == 0x7f) {
            out.insert(Feature::ControlCharName);
        }
        let mode = entry.effective_mode();
        match &entry.kind {
            EntryKind::Dir => {
                if entry.mode.is_some() && mode & 0o200 == 0 {
                    out.insert(Feature::ReadOnlyDir);
                }
                if mode & 0o7000 != 0 || mode & 0o777 == 0 {
                    out.insert(Feature::SpecialMode);
                }
                if !has_children.contains(&entry.path) {
                    out.insert(Feature::EmptyDir);
                }
            }
            EntryKind::File { .. } => {
                if mode & 0o7000 != 0 || mode & 0o777 == 0 || mode & 0o111 != 0 {
                    out.insert(Feature::SpecialMode);
                }
            }
            EntryKind::Hardlink { target } => {
                out.insert(Feature::SharedInode);
                if target.as_bytes().len() > 100 {
                    out.insert(Feature::LongName);
                }
                if let Some(inode) = index.inode_of(entry) {
                    if let EntryKind::Symlink { target } = &inode.kind {
                        out.insert(Feature::HardlinkToSymlink);
                        // The same target string, read from this name's directory.
                        symlink_features(&index, &entry.path, target.as_bytes(), &mut out);
                    }
                    let names = index.names(&inode.path);
                    let excluded = names.iter().filter(|n| spec.is_excluded(n)).count();
                    if excluded > 0 && excluded < names.len() {
                        out.insert(Feature::ExcludedAlias);
                    }
                }
            }
            EntryKind::Symlink { target } => {
                symlink_features(&index, &entry.path, target.as_bytes(), &mut out);
            }
            EntryKind::Fifo => {
                out.insert(Feature::Fifo);
            }
            EntryKind::Socket => {
                out.insert(Feature::Socket);
            }
            EntryKind::CharDevice { .. } => {
                out.insert(Feature::CharDevice);
            }
        }
    }
    out
}

/// The features of a symlink named `link` with target `t` (unresolved placeholders).
fn symlink_features(index: &Index, link: &RelPath, t: &[u8], out: &mut BTreeSet<Feature>) {
    if t.len() > 100 {
        out.insert(Feature::LongName);
    }
    if t.starts_with(b"/") || t.starts_with(b"{root}") || t.starts_with(b"{out}") {
        out.insert(Feature::AbsoluteSymlink);
    } else if escapes(&parent_components(link), t) {
        out.insert(Feature::EscapingSymlink);
    }
    match index.resolve(link, t) {
        Resolution::Dangling => {
            out.insert(Feature::DanglingSymlink);
        }
        Resolution::Loop => {
            out.insert(Feature::SymlinkLoop);
        }
        Resolution::Inside(dir) => {
            // Following the link lands on a directory that contains it: a walker that
            // follows links recurses without end.
            let dir_is_ancestor = index.is_dir(&dir)
                && dir.len() < link.depth()
                && link.components().zip(&dir).all(|(a, b)| a == b.as_slice());
            if dir_is_ancestor {
                out.insert(Feature::SymlinkLoop);
            }
        }
        Resolution::Outside => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;

    /// A plain spec has no features; a non-empty dir, 0644 files and a resolving link none.
    #[test]
    fn plain_spec_has_no_features() {
        let s = spec(vec![file("a/b", "x"), symlink("l", "a/b")], &[]);
        assert_eq!(features(&s), BTreeSet::new());
        assert_eq!(features(&WorkspaceSpec::default()), BTreeSet::new());
    }
}
