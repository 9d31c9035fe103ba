//! The main job end to end through the binary (issue 2's "done when"):
//! `python-tarfile` × `reference` finds H1 (`late-failure`) and H2 (`dangling-link`), each
//! shrunk to at most 3 entries, with reproducers that exit 1 while the finding reproduces
//! and 0 once it is fixed; `tar-rs` and `gnu-tar` × `reference` conform.

use crate::support;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

use support::producer_available as available;

/// `snapconf ARGS --report-dir REPORT`: the exit code and report.json.
fn run(args: &[&str], report: &Path) -> (i32, Value) {
    let (out, report) = support::run_with_report(args, report);
    (out.status.code().unwrap_or(-1), report)
}

/// [`run`] with every case a plain draw ([`support::PLAIN_DRAWS`]).
fn run_plain(args: &[&str], report: &Path) -> (i32, Value) {
    let (out, report) = support::run_with_report_env(args, report, &[support::PLAIN_DRAWS]);
    (out.status.code().unwrap_or(-1), report)
}

fn finding<'a>(report: &'a Value, check: &str) -> &'a Value {
    report["findings"]
        .as_array()
        .and_then(|fs| fs.iter().find(|f| f["check"] == check))
        .unwrap_or_else(|| panic!("no `{check}` finding in {report:#}"))
}

fn repro(case_dir: &Path) -> i32 {
    Command::new("sh")
        .arg(case_dir.join("repro.sh"))
        .env("SNAPCONF", support::snapconf_bin())
        .status()
        .expect("repro.sh runs")
        .code()
        .unwrap_or(-1)
}

#[test]
fn python_tarfile_findings_are_shrunk_and_reproduce() {
    if !available("python-tarfile") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let rd = dir.path().join("report");
    let (code, report) = run(
        &[
            "run",
            "--cases",
            "300",
            "--seed",
            "1",
            "--producers",
            "python-tarfile",
            "--extractors",
            "reference",
            // The default 120 s per finding is wall-clock time: alone on this machine the
            // run takes 78 s in all and shrinks both findings to 2 entries, but with the
            // rest of the suite and other jobs (load 20 was seen) it ran out at 5 entries.
            "--shrink-time",
            "600",
        ],
        &rd,
    );
    assert_eq!(code, 1, "findings exit 1: {report:#}");
    assert_eq!(report["schema"], 2);
    assert_eq!(report["pairs"][0]["producer"], "python-tarfile");
    for check in ["late-failure", "dangling-link"] {
        let f = finding(&report, check);
        let entries = f["entries"].as_u64().expect("entries is a number");
        assert!(entries <= 3, "`{check}` shrunk to {entries} entries: {f:#}");
        // Not stopped by the clock: H1's value-tree pass uses all its steps (`steps`), the
        // polish then takes it to 2 entries; H2's ends at a minimum.
        assert!(
            f["shrink"] == "minimal" || f["shrink"] == "steps",
            "`{check}` shrank within its step budget: {f:#}"
        );
        let case_dir = rd.join(f["case_dir"].as_str().expect("case_dir"));
        let script = std::fs::read_to_string(case_dir.join("repro.sh")).expect("repro.sh");
        assert!(
            script.contains("python-tarfile (Python 3."),
            "repro.sh names the tool and its version:\n{script}"
        );
        for file in [
            "spec.json",
            "prior.json",
            "archive.tar",
            "expected.txt",
            "observed.txt",
            "repro.sh",
            "finding.json",
        ] {
            assert!(
                case_dir.join(file).is_file(),
                "`{check}` reproducer lacks {file}"
            );
        }
        assert_eq!(
            repro(&case_dir),
            1,
            "`{check}` repro.sh exits 1 while it reproduces"
        );
    }
    // "Fixed": the same late-failure reproducer under a profile whose reference policy
    // restores hardlink members no longer fails, and repro.sh says so with exit 0.
    let f = finding(&report, "late-failure");
    let case_dir = rd.join(f["case_dir"].as_str().expect("case_dir"));
    let meta_path = case_dir.join("finding.json");
    let mut meta: Value =
        serde_json::from_str(&std::fs::read_to_string(&meta_path).expect("read")).expect("json");
    meta["profile"]["hardlinks"] = Value::from("preserve");
    std::fs::write(&meta_path, meta.to_string()).expect("write");
    assert_eq!(
        repro(&case_dir),
        0,
        "repro.sh exits 0 once the finding no longer reproduces"
    );
    for file in ["summary.md", "junit.xml", "index.html"] {
        assert!(rd.join(file).is_file(), "report lacks {file}");
    }
}

