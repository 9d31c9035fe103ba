//! One test (at least) per reason code: the archive is refused with that code, the member is
//! named, and nothing is written (the root, absent before, stays absent; the jail is intact).

use crate::common;

use common::{jailed, reason, Jail, Raw};
use snapconf_extract::{
    hydrate, validate, AbsoluteSymlinks, Duplicates, EscapingSymlinks, Hardlinks, HydrateError,
    Limits, Policy, Reason, SpecialFiles,
};

/// Hydrates `ar` into a fresh jail (with and without a prior workspace), checks the refusal
/// code against `validate`, and returns the member name.
fn refused(ar: &[u8], policy: &Policy, want: Reason) -> Vec<u8> {
    let v = validate(ar, policy);
    assert_eq!(
        v.as_ref().err().and_then(HydrateError::reason),
        Some(want),
        "validate: {v:?}"
    );
    for with_prior in [false, true] {
        let jail = Jail::new();
        if with_prior {
            jail.prior(&[("keep", "prior"), ("d/x", "prior")]);
        }
        let r = jailed(&jail, || hydrate(ar, &jail.root(), policy));
        assert_eq!(reason(&r), Some(want.as_str()), "hydrate: {r:?}");
        assert_eq!(jail.root().exists(), with_prior);
        let leftovers: Vec<_> = std::fs::read_dir(jail.path())
            .expect("read_dir")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("snapconf"))
            .collect();
        assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
    }
    match v {
        Err(HydrateError::Refused { member, .. }) => member,
        other => panic!("not refused: {other:?}"),
    }
}

fn p() -> Policy {
    Policy::default()
}

#[test]
fn absolute_path() {
    let ar = Raw::new()
        .file("ok", b"1")
        .file("/etc/passwd", b"x")
        .finish();
    assert_eq!(refused(&ar, &p(), Reason::AbsolutePath), b"/etc/passwd");
}

/// CVE-2001-1267 / CVE-2007-4131 shapes: `..` at the start, in the middle, via PAX path.
#[test]
fn parent_traversal() {
    for name in ["../evil", "a/../../evil", "./a/..", "a/b/../../../x"] {
        let ar = Raw::new().file(name, b"x").finish();
        assert_eq!(refused(&ar, &p(), Reason::ParentTraversal), name.as_bytes());
    }
    let ar = Raw::new()
        .pax(&[("path", b"../pax-evil")])
        .file("innocent", b"x")
        .finish();
    assert_eq!(refused(&ar, &p(), Reason::ParentTraversal), b"../pax-evil");
}

#[test]
fn hardlink_not_allowed() {
    let ar = Raw::new().file("a", b"1").hardlink("b", "a").finish();
    let policy = Policy {
        hardlinks: Hardlinks::Reject,
        ..p()
    };
    assert_eq!(refused(&ar, &policy, Reason::HardlinkNotAllowed), b"b");
}

/// H2: a hardlink whose first name was excluded; also to a directory, to a later member,
/// to an absolute path outside, to a dropped FIFO.
#[test]
fn dangling_hardlink() {
    for hardlinks in [Hardlinks::Copy, Hardlinks::Link] {
        let policy = Policy { hardlinks, ..p() };
        let cases: Vec<Vec<u8>> = vec![
            Raw::new().hardlink("venv/mod.py", "cache/mod.py").finish(),
            Raw::new().dir("d/").hardlink("l", "d").finish(),
            Raw::new()
                .hardlink("l", "later")
                .file("later", b"x")
                .finish(),
            Raw::new().hardlink("l", "/etc/passwd").finish(),
            Raw::new()
                .push(b'6', b"fifo", b"", b"", 0o644)
                .hardlink("l", "fifo")
                .finish(),
        ];
        for ar in cases {
            assert_eq!(
                refused(&ar, &policy, Reason::DanglingHardlink),
                refused_name(&ar, &policy)
            );
        }
    }
}

