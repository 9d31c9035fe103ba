//! Exit codes say what happened: nothing ran, or less than was asked, is never success
//! (exit 3: `fuzz --time 0`, an unusable `TMPDIR`, a tool asked for that is not available,
//! every capture refused, a backend worker that never answers, shards missing from
//! `report merge`), and two reports of one shard are refused (exit 2). The code of an
//! internal error (4) is a unit test of `cmd`'s error-to-code mapping: nothing in the
//! binary provokes one honestly.

use crate::support::{self, Snapconf};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `dir/bin/NAME`: a tool that fails at everything, `--version` included, so that the
/// adapters on it are "not available"; returns `PATH` with `dir/bin` first.
fn broken_tool(dir: &Path, name: &str) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let tool = bin.join(name);
    std::fs::write(&tool, "#!/bin/sh\necho broken >&2\nexit 1\n").expect("write the tool");
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn report(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json"))
        .unwrap_or_else(|e| panic!("no report.json in {}: {e}", dir.display()));
    serde_json::from_str(&text).expect("report.json parses")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// `fuzz --time 0` runs 0 executions: exit 3, and the report's verdict says nothing ran
/// (it said "every pair conforms").
#[test]
fn fuzz_of_no_time_is_nothing_ran() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("fuzz");
    let (code, stdout, err) = Snapconf::new()
        .args([
            "fuzz",
            "--extractor",
            "reference",
            "--time",
            "0",
            "--seed",
            "1",
            "--report-dir",
            s(&out),
        ])
        .run();
    assert_eq!(code, 3, "{stdout}{err}");
    assert!(stdout.contains("nothing ran: 0 executions"), "{stdout}");
    assert!(!stdout.contains("conforms"), "{stdout}");
    assert_eq!(report(&out)["cases"], 0);
    let summary = std::fs::read_to_string(out.join("summary.md")).expect("summary.md");
    assert!(summary.contains("nothing ran: 0 executions"), "{summary}");
}

/// An unusable `TMPDIR` (missing, or a file) made every external tool "unavailable" and
/// `run` exit 0; now every mode that probes tools says so first, naming TMPDIR, exits 3,
/// and writes nothing.
#[test]
fn an_unusable_tmpdir_is_said_before_anything_runs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").expect("write");
    let missing = tmp.path().join("missing");
    for bad in [&missing, &file] {
        let rd = tmp.path().join("report");
        let modes: [&[&str]; 3] = [
            &["run", "--cases", "2", "--seed", "1", "--report-dir", s(&rd)],
            &[
                "lifecycle",
                "--sequences",
                "1",
                "--seed",
                "1",
                "--report-dir",
                s(&rd),
            ],
            &[
                "fuzz",
                "--extractor",
                "all",
                "--time",
                "1",
                "--report-dir",
                s(&rd),
            ],
        ];
        for args in modes {
            let (code, stdout, err) = Snapconf::new().args(args).env("TMPDIR", bad).run();
            assert_eq!(
                code,
                3,
                "{args:?} with TMPDIR={}: {stdout}{err}",
                bad.display()
            );
            assert!(
                err.contains("TMPDIR") && err.contains(&format!("`{}`", bad.display())),
                "{args:?}: {err}"
            );
            assert!(
                !err.contains("skipping"),
                "said before any tool is probed: {err}"
            );
            assert!(!rd.exists(), "{args:?}: nothing written");
        }
    }
}

/// `fuzz --extractor all` with one tool broken fuzzes every other extractor (it fuzzed
/// only the first), then exits 3 naming the missing ones and why; the report lists them
/// as incomplete.
#[test]
fn fuzz_of_all_with_a_tool_missing_is_incomplete() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = broken_tool(tmp.path(), "bsdtar");
    let out = tmp.path().join("fuzz");
    let (code, stdout, err) = Snapconf::new()
        .args([
            "fuzz",
            "--extractor",
            "all",
            "--time",
            "1",
            "-j",
            "1",
            "--seed",
            "3",
            "--report-dir",
            s(&out),
        ])
        .env("PATH", &path)
        .run();
    assert_eq!(code, 3, "{stdout}{err}");
    assert!(
        err.contains("incomplete: extractor `bsdtar` was asked for and is not available here")
            && err.contains("--version` failed"),
        "{err}"
    );
    let r = report(&out);
    let fuzzed: Vec<&str> = r["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .filter_map(|p| p["extractor"].as_str())
        .collect();
    assert!(
        fuzzed.contains(&"reference") && fuzzed.len() > 1,
        "every available extractor is fuzzed: {fuzzed:?}"
    );
    assert!(!fuzzed.contains(&"bsdtar"), "{fuzzed:?}");
    let incomplete = r["incomplete"].to_string();
    assert!(incomplete.contains("`bsdtar`"), "{r:#}");
    let summary = std::fs::read_to_string(out.join("summary.md")).expect("summary.md");
    assert!(summary.contains("INCOMPLETE"), "{summary}");
}

