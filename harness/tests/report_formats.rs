//! Report formats are pinned by insta snapshots: `report.json`, `summary.md`, `junit.xml`
//! and `index.html` for one report with a known and a new finding, a clean pair and a
//! skipped adapter. Temporary paths are redacted.

use snapconf_harness::checks::Check;
use snapconf_harness::report::{
    index_html, junit_xml, summary_markdown, Baseline, BaselineEntry, FindingRecord, PairReport,
    RunReport, SkippedAdapter,
};
use snapconf_harness::run::shrink::ShrinkEnd;
use std::collections::BTreeMap;

fn sample() -> RunReport {
    let mut late = BTreeMap::new();
    late.insert("late-failure".to_string(), 12);
    late.insert("dangling-link".to_string(), 3);
    RunReport {
        schema: 1,
        seed: 1,
        cases: 20,
        profile: "default".into(),
        pairs: vec![
            PairReport {
                producer: "python-tarfile".into(),
                extractor: "reference".into(),
                cases: 20,
                passed: 8,
                skipped: 0,
                findings: late,
            },
            PairReport {
                producer: "tar-rs".into(),
                extractor: "reference".into(),
                cases: 20,
                passed: 20,
                skipped: 0,
                findings: BTreeMap::new(),
            },
        ],
        findings: vec![
            FindingRecord {
                check: Check::DANGLING_LINK,
                producer: "python-tarfile".into(),
                extractor: "reference".into(),
                case_dir: "cases/dangling-link__python-tarfile__capture".into(),
                entries: 2,
                message: "hardlink member `venv/mod.py` names `cache/mod.py`, which is not an earlier member (1 such member(s))".into(),
                count: 3,
                capture_side: true,
                fingerprint: "00112233aabbccdd".into(),
                known: false,
                shrink: ShrinkEnd::Minimal,
            },
            FindingRecord {
                check: Check::LATE_FAILURE,
                producer: "python-tarfile".into(),
                extractor: "reference".into(),
                case_dir: "cases/late-failure__python-tarfile__reference".into(),
                entries: 2,
                message: "capture succeeded but hydration into an empty root was refused: hardlink-not-allowed".into(),
                count: 12,
                capture_side: false,
                fingerprint: "8899aabbccddeeff".into(),
                known: false,
                shrink: ShrinkEnd::Time,
            },
        ],
        capture_refusals: vec![],
        skipped_adapters: vec![SkippedAdapter {
            name: "bsdtar".into(),
            reason: "`bsdtar` not found".into(),
            install_hint: "apt-get install libarchive-tools".into(),
        }],
        skipped_entries: 0,
        fixed: vec![],
        faults: vec![],
        notes: vec![],
        audited: None,
    }
}

fn with_baseline() -> RunReport {
    let mut r = sample();
    let b = Baseline {
        schema: 1,
        known: vec![
            BaselineEntry {
                producer: "python-tarfile".into(),
                extractor: "reference".into(),
                check: Check::LATE_FAILURE,
                fingerprint: "8899aabbccddeeff".into(),
                note: "H1: tarfile writes LNK members".into(),
            },
            BaselineEntry {
                producer: "gnu-tar".into(),
                extractor: "gnu-tar".into(),
                check: Check::ROUNDTRIP,
                fingerprint: "0000000000000000".into(),
                note: String::new(),
            },
        ],
    };
    b.apply(&mut r);
    r
}

#[test]
fn report_json_is_pinned() {
    let json = serde_json::to_string_pretty(&with_baseline()).expect("serialise");
    insta::assert_snapshot!("report_json", json);
}

#[test]
fn summary_markdown_is_pinned_and_says_known_and_new() {
    let md = summary_markdown(&with_baseline());
    assert!(md.contains("1 new finding(s)**, 1 known"), "{md}");
    assert!(md.contains("Fixed since the baseline"), "{md}");
    insta::assert_snapshot!("summary_md", md);
}

#[test]
fn junit_xml_is_pinned() {
    insta::assert_snapshot!("junit_xml", junit_xml(&sample()).expect("renders"));
}

#[test]
fn index_html_is_pinned_with_paths_redacted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let case = dir
        .path()
        .join("cases/late-failure__python-tarfile__reference");
    std::fs::create_dir_all(&case).expect("case dir");
    std::fs::write(case.join("spec.json"), "{\"entries\": []}").expect("spec");
    std::fs::write(case.join("expected.txt"), "-rw-r--r--  2  sha256:aa  a\n").expect("exp");
    std::fs::write(
        case.join("observed.txt"),
        "refused <hardlink-not-allowed>\n",
    )
    .expect("obs");
    let html = index_html(&sample(), dir.path());
    let html = html.replace(&dir.path().display().to_string(), "[TEMP]");
    assert!(
        html.contains("&lt;hardlink-not-allowed&gt;"),
        "observed text is escaped"
    );
    insta::assert_snapshot!("index_html", html);
}

#[test]
fn only_known_findings_do_not_fail_and_new_ones_do() {
    let r = with_baseline();
    assert!(r.has_new_findings(), "the dangling-link finding is new");
    let mut all_known = sample();
    Baseline::from_report(&sample(), None).apply(&mut all_known);
    assert!(
        !all_known.has_new_findings(),
        "a baseline made from the run knows every finding"
    );
    assert!(all_known.fixed.is_empty());
}
