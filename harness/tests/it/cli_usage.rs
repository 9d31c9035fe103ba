//! Bad input gets a clear message naming the culprit and exit 2; `list` shows every adapter.

use crate::support;

use std::process::Command;

fn snapconf(args: &[&str]) -> (i32, String, String) {
    support::snapconf(args, &[])
}

#[test]
fn unknown_producer_is_a_usage_error_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rd = dir.path().join("r");
    let (code, _, err) = snapconf(&[
        "run",
        "--cases",
        "1",
        "--producers",
        "no-such-tar",
        "--report-dir",
        rd.to_str().unwrap_or("r"),
    ]);
    assert_eq!(code, 2, "exit code for an unknown producer; stderr: {err}");
    assert!(
        err.contains("unknown producer `no-such-tar`"),
        "message names the producer: {err}"
    );
    assert!(
        err.contains("tar-rs"),
        "message lists the known producers: {err}"
    );
}

#[test]
fn unknown_extractor_is_a_usage_error_naming_it() {
    let (code, _, err) = snapconf(&["run", "--cases", "1", "--extractors", "nope"]);
    assert_eq!(code, 2, "stderr: {err}");
    assert!(err.contains("unknown extractor `nope`"), "{err}");
}

#[test]
fn audit_of_a_missing_directory_is_a_usage_error() {
    let (code, _, err) = snapconf(&["audit", "/nonexistent/snapconf-audit-dir"]);
    assert_eq!(code, 2, "stderr: {err}");
    assert!(
        err.contains("`/nonexistent/snapconf-audit-dir` does not exist"),
        "{err}"
    );
}

#[test]
fn unreadable_or_invalid_profile_is_a_usage_error_naming_the_file() {
    let (code, _, err) = snapconf(&["run", "--cases", "1", "--profile", "/nonexistent/p.toml"]);
    assert_eq!(code, 2, "stderr: {err}");
    assert!(err.contains("/nonexistent/p.toml"), "{err}");

    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "name = \"x\"\nhardlinks = \"sometimes\"\n").expect("write profile");
    let (code, _, err) = snapconf(&[
        "run",
        "--cases",
        "1",
        "--profile",
        bad.to_str().unwrap_or("bad.toml"),
    ]);
    assert_eq!(code, 2, "stderr: {err}");
    assert!(
        err.contains("bad.toml") && err.contains("hardlinks"),
        "{err}"
    );
}

#[test]
fn bad_policy_value_is_a_usage_error() {
    let (code, _, err) = snapconf(&["check-archive", "/dev/null", "--hardlinks", "maybe"]);
    assert_eq!(code, 2, "stderr: {err}");
    // clap's message for a `ValueEnum` flag: the value, the flag and the values it takes.
    assert!(
        err.contains("invalid value 'maybe' for '--hardlinks")
            && err.contains("[possible values: reject, copy, link]"),
        "{err}"
    );
}

#[test]
fn replay_of_a_directory_without_a_finding_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, _, err) = snapconf(&["replay", dir.path().to_str().unwrap_or(".")]);
    assert_eq!(code, 2, "stderr: {err}");
    assert!(err.contains("finding.json"), "{err}");
}

#[test]
fn list_shows_every_builtin_adapter() {
    let (code, out, err) = snapconf(&["list"]);
    assert_eq!(code, 0, "stderr: {err}");
    for name in [
        "tar-rs",
        "gnu-tar",
        "python-tarfile",
        "reference",
        "python-data",
    ] {
        assert!(out.contains(name), "`{name}` missing from:\n{out}");
    }
}

/// A closed stdout (`snapconf list | head -1`) ends output quietly with the documented exit
/// code, never a panic (exit 101).
#[test]
fn closed_stdout_is_not_a_panic() {
    let mut child = support::Snapconf::new()
        .arg("list")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn zero_cases_is_nothing_ran() {
    let (code, _, err) = snapconf(&[
        "run",
        "--cases",
        "0",
        "--producers",
        "tar-rs",
        "--extractors",
        "reference",
    ]);
    assert_eq!(code, 3, "stderr: {err}");
    assert!(err.contains("--cases 0"), "{err}");
}

/// A reproducer whose spec cannot be materialised is a bad case dir (exit 2), named.
#[test]
fn replay_of_an_invalid_spec_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let meta = serde_json::json!({
        "schema": 1, "check": "roundtrip", "producer": "tar-rs", "extractor": "reference",
        "profile": {"name": "default", "hardlinks": "copy", "special-files": "drop",
                    "absolute-symlinks": "keep", "escaping-symlinks": "keep",
                    "modes": "exec-bit", "mtimes": "ignore"},
        "message": "", "seed": null, "case_index": null, "timeout_secs": 5, "entries": 1
    });
    std::fs::write(dir.path().join("finding.json"), meta.to_string()).expect("meta");
    std::fs::write(
        dir.path().join("spec.json"),
        r#"{"entries":[{"path":"b","kind":"hardlink","target":"missing"}]}"#,
    )
    .expect("spec");
    std::fs::write(dir.path().join("prior.json"), r#"{"entries":[]}"#).expect("prior");
    let (code, _, err) = snapconf(&["replay", dir.path().to_str().unwrap_or(".")]);
    assert_eq!(code, 2, "stderr: {err}");
    assert!(
        err.contains("spec.json") && err.contains("missing"),
        "{err}"
    );
}

/// `snapconf list` with `SNAPCONF_PYTHON=python` (and `PATH` as given); the lines of the
/// An executable shell script `name` with body `script` in `dir` (made if missing); its
/// path.
fn fake_tool(dir: &std::path::Path, name: &str, script: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).expect("mkdir");
    let tool = dir.join(name);
    std::fs::write(&tool, format!("#!/bin/sh\n{script}")).expect("write the fake tool");
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    tool
}