/// A worker backend whose worker ends on every request (here it exits at once) never ran
/// the extractor: its "refusals" are not the extractor's, so the session stops after 20
/// requests (of the 40 asked) instead of counting deaths for its whole time, and exits 3
/// naming the worker and how it ended (it said "every pair conforms" and exited 0); one
/// that ends on most requests ran less than asked (exit 3 too). A worker that dies of a
/// signal crashed (a `hang` finding, exit 1). A worker that answers, even if it refuses
/// every archive, is a session that ran.
#[test]
fn fuzz_of_a_worker_that_never_answers_is_nothing_ran() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let corpora = tmp.path().join("corpora");
    std::fs::create_dir_all(corpora.join("seeds")).expect("corpora");
    std::fs::create_dir_all(corpora.join("adversarial")).expect("corpora");
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/seeds");
    for e in std::fs::read_dir(&seeds).expect("seeds").flatten() {
        std::fs::copy(e.path(), corpora.join("seeds").join(e.file_name())).expect("seed");
    }
    let session = |name: &str, script: &str| {
        let toml = tmp.path().join(format!("{name}.toml"));
        std::fs::write(
            &toml,
            format!(
                "name = \"{name}\"\nmode = \"worker\"\ntimeout = 10\nworker = [\"sh\", \"-c\", '{script}']\n"
            ),
        )
        .expect("write the backend");
        let out = tmp.path().join(name);
        let (code, stdout, err) = Snapconf::new()
            .args([
                "fuzz",
                "--backend",
                s(&toml),
                "--extractor",
                name,
                "--corpora",
                s(&corpora),
                "--time",
                "300",
                "--runs",
                "40",
                "-j",
                "1",
                "--seed",
                "1",
                "--shrink-runs",
                "0",
                "--report-dir",
                s(&out),
            ])
            .run();
        let fuzz = std::fs::read_to_string(out.join("fuzz.json")).unwrap_or_default();
        let fuzz: Value = serde_json::from_str(&fuzz).unwrap_or(Value::Null);
        (
            code,
            stdout,
            err,
            fuzz["executions"].as_u64().unwrap_or(0),
            out,
        )
    };
    let (code, stdout, err, executions, out) = session("dies", "exit 0");
    assert_eq!(code, 3, "{stdout}{err}");
    assert!(
        err.contains("incomplete: extractor `dies` never ran: its worker ended without an answer on each of its")
            && err.contains("worker `sh -c exit 0` exited with status 0 during the hydrate request"),
        "{err}"
    );
    assert!(
        (1..40).contains(&executions),
        "the session stopped before its 40 runs: {executions}"
    );
    let r = report(&out);
    assert!(r["incomplete"].to_string().contains("never ran"), "{r:#}");
    // Most requests (those whose archive's checksum is not a multiple of 4) end the worker,
    // the others are refused: less than half of the archives ran, which is said (exit 3).
    let (code, stdout, err, executions, _) = session(
        "mostly-dies",
        r#"while read -r line; do a=$(printf %s "$line" | sed -n "s/.*\"archive\":\"\([^\"]*\)\".*/\1/p"); c=$(cksum < "$a" | cut -d" " -f1); [ $((c % 4)) -eq 0 ] || exit 0; echo "{\"ok\":false,\"error\":\"no\"}"; done"#,
    );
    assert_eq!(code, 3, "{stdout}{err}");
    assert!(
        err.contains("incomplete: extractor `mostly-dies` ran on half of its archives or fewer: its worker ended without an answer on "),
        "{err}"
    );
    assert_eq!(executions, 40, "{stdout}{err}");
    // A worker that dies of a signal on every archive is not one that "never ran": a crash
    // is a `hang` finding (exit 1), whether the kernel or the view (`bwrap`: status 139)
    // reports the signal.
    let (code, stdout, err, _, out) = session("segfaults", "kill -SEGV $$");
    assert_eq!(code, 1, "{stdout}{err}");
    assert!(!err.contains("never ran"), "{err}");
    assert!(
        report(&out)["findings"].to_string().contains("signal 11"),
        "{stdout}{err}"
    );
    // The control: the same worker answering every request with a refusal ran.
    let (code, stdout, err, executions, _) = session(
        "refuses",
        r#"while read -r line; do echo "{\"ok\":false,\"error\":\"no\"}"; done"#,
    );
    assert!(code == 0 || code == 1, "exit {code}: {stdout}{err}");
    assert_eq!(executions, 40, "{stdout}{err}");
    assert!(!err.contains("never ran"), "{err}");
}

