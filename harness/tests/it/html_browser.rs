//! `index.html` in a real headless browser (Debian `chromium`): the page loads from a file
//! with the network off, the matrix table is in the rendered DOM with coloured cells, and a
//! screenshot can be taken. Skips (`support::skip`) when chromium is not installed (CI
//! installs it).

use crate::support;

use snapconf_harness::checks::Check;
use snapconf_harness::report::{index_html, FindingRecord, PairReport, ReportFile, RunReport};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn headless(browser: &Path, profile: &Path) -> Command {
    let mut c = Command::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

fn report() -> RunReport {
    let mut f = BTreeMap::new();
    f.insert("late-failure".to_string(), 4);
    RunReport {
        schema: 1,
        mode: Default::default(),
        seed: 3,
        cases: 10,
        profile: "default".into(),
        pairs: vec![
            PairReport {
                producer: "python-tarfile".into(),
                extractor: "reference".into(),
                cases: 10,
                passed: 6,
                skipped: 0,
                findings: f,
            },
            PairReport {
                producer: "tar-rs".into(),
                extractor: "reference".into(),
                cases: 10,
                passed: 10,
                skipped: 0,
                findings: BTreeMap::new(),
            },
        ],
        findings: vec![FindingRecord {
            check: Check::LATE_FAILURE,
            producer: "python-tarfile".into(),
            extractor: "reference".into(),
            case_dir: "cases/late-failure__python-tarfile__reference".into(),
            entries: 2,
            message: "hydration refused: hardlink-not-allowed".into(),
            count: 4,
            capture_side: false,
            fingerprint: "0011223344556677".into(),
            known: false,
            shrink: snapconf_harness::report::ShrinkEnd::Minimal,
            cause: None,
            trigger: Default::default(),
        }],
        capture_refusals: vec![],
        skipped_adapters: vec![],
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

#[test]
fn index_html_renders_in_headless_chromium() {
    let Some(browser) = chromium() else {
        support::skip::skip(
            "chromium is not installed (no /usr/bin/chromium or /usr/bin/chromium-browser)",
            "apt-get install chromium",
        );
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("index.html");
    std::fs::write(&page, index_html(&ReportFile::new(report()), dir.path())).expect("write page");
    let profile = dir.path().join("profile");
    let out = headless(&browser, &profile)
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        dom.contains("<table id=\"matrix\">"),
        "matrix in the DOM:\n{dom}"
    );
    assert!(dom.contains("class=\"bad\""), "a failing cell is coloured");
    assert!(dom.contains("class=\"ok\""), "a passing cell is coloured");
    assert!(
        dom.contains("late-failure__python-tarfile__reference"),
        "the finding is linked"
    );

    let png = dir.path().join("shot.png");
    let shot = headless(&browser, &profile)
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1400,700")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    let bytes = std::fs::read(&png).unwrap_or_else(|e| {
        panic!(
            "no screenshot ({e}): {}",
            String::from_utf8_lossy(&shot.stderr)
        )
    });
    assert!(bytes.starts_with(b"\x89PNG"), "a PNG was written");
    assert!(bytes.len() > 2000, "the screenshot is not empty");
}