#[test]
fn tar_rs_and_gnu_tar_conform_with_the_reference() {
    if !available("gnu-tar") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let rd = dir.path().join("report");
    let (code, report) = run(
        &[
            "run",
            "--cases",
            "300",
            "--seed",
            "1",
            "--producers",
            "tar-rs,gnu-tar",
            "--extractors",
            "reference",
        ],
        &rd,
    );
    assert_eq!(code, 0, "every pair conforms: {:#}", report["findings"]);
    let pairs = report["pairs"].as_array().expect("pairs");
    assert_eq!(pairs.len(), 2);
    for p in pairs {
        assert_eq!(p["cases"], 300, "{p:#}");
        assert_eq!(
            p["passed"].as_u64().unwrap_or(0) + p["skipped"].as_u64().unwrap_or(0),
            300,
            "{p:#}"
        );
    }
}

#[test]
fn audit_of_a_real_directory_runs_every_pair() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("cache")).expect("mkdir");
    std::fs::write(ws.join("cache/mod.py"), "VALUE = 1\n").expect("write");
    std::fs::create_dir_all(ws.join("venv")).expect("mkdir");
    std::fs::hard_link(ws.join("cache/mod.py"), ws.join("venv/mod.py")).expect("link");
    std::os::unix::fs::symlink("/usr/local/bin/python", ws.join("venv/python")).expect("symlink");
    let rd = dir.path().join("report");
    let ws_s = ws.to_str().expect("utf-8 temp path");
    let (code, report) = run(
        &[
            "audit",
            ws_s,
            "--exclude",
            "cache/mod.py",
            "--extractors",
            "reference",
        ],
        &rd,
    );
    assert!(code == 0 || code == 1, "audit exit {code}");
    assert_eq!(report["cases"], 1);
    assert_eq!(report["audited"], ws_s, "the report says what was audited");
    let summary = std::fs::read_to_string(rd.join("summary.md")).expect("summary.md");
    assert!(
        summary.starts_with(&format!("# snapconf audit of {ws_s}:")),
        "{summary}"
    );
    if available("python-tarfile") {
        let hit = report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["producer"] == "python-tarfile" && f["check"] == "dangling-link");
        assert!(
            hit,
            "the excluded first name (H2) is found in a real directory: {report:#}"
        );
    }
    assert!(
        ws.join("venv/mod.py").is_file(),
        "the audited directory is untouched"
    );
}

/// The CI gate (issue 7): with a baseline holding every finding of a run, the same run exits
/// 0; with one finding taken out of the baseline, it exits 1 and the summary marks that one
/// NEW and the other known.
#[test]
fn baseline_gates_only_new_findings() {
    if !available("python-tarfile") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let args = [
        "run",
        "--cases",
        "40",
        "--seed",
        "1",
        "--producers",
        "python-tarfile",
        "--extractors",
        "reference",
        "--shrink-time",
        "10",
    ];
    let first = dir.path().join("first");
    let (code, report) = run_plain(&args, &first);
    assert_eq!(code, 1, "{report:#}");
    assert!(
        report["findings"].as_array().map_or(0, |f| f.len()) >= 2,
        "{report:#}"
    );
    let baseline = dir.path().join("baseline.json");
    let st = support::Snapconf::new()
        .args(["baseline", "update", "--report"])
        .arg(&first)
        .arg("--out")
        .arg(&baseline)
        .status()
        .expect("baseline update");
    assert_eq!(st.code(), Some(0));

    let mut with_baseline: Vec<&str> = args.to_vec();
    with_baseline.push("--baseline");
    let b = baseline.to_str().expect("utf-8 temp path");
    with_baseline.push(b);
    let (code, report) = run_plain(&with_baseline, &dir.path().join("known"));
    assert_eq!(code, 0, "only known findings pass the gate: {report:#}");

    // Forget the late-failure entry: it is new again.
    let mut base: Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).expect("read")).expect("json");
    base["known"]
        .as_array_mut()
        .expect("known")
        .retain(|k| k["check"] != "late-failure");
    std::fs::write(&baseline, base.to_string()).expect("write");
    let rd = dir.path().join("new");
    let (code, _) = run_plain(&with_baseline, &rd);
    assert_eq!(code, 1, "a new finding fails the gate");
    let md = std::fs::read_to_string(rd.join("summary.md")).expect("summary");
    assert!(md.contains("NEW **late-failure**"), "{md}");
    assert!(md.contains("known **dangling-link**"), "{md}");
}

