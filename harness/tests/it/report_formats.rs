//! Report formats are pinned by insta snapshots: `report.json`, `summary.md`, `junit.xml`,
//! `index.html` and the stdout summary for one report with a known and a new cause (one
//! capture-side, in two pairs), a clean pair and a skipped adapter. Temporary paths are
//! redacted.

use snapconf_harness::checks::Check;
use snapconf_harness::report::ShrinkEnd;
use snapconf_harness::report::{
    index_html, junit_xml, summary_markdown, summary_text, Baseline, FindingRecord, PairReport,
    ReportFile, RunReport, SkippedAdapter,
};
use std::collections::BTreeMap;
use std::path::Path;

fn sample() -> RunReport {
    let mut late = BTreeMap::new();
    late.insert("late-failure".to_string(), 12);
    late.insert("dangling-link".to_string(), 3);
    RunReport {
        schema: 1,
        mode: Default::default(),
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
                cause: None,
                trigger: Default::default(),
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
                cause: None,
                trigger: Default::default(),
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
        shard: None,
        incomplete: Vec::new(),
        partial: None,
    }
}

/// The sample's dangling-link finding seen by a second extractor too (a capture-side cause
/// in two pairs), and a pair for it.
fn sample_two_extractors() -> RunReport {
    let mut r = sample();
    let mut f = r.findings[0].clone();
    f.extractor = "busybox-tar".into();
    f.entries = 3;
    r.findings.insert(0, f);
    let mut pair = r.pairs[0].clone();
    pair.extractor = "busybox-tar".into();
    pair.findings.remove("late-failure");
    pair.passed = 17;
    r.pairs.insert(0, pair);
    r
}

/// Case directories of the sample: spec and prior workspace, expected and observed trees.
fn case_dirs(dir: &Path) {
    let late = dir.join("cases/late-failure__python-tarfile__reference");
    std::fs::create_dir_all(&late).expect("case dir");
    std::fs::write(
        late.join("spec.json"),
        r#"{"entries": [
            {"path": "cache/mod.py", "kind": "file", "content": "VALUE = 1\n"},
            {"path": "venv/mod.py", "kind": "hardlink", "target": "cache/mod.py"},
            {"path": "new\nline", "kind": "fifo"},
            {"path": {"hex": "626164ff"}, "kind": "symlink", "target": "{root}/cache"}
        ], "exclusions": []}"#,
    )
    .expect("spec");
    std::fs::write(late.join("prior.json"), r#"{"entries": []}"#).expect("prior");
    std::fs::write(late.join("expected.txt"), "-??x??????  2  sha256:aa  a\n").expect("exp");
    std::fs::write(
        late.join("observed.txt"),
        "refused <hardlink-not-allowed>\n",
    )
    .expect("obs");
    let dl = dir.join("cases/dangling-link__python-tarfile__capture");
    std::fs::create_dir_all(&dl).expect("case dir");
    std::fs::write(
        dl.join("spec.json"),
        r#"{"entries": [
            {"path": "cache/mod.py", "kind": "file", "content": "VALUE = 1\n", "mode": 493},
            {"path": "venv/mod.py", "kind": "hardlink", "target": "cache/mod.py"}
        ], "exclusions": ["cache/mod.py"]}"#,
    )
    .expect("spec");
    std::fs::write(
        dl.join("prior.json"),
        r#"{"entries": [{"path": "old", "kind": "dir"}]}"#,
    )
    .expect("prior");
}

/// The sample with a baseline that knows the late-failure cause (recorded in another pair
/// and with another member name) and a roundtrip cause no longer seen.
fn with_baseline() -> ReportFile {
    let mut r = sample_two_extractors();
    let mut known = sample();
    known.findings.retain(|f| f.check == Check::LATE_FAILURE);
    known.findings[0].producer = "gnu-tar".into();
    let mut b = Baseline::from_report(&known, None);
    b.known[0].note = "H1: tarfile writes LNK members".into();
    let mut gone = sample();
    gone.findings.truncate(1);
    gone.findings[0].check = Check::ROUNDTRIP;
    gone.findings[0].capture_side = false;
    gone.findings[0].message =
        "hydration differs from the expected tree: + c?????????  1,3  dev".into();
    b.known.extend(Baseline::from_report(&gone, None).known);
    b.apply(&mut r);
    ReportFile::new(r)
}