/// `PATH` with `dir` first.
fn path_with(dir: &std::path::Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// four Python adapters.
fn python_lines(python: &std::path::Path, path: &str) -> Vec<String> {
    let out = support::Snapconf::new()
        .arg("list")
        .env("SNAPCONF_PYTHON", python)
        .env("PATH", path)
        .output()
        .expect("the snapconf binary runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<String> = text
        .lines()
        .filter(|l| l.contains(" python-"))
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 4, "four Python adapters listed: {text}");
    lines
}

/// The interpreter an adapter runs is the one its availability was probed with: with
/// `SNAPCONF_PYTHON` set, neither the version shown nor the PEP 706 check comes from the
/// `python3` on `PATH` (as uid 65534 that is often a different Python, or none).
#[test]
fn every_python_adapter_probes_the_interpreter_it_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fake = fake_tool(
        dir.path(),
        "python",
        "if [ \"$1\" = --version ]; then echo 'Python 3.0.0-fake'; exit 0; fi\nexit 1\n",
    );
    let path = std::env::var("PATH").unwrap_or_default();
    for line in python_lines(&fake, &path) {
        assert!(
            line.contains("unavailable: Python 3.0.0-fake") && line.contains("PEP 706"),
            "the fake interpreter is probed, and has no filters: {line}"
        );
    }
    // The real interpreter, with no `python3` on PATH at all.
    let real = Command::new("python3")
        .args([
            "-I",
            "-c",
            "import sys, tarfile; tarfile.data_filter; print(sys.executable)",
        ])
        .output();
    let Some(real) = real
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    else {
        support::skip::skip(
            "a python3 with PEP 706 filters on PATH",
            "a Python with PEP 706 filters (3.12, or 3.11.4 and later) first on PATH",
        );
        return;
    };
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    for line in python_lines(std::path::Path::new(&real), &empty.to_string_lossy()) {
        assert!(
            !line.contains("unavailable"),
            "SNAPCONF_PYTHON={real} is found without PATH: {line}"
        );
    }
    // An empty value is unset (the `python3` on PATH); one that cannot run says so and
    // how to mend it, not "install python3".
    for line in python_lines(std::path::Path::new(""), &path) {
        assert!(
            !line.contains("unavailable"),
            "SNAPCONF_PYTHON= is unset: {line}"
        );
    }
    let missing = dir.path().join("no-such-python");
    for line in python_lines(&missing, &path) {
        assert!(
            line.contains("unavailable")
                && line.contains(&format!("SNAPCONF_PYTHON is `{}`", missing.display()))
                && !line.contains("apt-get install python3"),
            "a SNAPCONF_PYTHON that cannot run is named: {line}"
        );
    }
}

