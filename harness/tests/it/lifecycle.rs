//! `snapconf lifecycle`: sessions of turns through one backend instance, end to end through
//! the real binary: the stateful example backend's skip-restore bug found, shrunk and
//! replayed; its correct variant and `tar-rs` x `reference` (with faults) passing; a
//! backend that stays stuck after a refused capture caught; bad reproducers refused.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::snapconf;

fn backends_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../producers/backends")
}

/// Whether `python3` has the tarfile extraction filters the example backend uses; a skip
/// line when not.
fn python_with_filters() -> bool {
    let ok = Command::new("python3")
        .args(["-I", "-c", "import tarfile; tarfile.tar_filter"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        support::skip::skip(
            "python3 with tarfile extraction filters (3.12, or 3.11.4 and later)",
            "apt-get install python3",
        );
    }
    ok
}

/// What a lifecycle run left: exit code, stdout, stderr and `lifecycle.json`.
struct Lifecycle {
    code: i32,
    stdout: String,
    stderr: String,
    report: serde_json::Value,
    report_dir: PathBuf,
}

/// `snapconf lifecycle ARGS… --report-dir <tmp>/report --jail-dir <tmp>/jails`; asserts that
/// no jail is left behind.
fn lifecycle(tmp: &Path, args: &[&str], envs: &[(&str, &str)]) -> Lifecycle {
    let report_dir = tmp.join("report");
    let jails = tmp.join("jails");
    std::fs::create_dir_all(&jails).expect("jail dir");
    let mut all = vec!["lifecycle"];
    all.extend_from_slice(args);
    all.extend_from_slice(&[
        "--timeout",
        "20",
        "-j",
        "2",
        "--report-dir",
        report_dir.to_str().expect("utf-8 temp path"),
        "--jail-dir",
        jails.to_str().expect("utf-8 temp path"),
    ]);
    let (code, stdout, stderr) = snapconf(&all, envs);
    let report = std::fs::read_to_string(report_dir.join("lifecycle.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    let left = std::fs::read_dir(&jails).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "jails left behind in `{}`", jails.display());
    Lifecycle {
        code,
        stdout,
        stderr,
        report,
        report_dir,
    }
}

fn pair_row(report: &serde_json::Value) -> &serde_json::Value {
    &report["pairs"][0]
}

/// The done-when of the stateful example: `fingerprint.toml` trusts the fingerprint of the
/// tree it last restored into a root, so a warm restore over a workspace that moved on is
/// skipped. The lifecycle finds it as `checkpoint-restore`, shrinks it to at most 2 turns
/// and 3 entries, and its `repro.sh` reproduces it (exit 1).
#[test]
fn the_fingerprint_backends_skip_restore_bug_is_found_shrunk_and_replayed() {
    if !python_with_filters() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let backend = backends_dir().join("fingerprint.toml");
    let r = lifecycle(
        tmp.path(),
        &[
            "--backend",
            backend.to_str().expect("utf-8 path"),
            "--producers",
            "none",
            "--extractors",
            "none",
            "--sequences",
            "30",
            "--seed",
            "1",
        ],
        &[],
    );
    assert_eq!(r.code, 1, "findings: {}\n{}", r.stdout, r.stderr);
    let findings = r.report["findings"].as_array().expect("findings");
    let f = findings
        .iter()
        .find(|f| f["check"] == "checkpoint-restore")
        .unwrap_or_else(|| panic!("a checkpoint-restore finding: {}", r.stdout));
    assert_eq!(f["producer"], "fingerprint");
    assert_eq!(f["shrink"], "minimal", "{f}");
    let turns = f["turns"].as_u64().expect("turns");
    let entries = f["entries"].as_u64().expect("entries");
    assert!(
        turns <= 2 && entries <= 3,
        "shrunk to {turns} turns, {entries} entries: {f}"
    );
    let message = f["message"].as_str().expect("message");
    assert!(message.contains("warm restore"), "{message}");
    // The reproducer replays the whole sequence through a fresh worker: still failing.
    let dir = r.report_dir.join(f["case_dir"].as_str().expect("case dir"));
    let seq: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("sequence.json")).expect("sequence.json"),
    )
    .expect("sequence.json parses");
    assert_eq!(seq["turns"].as_array().map(Vec::len), Some(turns as usize));
    let out = Command::new(dir.join("repro.sh"))
        .env("SNAPCONF", support::snapconf_bin())
        .env_remove("SNAPCONF_BACKEND")
        .output()
        .expect("repro.sh runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("reproduces: checkpoint-restore"),
        "{stdout}"
    );
}

/// The correct variant (`fingerprint-checked.toml`: the tree is fingerprinted again before
/// a skip) passes 200 sequences, refused captures (its FIFOs) and their restores included.
#[test]
fn the_checked_fingerprint_backend_passes_200_sequences() {
    if !python_with_filters() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let backend = backends_dir().join("fingerprint-checked.toml");
    let r = lifecycle(
        tmp.path(),
        &[
            "--backend",
            backend.to_str().expect("utf-8 path"),
            "--producers",
            "none",
            "--extractors",
            "none",
            "--sequences",
            "200",
            "--seed",
            "1",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let row = pair_row(&r.report);
    assert_eq!(row["sequences"], 200);
    assert_eq!(row["passed"], 200, "{row}");
    assert!(
        row["refused"].as_u64() > Some(0),
        "refused captures ran: {row}"
    );
    assert!(row["restores"].as_u64() > Some(200), "restores ran: {row}");
}

/// The built-in pair `tar-rs` x `reference` passes 500 sequences of up to 6 turns, cold and
/// warm restores, every fault over every warm restore.
#[test]
fn tar_rs_and_the_reference_pass_500_sequences_with_faults() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = lifecycle(
        tmp.path(),
        &[
            "--producers",
            "tar-rs",
            "--extractors",
            "reference",
            "--sequences",
            "500",
            "--turns",
            "6",
            "--faults",
            "all",
            "--seed",
            "1",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let row = pair_row(&r.report);
    assert_eq!(row["passed"], 500, "{row}");
    assert!(row["turns"].as_u64() > Some(1000), "{row}");
    assert!(row["restores"].as_u64() > Some(1000), "{row}");
    assert!(row["faulted"].as_u64() > Some(1000), "{row}");
}

/// A backend that refuses every capture once one was refused is stuck: `stuck-session`.
#[test]
fn a_backend_stuck_after_a_refused_capture_is_found() {
    if !python_with_filters() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let script = tmp.path().join("sticky.py");
    std::fs::write(
        &script,
        format!(
            "import os, shutil, stat, sys, tarfile\n\
             sys.path.insert(0, {dir:?})\n\
             import snapconf_worker\n\
             failed = False\n\
             def capture(root, archive, exclude):\n\
             \x20   global failed\n\
             \x20   if failed:\n\
             \x20       raise RuntimeError('an earlier capture failed')\n\
             \x20   for d, dirs, files in os.walk(root):\n\
             \x20       for n in dirs + files:\n\
             \x20           if stat.S_ISFIFO(os.lstat(os.path.join(d, n)).st_mode):\n\
             \x20               failed = True\n\
             \x20               raise ValueError('a FIFO')\n\
             \x20   with tarfile.open(archive, 'w', format=tarfile.PAX_FORMAT) as tar:\n\
             \x20       tar.add(root, arcname='.')\n\
             def hydrate(root, archive):\n\
             \x20   pass\n\
             snapconf_worker.serve(capture=capture, hydrate=hydrate)\n",
            dir = backends_dir().to_str().expect("utf-8 path"),
        ),
    )
    .expect("write the worker");
    let toml = tmp.path().join("sticky.toml");
    std::fs::write(
        &toml,
        format!(
            "name = \"sticky\"\nmode = \"worker\"\nworker = [\"python3\", \"-I\", \"-B\", {:?}]\n\
             pair-with-builtins = false\n[profile]\nhardlinks = \"copy\"\n\
             special-files = \"refuse-at-capture\"\nabsolute-symlinks = \"keep\"\n\
             escaping-symlinks = \"keep\"\nmodes = \"ignore\"\nmtimes = \"ignore\"\n",
            script.to_str().expect("utf-8 path")
        ),
    )
    .expect("write the description");
    let r = lifecycle(
        tmp.path(),
        &[
            "--backend",
            toml.to_str().expect("utf-8 path"),
            "--producers",
            "none",
            "--extractors",
            "none",
            "--sequences",
            "40",
            "--seed",
            "3",
            "--shrink-steps",
            "40",
        ],
        &[("SNAPCONF_GEN_FIFO_WEIGHT", "6")],
    );
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let findings = r.report["findings"].as_array().expect("findings");
    let f = findings
        .iter()
        .find(|f| f["check"] == "stuck-session")
        .unwrap_or_else(|| panic!("a stuck-session finding: {}", r.stdout));
    assert!(
        f["turns"].as_u64() >= Some(2),
        "a refused turn, then a stuck one: {f}"
    );
    assert!(
        f["message"]
            .as_str()
            .is_some_and(|m| m.contains("a fresh instance captured")),
        "{f}"
    );
}

/// A reproducer directory that is missing or holds no sequence is a usage error (exit 2),
/// said before anything runs.
#[test]
fn replaying_a_bad_reproducer_is_a_usage_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("nope");
    let (code, _, stderr) = snapconf(
        &["lifecycle", "--replay", missing.to_str().expect("utf-8")],
        &[],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("finding.json"), "{stderr}");
    let dir = tmp.path().join("case");
    std::fs::create_dir(&dir).expect("dir");
    std::fs::write(
        dir.join("finding.json"),
        r#"{"schema":1,"check":"checkpoint-restore","producer":"tar-rs","extractor":"reference",
            "profile":{"name":"default","hardlinks":"copy","special-files":"drop",
            "absolute-symlinks":"keep","escaping-symlinks":"keep","modes":"exec-bit",
            "mtimes":"ignore"},"message":"m","seed":1,"index":0,"timeout_secs":5}"#,
    )
    .expect("finding.json");
    std::fs::write(
        dir.join("sequence.json"),
        r#"{"initial":{"entries":[]},"turns":[]}"#,
    )
    .expect("sequence.json");
    let (code, _, stderr) = snapconf(
        &["lifecycle", "--replay", dir.to_str().expect("utf-8")],
        &[],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("at least one turn"), "{stderr}");
}

/// A lifecycle run writes the report every mode writes (`report.json` in mode
/// `lifecycle`, `summary.md` opening with the causes and their `repro.sh`), shows its
/// progress, runs `--shard K/N` like `run` with shards that `report merge` joins, and
/// takes a `--baseline` written by `baseline update`: every cause known, exit 0. A bad
/// `--shard` or baseline file is a usage error (exit 2) naming it, before anything runs.
#[test]
fn lifecycle_shards_merge_and_baselines_like_run() {
    if !python_with_filters() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let jails = tmp.path().join("jails");
    std::fs::create_dir_all(&jails).expect("jail dir");
    let backend = backends_dir().join("fingerprint.toml");
    let path = |p: &Path| p.to_str().expect("utf-8 temp path").to_string();
    let run = |extra: &[&str]| {
        let mut args: Vec<String> = [
            "lifecycle",
            "--producers",
            "none",
            "--extractors",
            "none",
            "--sequences",
            "30",
            "--seed",
            "1",
            "--timeout",
            "20",
            "-j",
            "2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(["--backend".into(), path(&backend)]);
        args.extend(["--jail-dir".into(), path(&jails)]);
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        snapconf(&args, &[])
    };
    let read = |dir: &Path| -> serde_json::Value {
        serde_json::from_str(
            &std::fs::read_to_string(dir.join("report.json")).expect("report.json is written"),
        )
        .expect("report.json parses")
    };

    let bad_dir = tmp.path().join("bad");
    let (code, _, err) = run(&["--shard", "3/2", "--report-dir", &path(&bad_dir)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--shard") && err.contains("3/2"), "{err}");
    let bad_baseline = tmp.path().join("bad-baseline.json");
    std::fs::write(&bad_baseline, "not json").expect("write");
    let (code, _, err) = run(&[
        "--baseline",
        &path(&bad_baseline),
        "--report-dir",
        &path(&bad_dir),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bad-baseline.json"), "{err}");
    assert!(!bad_dir.exists(), "nothing ran for bad input");

    let mut shards = Vec::new();
    for k in 1..=2 {
        let dir = tmp.path().join(format!("shard-{k}"));
        let (code, stdout, err) = run(&["--shard", &format!("{k}/2"), "--report-dir", &path(&dir)]);
        assert!(code == 0 || code == 1, "{stdout}\n{err}");
        let r = read(&dir);
        assert_eq!(r["mode"], "lifecycle");
        assert_eq!(r["cases"], 15, "shard {k} ran half the sequences");
        assert_eq!(r["pairs"][0]["cases"], 15);
        shards.push(dir);
    }
    let merged = tmp.path().join("merged");
    let (code, stdout, err) = snapconf(
        &[
            "report",
            "merge",
            &path(&shards[0]),
            &path(&shards[1]),
            "--out",
            &path(&merged),
        ],
        &[],
    );
    assert_eq!(code, 1, "the skip-restore bug: {stdout}\n{err}");
    let r = read(&merged);
    assert_eq!(r["mode"], "lifecycle");
    assert_eq!(r["cases"], 30);
    assert_eq!(r["pairs"][0]["cases"], 30);
    let cause = r["causes"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["check"] == "checkpoint-restore"))
        .unwrap_or_else(|| panic!("a checkpoint-restore cause: {r}"));
    let case_dir = merged.join(cause["case_dir"].as_str().expect("case_dir"));
    assert!(case_dir.join("sequence.json").is_file() && case_dir.join("repro.sh").is_file());
    let md = std::fs::read_to_string(merged.join("summary.md")).expect("summary.md");
    assert!(md.starts_with("# snapconf lifecycle: 30 sequences"), "{md}");
    let causes_at = md
        .find("## Causes, most severe first")
        .expect("causes first");
    let matrix_at = md.find("## Matrix").expect("then the matrix");
    assert!(causes_at < matrix_at, "{md}");
    assert!(
        md.contains("checkpoint-restore") && md.contains("/repro.sh"),
        "{md}"
    );
    assert!(
        md.contains("initial workspace:"),
        "the case as a tree: {md}"
    );
    assert!(merged.join("junit.xml").is_file() && merged.join("index.html").is_file());

    let baseline = tmp.path().join("baseline.json");
    let (code, _, err) = snapconf(
        &[
            "baseline",
            "update",
            "--report",
            &path(&merged),
            "--out",
            &path(&baseline),
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let whole = tmp.path().join("whole");
    let (code, stdout, err) = run(&[
        "--baseline",
        &path(&baseline),
        "--report-dir",
        &path(&whole),
    ]);
    assert_eq!(code, 0, "every cause is known: {stdout}\n{err}");
    assert!(err.contains("[sequences "), "progress is shown: {err}");
    let r = read(&whole);
    let findings = r["findings"].as_array().expect("findings");
    assert!(
        findings.iter().any(|f| f["check"] == "checkpoint-restore"),
        "the finding is still reported: {r}"
    );
    assert!(findings.iter().all(|f| f["known"] == true), "{r}");
    let left = std::fs::read_dir(&jails).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "jails left behind");
}
