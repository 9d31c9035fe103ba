//! The tar remote sandboxes ship (issue 15): `gnu-tar-lnk` (GNU tar with its defaults,
//! LNK members kept) and the merge extractors (extraction over what the root holds) are
//! listed, left out of a run's default set, taken by name or with `all`, and `gnu-tar-lnk`
//! × `reference` finds `late-failure` (the LNK members) shrunk to 2 entries.

use crate::support;

use serde_json::Value;

/// Whether GNU tar can run here; if not, reports the skip.
fn gnu_tar() -> bool {
    support::producer_available("gnu-tar-lnk")
}

use support::run_with_report as run;

fn pairs(report: &Value) -> Vec<(String, String)> {
    report["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .map(|p| {
            (
                p["producer"].as_str().unwrap_or_default().to_owned(),
                p["extractor"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn list_names_the_opt_in_variants() {
    let out = support::Snapconf::new()
        .arg("list")
        .output()
        .expect("list runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for (kind, name) in [
        ("producer", "gnu-tar-lnk"),
        ("producer", "gnu-tar-lnk-gz"),
        ("producer", "gnu-tar-lnk-zst"),
        ("producer", "busybox-tar-gz"),
        ("producer", "bsdtar-gz"),
        ("extractor", "gnu-tar-merge"),
        ("extractor", "busybox-tar-merge"),
        ("extractor", "bsdtar-merge"),
    ] {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().take(2).eq([kind, name]))
            .unwrap_or_else(|| panic!("no {kind} {name} in:\n{text}"));
        assert!(line.ends_with("(opt-in: name it, or `all`)"), "{line}");
    }
    let line = text
        .lines()
        .find(|l| l.split_whitespace().take(2).eq(["extractor", "gnu-tar"]))
        .unwrap_or_else(|| panic!("no extractor gnu-tar in:\n{text}"));
    assert!(!line.contains("opt-in"), "{line}");
}

/// `gnu-tar-lnk` × `reference` finds the LNK members as `late-failure`, shrunk to 2
/// entries (a file and its second name); `gnu-tar-merge` runs beside it.
#[test]
fn gnu_tar_defaults_find_late_failure_shrunk_to_two_entries() {
    if !gnu_tar() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let rd = dir.path().join("report");
    let (out, report) = run(
        &[
            "run",
            "--cases",
            "100",
            "--seed",
            "1",
            "--producers",
            "gnu-tar-lnk",
            "--extractors",
            "reference,gnu-tar-merge",
            "--shrink-time",
            "300",
        ],
        &rd,
    );
    assert_eq!(out.status.code(), Some(1), "findings: {report:#}");
    assert_eq!(
        pairs(&report),
        [
            ("gnu-tar-lnk".to_owned(), "gnu-tar-merge".to_owned()),
            ("gnu-tar-lnk".to_owned(), "reference".to_owned())
        ]
    );
    let f = report["findings"]
        .as_array()
        .and_then(|fs| {
            fs.iter()
                .find(|f| f["check"] == "late-failure" && f["extractor"] == "reference")
        })
        .unwrap_or_else(|| panic!("no late-failure against reference in {report:#}"));
    assert_eq!(f["entries"], 2, "{f:#}");
    assert!(
        f["message"]
            .as_str()
            .is_some_and(|m| m.contains("hardlink")),
        "{f:#}"
    );
}

/// The gzip'd `gnu-tar-lnk-gz` and zstd `gnu-tar-lnk-zst` archives are the same tree:
/// against `reference` they find the same `late-failure` cases as `gnu-tar-lnk`, and
/// `gnu-tar` restores them.
#[test]
fn compressed_variants_find_what_the_plain_one_finds() {
    if !gnu_tar() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (out, report) = run(
        &[
            "run",
            "--cases",
            "30",
            "--seed",
            "1",
            "--producers",
            "gnu-tar-lnk,gnu-tar-lnk-gz,gnu-tar-lnk-zst",
            "--extractors",
            "reference,gnu-tar",
            "--shrink-total",
            "30",
        ],
        &dir.path().join("report"),
    );
    assert_eq!(out.status.code(), Some(1), "findings: {report:#}");
    let row = |producer: &str, extractor: &str| {
        report["pairs"]
            .as_array()
            .and_then(|ps| {
                ps.iter()
                    .find(|p| p["producer"] == producer && p["extractor"] == extractor)
            })
            .map(|p| (p["passed"].clone(), p["skipped"].clone()))
            .unwrap_or_else(|| panic!("no {producer} x {extractor} in {report:#}"))
    };
    for extractor in ["reference", "gnu-tar"] {
        for compressed in ["gnu-tar-lnk-gz", "gnu-tar-lnk-zst"] {
            assert_eq!(
                row(compressed, extractor),
                row("gnu-tar-lnk", extractor),
                "{compressed} x {extractor}"
            );
        }
    }
}

/// Without a list a run takes no opt-in variant; `all` takes them.
#[test]
fn opt_in_variants_run_only_when_asked_for() {
    if !gnu_tar() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, report) = run(
        &[
            "run",
            "--cases",
            "1",
            "--seed",
            "1",
            "--producers",
            "gnu-tar",
        ],
        &dir.path().join("default"),
    );
    let default = pairs(&report);
    assert!(!default.is_empty());
    assert!(
        default.iter().all(|(_, e)| !e.ends_with("-merge")),
        "{default:?}"
    );
    let (_, report) = run(
        &[
            "run",
            "--cases",
            "1",
            "--seed",
            "1",
            "--producers",
            "all",
            "--extractors",
            "all",
        ],
        &dir.path().join("all"),
    );
    let all = pairs(&report);
    assert!(
        all.contains(&("gnu-tar-lnk".to_owned(), "gnu-tar-merge".to_owned())),
        "{all:?}"
    );
    assert!(all.len() > default.len(), "{all:?}");
}