/// `audit DIR` follows DIR itself when it is a symlink to a directory (as `ls DIR` does),
/// and audits what is inside; a symlink to a file is still not a directory (exit 2).
#[test]
fn audit_follows_a_symlink_given_as_the_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let real = dir.path().join("real");
    std::fs::create_dir(&real).expect("mkdir");
    std::fs::write(real.join("f"), b"hi").expect("write");
    std::os::unix::fs::symlink("real", dir.path().join("link")).expect("symlink");
    std::os::unix::fs::symlink("real/f", dir.path().join("file-link")).expect("symlink");
    let report = dir.path().join("report");
    let (code, out, err) = snapconf(&[
        "audit",
        dir.path().join("link").to_str().expect("utf-8"),
        "--producers",
        "tar-rs",
        "--extractors",
        "reference",
        "--report-dir",
        report.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("(1 entries)"),
        "the one file inside is audited: {err}"
    );
    let (code, _, err) = snapconf(&[
        "audit",
        dir.path().join("file-link").to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not a directory"), "{err}");
}

/// A report directory another process holds (every `run`, `audit`, `fuzz` and `report
/// merge` locks its own with `flock` until it exits) is refused with exit 2 before anything
/// in it is removed or written; once the lock is gone, the same command runs.
#[test]
fn a_report_directory_in_use_is_refused() {
    use rustix::fs::{flock, FlockOperation};
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("report");
    std::fs::create_dir(&report).expect("mkdir");
    std::fs::write(report.join("report.json"), b"{}").expect("an earlier report");
    let held = std::fs::File::open(&report).expect("open");
    flock(&held, FlockOperation::NonBlockingLockExclusive).expect("lock");
    let args = [
        "run",
        "--cases",
        "1",
        "--producers",
        "tar-rs",
        "--extractors",
        "reference",
        "--report-dir",
        report.to_str().expect("utf-8"),
    ];
    let (code, _, err) = snapconf(&args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is in use by another snapconf process"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(report.join("report.json")).expect("still there"),
        b"{}",
        "nothing replaced"
    );
    // Nor inside it, nor around it: a directory within a held one, and one that holds a
    // held one in its `cases/` (which a run would otherwise remove as an old report's).
    let inner = report.join("cases");
    let inside = [&args[..8], &[inner.to_str().expect("utf-8")]].concat();
    let (code, _, err) = snapconf(&inside);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("which another snapconf process is writing"),
        "{err}"
    );
    assert!(!inner.exists(), "nothing made inside the held directory");
    // Nor is it read as a finished report by `report merge` while it is being written.
    let merged = dir.path().join("merged");
    let (code, _, err) = snapconf(&[
        "report",
        "merge",
        report.to_str().expect("utf-8"),
        "--out",
        merged.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is being written by another snapconf"),
        "{err}"
    );
    assert!(!merged.exists(), "no merged report written");
    drop(held);
    let outer = dir.path().join("outer");
    let nested = outer.join("cases/held");
    std::fs::create_dir_all(&nested).expect("mkdir");
    let held = std::fs::File::open(&nested).expect("open");
    flock(&held, FlockOperation::NonBlockingLockExclusive).expect("lock");
    let around = [&args[..8], &[outer.to_str().expect("utf-8")]].concat();
    let (code, _, err) = snapconf(&around);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not removing it"), "{err}");
    assert!(nested.exists(), "the held directory is still there");
    drop(held);
    let (code, _, err) = snapconf(&args);
    assert_eq!(code, 0, "{err}");
}

/// A SIGTERM while a command is still probing its tools (here a `bsdtar` whose `--version`
/// takes 3 s) ends it with exit 130 and a message, and leaves nothing in `TMPDIR`: the
/// probes' scratch directories are removed (the signal used to kill the process among
/// them). `run`, `fuzz` and `fuzz --parsers` alike.
#[test]
fn a_signal_during_set_up_leaves_nothing_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("bin");
    fake_tool(&bin, "bsdtar", "sleep 3\necho 'bsdtar 0.0-slow'\n");
    let path = path_with(&bin);
    let report = dir.path().join("report");
    let runs: [&[&str]; 3] = [
        &["run", "--cases", "3", "--extractors", "bsdtar"],
        &["fuzz", "--extractor", "bsdtar", "--time", "30"],
        &["fuzz", "--parsers", "--time", "30"],
    ];
    for (i, args) in runs.into_iter().enumerate() {
        let tmp = dir.path().join(format!("tmp-{i}"));
        std::fs::create_dir(&tmp).expect("mkdir");
        let mut child = support::Snapconf::new()
            .args(args)
            .arg("--report-dir")
            .arg(&report)
            .env("PATH", &path)
            .env("TMPDIR", &tmp)
            .env_remove("SNAPCONF_BACKEND")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("snapconf starts");
        std::thread::sleep(std::time::Duration::from_millis(1000));
        let pid = rustix::process::Pid::from_child(&child);
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
        let status = support::wait_within(
            &mut child,
            std::time::Duration::from_secs(30),
            "stop after SIGTERM",
        );
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut err)
            .expect("read stderr");
        assert_eq!(
            status.code(),
            Some(130),
            "{args:?}: exit 130; stderr: {err}"
        );
        assert!(err.contains("interrupted"), "{args:?}: says so: {err}");
        let left: Vec<_> = std::fs::read_dir(&tmp)
            .expect("read TMPDIR")
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(left.is_empty(), "{args:?}: left in TMPDIR: {left:?}");
    }
}

