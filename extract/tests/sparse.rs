//! GNU sparse members (GNU tar manual, "Storing Sparse Files"; `extract/src/sparse.rs`):
//! each class's archive of `corpora/sparse/` hydrates to the tree GNU tar extracts, holes
//! kept; every malformed class is refused before anything is written; random hole maps
//! written in each of the four formats hydrate to the expected bytes.

mod common;

use std::fs::{self, File};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{header, jailed, reason, set_checksum, skip::skip, Jail, Raw};
use proptest::prelude::*;
use snapconf_extract::{hydrate, hydrate_file, list, Limits, Policy};

// ---------------------------------------------------------------------------------------
// A writer of the four formats (the tests' own, from the GNU tar manual's description).
// ---------------------------------------------------------------------------------------

/// The four encodings of a sparse member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    OldGnu,
    Pax00,
    Pax01,
    Pax10,
}

const FORMATS: [Format; 4] = [Format::OldGnu, Format::Pax00, Format::Pax01, Format::Pax10];

/// A sparse file: its size, its map (offset, length) and the bytes of its regions in
/// map order.
#[derive(Clone, Debug)]
struct Sparse {
    real: u64,
    map: Vec<(u64, u64)>,
    data: Vec<u8>,
}

impl Sparse {
    /// A file whose regions hold a byte pattern.
    fn new(real: u64, map: &[(u64, u64)]) -> Sparse {
        let total: u64 = map.iter().map(|r| r.1).sum();
        let data = (0..total).map(|i| b'a' + (i % 26) as u8).collect();
        Sparse {
            real,
            map: map.to_vec(),
            data,
        }
    }

    /// The file's bytes: zeros, with each region's data at its offset.
    fn expected(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.real as usize];
        let mut at = 0usize;
        for &(off, len) in &self.map {
            let (off, len) = (off as usize, len as usize);
            out[off..off + len].copy_from_slice(&self.data[at..at + len]);
            at += len;
        }
        out
    }
}

/// 12-byte numeric field: octal, or base-256 when it does not fit.
fn num12(v: u64) -> [u8; 12] {
    let mut f = [0u8; 12];
    if v < 1 << 33 {
        f[..11].copy_from_slice(format!("{v:011o}").as_bytes());
    } else {
        f[0] = 0x80;
        f[4..].copy_from_slice(&v.to_be_bytes());
    }
    f
}

fn entry(off: u64, len: u64) -> Vec<u8> {
    [num12(off), num12(len)].concat()
}

/// The map lines of a PAX 1.0 member, padded to a block.
fn map_lines(map: &[(u64, u64)]) -> Vec<u8> {
    let mut t = format!("{}\n", map.len());
    for (o, l) in map {
        t.push_str(&format!("{o}\n{l}\n"));
    }
    let mut b = t.into_bytes();
    b.resize(b.len().div_ceil(512) * 512, 0);
    b
}

/// Appends `s` as a member named `name` in `format`.
fn push_sparse(raw: &mut Raw, format: Format, name: &str, s: &Sparse) {
    let real = s.real.to_string();
    let n = s.map.len().to_string();
    let placeholder = format!("GNUSparseFile.0/{name}");
    match format {
        Format::OldGnu => {
            let mut h = header(b'S', name.as_bytes(), b"", s.data.len() as u64, 0o644);
            h[257..265].copy_from_slice(b"ustar  \0");
            let (head, rest) = s.map.split_at(s.map.len().min(4));
            for (i, &(o, l)) in head.iter().enumerate() {
                h[386 + 24 * i..410 + 24 * i].copy_from_slice(&entry(o, l));
            }
            h[482] = u8::from(!rest.is_empty());
            h[483..495].copy_from_slice(&num12(s.real));
            set_checksum(&mut h);
            raw.bytes.extend_from_slice(&h);
            let chunks: Vec<_> = rest.chunks(21).collect();
            for (i, chunk) in chunks.iter().enumerate() {
                let mut b = [0u8; 512];
                for (j, &(o, l)) in chunk.iter().enumerate() {
                    b[24 * j..24 * j + 24].copy_from_slice(&entry(o, l));
                }
                b[504] = u8::from(i + 1 < chunks.len());
                raw.bytes.extend_from_slice(&b);
            }
            raw.data(&s.data);
        }
        Format::Pax00 => {
            let pairs: Vec<(String, String)> = s
                .map
                .iter()
                .map(|(o, l)| (o.to_string(), l.to_string()))
                .collect();
            let mut records: Vec<(&str, &[u8])> = vec![
                ("GNU.sparse.size", real.as_bytes()),
                ("GNU.sparse.numblocks", n.as_bytes()),
            ];
            for (o, l) in &pairs {
                records.push(("GNU.sparse.offset", o.as_bytes()));
                records.push(("GNU.sparse.numbytes", l.as_bytes()));
            }
            raw.pax(&records).file(name, &s.data);
        }
        Format::Pax01 => {
            let map = s
                .map
                .iter()
                .flat_map(|(o, l)| [o.to_string(), l.to_string()])
                .collect::<Vec<_>>()
                .join(",");
            raw.pax(&[
                ("GNU.sparse.size", real.as_bytes()),
                ("GNU.sparse.numblocks", n.as_bytes()),
                ("GNU.sparse.name", name.as_bytes()),
                ("GNU.sparse.map", map.as_bytes()),
            ])
            .file(&placeholder, &s.data);
        }
        Format::Pax10 => {
            let mut data = map_lines(&s.map);
            data.extend_from_slice(&s.data);
            raw.pax(&[
                ("GNU.sparse.major", b"1"),
                ("GNU.sparse.minor", b"0"),
                ("GNU.sparse.name", name.as_bytes()),
                ("GNU.sparse.realsize", real.as_bytes()),
            ])
            .file(&placeholder, &data);
        }
    }
}

