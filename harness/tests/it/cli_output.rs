//! The output conventions of the commands that run cases (issue 27): `-q` prints no
//! progress, `--color` and `NO_COLOR`/`CLICOLOR_FORCE` decide the escape codes (never in
//! the report files), `--message-format json` writes one parseable event per line in
//! order, progress degrades to plain lines on a dumb terminal, and `fuzz` shows
//! executions, rate, findings and time left.
//!
//! The runs are `tar-rs` × `reference,tar-rs` (no external tool): within 20 cases of seed
//! 1 tar-rs restores a character device that the default profile drops, one finding.

use crate::support;

use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// `snapconf run` of 20 cases of seed 1, tar-rs × reference,tar-rs, into `report`, plain
/// progress lines for every event, with `extra` and `envs`: exit code, stdout, stderr.
fn run(report: &Path, extra: &[&str], envs: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = support::Snapconf::new();
    cmd.args([
        "run",
        "--cases",
        "20",
        "--seed",
        "1",
        "--producers",
        "tar-rs",
        "--extractors",
        "reference,tar-rs",
        "--shrink-total",
        "60",
        "--progress-every",
        "0",
        "--report-dir",
    ])
    .arg(report)
    .args(extra)
    .env_remove("NO_COLOR")
    .env_remove("CLICOLOR_FORCE")
    .env_remove("CLICOLOR")
    .env(support::PLAIN_DRAWS.0, support::PLAIN_DRAWS.1)
    .envs(envs.iter().copied())
    .timeout(Duration::from_secs(300));
    cmd.run()
}

/// Whether `text` holds an ANSI escape sequence.
fn escapes(text: &str) -> bool {
    text.contains("\u{1b}[")
}

#[test]
fn quiet_prints_no_progress_and_no_notes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, out, err) = run(&dir.path().join("loud"), &[], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("[cases 1/20"), "progress without -q:\n{err}");
    assert!(err.contains("snapconf: 20 cases, seed 1"), "{err}");

    let (code, out_q, err_q) = run(&dir.path().join("quiet"), &["-q"], &[]);
    assert_eq!(code, 1, "{err_q}");
    assert_eq!(err_q, "", "-q leaves stderr empty when nothing fails");
    assert_eq!(
        out_q.replace("/quiet", "/loud"),
        out,
        "-q keeps the summary as it is"
    );
}

#[test]
fn quiet_and_verbose_together_are_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, out, err) = run(&dir.path().join("r"), &["-q"], &[("SNAPCONF_VERBOSE", "1")]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("-q/--quiet and -v/--verbose"), "{err}");
    assert!(!dir.path().join("r").exists(), "nothing ran");
}

#[test]
fn verbose_tells_each_finding_and_shrink_as_it_happens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, _, err) = run(&dir.path().join("r"), &["-v"], &[]);
    assert_eq!(code, 1, "{err}");
    let found: Vec<&str> = err.lines().filter(|l| l.starts_with("found ")).collect();
    assert_eq!(found.len(), 1, "{err}");
    assert!(found[0].contains("(tar-rs x tar-rs, case "), "{}", found[0]);
    assert!(
        err.contains("shrinking roundtrip for tar-rs x tar-rs (1/1)"),
        "{err}"
    );
    assert!(err.contains("shrink ended (1/1)"), "{err}");
}

#[test]
fn color_follows_the_flag_then_no_color_then_clicolor_force() {
    let dir = tempfile::tempdir().expect("tempdir");
    /// Flags, environment, whether stdout is coloured.
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], bool);
    let cases: [Case; 5] = [
        (&["--color", "always"], &[], true),
        (&["--color", "always"], &[("NO_COLOR", "1")], true),
        (&["--color", "never"], &[("CLICOLOR_FORCE", "1")], false),
        (&[], &[("CLICOLOR_FORCE", "1")], true),
        (&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], false),
    ];
    for (i, (flags, envs, coloured)) in cases.into_iter().enumerate() {
        let report = dir.path().join(format!("r{i}"));
        let (code, out, err) = run(&report, flags, envs);
        assert_eq!(code, 1, "{err}");
        assert_eq!(escapes(&out), coloured, "{flags:?} {envs:?}:\n{out}");
        // The finding's cause line is red, the reproducer line is not.
        if coloured {
            let cause = out.lines().find(|l| l.contains("1. NEW roundtrip"));
            assert!(cause.is_some_and(escapes), "{out}");
            assert!(!out.lines().any(|l| l.contains("reproducer:") && escapes(l)));
        }
        for file in ["report.json", "summary.md", "index.html", "junit.xml"] {
            let text = std::fs::read_to_string(report.join(file)).expect("report file");
            assert!(!escapes(&text), "{file} is never coloured");
        }
    }
}

