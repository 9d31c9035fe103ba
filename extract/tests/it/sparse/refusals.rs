//! Refusals: each malformed class, in every encoding it can be written in. Each runs in a
//! jail with a prior workspace: a refusal leaves it and everything outside it as they were.

use std::fs::{self, File};

use snapconf_extract::{hydrate, hydrate_file, Limits, Policy};

use super::each_accepts;
use super::writer::{archive, map_lines, push_sparse, Format, Sparse, FORMATS};
use crate::common::{jailed, reason, set_checksum, Jail, Raw};

/// Hydrates `ar` (as a stream and by offset) under `policy`; both must refuse with `code`.
fn refused_with(ar: &[u8], policy: &Policy, code: &str, what: &str) {
    let jail = Jail::new();
    jail.prior(&[("keep.txt", "prior\n")]);
    let r = jailed(&jail, || hydrate(ar, &jail.root(), policy));
    assert_eq!(reason(&r), Some(code), "{what} (stream): {r:?}");
    let path = jail.path().join("archive.tar");
    fs::write(&path, ar).expect("write");
    let file = File::open(&path).expect("open");
    let r = jailed(&jail, || hydrate_file(&file, &jail.root(), policy));
    assert_eq!(reason(&r), Some(code), "{what} (file): {r:?}");
}

fn each_format(s: &Sparse, policy: &Policy, code: &str, what: &str) {
    for f in FORMATS {
        refused_with(&archive(f, s), policy, code, &format!("{what}, {f:?}"));
    }
}

#[test]
fn overlapping_or_unordered_regions_are_refused() {
    let s = Sparse::new(4096, &[(0, 1024), (512, 512), (4096, 0)]);
    each_format(&s, &Policy::default(), "malformed", "overlap");
    let s = Sparse::new(4096, &[(2048, 512), (0, 512), (4096, 0)]);
    each_format(&s, &Policy::default(), "malformed", "descending");
}

#[test]
fn a_region_beyond_realsize_is_refused() {
    let s = Sparse::new(1200, &[(0, 512), (1000, 512)]);
    each_format(&s, &Policy::default(), "malformed", "beyond realsize");
    // An offset + length overflowing u64.
    let s = Sparse::new(1 << 30, &[(u64::MAX - 10, 512)]);
    each_format(&s, &Policy::default(), "malformed", "overflow");
}

#[test]
fn too_many_entries_are_refused() {
    let policy = Policy {
        limits: Limits {
            sparse_regions: 4,
            ..Limits::default()
        },
        ..Policy::default()
    };
    let map: Vec<(u64, u64)> = (0..5).map(|i| (i * 4096, 512)).collect();
    let s = Sparse::new(4 * 4096 + 512, &map);
    each_format(&s, &policy, "limit-exceeded", "count over the limit");
    // The limit counts the whole archive: two members of three entries each.
    let s = Sparse::new(8192 + 512, &[(0, 512), (4096, 512), (8192, 512)]);
    let mut raw = Raw::new();
    push_sparse(&mut raw, Format::Pax01, "a", &s);
    push_sparse(&mut raw, Format::Pax01, "b", &s);
    refused_with(&raw.finish(), &policy, "limit-exceeded", "archive total");
    // Under the limit, the same map is accepted.
    each_accepts(&Sparse::new(8192 + 512, &map[..3]), &policy);
}

#[test]
fn realsize_over_the_limit_is_refused() {
    let policy = Policy {
        limits: Limits {
            sparse_size: 1 << 20,
            ..Limits::default()
        },
        ..Policy::default()
    };
    let s = Sparse::new((1 << 20) + 1, &[(0, 512), ((1 << 20) + 1, 0)]);
    each_format(&s, &policy, "limit-exceeded", "realsize over the limit");
    // The default limit (64 GiB) refuses 2^40 bytes of holes.
    let s = Sparse::new(1 << 40, &[(0, 512), (1 << 40, 0)]);
    each_format(&s, &Policy::default(), "limit-exceeded", "realsize 2^40");
    // `each_accepts` adds a hardlink copy, whose holes count again toward the same limit
    // for the whole archive (`sparse_holes.rs`): a file and its copy of half the limit fit.
    each_accepts(&Sparse::new(1 << 19, &[(0, 512), (1 << 19, 0)]), &policy);
}

/// A map whose regions do not add up to the data the member stores (the header's `size`,
/// or a PAX `size`).
#[test]
fn a_map_sum_mismatch_is_refused() {
    for f in FORMATS {
        let mut s = Sparse::new(8192, &[(0, 512), (4096, 512), (8192, 0)]);
        s.data.truncate(512);
        refused_with(
            &archive(f, &s),
            &Policy::default(),
            "malformed",
            &format!("{f:?}"),
        );
    }
    // A PAX `size` disagreeing with the map (the header's size agrees).
    let s = Sparse::new(4096, &[(0, 512), (4096, 0)]);
    let mut raw = Raw::new();
    raw.pax(&[
        ("size", b"1024"),
        ("GNU.sparse.size", b"4096"),
        ("GNU.sparse.numblocks", b"2"),
        ("GNU.sparse.map", b"0,512,4096,0"),
    ])
    .file("f", &s.data);
    refused_with(&raw.finish(), &Policy::default(), "malformed", "PAX size");
}

