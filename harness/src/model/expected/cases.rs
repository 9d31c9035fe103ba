//! [`expected`] on the handed cases H1–H8 (docs/cases.md) under every rule of the profile
//! knob each one is about, the mode rules, and the embedded default profile.

use super::fixtures::*;
use super::{expected, features, Expected, Feature};
use crate::model::profile::{
    AbsoluteRule, EscapingRule, HardlinkRule, ModeRule, Profile, SpecialRule,
};
use crate::model::spec::{EntryKind, WorkspaceSpec};
use crate::model::tree::{Node, NodeKind};

/// H1: both names of a shared inode come back with the full content; sharing is
/// compared only under `preserve`; `refuse-at-capture` makes both names refusable.
#[test]
fn h1_shared_inode_under_every_hardlink_rule() {
    let content = file_node("VALUE = 1\n", 0o644);
    for rule in [
        HardlinkRule::Copy,
        HardlinkRule::Preserve,
        HardlinkRule::RefuseAtCapture,
        HardlinkRule::RefuseExcludedAlias,
    ] {
        let profile = Profile {
            hardlinks: rule,
            ..exact()
        };
        let e = expected(&h1(), &profile, &ph());
        assert_eq!(
            names(&e.tree),
            ["cache", "cache/mod.py", "venv", "venv/mod.py"],
            "{rule:?}"
        );
        assert_eq!(e.tree.nodes[&p("cache/mod.py")], content, "{rule:?}");
        assert_eq!(e.tree.nodes[&p("venv/mod.py")], content, "{rule:?}");
        assert_eq!(
            e.tree.nodes[&p("venv")],
            dir_node(0o755),
            "implicit parent is 0755"
        );
        let groups = if rule == HardlinkRule::Preserve {
            vec![vec![p("cache/mod.py"), p("venv/mod.py")]]
        } else {
            vec![]
        };
        assert_eq!(e.tree.shared_inodes, groups, "{rule:?}");
        let refusable = match rule {
            HardlinkRule::RefuseAtCapture => vec![
                (p("cache/mod.py"), Feature::SharedInode),
                (p("venv/mod.py"), Feature::SharedInode),
            ],
            _ => vec![],
        };
        assert_eq!(e.refusable, refusable, "{rule:?}");
    }
}

/// H2: with the first name excluded, the second name still has the full content, the
/// excluded file is gone but its (implicit) directory stays.
#[test]
fn h2_excluded_first_name_keeps_full_content() {
    let mut s = h1();
    s.exclusions = vec![p("cache/mod.py")];
    for rule in [
        HardlinkRule::Copy,
        HardlinkRule::Preserve,
        HardlinkRule::RefuseAtCapture,
        HardlinkRule::RefuseExcludedAlias,
    ] {
        let e = expected(
            &s,
            &Profile {
                hardlinks: rule,
                ..exact()
            },
            &ph(),
        );
        assert_eq!(names(&e.tree), ["cache", "venv", "venv/mod.py"], "{rule:?}");
        assert_eq!(
            e.tree.nodes[&p("venv/mod.py")],
            file_node("VALUE = 1\n", 0o644)
        );
        assert!(
            e.tree.shared_inodes.is_empty(),
            "one kept name is no group ({rule:?})"
        );
        let refusable = match rule {
            HardlinkRule::RefuseAtCapture => vec![(p("venv/mod.py"), Feature::SharedInode)],
            HardlinkRule::RefuseExcludedAlias => {
                vec![(p("venv/mod.py"), Feature::ExcludedAlias)]
            }
            _ => vec![],
        };
        assert_eq!(e.refusable, refusable, "{rule:?}");
    }
    // Excluding the whole directory leaves no trace of it.
    s.exclusions = vec![p("cache")];
    let e = expected(&s, &exact(), &ph());
    assert_eq!(names(&e.tree), ["venv", "venv/mod.py"]);
    assert!(features(&s).contains(&Feature::ExcludedAlias));
}

fn h3() -> WorkspaceSpec {
    spec(
        vec![
            symlink(".venv/bin/python", "/usr/local/bin/python"),
            symlink(".venv/bin/python3", "python"),
            symlink(".venv/bin/inside", "{root}/.venv/lib/x"),
            symlink("top", "{root}"),
            symlink("deep/a/b/root", "{root}/"),
            symlink("climb", "{root}/../etc"),
            symlink("sibling", "{root}x/y"),
        ],
        &[],
    )
}