/// An archive of the sparse file `f` in `format`, then a plain file `after`.
fn archive(format: Format, s: &Sparse) -> Vec<u8> {
    let mut raw = Raw::new();
    push_sparse(&mut raw, format, "f", s);
    raw.file("after", b"after\n");
    raw.finish()
}

/// Whether `path` has fewer blocks than its size needs (a hole).
fn has_holes(path: &Path) -> bool {
    let m = fs::metadata(path).expect("stat");
    m.blocks() * 512 < m.size()
}

// ---------------------------------------------------------------------------------------
// The corpus against GNU tar.
// ---------------------------------------------------------------------------------------

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpora/sparse")
        .join(name)
}

/// Whether `tar` is GNU tar.
fn gnu_tar() -> bool {
    Command::new("tar")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("GNU tar"))
}

/// Hydrates `corpora/sparse/<name>` with the reference (by offset and as a stream) and with
/// GNU tar, and compares the trees; each of `sparse` (paths) must be a file with holes
/// wherever GNU tar's has them.
fn against_gnu_tar(name: &str, sparse: &[&str]) {
    if !gnu_tar() {
        skip("GNU tar", "apt-get install tar");
        return;
    }
    let path = corpus(name);
    let dir = tempfile::tempdir().expect("tempdir");
    let gnu = dir.path().join("gnu");
    fs::create_dir(&gnu).expect("mkdir");
    let out = Command::new("tar")
        .arg("-xf")
        .arg(&path)
        .arg("-C")
        .arg(&gnu)
        .output()
        .expect("tar");
    assert!(out.status.success(), "GNU tar -xf {name}: {out:?}");
    let by_offset = dir.path().join("file");
    let stream = dir.path().join("stream");
    let file = File::open(&path).expect("open");
    hydrate_file(&file, &by_offset, &Policy::default()).expect("hydrate_file");
    hydrate(
        File::open(&path).expect("open"),
        &stream,
        &Policy::default(),
    )
    .expect("hydrate");
    let theirs = common::snapshot(&gnu, &[]);
    for ours in [&by_offset, &stream] {
        assert_eq!(
            common::snapshot(ours, &[]),
            theirs,
            "{name}: {}",
            ours.display()
        );
        for f in sparse {
            let (a, b) = (ours.join(f), gnu.join(f));
            let (ma, mb) = (
                fs::metadata(&a).expect("ours"),
                fs::metadata(&b).expect("tar's"),
            );
            assert_eq!(ma.size(), mb.size(), "{name}: {f}");
            assert_eq!(ma.mtime(), mb.mtime(), "{name}: {f}");
            assert!(
                has_holes(&a) || !has_holes(&b),
                "{name}: {f}: GNU tar's copy has holes, ours has none"
            );
            assert!(
                has_holes(&b),
                "{name}: {f}: no holes (is the filesystem tmpfs or ext4?)"
            );
        }
    }
    // The listing gives each sparse member its real name and size.
    let listing = list(File::open(&path).expect("open")).expect("list");
    for f in sparse {
        let m = listing
            .members
            .iter()
            .find(|m| m.name == f.as_bytes())
            .expect("listed under its real name");
        assert_eq!(m.size, fs::metadata(gnu.join(f)).expect("stat").size());
    }
}

#[test]
fn old_gnu_by_gnu_tar() {
    against_gnu_tar("gnu-oldgnu.tar", &["db.bin", "vm.img"]);
}

#[test]
fn pax_0_0_by_gnu_tar() {
    against_gnu_tar("gnu-pax0.0.tar", &["db.bin", "vm.img"]);
}

#[test]
fn pax_0_1_by_gnu_tar() {
    against_gnu_tar("gnu-pax0.1.tar", &["db.bin", "vm.img"]);
}

#[test]
fn pax_1_0_by_gnu_tar() {
    against_gnu_tar("gnu-pax1.0.tar", &["db.bin", "vm.img"]);
}

#[test]
fn old_gnu_hand_made() {
    against_gnu_tar("handmade-oldgnu.tar", &["handmade/odd.bin"]);
}

#[test]
fn pax_0_0_hand_made() {
    against_gnu_tar("handmade-pax00.tar", &["handmade/p00.bin"]);
}

