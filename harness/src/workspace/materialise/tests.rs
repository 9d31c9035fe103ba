//! Unit tests of [`super`]: materialising specs, clearing and removing trees.

use super::*;
use crate::model::bytes::RawBytes;
use crate::model::diff::diff_trees;
use crate::model::expected::expected;
use crate::model::profile::{
    AbsoluteRule, EscapingRule, HardlinkRule, ModeRule, MtimeRule, Profile, SpecialRule,
};
use crate::model::spec::Entry;
use crate::model::tree::{Node, NodeKind};
use crate::workspace::observe::observe;

fn p(b: impl Into<Vec<u8>>) -> RelPath {
    RelPath::new(b).expect("valid test path")
}
fn e(path: impl Into<Vec<u8>>, kind: EntryKind, mode: Option<u32>) -> Entry {
    Entry {
        path: p(path),
        kind,
        mode,
    }
}
fn file(content: &str) -> EntryKind {
    EntryKind::File {
        content: content.into(),
    }
}
fn placeholders(root: &Path, out: &Path) -> Placeholders {
    Placeholders {
        root: root.as_os_str().as_bytes().to_vec(),
        out: out.as_os_str().as_bytes().to_vec(),
    }
}
/// Keeps everything a tar archive can hold and compares every bit.
pub(super) fn strict() -> Profile {
    Profile {
        name: "strict".into(),
        hardlinks: HardlinkRule::Preserve,
        special_files: SpecialRule::RefuseAtCapture,
        absolute_symlinks: AbsoluteRule::Keep,
        escaping_symlinks: EscapingRule::Keep,
        modes: ModeRule::Exact,
        mtimes: MtimeRule::Ignore,
    }
}

/// A spec with every entry kind and the awkward cases: non-UTF-8 and newline names, a
/// 255-byte component, a socket path past 108 bytes, 0555 and 0000 directories with
/// children, a setuid file, a hardlink to a symlink, placeholders in link targets.
fn every_kind() -> WorkspaceSpec {
    let long = "L".repeat(255);
    WorkspaceSpec {
        entries: vec![
            e("cache/mod.py", file("VALUE = 1\n"), None),
            e(
                "venv/mod.py",
                EntryKind::Hardlink {
                    target: p("cache/mod.py"),
                },
                None,
            ),
            e("bin/suid", file("#!/bin/sh\n"), Some(0o4755)),
            e("ro", EntryKind::Dir, Some(0o555)),
            e("ro/foo", file("x"), None),
            e("locked", EntryKind::Dir, Some(0o000)),
            e("locked/inner", EntryKind::Dir, Some(0o555)),
            e("locked/inner/secret", file("s"), Some(0o000)),
            e(
                "s",
                EntryKind::Symlink {
                    target: "foo".into(),
                },
                None,
            ),
            e("s2", EntryKind::Hardlink { target: p("s") }, None),
            e(
                "abs",
                EntryKind::Symlink {
                    target: "{root}/cache".into(),
                },
                None,
            ),
            e(
                "out",
                EntryKind::Symlink {
                    target: "{out}/decoy".into(),
                },
                None,
            ),
            e("self", EntryKind::Symlink { target: ".".into() }, None),
            e(b"\xff\xfe".to_vec(), file("non-utf8"), None),
            e("new\nline", file(""), None),
            e(format!("{long}/x"), file("deep"), Some(0o600)),
            e("pipe", EntryKind::Fifo, Some(0o640)),
            e("sock", EntryKind::Socket, None),
            e(format!("{long}/sock"), EntryKind::Socket, None),
            e(
                "null",
                EntryKind::CharDevice { major: 1, minor: 3 },
                Some(0o666),
            ),
            e("empty", EntryKind::Dir, Some(0o1777)),
        ],
        exclusions: vec![],
    }
}

/// Property: observe(materialise(spec)) equals expected(spec) under a profile that
/// keeps everything tar can hold; sockets, which `expected` always drops, are checked
/// on their own.
#[test]
fn materialise_then_observe_round_trips_every_kind() {
    let jail = tempfile::tempdir().expect("tempdir");
    let root = jail.path().join("root");
    let ph = placeholders(&root, &jail.path().join("out"));
    let spec = every_kind();
    let made = materialise(&spec, &root, &ph).expect("materialise");
    let mut observed = observe(&root).expect("observe");
    let socket = Node {
        kind: NodeKind::Socket,
        mode: 0o644,
    };
    let long_sock = p(format!("{}/sock", "L".repeat(255)));
    for sock in [p("sock"), long_sock.clone()] {
        assert_eq!(
            observed.nodes.remove(&sock),
            Some(socket.clone()),
            "socket `{sock}`"
        );
    }
    let mut want = expected(&spec, &strict(), &ph).tree;
    if made.skipped.iter().any(|(path, _)| path == &p("null")) {
        want.nodes.remove(&p("null")); // no CAP_MKNOD here
    }
    assert!(
        made.skipped.iter().all(|(path, _)| path == &p("null")),
        "{:?}",
        made.skipped
    );
    let diff = diff_trees(&want, &observed);
    assert!(diff.is_empty(), "round trip differs:\n{diff}");
    // Spot checks of what the comparison rests on.
    assert_eq!(
        observed.nodes[&p("bin/suid")].mode,
        0o4755,
        "setuid survives the write"
    );
    let abs = RawBytes([ph.root.as_slice(), b"/cache"].concat());
    assert_eq!(
        observed.nodes[&p("abs")].kind,
        NodeKind::Symlink { target: abs }
    );
    assert!(
        observed.shared_inodes.contains(&vec![p("s"), p("s2")]),
        "H8 shares the symlink inode"
    );
    remove_tree(jail.path()).expect("remove_tree");
    assert!(!jail.path().exists());
}