/// H3 and rebasing: each absolute-symlink rule; relative links are never touched.
#[test]
fn h3_absolute_symlinks_under_every_rule() {
    let s = h3();
    let target = |e: &Expected, path: &str| {
        e.tree.nodes.get(&p(path)).map(|n| match &n.kind {
            NodeKind::Symlink { target } => target.escaped(),
            other => panic!("`{path}` is not a symlink: {other:?}"),
        })
    };
    let keep = expected(&s, &exact(), &ph());
    assert_eq!(
        target(&keep, ".venv/bin/python").as_deref(),
        Some("/usr/local/bin/python")
    );
    assert_eq!(
        target(&keep, ".venv/bin/python3").as_deref(),
        Some("python")
    );
    assert_eq!(
        target(&keep, ".venv/bin/inside").as_deref(),
        Some("/jail/root/.venv/lib/x")
    );
    assert!(keep.refusable.is_empty());

    let rebase = expected(
        &s,
        &Profile {
            absolute_symlinks: AbsoluteRule::RebaseInsideRoot,
            ..exact()
        },
        &ph(),
    );
    assert_eq!(
        target(&rebase, ".venv/bin/python").as_deref(),
        Some("/usr/local/bin/python"),
        "outside the root: verbatim"
    );
    assert_eq!(
        target(&rebase, ".venv/bin/python3").as_deref(),
        Some("python")
    );
    assert_eq!(
        target(&rebase, ".venv/bin/inside").as_deref(),
        Some("../../.venv/lib/x")
    );
    assert_eq!(
        target(&rebase, "top").as_deref(),
        Some("."),
        "top-level link to the root"
    );
    assert_eq!(
        target(&rebase, "deep/a/b/root").as_deref(),
        Some("../../..")
    );
    assert_eq!(
        target(&rebase, "climb").as_deref(),
        Some("/jail/root/../etc"),
        "climbs out: verbatim"
    );
    assert_eq!(
        target(&rebase, "sibling").as_deref(),
        Some("/jail/rootx/y"),
        "a sibling of the root is outside"
    );

    let drop = expected(
        &s,
        &Profile {
            absolute_symlinks: AbsoluteRule::Drop,
            ..exact()
        },
        &ph(),
    );
    assert_eq!(
        names(&drop.tree),
        [
            ".venv",
            ".venv/bin",
            ".venv/bin/python3",
            "deep",
            "deep/a",
            "deep/a/b"
        ]
    );

    let refuse = expected(
        &s,
        &Profile {
            absolute_symlinks: AbsoluteRule::RefuseAtCapture,
            ..exact()
        },
        &ph(),
    );
    assert_eq!(
        refuse.tree, keep.tree,
        "refusable entries are expected as if kept"
    );
    let refused: Vec<String> = refuse
        .refusable
        .iter()
        .map(|(p, f)| format!("{p} {f}"))
        .collect();
    assert_eq!(
        refused,
        [
            ".venv/bin/python absolute-symlink",
            ".venv/bin/inside absolute-symlink",
            "top absolute-symlink",
            "deep/a/b/root absolute-symlink",
            "climb absolute-symlink",
            "sibling absolute-symlink",
        ]
    );
}

/// Escaping relative links are kept under both rules; `refuse-at-capture` lists them.
#[test]
fn escaping_symlinks_under_every_rule() {
    let s = spec(
        vec![symlink("a/up", "../../etc"), symlink("a/ok", "../a/x/..")],
        &[],
    );
    for rule in [EscapingRule::Keep, EscapingRule::RefuseAtCapture] {
        let e = expected(
            &s,
            &Profile {
                escaping_symlinks: rule,
                ..exact()
            },
            &ph(),
        );
        assert_eq!(e.tree.nodes[&p("a/up")], link_node(b"../../etc"));
        assert_eq!(e.tree.nodes[&p("a/ok")], link_node(b"../a/x/.."));
        let want = if rule == EscapingRule::RefuseAtCapture {
            vec![(p("a/up"), Feature::EscapingSymlink)]
        } else {
            vec![]
        };
        assert_eq!(e.refusable, want, "{rule:?}");
    }
    let f = features(&s);
    assert!(f.contains(&Feature::EscapingSymlink));
    assert!(
        f.contains(&Feature::DanglingSymlink),
        "`a/ok` resolves to the missing `a/x`"
    );
}

