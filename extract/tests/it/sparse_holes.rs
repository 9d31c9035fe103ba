//! Hostile-review regressions around GNU sparse members and names that other readers take
//! from elsewhere in the header (`extract/src/reader.rs`, `extract/src/plan/mod.rs`):
//!
//! - the placeholder name `GNU.sparse.name` displaces is what BusyBox, the `tar` crate (and
//!   Python, when `path` follows `GNU.sparse.name`) restore: it must be a safe name, not
//!   below a symlink member;
//! - a V7 member (flag `\0`) whose header name ends with `/` but whose final name does not
//!   is a directory to Python, which then reads its payload as further members;
//! - the holes of all sparse files together are bounded by `Limits::sparse_size`, so a few
//!   kilobytes cannot restore terabytes of apparent size.

use snapconf_extract::{validate, Limits, Policy};

use crate::common::{header, reason, Raw};

/// A PAX 0.1 sparse member of 512 data bytes named `ok` by `GNU.sparse.name`, whose
/// placeholder is `placeholder` (as `path` if `as_path`, else in the header).
fn sparse_with_placeholder(raw: &mut Raw, placeholder: &str, as_path: bool) {
    let mut records: Vec<(&str, &[u8])> = vec![
        ("GNU.sparse.name", b"ok"),
        ("GNU.sparse.size", b"512"),
        ("GNU.sparse.numblocks", b"1"),
        ("GNU.sparse.map", b"0,512"),
    ];
    if as_path {
        records.push(("path", placeholder.as_bytes()));
    }
    raw.pax(&records);
    let name = if as_path {
        "GNUSparseFile.0/ok"
    } else {
        placeholder
    };
    raw.push(b'0', name.as_bytes(), b"", &[b'x'; 512], 0o644);
}

#[test]
fn an_escaping_sparse_placeholder_is_refused() {
    for as_path in [true, false] {
        let mut raw = Raw::new();
        sparse_with_placeholder(&mut raw, "../../../tmp/escape", as_path);
        let r = validate(&raw.finish()[..], &Policy::default());
        assert_eq!(
            reason(&r),
            Some("parent-traversal"),
            "as path: {as_path}: {r:?}"
        );
    }
    // GNU tar's own placeholder is fine.
    let mut raw = Raw::new();
    sparse_with_placeholder(&mut raw, "./GNUSparseFile.1234/ok", true);
    validate(&raw.finish()[..], &Policy::default()).expect("GNU tar's placeholder");
}

#[test]
fn a_sparse_placeholder_below_a_symlink_member_is_refused() {
    for as_path in [true, false] {
        let mut raw = Raw::new();
        raw.symlink("l", "/tmp");
        sparse_with_placeholder(&mut raw, "l/x", as_path);
        let r = validate(&raw.finish()[..], &Policy::default());
        assert_eq!(
            reason(&r),
            Some("through-symlink"),
            "as path: {as_path}: {r:?}"
        );
        // The placeholder naming the symlink itself.
        let mut raw = Raw::new();
        raw.symlink("l", "/tmp/x");
        sparse_with_placeholder(&mut raw, "l", as_path);
        let r = validate(&raw.finish()[..], &Policy::default());
        assert_eq!(
            reason(&r),
            Some("through-symlink"),
            "as path: {as_path}: {r:?}"
        );
    }
}

#[test]
fn a_v7_directory_by_header_name_only_is_refused() {
    // The payload is a complete header Python reads as a second member.
    let hidden = header(b'0', b"../../../tmp/smuggled", b"", 0, 0o644);
    for how in ["path", "long", "sparse"] {
        let mut raw = Raw::new();
        match how {
            "path" => {
                raw.pax(&[("path", b"ok")]);
            }
            "long" => {
                raw.long_name(b"ok");
            }
            _ => {
                raw.pax(&[
                    ("GNU.sparse.name", b"ok"),
                    ("GNU.sparse.size", b"512"),
                    ("GNU.sparse.map", b"0,512"),
                ]);
            }
        }
        raw.push(b'\0', b"GNUSparseFile.0/", b"", &hidden, 0o644);
        let r = validate(&raw.finish()[..], &Policy::default());
        assert_eq!(reason(&r), Some("malformed"), "{how}: {r:?}");
    }
    // The other way round (a long directory name cut in the header, as the harness's
    // attack generator writes): Python lists an empty file, nothing hides; accepted.
    let mut raw = Raw::new();
    raw.pax(&[("path", b"d/")]);
    raw.push(b'\0', b"d", b"", b"", 0o755);
    validate(&raw.finish()[..], &Policy::default()).expect("a directory by its PAX path");
    // Agreeing names are fine, either way.
    let mut raw = Raw::new();
    raw.pax(&[("path", b"d/")])
        .push(b'\0', b"x/", b"", b"", 0o755);
    raw.pax(&[("path", b"f")])
        .push(b'\0', b"x", b"", b"abc", 0o644);
    let listing = validate(&raw.finish()[..], &Policy::default()).expect("agreeing names");
    assert_eq!(listing.members.len(), 2);
}

/// A PAX 0.1 member `name` of `real` bytes, all hole.
fn all_hole(raw: &mut Raw, name: &str, real: u64) {
    let map = format!("{real},0");
    let size = real.to_string();
    raw.pax(&[
        ("GNU.sparse.name", name.as_bytes()),
        ("GNU.sparse.size", size.as_bytes()),
        ("GNU.sparse.map", map.as_bytes()),
    ]);
    raw.push(
        b'0',
        format!("GNUSparseFile.0/{name}").as_bytes(),
        b"",
        b"",
        0o644,
    );
}

#[test]
fn the_holes_of_the_whole_archive_are_bounded() {
    let policy = Policy {
        limits: Limits {
            sparse_size: 1 << 20,
            ..Limits::default()
        },
        ..Policy::default()
    };
    // Two files of the limit each: each alone fits, together they do not.
    let mut raw = Raw::new();
    all_hole(&mut raw, "a", 1 << 20);
    validate(&raw.finish()[..], &policy).expect("one file at the limit");
    all_hole(&mut raw, "b", 1 << 20);
    let r = validate(&raw.finish()[..], &policy);
    assert_eq!(reason(&r), Some("limit-exceeded"), "{r:?}");
    // A hardlink restored as a copy counts again.
    let mut raw = Raw::new();
    all_hole(&mut raw, "a", 1 << 20);
    raw.hardlink("b", "a");
    let r = validate(&raw.finish()[..], &policy);
    assert_eq!(reason(&r), Some("limit-exceeded"), "{r:?}");
    // Under the default limits, 50 files of 64 GiB from a 100 KiB archive.
    let mut raw = Raw::new();
    for i in 0..50 {
        all_hole(&mut raw, &format!("f{i}"), 64 << 30);
    }
    let r = validate(&raw.finish()[..], &Policy::default());
    assert_eq!(reason(&r), Some("limit-exceeded"), "{r:?}");
}
