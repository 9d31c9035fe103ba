//! `snapconf check-archive --all-parsers` on the classes of issue 25 that read as
//! disagreements though the parsers agree, or hid what they should say: bsdtar's ACL mark,
//! non-ASCII names under bsdtar, BusyBox's own limits (a V7 header), C escapes in names
//! (BEL), raw control bytes on the terminal, a garbage file's exit code, and where the
//! reference's listing stops beside its verdict. Every archive is small, benign and built
//! here with [`RawTar`].

use crate::support;
use snapconf_tarbytes::raw::{set_checksum, RawTar};
use std::path::Path;

/// `check-archive --all-parsers FILE`: exit code, stdout and stderr as bytes.
fn all_parsers(file: &Path) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    let out = support::Snapconf::new()
        .args(["check-archive", "--all-parsers"])
        .arg(file)
        .output()
        .expect("run snapconf");
    (out.status.code(), out.stdout, out.stderr)
}

/// The summary line of `parser` in `text`, skipping the test when the tool is missing.
fn line_of<'a>(text: &'a str, parser: &str, package: &str) -> Option<&'a str> {
    let line = text.lines().find(|l| l.split(' ').next() == Some(parser))?;
    if line.ends_with("not installed here (skipped)") {
        support::skip::skip(
            &format!("`{parser}` is not installed"),
            &format!("apt-get install {package}"),
        );
        return None;
    }
    Some(line)
}

/// Write `bytes` as `name` in a new temporary directory.
fn archive(name: &str, bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write");
    (dir, path)
}

/// No byte below 0x20 but `\n` and `\t` in `out` (no raw ESC, BEL, CR... from a name).
fn assert_printable(what: &str, out: &[u8]) {
    let raw: Vec<u8> = out
        .iter()
        .copied()
        .filter(|&b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f)
        .collect();
    assert!(
        raw.is_empty(),
        "{what}: raw control bytes {raw:x?} in {}",
        String::from_utf8_lossy(out)
    );
}

/// A member with an ACL (PAX `SCHILY.acl.access`, as `bsdtar --acls` writes it) is listed
/// by bsdtar with `+` after its mode (`-rwxrw-r--+`): read as a mode, the member is the
/// same as every other parser's (it was once no member at all).
#[test]
fn a_bsdtar_acl_mark_is_read_as_a_mode() {
    let mut t = RawTar::new();
    t.pax(&[(
        "SCHILY.acl.access",
        b"user::rwx,user:0:rwx,group::rw-,mask::rwx,other::r--",
    )])
    .file_mode("run", b"hi\n", 0o764);
    let (_dir, path) = archive("acl.tar", &t.finish());
    let (code, out, err) = all_parsers(&path);
    let text = String::from_utf8_lossy(&out);
    let Some(bsdtar) = line_of(&text, "bsdtar", "libarchive-tools") else {
        return;
    };
    assert!(bsdtar.ends_with(" 1 member(s)"), "{text}");
    assert_eq!(code, Some(0), "{text}{}", String::from_utf8_lossy(&err));
}

/// With `setfacl` (package `acl`) a real ACL is captured by bsdtar and listed alike by
/// every parser; skipped without it.
#[test]
fn a_real_acl_captured_by_bsdtar_is_listed_alike() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).expect("mkdir");
    std::fs::write(ws.join("run"), "hi\n").expect("write");
    let setfacl = std::process::Command::new("setfacl")
        .args(["-m", "u:0:rwx"])
        .arg(ws.join("run"))
        .status();
    if !setfacl.is_ok_and(|s| s.success()) {
        support::skip::skip(
            "`setfacl` is missing or ACLs are off here",
            "apt-get install acl",
        );
        return;
    }
    let path = dir.path().join("acl.tar");
    let made = std::process::Command::new("bsdtar")
        .args(["--acls", "-cf"])
        .arg(&path)
        .arg("-C")
        .arg(&ws)
        .arg("run")
        .status();
    if !made.is_ok_and(|s| s.success()) {
        support::skip::skip(
            "bsdtar cannot write the archive",
            "apt-get install libarchive-tools",
        );
        return;
    }
    let (code, out, _) = all_parsers(&path);
    let text = String::from_utf8_lossy(&out);
    assert!(!text.contains("parser-disagreement"), "{text}");
    assert_eq!(code, Some(0), "{text}");
}