/// H4 and other specials: FIFOs and char devices follow `special-files`; sockets are
/// always dropped.
#[test]
fn h4_special_files_under_every_rule() {
    let s = spec(
        vec![
            file("a", "x"),
            special("pipe", EntryKind::Fifo),
            special("sock", EntryKind::Socket),
            special("dev/null", EntryKind::CharDevice { major: 1, minor: 3 }),
        ],
        &[],
    );
    let drop = expected(&s, &exact(), &ph());
    assert_eq!(names(&drop.tree), ["a", "dev"]);
    assert!(drop.refusable.is_empty());
    let refuse = expected(
        &s,
        &Profile {
            special_files: SpecialRule::RefuseAtCapture,
            ..exact()
        },
        &ph(),
    );
    assert_eq!(names(&refuse.tree), ["a", "dev", "dev/null", "pipe"]);
    assert_eq!(
        refuse.tree.nodes[&p("pipe")],
        Node {
            kind: NodeKind::Fifo,
            mode: 0o644
        }
    );
    assert_eq!(
        refuse.refusable,
        [
            (p("pipe"), Feature::Fifo),
            (p("sock"), Feature::Socket),
            (p("dev/null"), Feature::CharDevice)
        ]
    );
    let f = features(&s);
    for want in [Feature::Fifo, Feature::Socket, Feature::CharDevice] {
        assert!(f.contains(&want), "{want} missing from {f:?}");
    }
}

/// H5: `self -> .` is kept verbatim and detected as a loop; so are `up -> ..` and a
/// two-link cycle; a link to a sibling directory is not a loop.
#[test]
fn h5_loop_links_are_kept_and_detected() {
    let s = spec(vec![symlink("self", ".")], &[]);
    let e = expected(&s, &exact(), &ph());
    assert_eq!(e.tree.nodes[&p("self")], link_node(b"."));
    assert!(features(&s).contains(&Feature::SymlinkLoop));
    for entries in [
        vec![symlink("d/up", "..")],
        vec![symlink("a", "b"), symlink("b", "a")],
        vec![symlink("d/abs", "{root}/d")],
    ] {
        let s = spec(entries, &[]);
        assert!(features(&s).contains(&Feature::SymlinkLoop), "{s:?}");
    }
    let s = spec(vec![dir("x", 0o755), symlink("d/x", "../x")], &[]);
    let f = features(&s);
    assert!(
        !f.contains(&Feature::SymlinkLoop) && !f.contains(&Feature::DanglingSymlink),
        "{f:?}"
    );
}

/// H6: long, non-UTF-8 and newline names are kept byte-exact.
#[test]
fn h6_odd_names_are_kept_byte_exact() {
    let long_path = format!("{}/{}", "d".repeat(59), "f".repeat(60)); // 120 bytes
    let component = "c".repeat(255);
    let s = spec(
        vec![
            file(&long_path, "x"),
            file(&component, "y"),
            entry(
                pb(b"\xff\xfe"),
                EntryKind::File {
                    content: "z".into(),
                },
                None,
            ),
            entry(
                pb(b"new\nline"),
                EntryKind::File {
                    content: "w".into(),
                },
                None,
            ),
        ],
        &[],
    );
    let e = expected(&s, &exact(), &ph());
    for path in [
        p(&long_path),
        p(&component),
        pb(b"\xff\xfe"),
        pb(b"new\nline"),
    ] {
        assert!(e.tree.nodes.contains_key(&path), "`{path}` missing");
    }
    let f = features(&s);
    for want in [
        Feature::LongName,
        Feature::NonUtf8Name,
        Feature::ControlCharName,
    ] {
        assert!(f.contains(&want), "{want} missing from {f:?}");
    }
}

/// H7: a 0555 directory keeps its mode and its child under `exact`.
#[test]
fn h7_read_only_dir() {
    let s = spec(vec![dir("ro", 0o555), file("ro/foo", "x")], &[]);
    let e = expected(&s, &exact(), &ph());
    assert_eq!(e.tree.nodes[&p("ro")], dir_node(0o555));
    assert_eq!(e.tree.nodes[&p("ro/foo")], file_node("x", 0o644));
    let f = features(&s);
    assert!(
        f.contains(&Feature::ReadOnlyDir) && !f.contains(&Feature::EmptyDir),
        "{f:?}"
    );
}

