//! `snapconf run --faults`: the reference extractor survives every fault with the prior
//! intact; clear-then-extract tools (GNU tar, Python `data` filter) are reported with a
//! shrunk reproducer and `fault.json`; an interrupted run leaves nothing behind.

use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A scratch dir on the jail filesystem (`/dev/shm` when writable: fast).
fn scratch() -> tempfile::TempDir {
    let base = snapconf_harness::jail::default_jail_base().unwrap_or_else(std::env::temp_dir);
    tempfile::Builder::new()
        .prefix("snapconf-faults-test-")
        .tempdir_in(base)
        .expect("scratch dir")
}

fn report(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("report json")
}

fn fault_rows(r: &serde_json::Value, extractor: &str) -> Vec<serde_json::Value> {
    r["faults"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|row| row["extractor"] == extractor)
        .collect()
}

fn count(r: &serde_json::Value, check: &str) -> u64 {
    r["pairs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| p["findings"][check].as_u64().unwrap_or(0))
        .sum()
}

fn tool(name: &str) -> bool {
    let ok = Command::new(name)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !ok {
        support::skip::skip(
            &format!("`{name}` is not installed"),
            &format!("apt-get install {name}"),
        );
    }
    ok
}

fn run(args: &[&str], jail: &Path, report_dir: &Path) -> std::process::Output {
    support::Snapconf::new()
        .arg("run")
        .args(args)
        .arg("--report-dir")
        .arg(report_dir)
        .arg("--jail-dir")
        .arg(jail)
        .env_remove("SNAPCONF_FAULTS")
        .env(support::PLAIN_DRAWS.0, support::PLAIN_DRAWS.1)
        .output()
        .expect("run snapconf")
}

fn assert_jail_dir_empty(jail: &Path) {
    let left: Vec<_> = std::fs::read_dir(jail)
        .expect("jail dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "jails left behind: {left:?}");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let j = jail.to_string_lossy();
    assert!(
        !mounts.lines().any(|l| l.contains(j.as_ref())),
        "mounts left under `{j}`"
    );
}

/// Property: with the reference extractor, no fault (truncate, corrupt, EFBIG, ENOSPC,
/// SIGKILL) ever changes the prior workspace or anything outside the root.
#[test]
fn reference_stays_atomic_under_every_fault() {
    let tmp = scratch();
    let (jail, rep) = (tmp.path().join("jail"), tmp.path().join("report"));
    std::fs::create_dir(&jail).expect("jail dir");
    let out = run(
        &[
            "--cases",
            "40",
            "--seed",
            "7",
            "--faults",
            "all",
            "--producers",
            "tar-rs",
            "--extractors",
            "reference",
        ],
        &jail,
        &rep,
    );
    let r = report(&rep);
    assert_eq!(
        count(&r, "atomic-hydration"),
        0,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        count(&r, "containment"),
        0,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let rows = fault_rows(&r, "reference");
    assert_eq!(rows.len(), 5, "a row per fault: {rows:?}");
    for row in &rows {
        assert_eq!(row["failed-damaged"], 0, "{row}");
        assert!(
            row["runs"].as_u64().unwrap_or(0) > 0,
            "the fault ran: {row}"
        );
        assert!(
            row["failed-intact"].as_u64().unwrap_or(0) > 0,
            "the fault bit: {row}"
        );
    }
    assert_jail_dir_empty(&jail);
}

/// Property: a clear-then-extract extractor (GNU tar, Python's `data` filter) loses the
/// prior workspace when the archive is truncated; the suite reports it as
/// `atomic-hydration` with a shrunk reproducer holding `fault.json`, and `snapconf replay`
/// reproduces it (exit 1).
#[test]
fn clear_then_extract_tools_are_reported_under_truncation() {
    for ex in ["gnu-tar", "python-data"] {
        if !tool(if ex == "gnu-tar" { "tar" } else { "python3" }) {
            continue;
        }
        let tmp = scratch();
        let (jail, rep) = (tmp.path().join("jail"), tmp.path().join("report"));
        std::fs::create_dir(&jail).expect("jail dir");
        let out = run(
            &[
                "--cases",
                "12",
                "--seed",
                "3",
                "--faults",
                "truncate",
                "--producers",
                "tar-rs",
                "--extractors",
                ex,
                "--shrink-steps",
                "60",
            ],
            &jail,
            &rep,
        );
        assert_eq!(out.status.code(), Some(1), "{ex}: findings exit 1");
        let r = report(&rep);
        let row = &fault_rows(&r, ex)[0];
        assert!(
            row["failed-damaged"].as_u64().unwrap_or(0) > 0,
            "{ex}: {row}"
        );
        let case = rep.join(format!("cases/atomic-hydration__tar-rs__{ex}"));
        // The cell's first finding may come from a plain refusal over the prior (no fault
        // needed); when it came from the truncation, `fault.json` says so.
        let observed = std::fs::read_to_string(case.join("observed.txt")).expect("observed");
        if observed.contains("under fault") {
            let fault = std::fs::read_to_string(case.join("fault.json")).expect("fault.json");
            assert!(fault.contains("\"truncate\""), "{fault}");
        }
        let spec = std::fs::read_to_string(case.join("spec.json")).expect("spec.json");
        assert!(spec.len() < 2000, "{ex}: shrunk: {spec}");
        let replay = support::Snapconf::new()
            .arg("replay")
            .arg(&case)
            .env("SNAPCONF_JAIL_DIR", &jail)
            .output()
            .expect("replay");
        assert_eq!(
            replay.status.code(),
            Some(1),
            "{ex}: replay reproduces: {}",
            String::from_utf8_lossy(&replay.stdout)
        );
        assert_jail_dir_empty(&jail);
    }
}

/// Processes whose command line names `needle` (the tools a run started in its jails).
fn processes_naming(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) {
                found.push(cmd);
            }
        }
    }
    found
}