/// Non-ASCII (UTF-8) names in PAX records, which bsdtar refuses to convert under `LC_ALL=C`:
/// the tools run under `C.UTF-8`, and bsdtar lists them as the others do.
#[test]
fn non_ascii_names_are_listed_by_bsdtar_as_by_the_others() {
    let mut t = RawTar::new();
    for name in ["café", "日本/ファイル"] {
        t.pax(&[("path", name.as_bytes())])
            .file("placeholder", b"hi\n");
    }
    let (_dir, path) = archive("utf8.tar", &t.finish());
    let (code, out, _) = all_parsers(&path);
    let text = String::from_utf8_lossy(&out);
    let Some(bsdtar) = line_of(&text, "bsdtar", "libarchive-tools") else {
        return;
    };
    assert!(bsdtar.ends_with(" 2 member(s)"), "{text}");
    assert!(!text.contains("parser-disagreement"), "{text}");
    assert_eq!(code, Some(0), "{text}");
}

/// A V7 archive (no `ustar` magic): BusyBox stops with `invalid tar magic`, a limit of its
/// own, reported as such and not as a disagreement (exit 0: every other parser agrees).
#[test]
fn busybox_on_a_v7_archive_is_its_limit_not_a_disagreement() {
    let mut t = RawTar::new();
    t.file("a", b"one\n").file("b", b"two\n");
    let mut bytes = t.finish();
    for off in [0, 1024] {
        // Magic, version, owner names, devices and prefix: all NUL, as V7 wrote them.
        bytes[off + 257..off + 500].fill(0);
        set_checksum(&mut bytes[off..]);
    }
    let (_dir, path) = archive("v7.tar", &bytes);
    let (code, out, _) = all_parsers(&path);
    let text = String::from_utf8_lossy(&out);
    let Some(busybox) = line_of(&text, "busybox", "busybox") else {
        return;
    };
    assert!(
        busybox.contains("limit of busybox: ") && busybox.contains("invalid tar magic"),
        "{text}"
    );
    assert!(!text.contains("parser-disagreement"), "{text}");
    assert_eq!(code, Some(0), "{text}");
}

/// Names with a BEL, an ESC sequence, a backslash, a tab and `\b\f\v\r`: GNU tar and
/// bsdtar print C escapes (`\a`...), BusyBox the raw bytes; all are read back to the same
/// names (exit 0), and nothing printed holds a raw control byte.
#[test]
fn control_bytes_in_names_agree_and_are_never_printed_raw() {
    let mut t = RawTar::new();
    for name in ["a\x07b", "c\x1b[31md", "e\\f", "g\th", "i\x08\x0c\x0b\rj"] {
        t.file(name, b"hi\n");
    }
    let (_dir, path) = archive("bel.tar", &t.finish());
    let (code, out, err) = all_parsers(&path);
    let text = String::from_utf8_lossy(&out);
    assert!(!text.contains("parser-disagreement"), "{text}");
    assert_eq!(code, Some(0), "{text}");
    assert_printable("stdout", &out);
    assert_printable("stderr", &err);
}

/// A file that is no tar at all, holding terminal escapes: refused (exit 1, not 0), with
/// every tool's message (which quote the bytes) escaped.
#[test]
fn a_garbage_file_is_refused_and_printed_escaped() {
    let garbage = b"\x1b]0;PWNED\x07 not a tar \x1b[2J\r\n".repeat(40);
    let (_dir, path) = archive("garbage.bin", &garbage);
    let (code, out, err) = all_parsers(&path);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("refused: the reference's parser cannot read the archive"),
        "{text}"
    );
    assert_printable("stdout", &out);
    assert_printable("stderr", &err);
}

/// Where the reference's listing stops and where its verdict stops are both said, and
/// agree when they are one fault: a bzip2 archive (which the reference does not read) stops
/// the listing with the verdict's own reason; a dangling hardlink before a cut member is
/// refused by the validator at the first, and its parser alone stops at the second, which
/// the validator's line says.
#[test]
fn the_references_listing_and_verdict_say_where_each_stops() {
    let bz = b"BZh91AY&SY".repeat(60);
    let (_dir, path) = archive("a.tar", &bz);
    let (code, out, _) = all_parsers(&path);
    let text = String::from_utf8_lossy(&out);
    let reference = text
        .lines()
        .find(|l| l.starts_with("reference "))
        .expect("reference line");
    assert!(
        reference.contains("unsupported (bzip2-compressed"),
        "{text}"
    );
    assert!(
        text.contains("its parser stops there too (the `reference` line)"),
        "{text}"
    );
    assert_eq!(code, Some(1), "{text}");

    let mut t = RawTar::new();
    t.hardlink("h", "nothere").file("b", b"hi");
    let mut bytes = t.finish();
    bytes.truncate(bytes.len() - 1024);
    let (_dir, path) = archive("cut.tar", &bytes);
    let (_, out, _) = all_parsers(&path);
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("validator       the reference refused member `h`")
            && text.contains("its parser alone, without the policy, stops elsewhere")
            && text.contains("reference       stopped: refused: truncated"),
        "{text}"
    );
}