/// Every line of `stdout` as JSON (panics naming the line that is not).
fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["type"].as_str().expect("every event has a type"))
        .collect()
}

#[test]
fn json_events_parse_and_come_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("r");
    let (code, out, err) = run(&report, &["--message-format", "json", "-j", "2"], &[]);
    assert_eq!(code, 1, "{err}");
    let evs = events(&out);
    let types = kinds(&evs);
    assert_eq!(types.first(), Some(&"run-started"), "{out}");
    assert_eq!(types.last(), Some(&"summary"), "{out}");
    assert_eq!(evs[0]["mode"], "run");
    assert_eq!(evs[0]["total"], 20);
    assert_eq!(
        evs[0]["extractors"],
        serde_json::json!(["reference", "tar-rs"])
    );

    // Each case starts before it finishes; they finish in case order.
    let started: Vec<(usize, u64)> = evs
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "case-started")
        .map(|(i, e)| (i, e["case"].as_u64().expect("case")))
        .collect();
    let finished: Vec<(usize, u64)> = evs
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "case-finished")
        .map(|(i, e)| (i, e["case"].as_u64().expect("case")))
        .collect();
    assert_eq!(started.len(), 20);
    assert_eq!(
        finished.iter().map(|f| f.1).collect::<Vec<_>>(),
        (0..20).collect::<Vec<_>>()
    );
    for (at, case) in &finished {
        let s = started.iter().find(|s| s.1 == *case).expect("started");
        assert!(s.0 < *at, "case {case} finished before it started");
    }

    // A finding event per finding in the report, each right after its case's end.
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(report.join("report.json")).expect("report.json"),
    )
    .expect("report.json parses");
    let findings = file["findings"].as_array().expect("findings");
    let found: Vec<(usize, &Value)> = evs
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "finding")
        .collect();
    assert_eq!(found.len(), findings.len(), "{out}");
    assert!(!found.is_empty());
    for (at, f) in &found {
        assert_eq!(evs[at - 1]["type"], "case-finished");
        assert_eq!(evs[at - 1]["case"], f["case"]);
        assert_eq!(evs[at - 1]["new_findings"], 1);
        assert!(findings.iter().any(|r| r["check"] == f["check"]
            && r["producer"] == f["producer"]
            && r["extractor"] == f["extractor"]));
    }

    // Shrinks after the cases, each started one finished.
    let last_case = finished.last().expect("cases").0;
    let shrinks: Vec<&str> = types[last_case + 1..]
        .iter()
        .copied()
        .filter(|t| t.starts_with("shrink-"))
        .collect();
    assert_eq!(shrinks, ["shrink-started", "shrink-finished"], "{out}");

    let summary = evs.last().expect("summary");
    assert_eq!(summary["exit_code"], code);
    assert_eq!(summary["findings"], findings.len());
    assert_eq!(summary["new_causes"], 1);
    assert!(!err.is_empty(), "progress stays on stderr");
}

#[test]
fn lifecycle_and_audit_write_the_same_stream() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut lifecycle = support::Snapconf::new();
    lifecycle
        .args([
            "lifecycle",
            "--sequences",
            "2",
            "--seed",
            "1",
            "--producers",
            "tar-rs",
            "--extractors",
            "reference",
            "--message-format",
            "json",
            "--report-dir",
        ])
        .arg(dir.path().join("l"));
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).expect("mkdir");
    std::fs::write(ws.join("src/a.txt"), "a\n").expect("write");
    let mut audit = support::Snapconf::new();
    audit
        .arg("audit")
        .arg(&ws)
        .args([
            "--producers",
            "tar-rs",
            "--extractors",
            "reference",
            "--message-format",
            "json",
            "--report-dir",
        ])
        .arg(dir.path().join("a"));
    for (mode, cmd, cases) in [("lifecycle", &mut lifecycle, 2), ("audit", &mut audit, 1)] {
        let (code, out, err) = cmd.timeout(Duration::from_secs(300)).run();
        assert_eq!(code, 0, "{mode}: {err}");
        let evs = events(&out);
        let types = kinds(&evs);
        assert_eq!(evs[0]["type"], "run-started");
        assert_eq!(evs[0]["mode"], mode);
        assert_eq!(
            types.iter().filter(|t| **t == "case-finished").count(),
            cases
        );
        assert_eq!(types.last(), Some(&"summary"));
        assert_eq!(evs.last().expect("summary")["mode"], mode);
    }
}