/// Findings say how their shrink ended when a budget stopped it: with the run's shrink
/// time spent (`--shrink-total 0`) they are written as found (`total-spent`, "not
/// shrunk" in summary.md); with a step budget too small to finish (`--shrink-steps 5`)
/// they say `steps`, not `minimal`, even when the polish after it finishes.
#[test]
fn findings_say_which_shrink_budget_stopped_them() {
    if !available("python-tarfile") {
        return;
    }
    for (flag, value, end, said) in [
        (
            "--shrink-total",
            "0",
            "total-spent",
            "not shrunk: the run's --shrink-total was spent",
        ),
        ("--shrink-steps", "5", "steps", "step budget ran out"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let rd = dir.path().join("report");
        let (code, report) = run_plain(
            &[
                "run",
                "--cases",
                "40",
                "--seed",
                "1",
                "--producers",
                "python-tarfile",
                "--extractors",
                "reference",
                flag,
                value,
            ],
            &rd,
        );
        assert_eq!(code, 1, "findings exit 1: {report:#}");
        let findings = report["findings"].as_array().expect("findings");
        assert!(!findings.is_empty(), "{report:#}");
        let summary = std::fs::read_to_string(rd.join("summary.md")).expect("summary.md");
        for f in findings {
            assert_eq!(f["shrink"], end, "{flag} {value}: {f:#}");
            let n = f["entries"].as_u64().expect("entries");
            let line = format!("{n} {}, {said}", if n == 1 { "entry" } else { "entries" });
            assert!(summary.contains(&line), "`{line}` in:\n{summary}");
        }
    }
}

/// Every file under `dir` (relative path → bytes), for comparing two report directories.
fn files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .expect("under dir")
                    .display()
                    .to_string();
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    out
}

/// The same seed gives the same report with one worker and with two: cells, counts,
/// shrunk cases, their reproducers and the order of everything (shrinks bounded by steps,
/// not by time, so that both runs shrink alike).
#[test]
fn the_report_does_not_depend_on_the_number_of_workers() {
    if !available("gnu-tar") {
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    // 60 cases: the stratified opening cases (54, each stripped to its shapes) and plain
    // draws after them.
    let args = [
        "run",
        "--cases",
        "60",
        "--seed",
        "11",
        "--producers",
        "tar-rs,gnu-tar",
        "--extractors",
        "reference,gnu-tar",
        "--shrink-steps",
        "60",
        "--shrink-time",
        "3600",
        "--shrink-total",
        "3600",
    ];
    let mut reports = Vec::new();
    for jobs in ["1", "2", "5"] {
        let dir = t.path().join(format!("j{jobs}"));
        let mut a = args.to_vec();
        a.extend(["-j", jobs]);
        let (code, report) = run(&a, &dir);
        assert!(code == 0 || code == 1, "-j {jobs}: exit {code}");
        let mut tree = files(&dir);
        // The rendered pages hold the report directory's own path.
        tree.retain(|name, _| name == "report.json" || name.starts_with("cases/"));
        // A producer stores the clock (directory mtimes) in its archive.
        tree.retain(|name, _| !name.ends_with("repro.sh") && !name.ends_with("archive.tar"));
        reports.push((jobs, report, tree));
    }
    let (_, first, first_tree) = &reports[0];
    assert!(
        first["findings"].as_array().is_some_and(|f| !f.is_empty()),
        "the comparison needs findings: {first:#}"
    );
    for (jobs, report, tree) in &reports[1..] {
        assert_eq!(report, first, "report.json of -j {jobs} differs from -j 1");
        let names: Vec<&String> = tree.keys().collect();
        assert_eq!(names, first_tree.keys().collect::<Vec<_>>(), "-j {jobs}");
        for (name, bytes) in tree {
            assert!(
                first_tree.get(name) == Some(bytes),
                "`{name}` of -j {jobs} differs from -j 1:\n{}\n---\n{}",
                String::from_utf8_lossy(bytes),
                String::from_utf8_lossy(&first_tree[name])
            );
        }
    }
}
