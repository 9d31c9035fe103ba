//! `snapconf fuzz` end to end with the in-process reference extractor (no external tool).

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
}