/// The old GNU archive GNU tar wrote has an extension block (db.bin has more than four
/// regions), so the corpus covers it.
#[test]
fn old_gnu_corpus_has_an_extension_block() {
    let bytes = fs::read(corpus("gnu-oldgnu.tar")).expect("read");
    assert_eq!(&bytes[..6], b"db.bin");
    assert_eq!((bytes[156], bytes[482]), (b'S', 1));
}

// ---------------------------------------------------------------------------------------
// Refusals: each malformed class, in every format it can be written in. Each runs in a jail
// with a prior workspace: a refusal leaves it and everything outside it as they were.
// ---------------------------------------------------------------------------------------

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
    each_accepts(&Sparse::new(1 << 20, &[(0, 512), (1 << 20, 0)]), &policy);
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

// ---------------------------------------------------------------------------------------
// Accepted forms and random maps.
// ---------------------------------------------------------------------------------------

/// `s` in every format hydrates (as a stream and by offset, and as a hardlink copy) to
/// `s.expected()`, with `after` intact behind it.
fn each_accepts(s: &Sparse, policy: &Policy) {
    let want = s.expected();
    for f in FORMATS {
        let mut raw = Raw::new();
        push_sparse(&mut raw, f, "f", s);
        raw.hardlink("g", "f").file("after", b"after\n");
        let ar = raw.finish();
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.tar");
        fs::write(&path, &ar).expect("write");
        let file = File::open(&path).expect("open");
        let roots = [dir.path().join("stream"), dir.path().join("file")];
        hydrate(&ar[..], &roots[0], policy).unwrap_or_else(|e| panic!("{f:?} stream: {e}"));
        hydrate_file(&file, &roots[1], policy).unwrap_or_else(|e| panic!("{f:?} file: {e}"));
        for root in &roots {
            for name in ["f", "g"] {
                let got = fs::read(root.join(name)).expect("read");
                assert!(got == want, "{f:?} {}: {name} differs", root.display());
            }
            assert_eq!(fs::read(root.join("after")).expect("after"), b"after\n");
        }
    }
}

#[test]
fn edge_maps_are_accepted() {
    let p = Policy::default();
    // Wholly a hole; empty; data only; data up to the end without a final entry.
    each_accepts(&Sparse::new(100_000, &[(100_000, 0)]), &p);
    each_accepts(&Sparse::new(0, &[(0, 0)]), &p);
    each_accepts(&Sparse::new(1536, &[(0, 1536)]), &p);
    each_accepts(&Sparse::new(5000, &[(0, 512), (4990, 10)]), &p);
    // More than one old GNU extension block (4 + 21 + 21 + ...).
    let map: Vec<(u64, u64)> = (0..60).map(|i| (i * 1024, 512)).collect();
    each_accepts(&Sparse::new(59 * 1024 + 512, &map), &p);
}

/// A realsize past 8 GiB (base-256 in the old GNU header), holes all but one block.
#[test]
fn a_realsize_past_8_gib() {
    let s = Sparse::new(1 << 34, &[(0, 512), (1 << 34, 0)]);
    for f in FORMATS {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        hydrate(&archive(f, &s)[..], &root, &Policy::default()).expect("hydrate");
        let m = fs::metadata(root.join("f")).expect("stat");
        assert_eq!(m.size(), 1 << 34, "{f:?}");
        let mut head = vec![0u8; 512];
        std::io::Read::read_exact(&mut File::open(root.join("f")).expect("open"), &mut head)
            .expect("read");
        assert_eq!(head, s.data, "{f:?}");
    }
}

/// Holes stay holes: a 64 MiB file with 1 KiB of data takes a few blocks.
#[test]
fn holes_stay_holes() {
    let s = Sparse::new(64 << 20, &[(0, 512), (32 << 20, 512), (64 << 20, 0)]);
    for f in FORMATS {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        hydrate(&archive(f, &s)[..], &root, &Policy::default()).expect("hydrate");
        let m = fs::metadata(root.join("f")).expect("stat");
        assert_eq!(m.size(), 64 << 20);
        assert!(m.blocks() * 512 < 1 << 20, "{f:?}: {} blocks", m.blocks());
    }
}

/// Random hole maps GNU tar could write: every region but the last with data fills whole
/// blocks, and the map ends at the file's size (a final `realsize,0` entry when the file
/// ends in a hole).
fn sparse_files() -> impl Strategy<Value = Sparse> {
    (
        prop::collection::vec((0u64..5000, 0u64..4), 0..30),
        0u64..1500,
        0u64..5000,
        any::<u8>(),
    )
        .prop_map(|(runs, last, tail, seed)| {
            let mut map = Vec::new();
            let mut end = 0;
            for (gap, blocks) in runs {
                map.push((end + gap, blocks * 512));
                end += gap + blocks * 512;
            }
            map.push((end, last));
            end += last;
            if tail > 0 {
                end += tail;
                map.push((end, 0));
            }
            let mut s = Sparse::new(end, &map);
            for (i, b) in s.data.iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(31).wrapping_add(seed);
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_maps_hydrate_to_their_bytes(s in sparse_files()) {
        each_accepts(&s, &Policy::default());
    }
}
