//! Header fields other parsers read (issue 25): the hand-made archives of `corpora/fields/`
//! (`make.py` there writes them byte for byte), one per class. Three hold fields the
//! reference once refused and every extractor snapconf drives reads alike; four are read
//! differently by GNU tar 1.34, bsdtar 3.6.2, BusyBox 1.35 or Python 3.11's `tarfile`
//! (each tool's reading, *observed* on these files, is in `docs/design.md`, "Header
//! fields") and are refused before anything is written.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{self, jailed, reason, skip::skip, Jail, Node, Raw};
use snapconf_extract::{hydrate, list, validate, HydrateError, Limits, Policy, Reason};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/fields")
}

fn corpus(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(name)).expect("read the corpus archive")
}

/// Hydrates `corpora/fields/<name>` and returns the files it wrote (path, content); it
/// may write directories, nothing else.
fn hydrated(name: &str) -> Vec<(String, Vec<u8>)> {
    let ar = corpus(name);
    let jail = Jail::new();
    let r = jailed(&jail, || hydrate(&ar[..], &jail.root(), &Policy::default()));
    assert!(r.is_ok(), "{name}: {r:?}");
    common::snapshot(&jail.root(), &[])
        .into_iter()
        .filter_map(|(p, n)| match n {
            Node::File { data, .. } => Some((p.display().to_string(), data)),
            Node::Dir { .. } => None,
            other => panic!("{name}: {} is not a file: {other:?}", p.display()),
        })
        .collect()
}

/// Checks that `corpora/fields/<name>` is refused for `want` naming `member`, by `validate`
/// and `hydrate` (which writes nothing), and returns the refusal's detail.
fn refused(name: &str, want: Reason, member: &[u8]) -> String {
    refused_bytes(&corpus(name), want, member, name)
}

fn refused_bytes(ar: &[u8], want: Reason, member: &[u8], what: &str) -> String {
    let jail = Jail::new();
    jail.prior(&[("keep", "prior")]);
    let r = jailed(&jail, || hydrate(ar, &jail.root(), &Policy::default()));
    assert_eq!(reason(&r), Some(want.as_str()), "{what}: hydrate: {r:?}");
    match validate(ar, &Policy::default()) {
        Err(HydrateError::Refused {
            reason,
            member: m,
            detail,
        }) => {
            assert_eq!(reason, want, "{what}: validate");
            assert_eq!(m, member, "{what}: the refused member");
            detail
        }
        other => panic!("{what}: not refused: {other:?}"),
    }
}