/// `run` with an explicit `--extractors` list of which one is not available runs the
/// rest and exits 3 naming it; the default set, which did not ask for it, does not.
#[test]
fn run_of_a_list_with_a_tool_missing_is_incomplete() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = broken_tool(tmp.path(), "bsdtar");
    let run = |extractors: Option<&str>, rd: &Path| {
        let mut args = vec![
            "run",
            "--cases",
            "3",
            "--seed",
            "1",
            "--producers",
            "tar-rs",
            "--report-dir",
            s(rd),
        ];
        if let Some(e) = extractors {
            args.extend(["--extractors", e]);
        }
        Snapconf::new().args(args).env("PATH", &path).run()
    };
    let listed = tmp.path().join("listed");
    let (code, stdout, err) = run(Some("reference,bsdtar"), &listed);
    assert_eq!(code, 3, "{stdout}{err}");
    assert!(err.contains("extractor `bsdtar` was asked for"), "{err}");
    let r = report(&listed);
    assert_eq!(r["pairs"].as_array().map(Vec::len), Some(1), "{r:#}");
    assert!(r["incomplete"].to_string().contains("bsdtar"), "{r:#}");
    assert!(stdout.contains("INCOMPLETE"), "{stdout}");

    let default = tmp.path().join("default");
    let (code, stdout, err) = run(None, &default);
    assert!(
        code == 0 || code == 1,
        "the default set never asked for bsdtar: {code}: {stdout}{err}"
    );
    assert!(report(&default).get("incomplete").is_none());
}

/// Every tool asked for unavailable: `run` and `fuzz` run nothing, exit 3, and say which
/// tool and why.
#[test]
fn every_tool_asked_for_unavailable_is_nothing_ran() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = broken_tool(tmp.path(), "bsdtar");
    let rd = tmp.path().join("report");
    let modes: [&[&str]; 2] = [
        &[
            "run",
            "--cases",
            "2",
            "--producers",
            "tar-rs",
            "--extractors",
            "bsdtar",
        ],
        &["fuzz", "--extractor", "bsdtar", "--time", "1"],
    ];
    for args in modes {
        let (code, stdout, err) = Snapconf::new()
            .args(args)
            .args(["--report-dir", s(&rd)])
            .env("PATH", &path)
            .run();
        assert_eq!(code, 3, "{args:?}: {stdout}{err}");
        assert!(
            err.contains("skipping extractor `bsdtar`: `bsdtar --version` failed"),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("nothing ran") || err.contains("nothing to run"),
            "{err}"
        );
        assert!(!rd.join("report.json").exists(), "{args:?}");
    }
}