#[test]
fn fuzz_shows_executions_rate_findings_and_time_left() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fuzz = |report: &str, extra: &[&str]| {
        let mut cmd = support::Snapconf::new();
        cmd.args([
            "fuzz",
            "--extractor",
            "reference",
            "--time",
            "3",
            "--seed",
            "1",
            "-j",
            "1",
            "--progress-every",
            "0",
            "--report-dir",
        ])
        .arg(dir.path().join(report))
        .args(extra)
        .timeout(Duration::from_secs(120));
        cmd.run()
    };
    let (code, _, err) = fuzz("human", &[]);
    assert_eq!(code, 0, "{err}");
    let ticks: Vec<&str> = err.lines().filter(|l| l.starts_with("[fuzz ")).collect();
    assert!(ticks.len() >= 2, "a line a second:\n{err}");
    let t = ticks[0];
    assert!(
        t.starts_with("[fuzz 1s of 3s]")
            && t.contains(" executions (")
            && t.contains("/s), 0 finding(s), ")
            && t.ends_with(" left"),
        "{t}"
    );

    let (code, out, err) = fuzz("json", &["--message-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let evs = events(&out);
    let types = kinds(&evs);
    assert_eq!(types[0], "run-started");
    assert_eq!(evs[0]["seconds"], 3);
    assert_eq!(types[types.len() - 2..], ["fuzz-finished", "summary"]);
    let progress: Vec<&Value> = evs.iter().filter(|e| e["type"] == "progress").collect();
    assert!(progress.len() >= 2, "{out}");
    let executions: Vec<u64> = progress
        .iter()
        .map(|p| p["executions"].as_u64().expect("executions"))
        .collect();
    assert!(
        executions.windows(2).all(|w| w[0] <= w[1]),
        "{executions:?}"
    );
    assert!(progress.iter().all(|p| p["left"].as_f64() <= Some(3.0)));
    let finished = &evs[types.len() - 2];
    assert!(finished["executions"].as_u64() >= executions.last().copied());
    assert_eq!(
        evs.last().expect("summary")["cases"],
        finished["executions"]
    );
}

/// `script` (util-linux) runs `snapconf ARGS` on a pseudo-terminal with `TERM` set to
/// `term` (bash quotes the arguments into the one command line `script -c` takes); what the
/// terminal showed, or `None` (skip reported) without `script`.
fn on_a_terminal(term: &str, args: &[&str]) -> Option<String> {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("script").is_file()));
    if !found {
        support::skip::skip(
            "`script` is not installed: no pseudo-terminal for the dumb-terminal test",
            "apt-get install bsdutils (util-linux's script)",
        );
        return None;
    }
    let wrapper = [
        "bash",
        "-c",
        r#"exec script -qec "${*@Q}" /dev/null"#,
        "snapconf-on-a-pty",
    ];
    let (_, out, err) = support::Snapconf::wrapped(&wrapper, &support::snapconf_bin())
        .args(args)
        .env("TERM", term)
        .timeout(Duration::from_secs(300))
        .run();
    assert!(err.is_empty(), "script: {err}");
    Some(out)
}

#[test]
fn a_dumb_terminal_gets_plain_progress_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let args = |r: &str| {
        let r = dir.path().join(r).display().to_string();
        vec![
            "run".to_string(),
            "--cases".into(),
            "5".into(),
            "--seed".into(),
            "1".into(),
            "--producers".into(),
            "tar-rs".into(),
            "--extractors".into(),
            "reference".into(),
            "--progress-every".into(),
            "0".into(),
            "--report-dir".into(),
            r,
        ]
    };
    let dumb = args("dumb");
    let dumb: Vec<&str> = dumb.iter().map(String::as_str).collect();
    let Some(shown) = on_a_terminal("dumb", &dumb) else {
        return;
    };
    assert!(shown.contains("[cases 1/5"), "plain lines:\n{shown}");
    assert!(shown.contains("[cases 5/5]"), "{shown}");
    assert!(!shown.contains("\u{1b}[2K"), "no redrawn bar:\n{shown}");

    // The same on a terminal that redraws: the bar, not lines.
    let xterm = args("xterm");
    let xterm: Vec<&str> = xterm.iter().map(String::as_str).collect();
    let shown = on_a_terminal("xterm", &xterm).expect("script ran above");
    assert!(shown.contains("\u{1b}[2K"), "a redrawn bar:\n{shown}");
    assert!(!shown.contains("[cases 1/5"), "{shown}");
}
