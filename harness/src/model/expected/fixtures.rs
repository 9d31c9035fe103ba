//! Spec, profile and node builders shared by this module's tests.

use crate::model::bytes::{RawBytes, RelPath};
use crate::model::profile::{
    AbsoluteRule, EscapingRule, HardlinkRule, ModeRule, MtimeRule, Profile, SpecialRule,
};
use crate::model::spec::{Entry, EntryKind, Placeholders, WorkspaceSpec};
use crate::model::tree::sha256_hex;
use crate::model::tree::{Node, NodeKind, Tree};

pub(super) fn p(s: &str) -> RelPath {
    RelPath::new(s).expect("valid test path")
}
pub(super) fn pb(b: &[u8]) -> RelPath {
    RelPath::new(b.to_vec()).expect("valid test path")
}
pub(super) fn entry(path: RelPath, kind: EntryKind, mode: Option<u32>) -> Entry {
    Entry { path, kind, mode }
}
pub(super) fn file(path: &str, content: &str) -> Entry {
    entry(
        p(path),
        EntryKind::File {
            content: content.into(),
        },
        None,
    )
}
pub(super) fn dir(path: &str, mode: u32) -> Entry {
    entry(p(path), EntryKind::Dir, Some(mode))
}
pub(super) fn hardlink(path: &str, target: &str) -> Entry {
    entry(p(path), EntryKind::Hardlink { target: p(target) }, None)
}
pub(super) fn symlink(path: &str, target: &str) -> Entry {
    entry(
        p(path),
        EntryKind::Symlink {
            target: target.into(),
        },
        None,
    )
}
pub(super) fn special(path: &str, kind: EntryKind) -> Entry {
    entry(p(path), kind, None)
}
pub(super) fn spec(entries: Vec<Entry>, exclusions: &[&str]) -> WorkspaceSpec {
    WorkspaceSpec {
        entries,
        exclusions: exclusions.iter().map(|s| p(s)).collect(),
    }
}
/// The strictest profile: everything kept and compared.
pub(super) fn exact() -> Profile {
    Profile {
        name: "test-exact".into(),
        hardlinks: HardlinkRule::Preserve,
        special_files: SpecialRule::Drop,
        absolute_symlinks: AbsoluteRule::Keep,
        escaping_symlinks: EscapingRule::Keep,
        modes: ModeRule::Exact,
        mtimes: MtimeRule::Ignore,
    }
}
pub(super) fn ph() -> Placeholders {
    Placeholders {
        root: b"/jail/root".to_vec(),
        out: b"/jail/out".to_vec(),
    }
}
pub(super) fn file_node(content: &str, mode: u32) -> Node {
    Node {
        kind: NodeKind::File {
            size: content.len() as u64,
            sha256: sha256_hex(content.as_bytes()),
        },
        mode,
    }
}
pub(super) fn link_node(target: &[u8]) -> Node {
    Node {
        kind: NodeKind::Symlink {
            target: RawBytes(target.to_vec()),
        },
        mode: 0,
    }
}
pub(super) fn dir_node(mode: u32) -> Node {
    Node {
        kind: NodeKind::Dir,
        mode,
    }
}
pub(super) fn escape_bytes(b: &[u8]) -> String {
    crate::model::bytes::escape(b)
}
pub(super) fn names(tree: &Tree) -> Vec<String> {
    tree.nodes.keys().map(RelPath::escaped).collect()
}

pub(super) fn h1() -> WorkspaceSpec {
    spec(
        vec![
            file("cache/mod.py", "VALUE = 1\n"),
            hardlink("venv/mod.py", "cache/mod.py"),
        ],
        &[],
    )
}