fn refused_name(ar: &[u8], policy: &Policy) -> Vec<u8> {
    match validate(ar, policy) {
        Err(HydrateError::Refused { member, .. }) => member,
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn symlink_escape() {
    let abs = Raw::new().symlink("l", "/etc").finish();
    let policy = Policy {
        absolute_symlinks: AbsoluteSymlinks::Reject,
        ..p()
    };
    assert_eq!(refused(&abs, &policy, Reason::SymlinkEscape), b"l");
    let rel = Raw::new().dir("a/").symlink("a/l", "../../out").finish();
    let policy = Policy {
        escaping_symlinks: EscapingSymlinks::Reject,
        ..p()
    };
    assert_eq!(refused(&rel, &policy, Reason::SymlinkEscape), b"a/l");
    // rebase: outside the original root falls to the escaping policy
    let policy = Policy {
        absolute_symlinks: AbsoluteSymlinks::Rebase,
        escaping_symlinks: EscapingSymlinks::Reject,
        original_root: Some(b"/orig".to_vec()),
        ..p()
    };
    assert_eq!(refused(&abs, &policy, Reason::SymlinkEscape), b"l");
    let sneaky = Raw::new().symlink("l", "/orig/../etc").finish();
    assert_eq!(refused(&sneaky, &policy, Reason::SymlinkEscape), b"l");
    // lexically contained, but `d/up` is itself a link to the root: `x` reaches the parent
    let chain = Raw::new()
        .dir("d/")
        .symlink("d/up", "..")
        .symlink("x", "d/up/..")
        .finish();
    let policy = Policy {
        escaping_symlinks: EscapingSymlinks::Reject,
        ..p()
    };
    assert_eq!(refused(&chain, &policy, Reason::SymlinkEscape), b"x");
    // the same chain order reversed (the link appears before the link it goes through)
    let chain = Raw::new()
        .symlink("x", "d/up/..")
        .dir("d/")
        .symlink("d/up", "..")
        .finish();
    assert_eq!(refused(&chain, &policy, Reason::SymlinkEscape), b"x");
    // contained chains and loops are accepted
    let fine = Raw::new()
        .dir("d/")
        .symlink("d/up", "..")
        .symlink("x", "d/up/d/up/d")
        .symlink("self", ".")
        .symlink("loop1", "loop2")
        .symlink("loop2", "loop1")
        .finish();
    validate(&fine[..], &policy).expect("contained");
}

#[test]
fn through_symlink() {
    let ar = Raw::new()
        .symlink("s", "d")
        .dir("d/")
        .file("s/x", b"x")
        .finish();
    assert_eq!(refused(&ar, &p(), Reason::ThroughSymlink), b"s/x");
    // a dropped absolute symlink still blocks members below it
    let ar = Raw::new().symlink("s", "/tmp").file("s/x", b"x").finish();
    let policy = Policy {
        absolute_symlinks: AbsoluteSymlinks::Drop,
        ..p()
    };
    assert_eq!(refused(&ar, &policy, Reason::ThroughSymlink), b"s/x");
}

#[test]
fn special_file() {
    let policy = Policy {
        special_files: SpecialFiles::Reject,
        ..p()
    };
    for flag in [b'3', b'4', b'6'] {
        let ar = Raw::new().push(flag, b"dev", b"", b"", 0o644).finish();
        assert_eq!(refused(&ar, &policy, Reason::SpecialFile), b"dev");
    }
}

#[test]
fn duplicate() {
    let ar = Raw::new().file("a", b"1").file("./a", b"2").finish();
    assert_eq!(refused(&ar, &p(), Reason::Duplicate), b"./a");
    // last-wins still refuses replacing a directory that has members
    let ar = Raw::new().file("d/x", b"1").file("d", b"2").finish();
    let policy = Policy {
        duplicates: Duplicates::LastWins,
        ..p()
    };
    assert_eq!(refused(&ar, &policy, Reason::Duplicate), b"d");
}

/// H13's core: a payload cut in half; also a header cut short.
#[test]
fn truncated() {
    let full = Raw::new().file("a", b"1").file("b", &[7u8; 2000]).finish();
    let cut = &full[..512 * 3 + 1000];
    assert_eq!(refused(cut, &p(), Reason::Truncated), b"b");
    let cut = &full[..512 * 2 + 100];
    refused(cut, &p(), Reason::Truncated);
}

#[test]
fn limit_exceeded() {
    let ar = Raw::new()
        .file("a", b"1")
        .file("b", b"2")
        .file("c", b"3")
        .finish();
    let policy = Policy {
        limits: Limits {
            members: 2,
            ..Limits::default()
        },
        ..p()
    };
    assert_eq!(refused(&ar, &policy, Reason::LimitExceeded), b"c");
    let policy = Policy {
        limits: Limits {
            total_bytes: 2,
            ..Limits::default()
        },
        ..p()
    };
    assert_eq!(refused(&ar, &policy, Reason::LimitExceeded), b"c");
    let deep = Raw::new().file("a/b/c/d", b"1").finish();
    let policy = Policy {
        limits: Limits {
            link_depth: 3,
            ..Limits::default()
        },
        ..p()
    };
    refused(&deep, &policy, Reason::LimitExceeded);
    let long = Raw::new().file(&"n".repeat(90), b"1").finish();
    let policy = Policy {
        limits: Limits {
            name_len: 80,
            ..Limits::default()
        },
        ..p()
    };
    refused(&long, &policy, Reason::LimitExceeded);
    let pax = Raw::new()
        .pax(&[("comment", &[b'c'; 3000])])
        .file("a", b"1")
        .finish();
    let policy = Policy {
        limits: Limits {
            pax_record: 1024,
            ..Limits::default()
        },
        ..p()
    };
    refused(&pax, &policy, Reason::LimitExceeded);
    let comp = Raw::new()
        .long_name("c".repeat(256).as_bytes())
        .file("x", b"1")
        .finish();
    refused(&comp, &p(), Reason::LimitExceeded);
}

#[test]
fn malformed() {
    // bad checksum
    let mut ar = Raw::new().file("a", b"1").finish();
    ar[0] = b'b';
    refused(&ar, &p(), Reason::Malformed);
    // empty name, NUL in a PAX path, non-directory named like a directory
    refused(&Raw::new().file("", b"1").finish(), &p(), Reason::Malformed);
    let nul = Raw::new()
        .pax(&[("path", b"a\0b")])
        .file("x", b"1")
        .finish();
    refused(&nul, &p(), Reason::Malformed);
    refused(
        &Raw::new().file("a/", b"1").finish(),
        &p(),
        Reason::Malformed,
    );
    // a bad PAX record, an extension header with nothing after it, `.` as a file
    let bad = Raw::new()
        .push(b'x', b"pax", b"", b"99 path=x\n", 0o644)
        .file("x", b"1")
        .finish();
    refused(&bad, &p(), Reason::Malformed);
    refused(
        &Raw::new().long_name(b"dangling").finish(),
        &p(),
        Reason::Malformed,
    );
    refused(
        &Raw::new().file(".", b"1").finish(),
        &p(),
        Reason::Malformed,
    );
    refused(
        &Raw::new().symlink("l", "").finish(),
        &p(),
        Reason::Malformed,
    );
}

/// Unknown flags keep their raw byte; sparse members in forms the reference does not read
/// (type `S` under the POSIX magic, PAX `GNU.sparse.major` without `minor`) are refused
/// (readable ones: `tests/it/sparse/mod.rs`).
#[test]
fn unsupported() {
    let ar = Raw::new().push(b'Z', b"weird", b"", b"", 0o644).finish();
    let e = validate(&ar[..], &p()).expect_err("refused");
    assert!(e.to_string().contains("'Z'"), "{e}");
    refused(&ar, &p(), Reason::Unsupported);
    refused(
        &Raw::new().push(b'S', b"sparse", b"", b"", 0o644).finish(),
        &p(),
        Reason::Unsupported,
    );
    let pax = Raw::new()
        .pax(&[("GNU.sparse.major", b"1"), ("GNU.sparse.name", b"real")])
        .file("GNUSparseFile.0/real", b"map")
        .finish();
    refused(&pax, &p(), Reason::Unsupported);
    let global = Raw::new()
        .push(b'g', b"g", b"", b"12 path=abc\n", 0o644)
        .file("x", b"1")
        .finish();
    refused(&global, &p(), Reason::Unsupported);
}

#[test]
fn not_a_directory() {
    let ar = Raw::new().file("f", b"1").file("f/x", b"2").finish();
    assert_eq!(refused(&ar, &p(), Reason::NotADirectory), b"f/x");
    let ar = Raw::new()
        .push(b'6', b"p", b"", b"", 0o644)
        .file("p/x", b"2")
        .finish();
    assert_eq!(refused(&ar, &p(), Reason::NotADirectory), b"p/x");
}

/// Every code has a distinct, stable string.
#[test]
fn codes_are_stable() {
    let all = [
        (Reason::AbsolutePath, "absolute-path"),
        (Reason::ParentTraversal, "parent-traversal"),
        (Reason::HardlinkNotAllowed, "hardlink-not-allowed"),
        (Reason::DanglingHardlink, "dangling-hardlink"),
        (Reason::SymlinkEscape, "symlink-escape"),
        (Reason::ThroughSymlink, "through-symlink"),
        (Reason::SpecialFile, "special-file"),
        (Reason::Duplicate, "duplicate"),
        (Reason::Truncated, "truncated"),
        (Reason::LimitExceeded, "limit-exceeded"),
        (Reason::Malformed, "malformed"),
        (Reason::Unsupported, "unsupported"),
        (Reason::NotADirectory, "not-a-directory"),
        (Reason::EmptyArchive, "empty-archive"),
        (Reason::DecompressionLimit, "decompression-limit"),
    ];
    for (r, s) in all {
        assert_eq!(r.as_str(), s);
        assert_eq!(r.to_string(), s);
    }
}

/// Deep names do not amplify work or memory: 400 members of 200 components each (about
/// 4 KiB per name, 80,000 implied directories) validate in linear time; the same shape with a
/// member count over the limit is refused.
#[test]
fn deep_names_are_linear() {
    let mut raw = Raw::new();
    for i in 0..400 {
        let name: Vec<String> = (0..200).map(|d| format!("{i:04}-{d:014}")).collect();
        raw.pax(&[("path", name.join("/").as_bytes())])
            .file("x", b"");
    }
    let ar = raw.finish();
    let t = std::time::Instant::now();
    let listing = validate(&ar[..], &p()).expect("valid");
    assert_eq!(listing.members.len(), 400);
    assert!(
        t.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        t.elapsed()
    );
}

/// Members that hide other members: a directory, symlink, hardlink, FIFO or device header
/// with a payload (which other tools read as further headers: here a complete
/// `../../etc/x` member), a PAX `path` or `linkpath` with an empty value beside a ustar
/// name, and a member named both by a PAX record and by a GNU long-name header, are
/// `malformed` under every policy, for `validate` and `hydrate` alike.
#[test]
fn members_hiding_members_are_malformed_under_every_policy() {
    let hidden = Raw::new().file("../../etc/x", b"pwned").finish();
    let hidden = &hidden[..hidden.len() - 1024];
    let policies = [
        p(),
        Policy {
            hardlinks: Hardlinks::Copy,
            duplicates: Duplicates::LastWins,
            special_files: SpecialFiles::Drop,
            ..p()
        },
        Policy {
            hardlinks: Hardlinks::Link,
            absolute_symlinks: AbsoluteSymlinks::Reject,
            escaping_symlinks: EscapingSymlinks::Reject,
            special_files: SpecialFiles::Reject,
            ..p()
        },
    ];
    for (flag, name, link) in [
        (b'5', &b"d/"[..], &b""[..]),
        (b'2', b"s", b"target"),
        (b'1', b"h", b"a"),
        (b'6', b"fifo", b""),
        (b'3', b"chr", b""),
        (b'4', b"blk", b""),
    ] {
        let mut ar = Raw::new();
        ar.file("a", b"1").push(flag, name, link, hidden, 0o755);
        let ar = ar.finish();
        for policy in &policies {
            let member = refused(&ar, policy, Reason::Malformed);
            assert_eq!(member, name, "flag {flag}");
        }
    }
    for key in ["path", "linkpath"] {
        let ar = Raw::new()
            .pax(&[(key, b"")])
            .symlink("s", "target")
            .finish();
        for policy in &policies {
            refused(&ar, policy, Reason::Malformed);
        }
    }
    // One member named twice, by a PAX record and by a GNU long-name (`L`) or long-link
    // (`K`) header, in either order: GNU tar takes the one, the `tar` crate the other.
    let long_link = |ar: &mut Raw, target: &[u8]| {
        let mut d = target.to_vec();
        d.push(0);
        ar.push(b'K', b"././@LongLink", b"", &d, 0o644);
    };
    let mut shapes: Vec<Vec<u8>> = Vec::new();
    let mut ar = Raw::new();
    ar.pax(&[("path", b"../../etc/x")])
        .long_name(b"a")
        .file("a", b"1");
    shapes.push(ar.finish());
    let mut ar = Raw::new();
    ar.long_name(b"a").pax(&[("path", b"b")]).file("a", b"1");
    shapes.push(ar.finish());
    let mut ar = Raw::new();
    ar.pax(&[("linkpath", b"/etc/passwd")]);
    long_link(&mut ar, b"target");
    ar.symlink("s", "target");
    shapes.push(ar.finish());
    for ar in &shapes {
        for policy in &policies {
            refused(ar, policy, Reason::Malformed);
        }
    }
}

/// An archive with no member (only the end-of-archive blocks, or zero blocks of any length)
/// is refused with `empty-archive`, the prior root untouched, unless the policy allows an
/// empty workspace; the message names no member. (No bytes at all is `truncated`.)
#[test]
fn an_archive_without_members_is_refused_unless_allowed() {
    assert_eq!(
        validate(&b""[..], &p()).err().and_then(|e| e.reason()),
        Some(Reason::Truncated)
    );
    let shapes: [Vec<u8>; 2] = [Raw::new().finish(), vec![0u8; 512 * 40]];
    for ar in &shapes {
        let v = validate(&ar[..], &p());
        assert_eq!(
            v.as_ref().err().and_then(HydrateError::reason),
            Some(Reason::EmptyArchive),
            "{} bytes: {v:?}",
            ar.len()
        );
        if let Err(e) = &v {
            assert!(!e.to_string().contains("member ``"), "{e}");
        }
        let jail = Jail::new();
        jail.prior(&[("keep", "prior")]);
        let r = jailed(&jail, || hydrate(&ar[..], &jail.root(), &p()));
        assert_eq!(reason(&r), Some("empty-archive"), "{r:?}");
        assert!(jail.root().join("keep").exists(), "the prior stays");
        let allow = Policy {
            allow_empty: true,
            ..p()
        };
        if !ar.is_empty() {
            assert!(validate(&ar[..], &allow).is_ok());
            let r = jailed(&jail, || hydrate(&ar[..], &jail.root(), &allow));
            assert!(r.is_ok(), "{r:?}");
            assert!(
                !jail.root().join("keep").exists(),
                "an allowed empty archive empties the root"
            );
        }
    }
}
