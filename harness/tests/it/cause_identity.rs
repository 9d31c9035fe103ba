//! Cause identity (issue 24): a cause is a behaviour, so a baseline written from one seed
//! holds for other seeds of the same tools, and `baseline update` merges into a file
//! (`--replace` starts over).

use crate::support;

use serde_json::{json, Value};
use std::path::Path;

/// The tools of the seeds test: built-ins that show the causes (python-data
/// emptying the root before it refuses, python-tarfile's dangling hardlinks and what every
/// extractor makes of them, LNK members the reference refuses, BusyBox's missing
/// directories, extractors creating special files), 12 pairs instead of the default 42 so
/// that a debug build on a shared machine runs the five runs in minutes.
const TOOLS: [&str; 4] = [
    "--producers",
    "gnu-tar,python-tarfile,busybox-tar",
    "--extractors",
    "reference,python-data,gnu-tar,tar-rs",
];

/// `snapconf run --cases CASES --seed SEED` on [`TOOLS`] into `dir` (plus `extra`): the
/// exit code and report.json.
fn run(seed: &str, cases: &str, dir: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["run", "--cases", cases, "--seed", seed];
    args.extend_from_slice(&TOOLS);
    args.extend_from_slice(extra);
    let (out, report) = support::run_with_report(&args, dir);
    (out.status.code().unwrap_or(-1), report)
}

/// `snapconf baseline update --report REPORT --out OUT` (plus `extra`), asserted to exit 0.
fn update(report: &Path, out: &Path, extra: &[&str]) -> Value {
    let o = support::Snapconf::new()
        .args(["baseline", "update", "--report"])
        .arg(report)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("baseline update runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(out).expect("baseline")).expect("json")
}

/// The new causes of a report, in words, for a failure message.
fn new_causes(report: &Value) -> Vec<String> {
    report["causes"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter(|c| c["known"] != true)
                .map(|c| format!("{} {}: {}", c["check"], c["side"], c["behaviour"]))
                .collect()
        })
        .unwrap_or_default()
}