/// `audit` of a workspace whose every capture is refused (the only producer's `gzip` is
/// broken) ran nothing: exit 3, its verdict says so.
#[test]
fn audit_with_every_capture_refused_is_nothing_ran() {
    if !support::producer_available("gnu-tar-lnk-gz") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = {
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        let gzip = bin.join("gzip");
        std::fs::write(
            &gzip,
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'gzip 1.12'; exit 0; fi\nexit 1\n",
        )
        .expect("write gzip");
        std::fs::set_permissions(&gzip, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    };
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).expect("mkdir");
    std::fs::write(ws.join("a"), "x").expect("write");
    let rd = tmp.path().join("report");
    let (code, stdout, err) = Snapconf::new()
        .args([
            "audit",
            s(&ws),
            "--producers",
            "gnu-tar-lnk-gz",
            "--extractors",
            "reference",
            "--report-dir",
            s(&rd),
        ])
        .env("PATH", &path)
        .run();
    assert_eq!(code, 3, "{stdout}{err}");
    assert!(stdout.contains("no pair ran a case"), "{stdout}");
}

/// Shard `k` of 2 of one small run, written to `dir`.
fn shard(dir: &Path, k: u32) -> PathBuf {
    let rd = dir.join(format!("shard-{k}"));
    let (code, stdout, err) = Snapconf::new()
        .args([
            "run",
            "--cases",
            "4",
            "--seed",
            "9",
            "--producers",
            "tar-rs",
            "--extractors",
            "reference",
            "--shard",
            &format!("{k}/2"),
            "--report-dir",
            s(&rd),
        ])
        .run();
    assert!(code == 0 || code == 1, "shard {k}: {code}: {stdout}{err}");
    assert_eq!(report(&rd)["shard"], format!("{k}/2"));
    rd
}

fn merge(inputs: &[&Path], out: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["report", "merge"];
    args.extend(inputs.iter().map(|p| s(p)));
    args.extend(["--out", s(out)]);
    args.extend(extra);
    Snapconf::new().args(args).run()
}

/// Two report directories of one shard of one run (a copy) are refused with exit 2
/// naming both (their counts were added twice); nothing is written.
#[test]
fn report_merge_refuses_a_shard_given_twice() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let one = shard(tmp.path(), 1);
    let copy = tmp.path().join("copy-of-1");
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(&one)
        .arg(&copy)
        .status()
        .expect("cp");
    assert!(st.success());
    let two = shard(tmp.path(), 2);
    let out = tmp.path().join("merged");
    let (code, stdout, err) = merge(&[&one, &two, &copy], &out, &[]);
    assert_eq!(code, 2, "{stdout}{err}");
    assert!(
        err.contains(&format!(
            "`{}` and `{}` are both shard 1/2",
            s(&one),
            s(&copy)
        )),
        "{err}"
    );
    assert!(!out.join("report.json").exists(), "nothing written");
}

/// One shard of two alone was reported as the whole run: now the merge exits 3 naming
/// the missing shard, with the report written and marked partial; with
/// `--allow-partial` it exits as the findings say, the report still marked partial
/// (`partial` in report.json, a line in summary.md). Both shards: not partial.
#[test]
fn report_merge_of_a_missing_shard_is_incomplete_unless_allowed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let one = shard(tmp.path(), 1);
    let out = tmp.path().join("merged");
    let (code, stdout, err) = merge(&[&one], &out, &[]);
    assert_eq!(code, 3, "{stdout}{err}");
    assert!(err.contains("shard(s) 2 of 2 missing"), "{err}");
    assert!(err.contains("--allow-partial"), "{err}");
    let r = report(&out);
    assert_eq!(r["partial"], serde_json::json!({"of": 2, "missing": [2]}));

    let allowed = tmp.path().join("allowed");
    let (code, stdout, err) = merge(&[&one], &allowed, &["--allow-partial"]);
    let r = report(&allowed);
    let findings = r["findings"].as_array().map_or(0, Vec::len);
    assert_eq!(code, i32::from(findings > 0), "{stdout}{err}");
    assert_eq!(r["partial"], serde_json::json!({"of": 2, "missing": [2]}));
    assert!(r.get("incomplete").is_none(), "{r:#}");
    let summary = std::fs::read_to_string(allowed.join("summary.md")).expect("summary.md");
    assert!(
        summary.contains("partial: shard(s) 2 of 2 missing"),
        "{summary}"
    );

    let two = shard(tmp.path(), 2);
    let whole = tmp.path().join("whole");
    let (code, stdout, err) = merge(&[&one, &two], &whole, &[]);
    assert!(code == 0 || code == 1, "{stdout}{err}");
    assert!(report(&whole).get("partial").is_none());
}