/// Property: SIGINT stops a run at the next step with exit 130 and a partial report, and
/// leaves no jail, mount or process behind.
#[test]
fn sigint_leaves_nothing_behind() {
    if !tool("python3") {
        return;
    }
    let tmp = scratch();
    let (jail, rep) = (tmp.path().join("jail"), tmp.path().join("report"));
    std::fs::create_dir(&jail).expect("jail dir");
    let mut child = support::Snapconf::new()
        .args([
            "run",
            "--cases",
            "400",
            "--seed",
            "5",
            "--faults",
            "all",
            "--producers",
            "python-tarfile",
            "--extractors",
            "python-data,reference",
        ])
        .arg("--report-dir")
        .arg(&rep)
        .arg("--jail-dir")
        .arg(&jail)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(2500));
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).expect("SIGINT");
    let status = support::wait_within(&mut child, Duration::from_secs(60), "stop after SIGINT");
    assert_eq!(status.code(), Some(130), "exit 130 after SIGINT");
    let r = report(&rep);
    assert!(
        r["notes"].to_string().contains("interrupted"),
        "partial report says so: {}",
        r["notes"]
    );
    assert_jail_dir_empty(&jail);
    let left = processes_naming(&jail.to_string_lossy());
    assert!(left.is_empty(), "processes left: {left:?}");
}

/// Property: SIGINT stops an audit too, with exit 130, the report written, and no jail (each
/// holding a copy of the audited tree) or process left behind; the audited tree is untouched.
#[test]
fn sigint_stops_an_audit_and_leaves_nothing_behind() {
    if !tool("python3") {
        return;
    }
    let tmp = scratch();
    let (jail, rep, ws) = (
        tmp.path().join("jail"),
        tmp.path().join("report"),
        tmp.path().join("ws"),
    );
    std::fs::create_dir(&jail).expect("jail dir");
    for i in 0..3000 {
        let d = ws.join(format!("d{}", i % 30));
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(d.join(format!("f{i}")), format!("{i}\n")).expect("write");
    }
    std::os::unix::fs::symlink("/usr/bin/python3", ws.join("python")).expect("symlink");
    let mut child = support::Snapconf::new()
        .arg("audit")
        .arg(&ws)
        .args([
            "--producers",
            "python-tarfile,gnu-tar",
            "--extractors",
            "python-data,reference",
        ])
        .arg("--report-dir")
        .arg(&rep)
        .arg("--jail-dir")
        .arg(&jail)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(1500));
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).expect("SIGINT");
    let status = support::wait_within(&mut child, Duration::from_secs(60), "stop after SIGINT");
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut err);
    }
    assert_eq!(status.code(), Some(130), "exit 130 after SIGINT: {err}");
    assert!(
        rep.join("report.json").is_file(),
        "the report is written: {err}"
    );
    assert_jail_dir_empty(&jail);
    let left = processes_naming(&jail.to_string_lossy());
    assert!(left.is_empty(), "processes left: {left:?}");
    assert!(ws.join("d7/f7").is_file(), "the audited tree is untouched");
}