/// A baseline written from `run --seed 2` (100 cases, the default) makes `run` of seeds 3
/// to 6 (40 cases each) with the same tools exit 0: every cause they find is one the
/// baseline lists (keyed by behaviour, not by the first diff line or the names of a seed's
/// workspace). It fails without what makes seeds agree: with the keys of report schema 2
/// (the message's shape) seeds 3 and 4 had new causes; with stratified draws not yet
/// stripped to their shapes, and without the `renamed` and half-tree kinds, seeds 3 and 5
/// did (2026-12-03, `docs/findings.md`). Since then the seeds agree on the message shapes
/// too, so those keys no longer tell this test apart.
#[test]
fn a_baseline_from_seed_2_holds_for_seeds_3_to_6() {
    let tools = ["gnu-tar", "python-tarfile", "busybox-tar"]
        .iter()
        .all(|p| support::producer_available(p));
    if !tools {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, first) = run("2", "100", &dir.path().join("seed-2"), &[]);
    assert_eq!(code, 1, "seed 2 has findings: {first:#}");
    let baseline = dir.path().join("baseline.json");
    let b = update(&dir.path().join("seed-2"), &baseline, &[]);
    assert_eq!(b["schema"], 3);
    let path = baseline.to_str().expect("utf-8 temp path");
    let mut failed = Vec::new();
    for seed in 3..=6 {
        let seed = seed.to_string();
        let (code, report) = run(
            &seed,
            "40",
            &dir.path().join(format!("seed-{seed}")),
            &["--baseline", path],
        );
        if code != 0 {
            failed.push(format!(
                "seed {seed}: exit {code}: {:?}",
                new_causes(&report)
            ));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A finding of `check` in `producer × extractor` with `message`, shrunk to a workspace
/// with `features`.
fn finding(check: &str, pair: (&str, &str), message: &str, features: &[&str]) -> Value {
    json!({
        "check": check, "producer": pair.0, "extractor": pair.1,
        "case_dir": format!("cases/{check}__{}__{}", pair.0, pair.1),
        "entries": 1, "message": message, "count": 1, "capture_side": false,
        "fingerprint": "", "shrink": "minimal",
        "trigger": {"features": features},
    })
}

/// A report directory holding a `run` report.json with `findings`.
fn report_dir(dir: &Path, findings: Vec<Value>) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).expect("mkdir");
    let report = json!({
        "schema": 2, "mode": "run", "seed": 1, "cases": 10, "profile": "default",
        "pairs": [], "findings": findings, "capture_refusals": [],
        "skipped_adapters": [], "skipped_entries": 0,
    });
    std::fs::write(dir.join("report.json"), report.to_string()).expect("write");
    dir.to_path_buf()
}

fn fingerprints(b: &Value) -> Vec<String> {
    let mut v: Vec<String> = b["known"]
        .as_array()
        .expect("known")
        .iter()
        .map(|e| e["fingerprint"].as_str().unwrap_or("").to_string())
        .collect();
    v.sort();
    v
}

/// `baseline update` into an existing file keeps its causes (and their notes) and adds the
/// report's; the same cause from other names is not added twice; `--replace` keeps only the
/// report's; a schema-2 file is read and its entry kept beside the new ones.
#[test]
fn baseline_update_merges_and_replace_starts_over() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = finding(
        "roundtrip",
        ("gnu-tar", "busybox-tar"),
        "hydration into an empty root differs from the expected tree: + p?????????  a",
        &["fifo"],
    );
    let fifo_again = finding(
        "roundtrip",
        ("tar-rs", "gnu-tar"),
        "hydration into an empty root differs from the expected tree: + c?????????  1,3  zz/q",
        &["char-device"],
    );
    let refused = finding(
        "late-failure",
        ("bsdtar", "reference"),
        "capture succeeded but hydration into an empty root was refused: hardlink-not-allowed: \
         member `./a` (hardlink members are refused by policy)",
        &["shared-inode"],
    );
    let a = report_dir(&dir.path().join("a"), vec![fifo]);
    let a2 = report_dir(&dir.path().join("a2"), vec![fifo_again]);
    let b = report_dir(&dir.path().join("b"), vec![refused]);
    let file = dir.path().join("baseline.json");

    let first = update(&a, &file, &[]);
    assert_eq!(fingerprints(&first).len(), 1, "{first:#}");
    // A reviewer's note on the kept cause.
    let mut noted = first.clone();
    noted["known"][0]["note"] = Value::from("tracked in #3");
    std::fs::write(&file, noted.to_string()).expect("write");

    let same = update(&a2, &file, &[]);
    assert_eq!(
        fingerprints(&same),
        fingerprints(&first),
        "one behaviour, one entry: {same:#}"
    );
    let merged = update(&b, &file, &[]);
    let fps = fingerprints(&merged);
    assert_eq!(fps.len(), 2, "merged: {merged:#}");
    assert!(fps.contains(&fingerprints(&first)[0]), "{merged:#}");
    let kept = merged["known"]
        .as_array()
        .expect("known")
        .iter()
        .find(|e| e["check"] == "roundtrip")
        .expect("the first cause is kept");
    assert_eq!(kept["note"], "tracked in #3");

    let replaced = update(&b, &file, &["--replace"]);
    assert_eq!(fingerprints(&replaced).len(), 1, "{replaced:#}");
    assert_eq!(replaced["known"][0]["check"], "late-failure");

    // A schema-2 file (entries keyed by the message's shape): read, kept when merging.
    let old = json!({"schema": 2, "known": [{
        "check": "hang", "side": "hydration", "fingerprint": "0123456789abcdef",
        "note": "old entry"}]});
    std::fs::write(&file, old.to_string()).expect("write");
    let merged = update(&a, &file, &[]);
    assert_eq!(merged["schema"], 3);
    let known = merged["known"].as_array().expect("known");
    assert_eq!(known.len(), 2, "{merged:#}");
    assert!(
        known
            .iter()
            .any(|e| e["note"] == "old entry" && e["key"] == 2),
        "{merged:#}"
    );
}
