//! Fuzz causes are behaviours (attack class plus kind of effect), and a session keeps looking
//! after it finds one: a short `python-data` session (Python's `data` filter, beaten through
//! a PATH_MAX chain) reports escape causes of several attack classes, each kept once, its
//! repeat hits counted and not shrunk.

use crate::support;
use std::collections::BTreeSet;

/// Property: a 400-execution `fuzz --extractor python-data` session reports `containment` /
/// `escaping-link` causes of at least two attack classes, one finding per cause, each
/// naming its class and when it was first seen; repeat hits are counted (some cause has
/// more than one) and only new causes are shrunk (fewer shrinks than hits, and the shrink
/// runs fit in those shrinks); the report counts each cause's hits and notes it in
/// `summary.md` and on stdout.
#[test]
fn a_session_reports_several_classes_and_counts_repeats() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("report");
    let corpora = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora");
    let out = support::Snapconf::new()
        .args([
            "fuzz",
            "--extractor",
            "python-data",
            "--seed",
            "3",
            "-j",
            "1",
        ])
        // A fixed number of executions (the time only a guard): the same draws however
        // loaded the machine is.
        .args(["--runs", "400", "--time", "900", "--shrink-runs", "30"])
        .arg("--corpora")
        .arg(&corpora)
        .arg("--report-dir")
        .arg(&dir)
        .env_remove("SNAPCONF_BASELINE")
        .output()
        .expect("run snapconf");
    let err = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.code() == Some(3) {
        support::skip::skip(
            &format!("python-data is not available: {err}"),
            "a Python with PEP 706 filters (3.12, or 3.11.4 and later)",
        );
        return;
    }
    assert_eq!(
        out.status.code(),
        Some(1),
        "python-data has findings: {err}"
    );
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(name)).expect(name)).expect(name)
    };
    let summary = read("fuzz.json");
    let findings = summary["findings"].as_array().expect("findings");
    let escapes: Vec<&serde_json::Value> = findings
        .iter()
        .filter(|f| f["check"] == "containment" || f["check"] == "escaping-link")
        .collect();
    let listed: Vec<String> = escapes
        .iter()
        .map(|f| format!("{} {} ×{}", f["check"], f["cause"], f["hits"]))
        .collect();
    let classes: BTreeSet<&str> = escapes.iter().filter_map(|f| f["class"].as_str()).collect();
    assert!(classes.len() >= 2, "classes {classes:?}: {listed:#?}");
    let causes: BTreeSet<(String, String)> = findings
        .iter()
        .map(|f| (f["check"].to_string(), f["cause"].to_string()))
        .collect();
    assert_eq!(causes.len(), findings.len(), "one finding per cause");
    let executions = summary["executions"].as_u64().expect("executions");
    for f in &escapes {
        let class = f["class"].as_str().expect("class");
        let cause = f["cause"].as_str().expect("cause");
        assert!(cause.starts_with(&format!("{class}: ")), "{f}");
        let first = f["first_seen"]["execution"].as_u64().expect("first seen");
        assert!((1..=executions).contains(&first), "{f}");
        assert!(f["first_seen"]["secs"].as_f64() <= Some(900.0), "{f}");
        assert!(!f["classes"].as_array().expect("classes").is_empty(), "{f}");
    }
    let hits_of = |f: &serde_json::Value| f["hits"].as_u64().unwrap_or(0);
    assert!(
        escapes.iter().any(|f| hits_of(f) > 1),
        "repeats are counted ({executions} executions): {listed:#?}"
    );
    let hits: u64 = summary["hits"]
        .as_object()
        .expect("hits")
        .values()
        .filter_map(serde_json::Value::as_u64)
        .sum();
    let shrinks = summary["shrinks"].as_u64().expect("shrinks");
    assert!(
        shrinks < hits,
        "{shrinks} shrinks for {hits} hits: repeats are not shrunk"
    );
    let runs = summary["extractor_runs"].as_u64().expect("runs");
    assert!(
        runs - executions <= shrinks * 31,
        "{} shrink runs for {shrinks} shrinks of at most 30 runs and a confirmation",
        runs - executions
    );
    let report = read("report.json");
    let md = std::fs::read_to_string(dir.join("summary.md")).expect("summary.md");
    for f in &escapes {
        let cause = f["cause"].as_str().expect("cause");
        let rec = report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .find(|r| r["cause"] == cause)
            .unwrap_or_else(|| panic!("{cause} is in the report"));
        assert_eq!(rec["count"], f["hits"], "the report counts its hits");
        let line = format!(
            "cause `{cause}`: first seen at {:.1} s (execution {}), {} hit(s)",
            f["first_seen"]["secs"].as_f64().unwrap_or_default(),
            f["first_seen"]["execution"],
            f["hits"]
        );
        assert!(md.contains(&line.replace('|', "\\|")), "{line}\n{md}");
        assert!(stdout.contains(&line), "{line}\n{stdout}");
    }
}