/// The two forms GNU tar reads differently from other readers.
#[test]
fn maps_gnu_tar_reads_differently_are_refused() {
    // A region after one that does not fill its last block.
    let s = Sparse::new(8192, &[(0, 100), (4096, 4096)]);
    each_format(&s, &Policy::default(), "malformed", "unaligned region data");
    // A map ending short of the file's size (no `realsize,0` entry).
    let s = Sparse::new(8192, &[(0, 512)]);
    each_format(&s, &Policy::default(), "malformed", "short map");
    // Both fine when the short region is the last one with data.
    each_accepts(
        &Sparse::new(8192, &[(0, 512), (4000, 100), (8192, 0)]),
        &Policy::default(),
    );
}

#[test]
fn bad_numbers_are_refused() {
    let p = Policy::default();
    let bad = |records: &[(&str, &[u8])], what: &str| {
        let mut raw = Raw::new();
        raw.pax(records).file("f", &[b'x'; 512]);
        refused_with(&raw.finish(), &p, "malformed", what);
    };
    let map = ("GNU.sparse.map", &b"0,512,4096,0"[..]);
    bad(&[("GNU.sparse.size", b"4k"), map], "size not decimal");
    bad(&[("GNU.sparse.size", b"-1"), map], "negative");
    bad(
        &[("GNU.sparse.size", b"18446744073709551616"), map],
        "over u64",
    );
    bad(
        &[
            ("GNU.sparse.size", b"4096"),
            ("GNU.sparse.map", b"0,512,4096,"),
        ],
        "empty map item",
    );
    bad(
        &[
            ("GNU.sparse.size", b"4096"),
            ("GNU.sparse.numblocks", b"2"),
            ("GNU.sparse.offset", b"0"),
            ("GNU.sparse.numbytes", b"0x200"),
        ],
        "0.0 numbytes",
    );
    // 1.0 map lines.
    for lines in [
        &b"1\n0\n5l2\n"[..],
        b"1\n0\n\n512\n",
        b"1\n0 512\n",
        b"1\n-0\n512\n",
    ] {
        let mut data = lines.to_vec();
        data.resize(512, 0);
        data.extend_from_slice(&[b'x'; 512]);
        let mut raw = Raw::new();
        raw.pax(&[
            ("GNU.sparse.major", b"1"),
            ("GNU.sparse.minor", b"0"),
            ("GNU.sparse.realsize", b"512"),
        ])
        .file("f", &data);
        refused_with(
            &raw.finish(),
            &p,
            "malformed",
            &String::from_utf8_lossy(lines),
        );
    }
    // Old GNU: a non-octal digit in an entry, an empty realsize.
    let s = Sparse::new(512, &[(0, 512)]);
    let good = archive(Format::OldGnu, &s);
    let mut ar = good.clone();
    ar[386 + 12 + 10] = b'9';
    resum(&mut ar);
    refused_with(&ar, &p, "malformed", "octal 9");
    let mut ar = good;
    ar[483..495].fill(0);
    resum(&mut ar);
    refused_with(&ar, &p, "malformed", "empty realsize");
}

/// Recomputes the first header's checksum.
fn resum(ar: &mut [u8]) {
    let mut h = [0u8; 512];
    h.copy_from_slice(&ar[..512]);
    set_checksum(&mut h);
    ar[..512].copy_from_slice(&h);
}