/// `remove_tree` removes 0000 and 0555 directories with children; a symlink passed to
/// it or met inside is unlinked, never followed.
#[test]
fn remove_tree_cleans_unreadable_dirs_without_following_links() {
    let jail = tempfile::tempdir().expect("tempdir");
    let keep = jail.path().join("keep");
    std::fs::create_dir(&keep).expect("mkdir keep");
    std::fs::write(keep.join("canary"), "c").expect("write canary");
    let root = jail.path().join("root");
    let ph = placeholders(&root, &keep);
    let spec = WorkspaceSpec {
        entries: vec![
            e("a", EntryKind::Dir, Some(0o000)),
            e("a/b", EntryKind::Dir, Some(0o555)),
            e("a/b/c", file("x"), Some(0o000)),
            e(
                "a/link",
                EntryKind::Symlink {
                    target: "{out}".into(),
                },
                None,
            ),
        ],
        exclusions: vec![],
    };
    materialise(&spec, &root, &ph).expect("materialise");
    let link = jail.path().join("link-to-keep");
    std::os::unix::fs::symlink(&keep, &link).expect("symlink");
    remove_tree(&link).expect("remove link");
    remove_tree(&root).expect("remove root");
    assert!(!root.exists() && std::fs::symlink_metadata(&link).is_err());
    assert_eq!(
        std::fs::read_to_string(keep.join("canary")).expect("canary"),
        "c"
    );
    remove_tree(&root).expect("a missing path is fine");
}

/// `clear_dir` empties the root, keeps it and its mode, and refuses a symlink root.
#[test]
fn clear_dir_keeps_the_root() {
    let jail = tempfile::tempdir().expect("tempdir");
    let root = jail.path().join("root");
    let spec = WorkspaceSpec {
        entries: vec![
            e("d", EntryKind::Dir, Some(0o000)),
            e("d/f", file("x"), None),
            e("f", file("y"), None),
        ],
        exclusions: vec![],
    };
    materialise(&spec, &root, &Placeholders::default()).expect("materialise");
    rustix::fs::chmod(&root, Mode::from_raw_mode(0o500)).expect("chmod root");
    clear_dir(&root).expect("clear_dir");
    assert_eq!(std::fs::read_dir(&root).expect("read root").count(), 0);
    let mode = std::fs::symlink_metadata(&root).expect("lstat root");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        mode.permissions().mode() & 0o7777,
        0o500,
        "root mode restored"
    );
    let link = jail.path().join("link");
    std::os::unix::fs::symlink(&root, &link).expect("symlink");
    assert!(clear_dir(&link).is_err(), "a symlink root is refused");
}

/// Errors name the entry; an inconsistent spec is refused before anything is created.
#[test]
fn errors_name_the_path() {
    let jail = tempfile::tempdir().expect("tempdir");
    let root = jail.path().join("root");
    std::fs::create_dir(&root).expect("mkdir");
    std::fs::write(root.join("taken"), "x").expect("write");
    let spec = WorkspaceSpec {
        entries: vec![e("taken", file("y"), None)],
        exclusions: vec![],
    };
    let err = materialise(&spec, &root, &Placeholders::default()).expect_err("collides");
    assert!(err.to_string().contains("`taken`"), "{err}");
    let sock = WorkspaceSpec {
        entries: vec![e("taken", EntryKind::Socket, None)],
        exclusions: vec![],
    };
    let err = materialise(&sock, &root, &Placeholders::default()).expect_err("collides");
    assert!(err.to_string().contains("bind socket `taken`"), "{err}");
    assert_eq!(
        std::fs::read_to_string(root.join("taken")).expect("kept"),
        "x"
    );
    let bad = WorkspaceSpec {
        entries: vec![e("b", EntryKind::Hardlink { target: p("a") }, None)],
        exclusions: vec![],
    };
    let err = materialise(&bad, &root, &Placeholders::default()).expect_err("bad spec");
    assert!(matches!(err, MaterialiseError::Spec(_)), "{err}");
    let order = WorkspaceSpec {
        entries: vec![e("a/b", EntryKind::Dir, None), e("a", EntryKind::Dir, None)],
        exclusions: vec![],
    };
    assert!(
        matches!(order.check(), Err(SpecError::ParentAfterChild(..))),
        "check() refuses a parent after its child"
    );
    let err = materialise(&order, &root, &Placeholders::default()).expect_err("order");
    assert_eq!(
        err.to_string(),
        "invalid spec: directory `a` is listed after `a/b`, which lies under it"
    );
    assert!(!root.join("a").exists(), "nothing created");
    let nested = jail.path().join("no/such/root");
    let err = materialise(&spec, &nested, &Placeholders::default()).expect_err("no parent");
    assert!(err.to_string().contains("no/such/root"), "{err}");
}

#[test]
fn can_create_follows_privilege() {
    let root = rustix::process::geteuid().is_root();
    assert_eq!(
        can_create(&EntryKind::CharDevice { major: 1, minor: 3 }),
        root
    );
    assert!(can_create(&EntryKind::Fifo) && can_create(&EntryKind::Socket));
}