/// `make.py` writes the committed archives byte for byte.
#[test]
fn the_corpus_is_what_make_py_writes() {
    let Ok(out) = tempfile::tempdir() else {
        panic!("tempdir");
    };
    let ran = Command::new("python3")
        .arg(dir().join("make.py"))
        .arg(out.path())
        .status();
    if !ran.is_ok_and(|s| s.success()) {
        skip("python3", "apt-get install python3");
        return;
    }
    let mut names: Vec<_> = std::fs::read_dir(out.path())
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    names.sort();
    assert_eq!(names.len(), 8, "{names:?}");
    for name in names {
        let made = std::fs::read(out.path().join(&name)).expect("read");
        assert_eq!(
            made,
            std::fs::read(dir().join(&name)).expect("committed archive"),
            "{name:?} differs from make.py's"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Fields every extractor reads alike, once refused.
// ---------------------------------------------------------------------------------------

/// A `size` field starting with NUL (six NULs, a space, `0016`, a NUL) is 0, as GNU tar,
/// bsdtar, BusyBox and Python read it; `b.txt` follows in the next block.
#[test]
fn a_size_field_starting_with_nul_is_zero() {
    assert_eq!(
        hydrated("size-nul-digits.tar"),
        [
            ("a.txt".to_owned(), vec![]),
            ("b.txt".to_owned(), b"hello\n".to_vec())
        ]
    );
}

/// All-NUL `mode` and `size` fields are read (as 0), so a GNU volume label (type `V`) with
/// them is refused for its type (`unsupported`), not for its fields (`malformed`): Python
/// writes a volume label as an empty file named after the label (mode 0), GNU tar, bsdtar and
/// BusyBox skip it. The same fields on a regular member are accepted.
#[test]
fn all_nul_fields_are_zero_and_a_volume_label_is_refused_for_its_type() {
    let detail = refused("volume-label.tar", Reason::Unsupported, b"snapconf-volume");
    assert!(detail.contains("type flag 'V'"), "{detail}");
    let mut h = common::header(b'0', b"empty", b"", 0, 0o644);
    h[100..108].fill(0);
    h[124..136].fill(0);
    common::set_checksum(&mut h);
    let ar = Raw::new().block(&h).file("b", b"x").finish();
    let listing = list(&ar[..]).expect("list");
    let got: Vec<_> = listing
        .members
        .iter()
        .map(|m| (m.name.clone(), m.size, m.mode))
        .collect();
    assert_eq!(got, [(b"empty".to_vec(), 0, 0), (b"b".to_vec(), 1, 0o644)]);
    // GNU tar, bsdtar, BusyBox and Python write an empty file of mode 0 (observed).
    let jail = Jail::new();
    let r = jailed(&jail, || hydrate(&ar[..], &jail.root(), &Policy::default()));
    assert!(r.is_ok(), "{r:?}");
    match common::snapshot(&jail.root(), &[]).get(Path::new("empty")) {
        Some(Node::File { data, mode, .. }) => assert_eq!((data.len(), *mode), (0, 0)),
        other => panic!("`empty` is {other:?}"),
    }
}

/// A PAX `size` with more than 20 digits, leading zeros, is 999, as every parser reads it.
#[test]
fn a_pax_size_with_leading_zeros_is_read() {
    assert_eq!(
        hydrated("pax-size-zeros.tar"),
        [
            ("a.txt".to_owned(), vec![b'z'; 999]),
            ("b.txt".to_owned(), b"hello\n".to_vec())
        ]
    );
}

/// A full ustar `prefix` (155 bytes, no NUL) is joined with the name by every tool tried:
/// not an ambiguity, accepted.
#[test]
fn a_full_ustar_prefix_is_joined() {
    let mut want = "p".repeat(155);
    want.push_str("/foo");
    assert_eq!(hydrated("prefix-full.tar"), [(want, b"hello\n".to_vec())]);
}

// ---------------------------------------------------------------------------------------
// Fields real extractors read differently: refused.
// ---------------------------------------------------------------------------------------

/// Bytes at 345 under the old GNU magic: BusyBox and Python (and Go) read `aaa…/foo`, GNU
/// tar and bsdtar `foo`.
#[test]
fn a_prefix_under_the_old_gnu_magic_is_refused() {
    let detail = refused("gnu-magic-prefix.tar", Reason::Malformed, b"foo");
    assert!(detail.contains("prefix"), "{detail}");
}

/// A PAX `size` of 6 over a ustar field of 0: BusyBox writes an empty file and reads the
/// data as a header, the others a 6-byte file. The one form writers use (the field 0, the
/// size past the field's 8 GiB) is read on; a PAX `size` equal to the field is fine.
#[test]
fn a_pax_size_disagreeing_with_the_ustar_field_is_refused() {
    let detail = refused("pax-size-ustar-zero.tar", Reason::Malformed, b"a.txt");
    assert!(detail.contains("BusyBox"), "{detail}");
    // Disagreeing with a non-zero field too (named by its PAX `path`).
    let ar = Raw::new()
        .pax(&[("path", b"p.txt"), ("size", b"3")])
        .file("y", b"abcd")
        .finish();
    refused_bytes(&ar, Reason::Malformed, b"p.txt", "pax size 3, field 4");
    // Equal: read.
    let ar = Raw::new()
        .pax(&[("size", b"4")])
        .file("y", b"abcd")
        .finish();
    assert!(validate(&ar[..], &Policy::default()).is_ok());
    // 9 GiB with the field 0: read on (here refused by the payload limit, not as malformed).
    let ar = Raw::new()
        .pax(&[("size", (9u64 << 30).to_string().as_bytes())])
        .push(b'0', b"big", b"", b"", 0o644)
        .finish();
    let policy = Policy {
        limits: Limits {
            total_bytes: 1 << 20,
            ..Limits::default()
        },
        ..Policy::default()
    };
    let r = validate(&ar[..], &policy);
    assert_eq!(
        r.as_ref().err().and_then(HydrateError::reason),
        Some(Reason::LimitExceeded),
        "{r:?}"
    );
}

/// A GNU `realsize` on a regular member: bsdtar writes a 64-byte file, the others 6 bytes.
#[test]
fn a_realsize_on_a_member_that_is_not_sparse_is_refused() {
    let detail = refused("gnu-realsize.tar", Reason::Malformed, b"a.txt");
    assert!(detail.contains("realsize"), "{detail}");
}

/// A PAX record without `=`: GNU tar and bsdtar report an error (and exit non-zero), BusyBox
/// and Python say nothing (Go refuses the archive).
#[test]
fn a_pax_record_without_an_equals_sign_is_refused() {
    let detail = refused("pax-no-equals.tar", Reason::Malformed, b"PaxHeaders/a.txt");
    assert!(detail.contains("without `=`"), "{detail}");
}
