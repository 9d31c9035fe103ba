//! `snapconf run --backend FILE`: plugged-in backends end to end (command templates, the
//! persistent worker, the validate split pipeline), through the real binary.
//!
//! Every run uses a private report dir and jail dir under one temp dir; every worker and
//! helper process carries that temp dir's path in its argv, so `/proc` can show that none
//! is left behind.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

struct Run {
    code: i32,
    stderr: String,
    report: serde_json::Value,
}

use support::snapconf;

/// Special files off: the plain-tar backends restore them, which no profile can promise.
const NO_SPECIALS: &[(&str, &str)] = &[
    ("SNAPCONF_GEN_FIFO_WEIGHT", "0"),
    ("SNAPCONF_GEN_SOCKET_WEIGHT", "0"),
    ("SNAPCONF_GEN_CHAR_DEVICE_WEIGHT", "0"),
    ("SNAPCONF_GEN_ALLOW_CHAR_DEVICES", "false"),
];

/// `snapconf run --backend BACKEND EXTRA… --cases N --seed 7` with its report and jails in `tmp`.
fn run(tmp: &Path, backend: &Path, extra: &[&str], cases: u32, envs: &[(&str, &str)]) -> Run {
    let report_dir = tmp.join(format!("report-{}", std::process::id()));
    let jails = tmp.join("jails");
    std::fs::create_dir_all(&jails).expect("jail dir");
    let cases = cases.to_string();
    let mut args = vec![
        "run",
        "--backend",
        backend.to_str().expect("utf-8 temp path"),
        "--cases",
        &cases,
        "--seed",
        "7",
        "--shrink-steps",
        "4",
        "--timeout",
        "10",
        "--report-dir",
        report_dir.to_str().expect("utf-8 temp path"),
        "--jail-dir",
        jails.to_str().expect("utf-8 temp path"),
    ];
    args.extend_from_slice(extra);
    let (code, _, stderr) = snapconf(&args, envs);
    let report = std::fs::read_to_string(report_dir.join("report.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    let _ = std::fs::remove_dir_all(&report_dir);
    let left = std::fs::read_dir(&jails).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "jails left behind in `{}`", jails.display());
    Run {
        code,
        stderr,
        report,
    }
}

/// The (producer, extractor) pairs of a report.
fn pairs(r: &serde_json::Value) -> Vec<(String, String, u64)> {
    r["pairs"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .map(|p| {
                    (
                        p["producer"].as_str().unwrap_or("").to_owned(),
                        p["extractor"].as_str().unwrap_or("").to_owned(),
                        p["passed"].as_u64().unwrap_or(0),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `(check, producer, extractor, message)` of every finding.
fn findings(r: &serde_json::Value) -> Vec<(String, String, String, String)> {
    r["findings"]
        .as_array()
        .map(|fs| {
            fs.iter()
                .map(|f| {
                    let s = |k: &str| f[k].as_str().unwrap_or("").to_owned();
                    (s("check"), s("producer"), s("extractor"), s("message"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Processes whose command line mentions `marker` (a test's temp dir).
fn processes_mentioning(marker: &Path) -> Vec<String> {
    let marker = marker.to_string_lossy().into_owned();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) || name == std::process::id().to_string() {
            continue;
        }
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        // A zombie has an empty cmdline; it is gone once its parent (the harness) is.
        if text.contains(&marker) {
            out.push(format!("{name}: {text}"));
        }
    }
    out
}

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).expect("write a test file");
    path.to_path_buf()
}

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../producers/backends")
        .join(name)
}

const PROFILE: &str = "[profile]\nhardlinks = \"copy\"\nspecial-files = \"drop\"\n\
absolute-symlinks = \"keep\"\nescaping-symlinks = \"keep\"\nmodes = \"exec-bit\"\nmtimes = \"ignore\"\n";

/// A backend made of `tar` commands (the shipped `tar-commands.toml`) round-trips: its self
/// pair passes every case.
#[test]
fn a_backend_of_tar_commands_round_trips() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = run(
        tmp.path(),
        &shipped("tar-commands.toml"),
        &["--producers", "none", "--extractors", "none"],
        12,
        NO_SPECIALS,
    );
    assert_eq!(r.code, 0, "stderr: {}\nreport: {}", r.stderr, r.report);
    assert_eq!(
        pairs(&r.report),
        vec![("tar-commands".into(), "tar-commands".into(), 12)]
    );
    assert_eq!(
        r.report["profile"], "tar-commands",
        "the backend's profile is the run's"
    );
}

/// The backend is paired with itself and with the built-ins, both ways.
#[test]
fn a_backend_runs_against_the_built_ins_both_ways() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = run(
        tmp.path(),
        &shipped("tar-commands.toml"),
        &["--producers", "tar-rs", "--extractors", "reference"],
        2,
        NO_SPECIALS,
    );
    assert!(r.code == 0 || r.code == 1, "stderr: {}", r.stderr);
    let got: Vec<(String, String)> = pairs(&r.report)
        .into_iter()
        .map(|(p, e, _)| (p, e))
        .collect();
    for (p, e) in [
        ("tar-rs", "reference"),
        ("tar-rs", "tar-commands"),
        ("tar-commands", "reference"),
        ("tar-commands", "tar-commands"),
    ] {
        assert!(
            got.contains(&(p.into(), e.into())),
            "pair {p} x {e} in {got:?}"
        );
    }
}

/// A malformed description is a usage error (exit 2) naming the file and the key.
#[test]
fn malformed_backend_files_exit_2_naming_the_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cases = [
        ("bad-toml.toml", "name = [\n", "bad-toml.toml"),
        (
            "unknown-key.toml",
            "name = \"b\"\ncapture = [\"tar\"]\nhydrate = [\"tar\"]\nshell = true\n",
            "shell",
        ),
        (
            "no-hydrate.toml",
            "name = \"b\"\ncapture = [\"tar\"]\n",
            "`hydrate`",
        ),
        (
            "bad-profile.toml",
            "name = \"b\"\ncapture = [\"tar\"]\nhydrate = [\"tar\"]\n[profile]\nhardlinks = \"copy\"\n",
            "[profile]",
        ),
        (
            "taken-name.toml",
            "name = \"gnu-tar\"\ncapture = [\"tar\"]\nhydrate = [\"tar\"]\n",
            "`name`",
        ),
    ];
    for (file, text, names) in cases {
        let path = write(&tmp.path().join(file), text);
        let p = path.to_str().expect("utf-8");
        for args in [
            vec!["run", "--cases", "1", "--backend", p],
            vec!["list", "--backend", p],
        ] {
            let (code, _, err) = snapconf(&args, &[]);
            assert_eq!(code, 2, "{file}: {err}");
            assert!(err.contains(p), "{file}: names the file: {err}");
            assert!(err.contains(names), "{file}: names `{names}`: {err}");
        }
    }
    let (code, _, err) = snapconf(&["run", "--backend", "/nonexistent/b.toml"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/b.toml"), "{err}");
}

/// A command that does not exist is named, its role is skipped, the other pairs still run.
#[test]
fn a_missing_command_is_named_and_the_other_pairs_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let toml = format!(
        "name = \"half\"\ncapture = [\"snapconf-no-such-capture-tool\", \"{{root}}\"]\n\
         hydrate = [\"tar\", \"-xf\", \"{{archive}}\", \"-C\", \"{{root}}\"]\n{PROFILE}"
    );
    let b = write(&tmp.path().join("half.toml"), &toml);
    let r = run(
        tmp.path(),
        &b,
        &["--producers", "tar-rs", "--extractors", "reference"],
        2,
        NO_SPECIALS,
    );
    assert!(r.code == 0 || r.code == 1, "stderr: {}", r.stderr);
    assert!(
        r.stderr
            .contains("`snapconf-no-such-capture-tool` was not found on PATH"),
        "{}",
        r.stderr
    );
    let got: Vec<(String, String)> = pairs(&r.report)
        .into_iter()
        .map(|(p, e, _)| (p, e))
        .collect();
    assert_eq!(
        got,
        vec![
            ("tar-rs".into(), "half".into()),
            ("tar-rs".into(), "reference".into())
        ]
    );
    let (_, out, _) = snapconf(&["list", "--backend", b.to_str().expect("utf-8")], &[]);
    assert!(
        out.contains("producer   half") && out.contains("snapconf-no-such-capture-tool"),
        "{out}"
    );
}

/// A worker backend in Python whose behaviour `script` picks; `MARKER` in its argv is the
/// temp dir, for the `/proc` check.
fn worker_backend(tmp: &Path, name: &str, script: &str) -> PathBuf {
    let py = write(&tmp.join(format!("{name}.py")), script);
    let toml = format!(
        "name = \"{name}\"\nmode = \"worker\"\ntimeout = 1\nworker = [\"python3\", \"-I\", \"-B\", \"{}\", \"{}\"]\n{PROFILE}",
        py.display(),
        tmp.display()
    );
    write(&tmp.join(format!("{name}.toml")), &toml)
}

/// Real work (delegated to the shipped pytar.py) for the first `n` requests, then `then`.
fn flaky(n: u32, then: &str) -> String {
    format!(
        "import json, subprocess, sys, time\n\
         sys.path.insert(0, {dir:?})\n\
         import pytar\n\
         seen = 0\n\
         for line in sys.stdin:\n    \
             seen += 1\n    \
             req = json.loads(line)\n    \
             if seen > {n}:\n        \
                 {then}\n    \
             try:\n        \
                 if req['op'] == 'capture':\n            \
                     pytar.capture(req['root'], req['archive'], req['exclude'])\n        \
                 else:\n            \
                     pytar.hydrate(req['root'], req['archive'])\n        \
                 print(json.dumps({{'ok': True}}), flush=True)\n    \
             except Exception as e:\n        \
                 print(json.dumps({{'ok': False, 'error': str(e)}}), flush=True)\n",
        dir = shipped("").display().to_string(),
    )
}

/// A worker that answers garbage, one that dies mid-run and one that hangs: each gets a clear
/// message naming the worker command, the run goes on with the other pairs, and no process
/// is left behind.
#[test]
fn broken_workers_are_named_the_run_continues_and_nothing_is_left_behind() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = tmp.path();
    let hang = "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', sys.argv[1]])\n        time.sleep(600)";
    let cases = [
        (
            "garbage",
            flaky(3, "print('hello, I am not JSON', flush=True); continue"),
            "answered the",
            "garbage",
        ),
        (
            "dies",
            flaky(3, "sys.exit(7)"),
            "exited with status 7",
            "is not restarted",
        ),
        (
            "hangs",
            flaky(3, hang),
            "did not answer",
            "process group was killed",
        ),
    ];
    for (name, script, first, second) in cases {
        let b = worker_backend(t, name, &script);
        let r = run(
            t,
            &b,
            &["--producers", "tar-rs", "--extractors", "reference"],
            4,
            NO_SPECIALS,
        );
        assert!(
            r.code == 0 || r.code == 1,
            "{name}: exit {}: {}",
            r.code,
            r.stderr
        );
        assert!(
            r.stderr
                .contains(&format!("worker `python3 -I -B {}", t.display())),
            "{name}: names the command: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains(first) && r.stderr.contains(second),
            "{name}: {}",
            r.stderr
        );
        let got: Vec<(String, String, u64)> = pairs(&r.report);
        let builtin = got
            .iter()
            .find(|(p, e, _)| p == "tar-rs" && e == "reference");
        assert_eq!(
            builtin.map(|(_, _, passed)| *passed),
            Some(4),
            "{name}: the built-in pair ran every case: {got:?}"
        );
        assert_eq!(
            got.len(),
            4,
            "{name}: all four pairs are in the report: {got:?}"
        );
        let left = processes_mentioning(t);
        assert!(left.is_empty(), "{name}: processes left behind: {left:?}");
    }
}

/// A worker that starts `setsid sh -c 'sleep 1000; :' MARKER` on each request: the
/// process escapes the worker's process group and session, but is killed after the request
/// and reported as a `hang` of the worker's pair; nothing is left when the run ends.
#[test]
fn a_workers_setsid_children_are_killed_and_reported_as_hang() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = tmp.path();
    let escape = "subprocess.Popen(['setsid', 'sh', '-c', 'sleep 1000; :', sys.argv[1]], \
                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)";
    let script = flaky(1000, "pass").replace("    try:\n", &format!("    {escape}\n    try:\n"));
    assert!(script.contains("setsid"), "{script}");
    let b = worker_backend(t, "escapes", &script);
    let r = run(
        t,
        &b,
        &["--producers", "none", "--extractors", "none"],
        3,
        NO_SPECIALS,
    );
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    let found = findings(&r.report);
    assert!(
        found.iter().any(|(check, _, _, message)| check == "hang"
            && message.contains(" process(es) running after it ended (killed): ")
            && message.contains("sleep 1000")),
        "a hang names the escaped process: {found:?}\n{}",
        r.stderr
    );
    assert_eq!(processes_mentioning(t), Vec::<String>::new());
}

/// The hostile archive of docs/cases.md H11 (`SYM up -> ..`, then `REG up/exploit/foo/bar`):
/// extracting it naively writes `exploit/foo/bar` beside the root.
fn h11_archive(path: &Path) {
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_size(0);
    h.set_mode(0o777);
    b.append_link(&mut h, "up", "..").expect("symlink member");
    let data = b"pwned\n";
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Regular);
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    b.append_data(&mut h, "up/exploit/foo/bar", &data[..])
        .expect("file member");
    std::fs::write(path, b.into_inner().expect("archive")).expect("write the archive");
}

/// Split pipeline: a validator that accepts everything in front of an extractor lets H11
/// through, and the suite reports it (containment, or late-failure after the validator
/// accepted); a validator that refuses it (`snapconf check-archive`) stops it before
/// anything is written.
#[test]
fn a_validator_that_accepts_everything_lets_a_hostile_archive_through() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = tmp.path();
    let hostile = t.join("h11.tar");
    h11_archive(&hostile);
    let capture = format!(
        "capture = [\"cp\", \"{}\", \"{{archive}}\"]",
        hostile.display()
    );
    let trusting = "[\"python3\", \"-I\", \"-c\", \"import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter='fully_trusted')\", \"{archive}\", \"{root}\"]";
    let bin = support::snapconf_bin();
    let bin = bin.display();
    let variants = [
        // (name, validate, hydrate, the checks that may report it)
        (
            "accept-all-tar",
            "[\"true\"]".to_owned(),
            "[\"tar\", \"-xf\", \"{archive}\", \"-C\", \"{root}\"]".to_owned(),
            vec!["containment", "late-failure"],
        ),
        (
            "accept-all-python",
            "[\"true\"]".to_owned(),
            trusting.to_owned(),
            vec!["containment"],
        ),
        (
            "strict",
            format!("[\"{bin}\", \"check-archive\", \"{{archive}}\"]"),
            trusting.to_owned(),
            vec!["late-failure"],
        ),
    ];
    for (name, validate, hydrate, checks) in variants {
        let toml = format!(
            "name = \"{name}\"\n{capture}\nvalidate = {validate}\nhydrate = {hydrate}\n{PROFILE}"
        );
        let b = write(&t.join(format!("{name}.toml")), &toml);
        let r = run(
            t,
            &b,
            &["--producers", "none", "--extractors", "none"],
            1,
            &[],
        );
        assert_eq!(r.code, 1, "{name}: findings expected: {}", r.stderr);
        let fs = findings(&r.report);
        let own: Vec<_> = fs
            .iter()
            .filter(|(c, _, _, _)| checks.contains(&c.as_str()))
            .collect();
        assert!(!own.is_empty(), "{name}: one of {checks:?} in {fs:?}");
        let says =
            |check: &str, text: &str| fs.iter().any(|(c, _, _, m)| c == check && m.contains(text));
        match name {
            "accept-all-tar" => assert!(
                says(
                    "late-failure",
                    "the validate step accepted the archive, then"
                ) || fs.iter().any(|(c, _, _, _)| c == "containment"),
                "{name}: {fs:?}"
            ),
            "accept-all-python" => assert!(
                fs.iter().any(|(c, _, _, _)| c == "containment"),
                "{name}: {fs:?}"
            ),
            _ => {
                assert!(
                    says("late-failure", "validate step refused"),
                    "{name}: {fs:?}"
                );
                assert!(
                    !fs.iter().any(|(c, _, _, _)| c == "containment"),
                    "{name}: nothing escapes when the validator refuses: {fs:?}"
                );
                assert!(r.stderr.contains("0 accepted, "), "{}", r.stderr);
            }
        }
    }
}

/// The shipped Python backend round-trips in worker mode with one worker process.
#[test]
fn the_python_worker_backend_round_trips_with_one_process() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = run(
        tmp.path(),
        &shipped("pytar.toml"),
        &["--producers", "none", "--extractors", "none"],
        15,
        &[],
    );
    assert_eq!(r.code, 0, "stderr: {}\nreport: {}", r.stderr, r.report);
    assert!(r.stderr.contains("started 1 time(s)"), "{}", r.stderr);
}

/// agno's `CheckpointArchive` (`producers/backends/agno.toml`) conforms to the profile it
/// states. Skips ([`support::skip`]) when `agno` is not installed (`.ci/run` installs it).
#[test]
fn the_agno_backend_conforms_to_its_profile() {
    let importable = Command::new("python3")
        .args(["-c", "import agno.sandbox.checkpoint"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !importable {
        support::skip::skip(
            "the Python package `agno` is not installed (`import agno.sandbox.checkpoint` fails)",
            "python3 -m pip install --no-deps agno==3.1.10",
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = run(tmp.path(), &shipped("agno.toml"), &[], 20, &[]);
    assert_eq!(r.code, 0, "stderr: {}\nreport: {}", r.stderr, r.report);
    assert_eq!(
        pairs(&r.report)
            .iter()
            .map(|(p, e, _)| (p.as_str(), e.as_str()))
            .collect::<Vec<_>>(),
        vec![("agno", "agno")],
        "pair-with-builtins = false keeps the built-ins out"
    );
}

/// A reproducer of a backend pair replays with `--backend` (exit 1 while it reproduces), and
/// without it the message says what is missing.
#[test]
fn a_backend_reproducer_replays_with_the_backend() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = tmp.path();
    let hostile = t.join("h11.tar");
    h11_archive(&hostile);
    let toml = format!(
        "name = \"escapes\"\ncapture = [\"cp\", \"{}\", \"{{archive}}\"]\n\
         hydrate = [\"python3\", \"-I\", \"-c\", \"import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter='fully_trusted')\", \"{{archive}}\", \"{{root}}\"]\n{PROFILE}",
        hostile.display()
    );
    let b = write(&t.join("escapes.toml"), &toml);
    let report = t.join("report");
    let (code, _, err) = snapconf(
        &[
            "run",
            "--backend",
            b.to_str().expect("utf-8"),
            "--producers",
            "none",
            "--extractors",
            "none",
            "--cases",
            "1",
            "--seed",
            "1",
            "--shrink-steps",
            "4",
            "--report-dir",
            report.to_str().expect("utf-8"),
        ],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    let case = report.join("cases/containment__escapes__escapes");
    let case = case.to_str().expect("utf-8");
    let (code, out, err) = snapconf(
        &["replay", case, "--backend", b.to_str().expect("utf-8")],
        &[],
    );
    assert_eq!(code, 1, "reproduces: {out}{err}");
    assert!(out.contains("reproduces: containment"), "{out}");
    let (code, _, err) = snapconf(&["replay", case], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("unknown producer `escapes`") && err.contains("--backend FILE"),
        "{err}"
    );
    // `repro.sh` names the backend itself: it reproduces with no `SNAPCONF_BACKEND` set.
    let script = std::fs::read_to_string(format!("{case}/repro.sh")).expect("repro.sh");
    assert!(script.contains("--backend"), "{script}");
    let repro = std::process::Command::new(format!("{case}/repro.sh"))
        .env("SNAPCONF", support::snapconf_bin())
        .env_remove("SNAPCONF_BACKEND")
        .output()
        .expect("repro.sh runs");
    assert_eq!(
        repro.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&repro.stderr)
    );
}

/// A tool that leaves a process behind which writes into the jail later (a `setsid` daemon
/// outside the tool's process group, so the group kill at the end of its step misses it;
/// it waits until a later step has begun, another extractor's in the same case or the
/// next case's, or until its own root is gone, then writes beside the roots) is never
/// blamed on another pair: snapconf, the child subreaper, kills it right after the step
/// and reports a `hang` finding against the tool; and a jail a child process saw is not
/// handed to the next case.
#[test]
fn a_straggler_process_is_never_blamed_on_another_pair() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = tmp.path();
    let script = write(
        &t.join("straggler.sh"),
        "tar -xf \"$2\" -C \"$1\" || exit 1\n\
         (setsid sh -c '\n\
           jail=${1%/*}; me=${1##*/h-}; n=0\n\
           while [ -e \"$1\" ] && [ $n -lt 1000 ]; do\n\
             for d in \"$jail\"/h-*; do [ \"${d##*/h-}\" -gt \"$me\" ] 2>/dev/null && n=1000; done\n\
             sleep 0.01; n=$((n+1))\n\
           done\n\
           for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do\n\
             echo leak > \"$jail/out/leak-$$\" 2>/dev/null; sleep 0.02\n\
           done' sh \"$1\" </dev/null >/dev/null 2>&1 &)\n",
    );
    let straggler = write(
        &t.join("straggler.toml"),
        &format!(
            "name = \"straggler\"\n\
             capture = [\"tar\", \"-cf\", \"{{archive}}\", \"-C\", \"{{root}}\", \".\"]\n\
             hydrate = [\"sh\", \"{}\", \"{{root}}\", \"{{archive}}\"]\n{PROFILE}",
            script.display()
        ),
    );
    let benign = write(
        &t.join("benign.toml"),
        &format!(
            "name = \"benign\"\n\
             capture = [\"tar\", \"-cf\", \"{{archive}}\", \"-C\", \"{{root}}\", \".\"]\n\
             hydrate = [\"tar\", \"-xf\", \"{{archive}}\", \"-C\", \"{{root}}\"]\n{PROFILE}"
        ),
    );
    let r = run(
        t,
        &straggler,
        &[
            "--backend",
            benign.to_str().expect("utf-8 temp path"),
            "--producers",
            "tar-rs",
            "--extractors",
            "reference",
        ],
        12,
        NO_SPECIALS,
    );
    assert!(r.code == 0 || r.code == 1, "stderr: {}", r.stderr);
    let reference_passed: u64 = pairs(&r.report)
        .iter()
        .filter(|(_, e, _)| e == "reference")
        .map(|(_, _, n)| n)
        .sum();
    assert!(reference_passed > 0, "report: {}", r.report);
    let found = findings(&r.report);
    for (check, producer, extractor, message) in &found {
        assert!(
            check != "containment" || extractor == "straggler",
            "{check} blamed on {producer} x {extractor}: {message}"
        );
    }
    assert!(
        found
            .iter()
            .any(|(check, _, extractor, message)| check == "hang"
                && extractor == "straggler"
                // One or two: `setsid` may still be forking when the step ends.
                && message.contains(" process(es) running after it ended (killed): ")),
        "the straggler is named: {found:?}"
    );
    // Nothing of the daemons is left running.
    assert_eq!(processes_mentioning(t), Vec::<String>::new());
}

/// The README's Python example (`producers/backends/minimal.py`, built on
/// `snapconf_worker.py`) is the file shipped, runs as a worker backend, and has the two
/// bugs the README says snapconf finds in it: a hardlink whose first name is excluded is
/// written as a link to a member that is not there (`dangling-link`), and absolute links
/// that capture kept are refused at hydration (`late-failure`).
#[test]
fn the_readme_python_example_runs_and_its_bugs_are_found() {
    let readme = std::fs::read_to_string(shipped("README.md")).expect("backends README");
    let code = std::fs::read_to_string(shipped("minimal.py")).expect("minimal.py");
    assert!(
        readme.contains(&format!("```python\n{code}```")),
        "the README shows minimal.py as it is"
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = run(
        tmp.path(),
        &shipped("minimal.toml"),
        &["--producers", "none", "--extractors", "none"],
        40,
        &[],
    );
    assert_eq!(r.code, 1, "stderr: {}\nreport: {}", r.stderr, r.report);
    let checks: Vec<String> = findings(&r.report).into_iter().map(|f| f.0).collect();
    for want in ["dangling-link", "late-failure"] {
        assert!(checks.iter().any(|c| c == want), "{want} in {checks:?}");
    }
    assert!(r.stderr.contains("started 1 time(s)"), "{}", r.stderr);
}

/// `snapconf fuzz --backend FILE --extractor NAME` for `secs` seconds (seed 1, one worker),
/// report in `report`: the findings' checks and their case directories.
fn fuzz_backend(backend: &Path, name: &str, report: &Path, secs: u32) -> Vec<(String, PathBuf)> {
    let secs = secs.to_string();
    let (code, _, err) = snapconf(
        &[
            "fuzz",
            "--backend",
            backend.to_str().expect("utf-8 temp path"),
            "--extractor",
            name,
            "--time",
            &secs,
            "--seed",
            "1",
            "-j",
            "1",
            "--report-dir",
            report.to_str().expect("utf-8 temp path"),
        ],
        &[],
    );
    assert!(
        code == 0 || code == 1,
        "fuzz exits 0 or 1, not {code}: {err}"
    );
    let text = std::fs::read_to_string(report.join("fuzz.json")).expect("fuzz.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["check"].as_str().unwrap_or_default().to_owned(),
                report.join(f["case_dir"].as_str().unwrap_or_default()),
            )
        })
        .collect()
}

/// Property: a backend's `[profile]` is what its extractor promises (`escaping-link`): the
/// shipped `tar-commands` backend with a profile that refuses escaping links and drops
/// absolute ones is caught leaving one (GNU tar writes what the archive says), the same
/// backend with a profile that keeps them is not; and the finding's `repro.sh` names the
/// backend, so that it replays (exit 1) from any directory.
#[test]
fn a_backend_is_held_to_the_links_its_profile_refuses() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(shipped("tar-commands.toml")).expect("shipped file");
    let strict = text
        .replace("name = \"tar-commands\"", "name = \"strict-tar\"")
        .replace(
            "absolute-symlinks = \"keep\"",
            "absolute-symlinks = \"drop\"",
        )
        .replace(
            "escaping-symlinks = \"keep\"",
            "escaping-symlinks = \"refuse-at-capture\"",
        );
    assert_ne!(strict, text, "the profile keys were found");
    let strict = write(&tmp.path().join("strict.toml"), &strict);
    let found = fuzz_backend(&strict, "strict-tar", &tmp.path().join("strict"), 10);
    let Some((_, case)) = found.iter().find(|(c, _)| c == "escaping-link") else {
        panic!("escaping-link found for the strict profile: {found:?}");
    };
    let script = std::fs::read_to_string(case.join("repro.sh")).expect("repro.sh");
    assert!(script.contains(" --backend '"), "{script}");
    let replay = Command::new("sh")
        .arg(case.join("repro.sh"))
        .current_dir(tmp.path())
        .env("SNAPCONF", support::snapconf_bin())
        .env_remove("SNAPCONF_BACKEND")
        .output()
        .expect("sh runs");
    assert_eq!(
        replay.status.code(),
        Some(1),
        "reproduces: {}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let keep = fuzz_backend(
        &shipped("tar-commands.toml"),
        "tar-commands",
        &tmp.path().join("keep"),
        4,
    );
    assert!(
        keep.iter().all(|(c, _)| c != "escaping-link"),
        "no promise, no escaping-link: {keep:?}"
    );
}