#[test]
fn mixed_or_unknown_formats_are_refused() {
    let p = Policy::default();
    let data = [b'x'; 512];
    let one = |records: &[(&str, &[u8])], code: &str, what: &str| {
        let mut raw = Raw::new();
        raw.pax(records).file("f", &data);
        refused_with(&raw.finish(), &p, code, what);
    };
    one(
        &[
            ("GNU.sparse.major", b"1"),
            ("GNU.sparse.minor", b"0"),
            ("GNU.sparse.realsize", b"512"),
            ("GNU.sparse.map", b"0,512"),
        ],
        "malformed",
        "1.0 and 0.1",
    );
    one(
        &[
            ("GNU.sparse.size", b"512"),
            ("GNU.sparse.numblocks", b"1"),
            ("GNU.sparse.offset", b"0"),
            ("GNU.sparse.numbytes", b"512"),
            ("GNU.sparse.map", b"0,512"),
        ],
        "malformed",
        "0.0 and 0.1",
    );
    one(
        &[("GNU.sparse.major", b"2"), ("GNU.sparse.minor", b"0")],
        "unsupported",
        "version 2.0",
    );
    one(
        &[("GNU.sparse.major", b"1"), ("GNU.sparse.realsize", b"512")],
        "unsupported",
        "1.? (no minor)",
    );
    one(
        &[("GNU.sparse.size", b"512"), ("GNU.sparse.wat", b"1")],
        "unsupported",
        "unknown keyword",
    );
    one(&[("GNU.sparse.size", b"512")], "malformed", "no map");
    one(
        &[
            ("GNU.sparse.size", b"512"),
            ("GNU.sparse.size", b"512"),
            ("GNU.sparse.map", b"0,512"),
        ],
        "malformed",
        "a keyword twice",
    );
    one(
        &[
            ("GNU.sparse.size", b"512"),
            ("GNU.sparse.numblocks", b"2"),
            ("GNU.sparse.map", b"0,512"),
        ],
        "malformed",
        "numblocks disagrees",
    );
    one(
        &[
            ("GNU.sparse.size", b"512"),
            ("GNU.sparse.offset", b"0"),
            ("GNU.sparse.numbytes", b"512"),
            ("GNU.sparse.numblocks", b"1"),
        ],
        "malformed",
        "0.0 offset before numblocks",
    );
    // PAX sparse keywords on an old GNU member: two maps.
    let s = Sparse::new(512, &[(0, 512)]);
    let mut raw = Raw::new();
    raw.pax(&[("GNU.sparse.size", b"512"), ("GNU.sparse.map", b"0,512")]);
    push_sparse(&mut raw, Format::OldGnu, "f", &s);
    refused_with(&raw.finish(), &p, "malformed", "PAX keys on type S");
    // On a directory.
    let mut raw = Raw::new();
    raw.pax(&[("GNU.sparse.size", b"0"), ("GNU.sparse.map", b"0,0")])
        .dir("d");
    refused_with(&raw.finish(), &p, "malformed", "on a directory");
    // Type `S` under the POSIX magic: its map bytes are the name's prefix there.
    let mut ar = archive(Format::OldGnu, &s);
    ar[257..265].copy_from_slice(b"ustar\x0000");
    resum(&mut ar);
    refused_with(&ar, &p, "unsupported", "type S, POSIX magic");
    // `isextended` after an empty entry (GNU tar stops at the empty entry).
    let mut ar = archive(Format::OldGnu, &s);
    ar[482] = 1;
    resum(&mut ar);
    refused_with(&ar, &p, "malformed", "isextended after an empty entry");
}

#[test]
fn truncated_maps_are_refused() {
    let p = Policy::default();
    // Old GNU: `isextended` set, the archive ends after the header.
    let map: Vec<(u64, u64)> = (0..6).map(|i| (i * 4096, 512)).collect();
    let s = Sparse::new(5 * 4096 + 512, &map);
    let ar = archive(Format::OldGnu, &s);
    refused_with(&ar[..512], &p, "truncated", "old GNU, no extension block");
    // PAX 1.0: the archive ends inside the map's blocks.
    let map: Vec<(u64, u64)> = (0..100).map(|i| (i * 4096, 512)).collect();
    let s = Sparse::new(99 * 4096 + 512, &map);
    let ar = archive(Format::Pax10, &s);
    let header_end = ar.windows(7).position(|w| w == b"GNUSpar").expect("member") + 512;
    refused_with(&ar[..header_end + 512], &p, "truncated", "1.0 map cut");
    // PAX 1.0: the map runs past the member's data (its size counts one block only): 255
    // entries announced, the block ends after 127 of them.
    let mut lines = b"255\n".to_vec();
    lines.extend(b"1\n".repeat(254));
    assert_eq!(lines.len(), 512);
    let mut raw = Raw::new();
    raw.pax(&[
        ("GNU.sparse.major", b"1"),
        ("GNU.sparse.minor", b"0"),
        ("GNU.sparse.realsize", b"8192"),
    ])
    .file("f", &lines);
    refused_with(&raw.finish(), &p, "malformed", "1.0 map past the data");
}

/// The real name goes through the same checks as any member name.
#[test]
fn the_sparse_name_is_checked_like_any_name() {
    let p = Policy::default();
    for (name, code) in [
        (&b"../escape"[..], "parent-traversal"),
        (b"/abs", "absolute-path"),
    ] {
        let mut raw = Raw::new();
        raw.pax(&[
            ("GNU.sparse.major", b"1"),
            ("GNU.sparse.minor", b"0"),
            ("GNU.sparse.name", name),
            ("GNU.sparse.realsize", b"512"),
        ]);
        let mut data = map_lines(&[(0, 512)]);
        data.extend_from_slice(&[b'x'; 512]);
        raw.file("GNUSparseFile.0/ok", &data);
        refused_with(&raw.finish(), &p, code, code);
    }
    // A GNU long name and `GNU.sparse.name` for one member.
    let mut raw = Raw::new();
    raw.long_name(b"other").pax(&[
        ("GNU.sparse.size", b"512"),
        ("GNU.sparse.name", b"f"),
        ("GNU.sparse.map", b"0,512"),
    ]);
    raw.file("GNUSparseFile.0/f", &[b'x'; 512]);
    refused_with(&raw.finish(), &p, "malformed", "long name and sparse name");
}
