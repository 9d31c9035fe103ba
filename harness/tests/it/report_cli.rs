//! The report side through the binary: the baseline keyed by cause across seeds and
//! `--producers`, `snapconf report merge` of shard reports, and the report directory
//! checked before the first case (issue 17).
//!
//! The finding used is busybox tar restoring a FIFO (or a char device) that the default
//! profile drops: found within 20 cases by `tar-rs` and `gnu-tar` alike, in a few seconds.

use crate::support;

use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// Whether gnu-tar (producer) and busybox-tar (extractor) can run here; if not, reports
/// the skip.
fn tools() -> bool {
    let gnu = support::producer_available("gnu-tar");
    gnu && support::available_extractors()
        .iter()
        .any(|e| e.name() == "busybox-tar")
}

/// `snapconf ARGS` ([`support::Snapconf`]), run to the end.
fn snapconf(args: &[&str]) -> Output {
    support::Snapconf::new()
        .args(args)
        .env(support::PLAIN_DRAWS.0, support::PLAIN_DRAWS.1)
        .output()
        .expect("snapconf runs")
}

/// `snapconf run --cases 20 --seed SEED --producers P --extractors reference,busybox-tar`
/// into `report` (plus `extra`); the exit code and report.json.
fn run(seed: &str, producers: &str, report: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec![
        "run",
        "--cases",
        "20",
        "--seed",
        seed,
        "--producers",
        producers,
        "--extractors",
        "reference,busybox-tar",
    ];
    args.extend_from_slice(extra);
    let (out, report) = support::run_with_report_env(&args, report, &[support::PLAIN_DRAWS]);
    (out.status.code().unwrap_or(-1), report)
}

fn causes(report: &Value) -> &Vec<Value> {
    report["causes"].as_array().expect("causes")
}

/// A cause recorded from one seed and one producer stays known from other seeds (whose
/// shrunk case names the FIFO differently), another producer, and both producers; a cause
/// the baseline does not have is new, and the baseline's cause not seen is listed as fixed.
#[test]
fn a_known_cause_stays_known_across_seeds_and_producers() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    // Seeds whose first busybox-tar finding is the FIFO cause (with the generator as it
    // draws today; other seeds find its char-device cause first).
    let (code, first) = run("5", "tar-rs", &dir.path().join("first"), &[]);
    assert_eq!(code, 1, "{first:#}");
    assert_eq!(first["schema"], 2);
    let cs = causes(&first);
    assert_eq!(cs.len(), 1, "{first:#}");
    assert_eq!(cs[0]["check"], "roundtrip");
    assert_eq!(cs[0]["side"], "hydration");
    let baseline = dir.path().join("baseline.json");
    let st = support::Snapconf::new()
        .args(["baseline", "update", "--report"])
        .arg(dir.path().join("first"))
        .arg("--out")
        .arg(&baseline)
        .status()
        .expect("baseline update");
    assert_eq!(st.code(), Some(0));
    let b: Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).expect("read")).expect("json");
    assert_eq!(b["schema"], 3);
    assert_eq!(b["known"].as_array().map(Vec::len), Some(1), "{b:#}");
    let b = baseline.to_str().expect("utf-8 temp path");

    for (seed, producers) in [("6", "gnu-tar"), ("4", "tar-rs,gnu-tar")] {
        let rd = dir.path().join(format!("known-{seed}"));
        let (code, report) = run(seed, producers, &rd, &["--baseline", b]);
        assert_eq!(
            code, 0,
            "seed {seed}, --producers {producers}: the cause is known: {report:#}"
        );
        let cs = causes(&report);
        assert!(!cs.is_empty(), "the cause is found again: {report:#}");
        assert!(cs.iter().all(|c| c["known"] == true), "{report:#}");
        assert_eq!(cs[0]["fingerprint"], first["causes"][0]["fingerprint"]);
        let md = std::fs::read_to_string(rd.join("summary.md")).expect("summary.md");
        assert!(md.contains("### 1. known `roundtrip`"), "{md}");
    }

    // A baseline whose one cause is another (its fingerprint changed): the run's cause is
    // new and fails the gate, and the baseline's cause, not seen, is listed as fixed.
    let mut other: Value =
        serde_json::from_str(&std::fs::read_to_string(b).expect("read")).expect("json");
    other["known"][0]["fingerprint"] = Value::from("0000000000000000");
    let other_path = dir.path().join("other-baseline.json");
    std::fs::write(&other_path, other.to_string()).expect("write");
    let rd = dir.path().join("new");
    let other_s = other_path.to_str().expect("utf-8 temp path");
    let (code, report) = run("5", "tar-rs", &rd, &["--baseline", other_s]);
    assert_eq!(code, 1, "a new cause fails the gate: {report:#}");
    assert_eq!(causes(&report)[0]["known"], false);
    assert_eq!(
        report["fixed"].as_array().map(Vec::len),
        Some(1),
        "{report:#}"
    );
    let md = std::fs::read_to_string(rd.join("summary.md")).expect("summary.md");
    assert!(md.contains("### 1. NEW `roundtrip`"), "{md}");
    assert!(md.contains("## Fixed since the baseline"), "{md}");
}