/// H8: both names of a symlink inode come back as symlinks to `foo`; grouped under
/// `preserve`, dropped together when the target is absolute and the rule is `drop`.
#[test]
fn h8_hardlink_to_symlink() {
    let s = spec(vec![symlink("s", "foo"), hardlink("s2", "s")], &[]);
    let e = expected(&s, &exact(), &ph());
    assert_eq!(e.tree.nodes[&p("s")], link_node(b"foo"));
    assert_eq!(e.tree.nodes[&p("s2")], link_node(b"foo"));
    assert_eq!(e.tree.shared_inodes, [vec![p("s"), p("s2")]]);
    let copy = expected(
        &s,
        &Profile {
            hardlinks: HardlinkRule::Copy,
            ..exact()
        },
        &ph(),
    );
    assert_eq!(copy.tree.nodes, e.tree.nodes);
    assert!(copy.tree.shared_inodes.is_empty());
    assert!(features(&s).contains(&Feature::HardlinkToSymlink));

    let abs = spec(vec![symlink("s", "/abs"), hardlink("d/s2", "s")], &[]);
    let dropped = expected(
        &abs,
        &Profile {
            absolute_symlinks: AbsoluteRule::Drop,
            ..exact()
        },
        &ph(),
    );
    assert_eq!(names(&dropped.tree), ["d"]);
    // Rebased per name: targets differ, so the names cannot share an inode.
    let abs = spec(vec![symlink("s", "{root}/t"), hardlink("d/s2", "s")], &[]);
    let rebased = expected(
        &abs,
        &Profile {
            absolute_symlinks: AbsoluteRule::RebaseInsideRoot,
            ..exact()
        },
        &ph(),
    );
    assert_eq!(rebased.tree.nodes[&p("s")], link_node(b"t"));
    assert_eq!(rebased.tree.nodes[&p("d/s2")], link_node(b"../t"));
    assert!(rebased.tree.shared_inodes.is_empty());
}

/// Every mode rule, on a setuid file, an exec file, a sticky 0777 dir and a 0000 dir.
#[test]
fn modes_under_every_rule() {
    let s = spec(
        vec![
            entry(
                p("suid"),
                EntryKind::File {
                    content: "x".into(),
                },
                Some(0o4755),
            ),
            entry(
                p("plain"),
                EntryKind::File {
                    content: "x".into(),
                },
                Some(0o664),
            ),
            dir("tmp", 0o1777),
            dir("none", 0o000),
            symlink("l", "plain"),
            special("pipe", EntryKind::Fifo),
        ],
        &[],
    );
    let base = Profile {
        special_files: SpecialRule::RefuseAtCapture,
        ..exact()
    };
    let modes = |rule: ModeRule| -> Vec<u32> {
        let e = expected(
            &s,
            &Profile {
                modes: rule,
                ..base.clone()
            },
            &ph(),
        );
        ["suid", "plain", "tmp", "none", "l", "pipe"]
            .iter()
            .map(|n| e.tree.nodes[&p(n)].mode)
            .collect()
    };
    assert_eq!(modes(ModeRule::Exact), [0o4755, 0o664, 0o1777, 0, 0, 0o644]);
    assert_eq!(modes(ModeRule::ExecBit), [0o100, 0, 0, 0, 0, 0]);
    assert_eq!(
        modes(ModeRule::DataFilter),
        [0o755, 0o644, 0o755, 0, 0, 0o644]
    );
    assert_eq!(modes(ModeRule::Ignore), [0, 0, 0, 0, 0, 0]);
    let f = features(&s);
    assert!(
        f.contains(&Feature::SpecialMode) && f.contains(&Feature::ReadOnlyDir),
        "{f:?}"
    );
    assert!(f.contains(&Feature::EmptyDir), "{f:?}");
}

/// The embedded default profile: copy, drop, keep, keep, exec-bit.
#[test]
fn default_profile_on_a_mixed_spec() {
    let mut s = h1();
    s.entries.push(entry(
        p("run.sh"),
        EntryKind::File {
            content: "#!/bin/sh\n".into(),
        },
        Some(0o755),
    ));
    s.entries.push(special("pipe", EntryKind::Fifo));
    s.entries.push(symlink("abs", "/etc/passwd"));
    let e = expected(&s, &Profile::default_profile(), &ph());
    assert_eq!(
        names(&e.tree),
        [
            "abs",
            "cache",
            "cache/mod.py",
            "run.sh",
            "venv",
            "venv/mod.py"
        ]
    );
    assert_eq!(e.tree.nodes[&p("run.sh")].mode, 0o100);
    assert_eq!(e.tree.nodes[&p("cache/mod.py")].mode, 0);
    assert_eq!(e.tree.nodes[&p("cache")].mode, 0);
    assert!(e.tree.shared_inodes.is_empty() && e.refusable.is_empty());
}