#[test]
fn report_json_is_pinned_with_causes() {
    let file = with_baseline();
    assert_eq!(file.run.schema, 2);
    assert_eq!(
        file.causes.len(),
        2,
        "two cells of dangling-link are one cause"
    );
    let json = serde_json::to_string_pretty(&file).expect("serialise");
    insta::assert_snapshot!("report_json", json);
}

#[test]
fn summary_markdown_opens_with_the_ranked_causes() {
    let dir = tempfile::tempdir().expect("tempdir");
    case_dirs(dir.path());
    let md = summary_markdown(&with_baseline(), dir.path());
    assert!(
        md.contains("**1 new cause(s) in 3 failing cell(s), 1 known from the baseline**"),
        "{md}"
    );
    let causes = md.find("## Causes, most severe first").expect("causes");
    let matrix = md.find("## Matrix").expect("matrix");
    assert!(causes < matrix, "the causes come first:\n{md}");
    // late-failure (severity 3) ranks above dangling-link (6).
    let late = md.find("known `late-failure`").expect("late-failure cause");
    let dl = md.find("NEW `dangling-link`").expect("dangling-link cause");
    assert!(late < dl, "{md}");
    assert!(
        md.contains("python-tarfile × every extractor (2 pairs, 3 failures (cases × pairs))"),
        "{md}"
    );
    assert!(
        md.contains("run `sh cases/dangling-link__python-tarfile__capture/repro.sh`"),
        "{md}"
    );
    assert!(
        md.contains("  prw-r--r--  new\\nline\n"),
        "names escaped:\n{md}"
    );
    assert!(
        md.contains("  lrwxrwxrwx  bad\\xff -> {root}/cache\n"),
        "{md}"
    );
    assert!(md.contains("hardlinks: cache/mod.py = venv/mod.py"), "{md}");
    assert!(!md.contains("\"hex\""), "no raw JSON:\n{md}");
    assert!(
        !md.contains("parser-disagreement"),
        "no fuzz-only column:\n{md}"
    );
    assert!(md.contains("Fixed since the baseline"), "{md}");
    insta::assert_snapshot!("summary_md", md);
}

#[test]
fn stdout_summary_is_the_causes_and_the_report_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    case_dirs(dir.path());
    let text = summary_text(&with_baseline(), dir.path());
    let text = text.replace(&dir.path().display().to_string(), "[TEMP]");
    assert!(
        !text.contains("| producer |"),
        "no matrix on stdout:\n{text}"
    );
    assert!(text.trim_end().ends_with("report: [TEMP]"), "{text}");
    assert!(
        text.contains("fixed since the baseline (1 cause(s) it lists were not found)"),
        "the baseline's causes not found are listed:\n{text}"
    );
    insta::assert_snapshot!("summary_text", text);
}

#[test]
fn junit_xml_is_pinned() {
    insta::assert_snapshot!("junit_xml", junit_xml(&sample()).expect("renders"));
}

#[test]
fn index_html_is_pinned_with_paths_redacted() {
    let dir = tempfile::tempdir().expect("tempdir");
    case_dirs(dir.path());
    let html = index_html(&with_baseline(), dir.path());
    let html = html.replace(&dir.path().display().to_string(), "[TEMP]");
    assert!(
        html.contains("&lt;hardlink-not-allowed&gt;"),
        "observed text is escaped"
    );
    assert!(html.contains("<ol id=\"causes\">"), "{html}");
    assert!(!html.contains("\"entries\""), "no raw spec JSON");
    insta::assert_snapshot!("index_html", html);
}

#[test]
fn only_known_findings_do_not_fail_and_new_ones_do() {
    let r = with_baseline();
    assert!(r.run.has_new_findings(), "the dangling-link cause is new");
    let mut all_known = sample();
    Baseline::from_report(&sample(), None).apply(&mut all_known);
    assert!(
        !all_known.has_new_findings(),
        "a baseline made from the run knows every finding"
    );
    assert!(all_known.fixed.is_empty());
}