/// A report directory given as a symlink is refused (exit 2) naming where it points, before
/// anything runs; `audit` of a dangling symlink or of a missing path says which it is.
#[test]
fn symlinks_given_as_directories_are_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("real")).expect("mkdir");
    std::os::unix::fs::symlink("real", dir.path().join("link")).expect("symlink");
    std::os::unix::fs::symlink("nowhere", dir.path().join("dangling")).expect("symlink");
    for (name, says) in [
        ("link", "is a symlink to `real`, a directory"),
        ("dangling", "is a symlink to `nowhere`, nothing that exists"),
    ] {
        let report = dir.path().join(name);
        let (code, _, err) = snapconf(&[
            "run",
            "--cases",
            "1",
            "--producers",
            "tar-rs",
            "--extractors",
            "reference",
            "--report-dir",
            report.to_str().expect("utf-8"),
        ]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
    }
    assert!(
        std::fs::read_dir(dir.path().join("real"))
            .expect("read")
            .next()
            .is_none(),
        "nothing written through the link"
    );
    for (name, says) in [
        (
            "dangling",
            "is a symlink to `nowhere`, which does not exist",
        ),
        ("missing", "does not exist"),
    ] {
        let path = dir.path().join(name);
        let (code, _, err) = snapconf(&["audit", path.to_str().expect("utf-8")]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
    }
}

/// A producer whose tool fails outright (GNU tar's `gzip` broken) refuses every capture:
/// the run does not read as conforming: with every pair idle it exits 3 and its verdict
/// says no pair ran a case (the verdict beside pairs that ran: a unit test of
/// `report::markdown`).
#[test]
fn a_producer_that_refuses_every_capture_is_not_conforming() {
    if !support::producer_available("gnu-tar-lnk-gz") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("bin");
    fake_tool(
        &bin,
        "gzip",
        "if [ \"$1\" = --version ]; then echo 'gzip 1.12'; exit 0; fi\necho broken >&2\nexit 1\n",
    );
    let path = path_with(&bin);
    let report = dir.path().join("report");
    let run = |producers: &str| {
        support::snapconf(
            &[
                "run",
                "--cases",
                "6",
                "--seed",
                "1",
                "--producers",
                producers,
                "--extractors",
                "reference",
                "--report-dir",
                report.to_str().expect("utf-8"),
            ],
            &[("PATH", &path)],
        )
    };
    let (code, out, err) = run("gnu-tar-lnk-gz");
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("no pair ran a case"), "{out}");
    let summary = std::fs::read_to_string(report.join("summary.md")).expect("summary");
    assert!(summary.contains("no pair ran a case"), "{summary}");
}

/// A FIFO given as `--profile`, `--backend` or `--baseline`, or a directory given as
/// `--profile`, is refused at once with exit 2 naming it and what it is (a FIFO was read
/// forever, deaf to SIGINT).
#[test]
fn a_fifo_or_a_directory_as_an_input_file_is_refused_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("input.toml");
    support::mkfifo(&fifo);
    let folder = dir.path().join("folder.toml");
    std::fs::create_dir(&folder).expect("mkdir");
    let rd = dir.path().join("r");
    for (flag, file, kind) in [
        ("--profile", &fifo, "a named pipe (FIFO)"),
        ("--backend", &fifo, "a named pipe (FIFO)"),
        ("--baseline", &fifo, "a named pipe (FIFO)"),
        ("--profile", &folder, "a directory"),
    ] {
        let args = [
            "run".as_ref(),
            "--cases".as_ref(),
            "1".as_ref(),
            "--report-dir".as_ref(),
            rd.as_os_str(),
            flag.as_ref(),
            file.as_os_str(),
        ];
        let (code, _, err) = support::snapconf_within(
            &args,
            std::time::Duration::from_secs(20),
            &format!("refuse {flag} {}", file.display()),
        );
        assert_eq!(code, 2, "{flag}: stderr: {err}");
        assert!(
            err.contains(&format!("`{}` is {kind}", file.display())),
            "{flag}: {err}"
        );
        assert!(!rd.exists(), "{flag}: nothing was written");
    }
}

/// A `--profile` larger than the configuration limit (16 MiB) is refused naming the limit,
/// not read and parsed.
#[test]
fn an_oversize_input_file_is_refused_naming_the_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let big = dir.path().join("big.toml");
    let f = std::fs::File::create(&big).expect("create");
    f.set_len(snapconf_producers::input::CONFIG_LIMIT + 1)
        .expect("sparse file");
    let (code, _, err) = snapconf(&[
        "run",
        "--cases",
        "1",
        "--profile",
        big.to_str().unwrap_or("big.toml"),
    ]);
    assert_eq!(code, 2, "stderr: {err}");
    assert!(
        err.contains("big.toml` is larger than the limit of 16 MiB"),
        "{err}"
    );
}
