//! `snapconf fuzz` end to end with the in-process reference extractor (no external tool).

mod support;

use std::process::Command;

/// Property: a short fuzz session of the reference extractor ends with exit 0 (it has no
/// containment, atomicity, hang or unsafe-accept findings) and writes `fuzz.json`.
#[test]
fn fuzzing_the_reference_finds_nothing() {
    let out = tempfile::tempdir().expect("tempdir");
    let corpora = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora");
    let status = Command::new(env!("CARGO_BIN_EXE_snapconf"))
        .args([
            "fuzz",
            "--extractor",
            "reference",
            "--time",
            "3",
            "--seed",
            "7",
        ])
        .arg("--corpora")
        .arg(&corpora)
        .arg("--report-dir")
        .arg(out.path())
        .output()
        .expect("run snapconf");
    assert_eq!(
        status.status.code(),
        Some(0),
        "reference fuzz session has no findings: {}",
        String::from_utf8_lossy(&status.stdout)
    );
    assert!(
        out.path().join("fuzz.json").is_file(),
        "fuzz.json is written"
    );
}

/// Property: every available parser lists a GNU tar seed identically (exit 0); missing
/// tools are skipped, never a disagreement.
#[test]
fn all_parsers_agree_on_a_seed() {
    let corpora = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora");
    let out = Command::new(env!("CARGO_BIN_EXE_snapconf"))
        .args(["check-archive", "--all-parsers"])
        .arg(corpora.join("seeds/gnu-gnu.tar"))
        .output()
        .expect("run snapconf");
    assert_eq!(
        out.status.code(),
        Some(0),
        "parsers agree on gnu-gnu.tar: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("reference") && text.contains("tar-crate"),
        "{text}"
    );
    for line in text.lines() {
        if let Some(parser) = line.strip_suffix("not installed here (skipped)") {
            let parser = parser.trim();
            let package = match parser {
                "gnu-tar" => "tar",
                "bsdtar" => "libarchive-tools",
                "python-tarfile" => "python3",
                other => other,
            };
            support::skip::skip(
                &format!("parser `{parser}` is not installed, so it was not compared"),
                &format!("apt-get install {package}"),
            );
        }
    }
}

/// A member-smuggling archive (an LNK member whose size field claims a 512-byte payload that
/// is itself a ustar header): the reference refuses it, other parsers list the smuggled
/// member. That split is a `parser-disagreement` (exit 1), not agreement.
#[test]
fn a_parser_that_stops_where_others_read_on_is_a_disagreement() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("smuggle.tar");
    let mut inner = tar::Header::new_ustar();
    inner.set_path("smuggled").expect("path");
    inner.set_size(0);
    inner.set_mode(0o644);
    inner.set_entry_type(tar::EntryType::Regular);
    inner.set_cksum();
    let mut b = tar::Builder::new(std::fs::File::create(&path).expect("create"));
    let mut h = tar::Header::new_ustar();
    h.set_size(3);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    b.append_data(&mut h, "a", &b"abc"[..]).expect("a");
    let mut l = tar::Header::new_ustar();
    l.set_size(512);
    l.set_mode(0o644);
    l.set_entry_type(tar::EntryType::Link);
    l.set_link_name("a").expect("link");
    b.append_data(&mut l, "b", &inner.as_bytes()[..])
        .expect("b");
    b.into_inner().expect("finish").flush().expect("flush");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_snapconf"))
        .args(["check-archive", "--all-parsers"])
        .arg(&path)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("parser-disagreement"), "{text}");
}

/// Property: a session's report directory is checked before it starts, as `run`'s is: an
/// earlier session's `fuzz.json` and `cases/` are replaced (no stale reproducer is left to
/// mistake for a new one), and a directory holding anything else is refused with exit 2,
/// untouched.
#[test]
fn a_session_never_writes_into_someone_elses_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let old = dir.path().join("old");
    std::fs::create_dir_all(old.join("cases/containment__fuzz__reference")).expect("mkdir");
    std::fs::write(old.join("fuzz.json"), "{}").expect("write");
    let foreign = dir.path().join("foreign");
    std::fs::create_dir_all(&foreign).expect("mkdir");
    std::fs::write(foreign.join("notes.txt"), "mine").expect("write");
    let fuzz = |report: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_snapconf"))
            .args([
                "fuzz",
                "--extractor",
                "reference",
                "--time",
                "1",
                "--seed",
                "3",
                "-j",
                "1",
            ])
            .arg("--report-dir")
            .arg(report)
            .output()
            .expect("run snapconf")
    };
    let o = fuzz(&old);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        !old.join("cases/containment__fuzz__reference").exists(),
        "the earlier session's reproducer is gone"
    );
    let o = fuzz(&foreign);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("notes.txt"),
        "{o:?}"
    );
    let names: Vec<_> = std::fs::read_dir(&foreign)
        .expect("read")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["notes.txt"], "nothing written");
}