fn cells(report: &Value) -> Vec<(String, String, String, u64)> {
    let mut v: Vec<_> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["producer"].as_str().unwrap_or("").to_string(),
                f["extractor"].as_str().unwrap_or("").to_string(),
                f["check"].as_str().unwrap_or("").to_string(),
                f["count"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    v.sort();
    v
}

/// Two shards of one seed, merged, have the unsharded run's pairs, cells and counts, and
/// its causes; the merged report has every file and reproducer a run writes, and exits as
/// the run does (1: new findings).
#[test]
fn merged_shards_equal_the_unsharded_run() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, whole) = run("1", "tar-rs,gnu-tar", &dir.path().join("whole"), &[]);
    assert_eq!(code, 1, "{whole:#}");
    let mut shards = Vec::new();
    for k in ["1/2", "2/2"] {
        let rd = dir.path().join(format!("shard-{}", &k[..1]));
        let (_, r) = run("1", "tar-rs,gnu-tar", &rd, &["--shard", k]);
        assert!(
            r["cases"].as_u64().unwrap_or(0) < 20,
            "a shard runs part: {r:#}"
        );
        shards.push(rd);
    }
    let out = dir.path().join("merged");
    let mut args = vec!["report", "merge"];
    args.extend(shards.iter().map(|p| p.to_str().expect("utf-8")));
    args.extend(["--out", out.to_str().expect("utf-8")]);
    let o = snapconf(&args);
    assert_eq!(
        o.status.code(),
        Some(1),
        "merge exits 1 for new findings; stderr:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let merged: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("report.json")).expect("merged report.json"),
    )
    .expect("json");
    assert_eq!(merged["cases"], whole["cases"]);
    assert_eq!(merged["seed"], whole["seed"]);
    assert_eq!(merged["pairs"], whole["pairs"], "pairs summed");
    assert_eq!(cells(&merged), cells(&whole), "cells and counts");
    let keys = |r: &Value| -> Vec<(Value, Value, Value, Value)> {
        causes(r)
            .iter()
            .map(|c| {
                (
                    c["check"].clone(),
                    c["side"].clone(),
                    c["fingerprint"].clone(),
                    c["cases"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(keys(&merged), keys(&whole), "causes");
    for f in merged["findings"].as_array().expect("findings") {
        let case = out.join(f["case_dir"].as_str().expect("case_dir"));
        assert!(case.join("repro.sh").is_file(), "{} copied", case.display());
    }
    for file in ["summary.md", "junit.xml", "index.html"] {
        assert!(out.join(file).is_file(), "merged report lacks {file}");
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("1. NEW roundtrip"), "{stdout}");
    assert!(
        !stdout.contains("| producer |"),
        "the matrix stays in summary.md: {stdout}"
    );
    let html = std::fs::read_to_string(out.join("index.html")).expect("index.html");
    assert!(html.contains("<ol id=\"causes\">"), "causes open the page");
    assert!(
        !html.contains("\"entries\""),
        "cases read as trees, not spec JSON"
    );

    // The merge is the gate: with a baseline of the whole run's causes it exits 0.
    let baseline = dir.path().join("baseline.json");
    let st = support::Snapconf::new()
        .args(["baseline", "update", "--report"])
        .arg(dir.path().join("whole"))
        .arg("--out")
        .arg(&baseline)
        .status()
        .expect("baseline update");
    assert_eq!(st.code(), Some(0));
    let gated = dir.path().join("gated");
    let mut args = vec!["report", "merge"];
    args.extend(shards.iter().map(|p| p.to_str().expect("utf-8")));
    args.extend([
        "--out",
        gated.to_str().expect("utf-8"),
        "--baseline",
        baseline.to_str().expect("utf-8"),
    ]);
    let o = snapconf(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "every cause is known; stderr:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // Not shards of one run: a usage error naming the reason.
    let other = dir.path().join("other");
    run("2", "tar-rs", &other, &["--shard", "1/2"]);
    let o = snapconf(&[
        "report",
        "merge",
        shards[0].to_str().expect("utf-8"),
        other.to_str().expect("utf-8"),
        "--out",
        dir.path().join("bad").to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("seed"), "{o:?}");
    // Inputs that would be double-counted or written into, and a report whose reproducer
    // path leaves `cases/`: usage errors, and nothing is written.
    let s0 = shards[0].to_str().expect("utf-8");
    let evil = dir.path().join("evil");
    std::fs::create_dir_all(evil.join("cases")).expect("mkdir");
    let mut r: Value = serde_json::from_str(
        &std::fs::read_to_string(shards[0].join("report.json")).expect("read"),
    )
    .expect("json");
    assert!(
        r["findings"].as_array().is_some_and(|f| !f.is_empty()),
        "{r:#}"
    );
    r["findings"][0]["case_dir"] = Value::from("../../outside");
    std::fs::write(evil.join("report.json"), r.to_string()).expect("write");
    let inside = shards[0].join("merged");
    for (args, says) in [
        (vec![s0, s0], "twice"),
        (vec![s0, inside.to_str().expect("utf-8")], "inside"),
        (vec![evil.to_str().expect("utf-8")], "case_dir"),
    ] {
        let out = if says == "inside" {
            inside.clone()
        } else {
            dir.path().join(format!("bad-{says}"))
        };
        let mut a = vec!["report", "merge"];
        a.extend(
            args.iter()
                .filter(|x| **x != inside.to_str().expect("utf-8")),
        );
        a.extend(["--out", out.to_str().expect("utf-8")]);
        let o = snapconf(&a);
        assert_eq!(o.status.code(), Some(2), "{says}: {o:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(says),
            "{says}: {o:?}"
        );
        assert!(
            !out.exists(),
            "{says}: nothing written at `{}`",
            out.display()
        );
    }
    assert!(!dir.path().join("outside").exists());
    // Not a report: a usage error naming the file.
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let o = snapconf(&[
        "report",
        "merge",
        dir.path().to_str().expect("utf-8"),
        "--out",
        elsewhere.path().join("bad2").to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("report.json"),
        "{o:?}"
    );
}

/// A report directory that cannot be created is a usage error (exit 2) before any case
/// runs; so is a non-empty directory that holds no report, which is left as it was.
#[test]
fn an_unusable_report_dir_fails_before_the_first_case() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "keep me").expect("write");
    let started = std::time::Instant::now();
    for (rd, says) in [
        (file.join("report"), "cannot create report directory"),
        (
            dir.path().to_path_buf(),
            "holds `a-file`, which is not part of a snapconf report",
        ),
    ] {
        let o = snapconf(&[
            "run",
            "--cases",
            "100000",
            "--producers",
            "tar-rs",
            "--extractors",
            "reference",
            "--report-dir",
            rd.to_str().expect("utf-8"),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(!err.contains("cases done"), "no case ran: {err}");
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "100000 cases did not run"
    );
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "keep me");
}

/// `--timeout 0` is refused (exit 2), not taken as 1 s.
#[test]
fn timeout_zero_is_a_usage_error() {
    for cmd in ["run", "audit"] {
        let mut args = vec![cmd];
        if cmd == "audit" {
            args.push(".");
        }
        args.extend(["--timeout", "0"]);
        let o = snapconf(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {err}");
        assert!(err.contains("--timeout"), "{err}");
    }
}

/// Two runs started together without `--report-dir` write two report directories with
/// different seeds; a run into its own earlier report replaces it, leaving nothing stale.
#[test]
fn runs_never_share_or_leave_stale_report_dirs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let args = [
        "run",
        "--cases",
        "2",
        "--producers",
        "tar-rs",
        "--extractors",
        "reference",
    ];
    let spawn = || {
        support::Snapconf::new()
            .args(args)
            .current_dir(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let (a, b) = (spawn(), spawn());
    let mut seeds = Vec::new();
    for child in [a, b] {
        let o = child.wait_with_output().expect("wait");
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(0), "{err}");
        let seed = err
            .split("seed ")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .expect("the seed is printed")
            .to_string();
        seeds.push(seed);
    }
    assert_ne!(seeds[0], seeds[1], "clock seeds differ");
    let runs: Vec<_> = std::fs::read_dir(dir.path().join("reports/runs"))
        .expect("reports/runs")
        .filter_map(Result::ok)
        .filter(|e| e.path().join("report.json").is_file())
        .collect();
    assert_eq!(runs.len(), 2, "two report directories");

    // An explicit earlier report directory is replaced as a whole.
    let rd = runs[0].path();
    let stale = rd.join("cases/roundtrip__x__y");
    std::fs::create_dir_all(&stale).expect("mkdir");
    let o = snapconf(&[&args[..], &["--report-dir", rd.to_str().expect("utf-8")]].concat());
    assert_eq!(o.status.code(), Some(0));
    assert!(!stale.exists(), "the old run's cases are gone");
    assert!(rd.join("report.json").is_file());

    // What a run that died before its end leaves (only `cases/`) is reusable too.
    for f in ["report.json", "summary.md", "junit.xml", "index.html"] {
        std::fs::remove_file(rd.join(f)).expect("remove");
    }
    std::fs::create_dir_all(&stale).expect("mkdir");
    let o = snapconf(&[&args[..], &["--report-dir", rd.to_str().expect("utf-8")]].concat());
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(!stale.exists() && rd.join("report.json").is_file());
}

/// A report directory `dir` as a `run` shard writes it, by hand: `report.json` with one
/// finding whose reproducer is `cases/1`, and that directory with `finding.json` (the
/// caller plants what it tests in or instead of it).
fn hand_report(dir: &Path) {
    use snapconf_harness::report::{FindingRecord, Mode, ReportFile, RunReport};
    let mut run = RunReport::empty(Mode::Run, 7, 1, "default");
    let finding: FindingRecord = serde_json::from_value(serde_json::json!({
        "check": "containment",
        "producer": "tar-rs",
        "extractor": "reference",
        "case_dir": "cases/1",
        "entries": 1,
        "message": "planted",
        "count": 1,
        "capture_side": false,
        "fingerprint": "",
    }))
    .expect("a finding record");
    run.findings.push(finding);
    std::fs::create_dir_all(dir).expect("mkdir");
    let text = serde_json::to_string_pretty(&ReportFile::new(run)).expect("json");
    std::fs::write(dir.join("report.json"), text).expect("report.json");
}

/// `report merge` never follows a symlink inside an input report: a symlinked `cases/<id>`
/// or `cases` (to a directory holding a secret), or a symlinked file in a case directory,
/// is refused with exit 2 naming it, and the secret is not copied to `--out`; a FIFO in a
/// case directory, or as `report.json` (also for `baseline update --report`), is refused
/// at once, not read forever. A plain reproducer is still copied.
#[test]
fn report_merge_follows_no_symlink_and_reads_no_special_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let secret = tmp.path().join("home/.ssh");
    std::fs::create_dir_all(&secret).expect("mkdir");
    std::fs::write(secret.join("id_rsa"), "PRIVATE KEY").expect("secret");
    let within = std::time::Duration::from_secs(20);
    let merge = |input: &Path, out: &Path| {
        let args = [
            "report".as_ref(),
            "merge".as_ref(),
            input.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ];
        support::snapconf_within(&args, within, "merge or refuse")
    };
    let secret_copied = |out: &Path| out.join("cases/1/id_rsa").exists();

    // The reproducer directory a symlink to the secret's.
    let a = tmp.path().join("a");
    hand_report(&a);
    std::fs::create_dir(a.join("cases")).expect("mkdir");
    std::os::unix::fs::symlink(&secret, a.join("cases/1")).expect("symlink");
    let out = tmp.path().join("out-a");
    let (code, _, err) = merge(&a, &out);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "`{}` is a symbolic link, not a directory",
            a.join("cases/1").display()
        )),
        "{err}"
    );
    assert!(!secret_copied(&out), "the secret was copied");

    // `cases` a symlink to a directory whose `1` is the secret's.
    let b = tmp.path().join("b");
    hand_report(&b);
    let decoy = tmp.path().join("decoy");
    std::fs::create_dir(&decoy).expect("mkdir");
    std::os::unix::fs::symlink(&secret, decoy.join("1")).expect("symlink");
    std::os::unix::fs::symlink(&decoy, b.join("cases")).expect("symlink");
    let out = tmp.path().join("out-b");
    let (code, _, err) = merge(&b, &out);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cases` is a symbolic link"), "{err}");
    assert!(!secret_copied(&out), "the secret was copied");

    // A real case directory with a symlinked file in it, then with a FIFO.
    let c = tmp.path().join("c");
    hand_report(&c);
    std::fs::create_dir_all(c.join("cases/1")).expect("mkdir");
    std::os::unix::fs::symlink(secret.join("id_rsa"), c.join("cases/1/id_rsa")).expect("symlink");
    let out = tmp.path().join("out-c");
    let (code, _, err) = merge(&c, &out);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("id_rsa` is a symbolic link"), "{err}");
    assert!(!secret_copied(&out), "the secret was copied");
    std::fs::remove_file(c.join("cases/1/id_rsa")).expect("rm");
    support::mkfifo(&c.join("cases/1/finding.json"));
    let (code, _, err) = merge(&c, &out);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("finding.json` is a named pipe (FIFO)"),
        "{err}"
    );

    // A plain reproducer is copied, file by file.
    std::fs::remove_file(c.join("cases/1/finding.json")).expect("rm");
    std::fs::write(c.join("cases/1/observed.txt"), "seen").expect("write");
    let (code, _, err) = merge(&c, &out);
    assert_eq!(code, 1, "a new finding; stderr: {err}");
    assert_eq!(
        std::fs::read_to_string(out.join("cases/1/observed.txt")).expect("copied"),
        "seen"
    );

    // `report.json` a FIFO, for `report merge` and `baseline update --report`.
    let d = tmp.path().join("d");
    std::fs::create_dir(&d).expect("mkdir");
    support::mkfifo(&d.join("report.json"));
    let (code, _, err) = merge(&d, &tmp.path().join("out-d"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("report.json` is a named pipe (FIFO)"), "{err}");
    let baseline = tmp.path().join("baseline.json");
    let args = [
        "baseline".as_ref(),
        "update".as_ref(),
        "--report".as_ref(),
        d.as_os_str(),
        "--out".as_ref(),
        baseline.as_os_str(),
    ];
    let (code, _, err) = support::snapconf_within(&args, within, "refuse the report");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("report.json` is a named pipe (FIFO)"), "{err}");
}
