//! node-tar as a plugged-in worker backend (`producers/backends/node-tar.toml`, on
//! `snapconf_worker.js`): the Node worker library speaks the protocol, `snapconf fuzz`
//! drives the worker persistently inside each fuzz worker's view (every archive runs, one
//! worker process per fuzz worker), and replays of node-tar 6.1.0's published bugs' shapes
//! are flagged while node-tar 7.x passes them.
//!
//! The npm package is installed by `producers/backends/install_node_tar.sh` into
//! `target/node-tar/<version>` (kept between runs: the view shows the host's `target/`,
//! never `/tmp`). Without node, npm, the registry or bubblewrap the tests skip, and fail
//! under `SNAPCONF_REQUIRE_TOOLS=1`.

use crate::support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use support::skip::skip;
use support::{raw_archive, RawMember};

fn backends_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../producers/backends")
}

fn toml() -> PathBuf {
    backends_dir().join("node-tar.toml")
}

/// Whether `tool --version` runs.
fn runs(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// node-tar `version` installed (once per test binary and version; kept in `target/`), the
/// package directory; `None` after a skip (no node, npm, registry or view).
fn node_tar(version: &str) -> Option<PathBuf> {
    static INSTALL: Mutex<()> = Mutex::new(());
    for (tool, hint) in [
        ("node", "apt-get install nodejs"),
        ("npm", "apt-get install npm"),
    ] {
        if !runs(tool) {
            skip(&format!("`{tool}` is not installed"), hint);
            return None;
        }
    }
    if !crate::support::view_or_skip("") {
        return None;
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("node-tar").join(version);
    let _one = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let out = Command::new("sh")
        .arg(backends_dir().join("install_node_tar.sh"))
        .arg(&dir)
        .arg(version)
        .output()
        .expect("sh runs");
    if !out.status.success() {
        skip(
            &format!(
                "node-tar {version} could not be installed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            "a reachable npm registry",
        );
        return None;
    }
    let pkg = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(pkg.join("package.json").is_file(), "{}", pkg.display());
    Some(pkg)
}

/// `snapconf fuzz --backend node-tar.toml --replay ARCHIVE` with node-tar at `pkg`: exit
/// code and stdout + stderr.
fn replay(pkg: &Path, archive: &Path, dir: &Path) -> (i32, String) {
    let (code, out, err) = support::Snapconf::new()
        .args(["fuzz", "--extractor", "node-tar", "--backend"])
        .arg(toml())
        .arg("--replay")
        .arg(archive)
        .arg("--report-dir")
        .arg(dir.join("report"))
        .env("SNAPCONF_NODE_TAR", pkg)
        .run();
    (code, format!("{out}{err}"))
}

/// The member list of a directory `d`, a link `d -> target` over it, and a file
/// `d/pwned`: the cache-poisoning shape (node-tar 6.1.0 keeps `d` as a known directory and
/// writes through the link).
fn dir_link_file(d: &str, target: &str) -> Vec<u8> {
    let dir = format!("{d}/");
    let file = format!("{d}/pwned");
    raw_archive(&[
        RawMember {
            flag: b'5',
            name: dir.as_bytes(),
            link: b"",
            data: b"",
        },
        RawMember {
            flag: b'2',
            name: d.as_bytes(),
            link: target.as_bytes(),
            data: b"",
        },
        RawMember {
            flag: b'0',
            name: file.as_bytes(),
            link: b"",
            data: b"pwned\n",
        },
    ])
}

/// Replays `archives` (name, bytes) on node-tar 6.1.0 (each a `containment` finding, exit
/// 1) and on the latest 7.x (none, exit 0).
fn flagged_on_6_1_0_not_on_7(archives: &[(&str, Vec<u8>)]) {
    let (Some(old), Some(new)) = (node_tar("6.1.0"), node_tar("7")) else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    for (name, bytes) in archives {
        let archive = work.path().join(format!("{name}.tar"));
        std::fs::write(&archive, bytes).expect("archive");
        let out = work.path().join(format!("{name}-6.1.0"));
        let (code, log) = replay(&old, &archive, &out);
        assert!(
            code == 1 && log.contains("reproduces: containment"),
            "node-tar 6.1.0, {name}: exit {code}: {log}"
        );
        assert!(
            !log.contains("could reach past the jail"),
            "a backend runs every archive in the view: {log}"
        );
        let out = work.path().join(format!("{name}-7"));
        let (code, log) = replay(&new, &archive, &out);
        assert!(
            code == 0 && log.contains("no longer shows a finding"),
            "node-tar 7.x, {name}: exit {code}: {log}"
        );
    }
}

/// node-tar 6.1.0's backslash bug (`a\b/` dir, `a\b` link out, `a\b/pwned`; the link aimed
/// at the view's `/out`, a directory that exists) and its absolute-name bug (`////abs/path`
/// keeps a leading `/` after one is stripped) are flagged on 6.1.0 and not on 7.x.
#[test]
fn node_tar_6_1_0_backslash_and_absolute_name_archives_are_flagged_and_7_is_not() {
    let absolute = raw_archive(&[RawMember {
        flag: b'0',
        name: b"////abs/path",
        link: b"",
        data: b"pwned\n",
    }]);
    flagged_on_6_1_0_not_on_7(&[
        ("backslash", dir_link_file("a\\b", "../../../../out")),
        ("absolute", absolute),
    ]);
}

/// The published shapes aimed at `../out`, and at `../absent`, which nothing in the view's
/// layout holds: node-tar 6.1.0 follows the link, and the write lands on the decoy
/// directory the fuzzer plants there for the archive (without it the write would fail
/// with ENOENT and be seen nowhere); node-tar 7.x writes nothing through it.
#[test]
fn node_tar_6_1_0_published_archives_aimed_at_a_missing_out_are_flagged() {
    flagged_on_6_1_0_not_on_7(&[
        ("backslash-out", dir_link_file("a\\b", "../out")),
        ("poison-out", dir_link_file("d", "../out")),
        ("poison-absent", dir_link_file("d", "../absent")),
    ]);
}

/// `snapconf fuzz --replay` of `bytes` with node-tar at `pkg`, named `name` in `work`.
fn replay_bytes(pkg: &Path, work: &Path, name: &str, bytes: &[u8]) -> (i32, String) {
    let archive = work.join(format!("{name}.tar"));
    std::fs::write(&archive, bytes).expect("archive");
    replay(pkg, &archive, &work.join(name))
}

/// One raw member: type flag, name, link target (no data).
fn links_then(members: &[(u8, &str, &str)]) -> Vec<u8> {
    let raw: Vec<RawMember<'_>> = members
        .iter()
        .map(|(flag, name, link)| RawMember {
            flag: *flag,
            name: name.as_bytes(),
            link: link.as_bytes(),
            data: if *flag == b'0' { b"pwned\n" } else { b"" },
        })
        .collect();
    raw_archive(&raw)
}

/// Property: node-tar 7.x keeps a link leaving the root and skips a later member under it
/// with a warning: nothing is written through the link, so no finding. These are the
/// shrunk `traversal` reproducers a seeds-only session of node-tar 7 found before the
/// check needed an observed write in the view (the cache-poisoning archive with its link
/// re-pointed, `d -> in` then `d -> ../out`; a climb to a decoy; a chain of `..` links; a
/// link into the host's read-only `/usr`). node-tar 6.1.0 skips these too (only its
/// directory cache, `d/` then `d -> ...`, makes it write through); neither is flagged.
#[test]
fn node_tar_7_skipping_a_member_under_a_link_out_is_not_a_traversal() {
    let (Some(old), Some(new)) = (node_tar("6.1.0"), node_tar("7")) else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let archives = [
        (
            "repointed",
            links_then(&[
                (b'2', "d", "in"),
                (b'2', "d", "../out"),
                (b'0', "d/pwned", ""),
            ]),
        ),
        (
            "climb",
            links_then(&[
                (b'2', "s", "../../../../../../../../tmp"),
                (b'0', "s/../home/user/decoy", ""),
            ]),
        ),
        (
            "chain",
            links_then(&[
                (b'2', "x3", "./x2/./.."),
                (b'2', "x4", "x3/.."),
                (b'5', "x4/home/user/ws/rootx/snapconf-new/", ""),
            ]),
        ),
        (
            "read-only",
            links_then(&[
                (b'2', "./.venv/bin/", "/usr/local/bin/python"),
                (b'2', "./.venv/bin/python3", "python"),
            ]),
        ),
    ];
    for (name, bytes) in &archives {
        for (version, pkg) in [("7", &new), ("6.1.0", &old)] {
            let (code, log) = replay_bytes(pkg, work.path(), &format!("{name}-{version}"), bytes);
            assert!(
                code == 0 && log.contains("no longer shows a finding"),
                "node-tar {version}, {name}: exit {code}: {log}"
            );
        }
    }
}

/// Property: a short seeded seeds-only session of node-tar 7.x (`--runs 30 --seed 1 -j 1`,
/// the same draws on any machine) finds no `traversal`; before the check needed an
/// observed write in the view, the same session found two.
#[test]
fn a_seeded_session_of_node_tar_7_finds_no_traversal() {
    let Some(pkg) = node_tar("7") else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let corpora = crate::host_safety::seeds_only_corpora(work.path());
    let report = work.path().join("report");
    let (code, out, err) = support::Snapconf::new()
        .args(["fuzz", "--extractor", "node-tar", "--backend"])
        .arg(toml())
        .args([
            "--runs",
            "30",
            "--time",
            "600",
            "--timeout",
            "5",
            "-j",
            "1",
            "--seed",
            "1",
        ])
        .arg("--corpora")
        .arg(&corpora)
        .arg("--report-dir")
        .arg(&report)
        .env("SNAPCONF_NODE_TAR", &pkg)
        .run();
    assert!(code == 0 || code == 1, "exit {code}: {out}{err}");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(report.join("fuzz.json")).expect("fuzz.json"),
    )
    .expect("fuzz.json parses");
    assert_eq!(summary["executions"], 30, "{summary}");
    assert!(
        summary["accepted"].as_u64() > Some(0),
        "node-tar accepted archives: {summary}"
    );
    assert_eq!(
        summary["hits"]["traversal"],
        serde_json::Value::Null,
        "no traversal on node-tar 7: {out}{err}"
    );
}

/// A session drives the node worker persistently: one worker process per fuzz worker
/// (`server_starts` is 2 at `-j 2`, plus one per worker killed at a hang), inside the
/// view, so no archive is skipped as unsafe for the host; many runs per start. A worker
/// killed at a hang is replaced by the spare made ahead (`spares_used`), and each hang
/// is charged to the class that drew it (`hung_by`).
#[test]
fn a_node_worker_backend_is_fuzzed_in_the_view_by_one_worker_per_fuzz_worker() {
    let Some(pkg) = node_tar("7") else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let report = work.path().join("report");
    let (code, out, err) = support::Snapconf::new()
        .args(["fuzz", "--extractor", "node-tar", "--backend"])
        .arg(toml())
        // A fixed number of executions (the time only a guard), so the draws, and the
        // hangs among them, are the same however loaded the machine is.
        .args([
            "--runs",
            "60",
            "--time",
            "600",
            "--timeout",
            "5",
            "-j",
            "2",
            "--seed",
            "3",
        ])
        .arg("--report-dir")
        .arg(&report)
        .env("SNAPCONF_NODE_TAR", &pkg)
        .run();
    assert!(code == 0 || code == 1, "exit {code}: {out}{err}");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(report.join("fuzz.json")).expect("fuzz.json"),
    )
    .expect("fuzz.json parses");
    assert_eq!(summary["skipped_unsafe_for_host"], 0, "{summary}");
    let starts = summary["server_starts"].as_u64().unwrap_or(0);
    let runs = summary["extractor_runs"].as_u64().unwrap_or(0);
    // One per fuzz worker, and one more each time one is killed at a hang (node-tar spins
    // on deep link paths), in the loop or while shrinking.
    assert!(starts >= 2, "one worker per fuzz worker: {summary}");
    assert!(
        runs >= 3 * starts,
        "persistent: far more runs than starts: {summary}"
    );
    assert!(
        summary["executions"].as_u64() == Some(60),
        "the session ends at --runs: {summary}"
    );
    let hangs: u64 = summary["hung_by"]
        .as_object()
        .map(|m| m.values().filter_map(serde_json::Value::as_u64).sum())
        .unwrap_or(0);
    let cut = summary["hangs_cut_short"].as_u64().unwrap_or(0);
    assert!(hangs >= cut, "every hang cut short is charged: {summary}");
    // node-tar never settles on the PATH_MAX-chain shapes (this seed draws some): the
    // worker tells each stall at once and goes on, so no hang costs a worker (a hang
    // that kills one is followed by the spare: `a_spare_that_changes_its_jail_...`).
    assert!(hangs >= 1, "this seed draws stalls: {summary}");
    assert_eq!(
        summary["spares_used"].as_u64(),
        Some(0),
        "{hangs} hangs, a worker replaced: {summary}"
    );
}

/// Runs `body` (JavaScript after `const { serve } = require(<snapconf_worker.js>);`) in
/// `node`, writes `requests` (one JSON line each) and closes stdin; the answers, each line
/// parsed as JSON, node's exit status and its stderr.
fn node_worker(
    body: &str,
    requests: &[String],
) -> (Vec<serde_json::Value>, std::process::ExitStatus, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("w.js");
    let lib = backends_dir().join("snapconf_worker.js");
    let lib = serde_json::to_string(&lib.display().to_string()).expect("json");
    std::fs::write(
        &script,
        format!("const {{ serve }} = require({lib});\n{body}"),
    )
    .expect("script");
    let mut child = Command::new("node")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node starts");
    let mut stdin = child.stdin.take().expect("stdin");
    for r in requests {
        writeln!(stdin, "{r}").expect("write");
    }
    drop(stdin);
    let out = child.wait_with_output().expect("node ends");
    let answers = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    (
        answers,
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `snapconf_worker.js` speaks the protocol: answers in order, a `{"hex"}` path arrives as
/// the raw bytes, a throw is a refusal naming the error, the scratch is passed last, and
/// what the backend prints goes to stderr.
#[test]
fn the_node_worker_library_answers_the_protocol() {
    if !runs("node") {
        skip("`node` is not installed", "apt-get install nodejs");
        return;
    }
    let body = r#"serve({
  hydrate: async (root, archive, scratch) => {
    console.log("noise");
    if (Buffer.isBuffer(root)) throw new RangeError("bytes " + root.toString("hex") + " " + scratch);
    if (archive === "bad") throw new Error("refused " + archive);
  },
});
"#;
    let requests = [
        r#"{"op":"hydrate","root":"/r","archive":"ok","exclude":[],"scratch":"/s"}"#,
        r#"{"op":"hydrate","root":"/r","archive":"bad","exclude":[],"scratch":"/s"}"#,
        r#"{"op":"hydrate","root":{"hex":"2fff"},"archive":"ok","exclude":[],"scratch":"/s"}"#,
        r#"{"op":"capture","root":"/r","archive":"a","exclude":[],"scratch":"/s"}"#,
    ]
    .map(String::from);
    let (answers, status, stderr) = node_worker(body, &requests);
    assert!(status.success(), "{status:?} {stderr}");
    assert_eq!(answers.len(), 4, "{answers:?}");
    assert_eq!(answers[0], serde_json::json!({"ok": true}));
    assert_eq!(
        answers[1],
        serde_json::json!({"ok": false, "error": "Error: refused bad"})
    );
    assert_eq!(
        answers[2],
        serde_json::json!({"ok": false, "error": "RangeError: bytes 2fff /s"})
    );
    assert_eq!(answers[3]["ok"], false, "no capture given: {answers:?}");
    assert!(stderr.contains("noise"), "{stderr}");
}

/// A worker's start is part of the proof that a kept jail is clean: the whole jail is
/// compared before and after each server start (and its warm-up request), so a worker
/// that writes into the view while it starts (here `/planted-at-start`, a new entry of
/// the jail) is never absorbed into the next execution's "before": the jail is laid out
/// again, and when the new one changes too the session stops (exit 4) saying so.
/// The same worker that plants nothing fuzzes normally.
#[test]
fn a_worker_that_changes_its_jail_while_starting_is_not_trusted() {
    if !runs("node") {
        skip("`node` is not installed", "apt-get install nodejs");
        return;
    }
    if !crate::support::view_or_skip("") {
        return;
    }
    let work = tempfile::tempdir().expect("tempdir");
    let lib = serde_json::to_string(
        &backends_dir()
            .join("snapconf_worker.js")
            .display()
            .to_string(),
    )
    .expect("json");
    let session = |plant: bool| {
        let name = if plant { "planting" } else { "quiet" };
        let dir = work.path().join(name);
        std::fs::create_dir_all(&dir).expect("dir");
        let planting = if plant {
            r#"require("fs").writeFileSync("/planted-at-start", "x");"#
        } else {
            ""
        };
        std::fs::write(
            dir.join("w.js"),
            format!("{planting}\nrequire({lib}).serve({{ hydrate: async () => {{}} }});\n"),
        )
        .expect("worker");
        let toml = dir.join("w.toml");
        std::fs::write(
            &toml,
            format!(
                "name = \"{name}\"\nmode = \"worker\"\nworker = [\"node\", \"{{dir}}/w.js\"]\n"
            ),
        )
        .expect("toml");
        support::Snapconf::new()
            .args(["fuzz", "--extractor", name, "--backend"])
            .arg(&toml)
            .args(["--time", "3", "--timeout", "5", "-j", "1", "--seed", "3"])
            .arg("--report-dir")
            .arg(dir.join("report"))
            .run()
    };
    let (code, out, err) = session(true);
    assert!(
        code == 4 && err.contains("changes its jail while it starts"),
        "exit {code}: {out}{err}"
    );
    let (code, out, err) = session(false);
    assert!(code == 0 || code == 1, "exit {code}: {out}{err}");
}

/// A spare worker is trusted exactly as the first: its jail is compared before and after
/// its start, and once more in its first request's snapshot before. A worker that hangs on
/// every archive and, 400 ms after its warm-up, writes `/planted-idle` (a new entry of its
/// jail): a spare that did so while waiting is found changed and dropped (counted as a view
/// laid out again) and the archive runs in a new jail instead; one taken
/// into use sooner plants during a request, where the execution's own check sees it (a
/// `containment` finding). The same worker that plants nothing is replaced by its spare
/// after each hang and no view is laid out again.
#[test]
fn a_spare_that_changes_its_jail_while_waiting_is_not_used() {
    if !runs("node") {
        skip("`node` is not installed", "apt-get install nodejs");
        return;
    }
    if !crate::support::view_or_skip("") {
        return;
    }
    let work = tempfile::tempdir().expect("tempdir");
    let lib = serde_json::to_string(
        &backends_dir()
            .join("snapconf_worker.js")
            .display()
            .to_string(),
    )
    .expect("json");
    let session = |plant: bool| {
        let name = if plant { "idle-planting" } else { "idle-quiet" };
        let dir = work.path().join(name);
        std::fs::create_dir_all(&dir).expect("dir");
        let planting = if plant {
            r#"setTimeout(() => require("fs").writeFileSync("/planted-idle", "x"), 400);"#
        } else {
            ""
        };
        // The warm-up (an archive in the scratch named `snapconf-warm-up.tar`) is
        // answered; every other request hangs until the worker is killed (a timer keeps
        // the event loop busy, so it is no stall the library would tell).
        std::fs::write(
            dir.join("w.js"),
            format!(
                r#"require({lib}).serve({{ hydrate: async (root, archive) => {{
  if (String(archive).includes("snapconf-warm-up")) {{ {planting} return; }}
  await new Promise(() => setInterval(() => {{}}, 1000));
}} }});
"#
            ),
        )
        .expect("worker");
        let toml = dir.join("w.toml");
        std::fs::write(
            &toml,
            format!(
                "name = \"{name}\"\nmode = \"worker\"\nworker = [\"node\", \"{{dir}}/w.js\"]\n"
            ),
        )
        .expect("toml");
        let report = dir.join("report");
        let (code, out, err) = support::Snapconf::new()
            .args(["fuzz", "--extractor", name, "--backend"])
            .arg(&toml)
            .args(["--runs", "6", "--time", "600", "--timeout", "2", "-j", "1"])
            .args(["--seed", "3", "--shrink-runs", "2"])
            .arg("--report-dir")
            .arg(&report)
            .run();
        assert!(code == 0 || code == 1, "{name}: exit {code}: {out}{err}");
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(report.join("fuzz.json")).expect("fuzz.json"),
        )
        .expect("fuzz.json parses");
        let n = |k: &str| summary[k].as_u64().unwrap_or(0);
        (n("spares_used"), n("view_rebuilds"), summary.to_string())
    };
    let (_, rebuilt, summary) = session(true);
    assert!(
        rebuilt >= 1,
        "no spare that planted while waiting was dropped: {summary}"
    );
    let (used, rebuilt, summary) = session(false);
    assert!(
        used >= 1 && rebuilt == 0,
        "the quiet spare replaces the hung worker: {summary}"
    );
}

/// The Node worker library answers an operation whose promise can no longer settle as
/// stalled, and goes on with the next request; an operation that waits on a timer or a
/// file request is waited for. (Without the watch, the never-settling request leaves the
/// event loop empty once stdin closes: node ends with the later answers unwritten.)
#[test]
fn the_node_worker_library_answers_a_stalled_operation_and_goes_on() {
    if !runs("node") {
        skip("`node` is not installed", "apt-get install nodejs");
        return;
    }
    let body = r#"const fs = require("fs");
serve({
  hydrate: async (root, archive) => {
    if (archive === "never") return new Promise(() => {});
    if (archive === "timer") return new Promise((resolve) => setTimeout(resolve, 300));
    if (archive === "file") { await fs.promises.readFile(__filename); return; }
    if (archive === "chain") { for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r)); return; }
  },
});
"#;
    let requests = ["never", "timer", "file", "chain", "never", "timer"].map(|a| {
        format!(r#"{{"op":"hydrate","root":"/r","archive":"{a}","exclude":[],"scratch":"/s"}}"#)
    });
    let (answers, status, stderr) = node_worker(body, &requests);
    let stalled = |a: &serde_json::Value| a["stalled"] == true && a["ok"] == false;
    assert_eq!(answers.len(), 6, "{answers:?} {status:?} {stderr}");
    assert!(stalled(&answers[0]), "{answers:?}");
    for a in &answers[1..4] {
        assert_eq!(*a, serde_json::json!({"ok": true}), "{answers:?}");
    }
    assert!(stalled(&answers[4]), "{answers:?}");
    assert_eq!(answers[5], serde_json::json!({"ok": true}), "{answers:?}");
    assert!(
        stderr.contains("Stalled: the hydrate operation"),
        "{stderr}"
    );
}

/// node-tar 7.x never settles `tar.x` on an archive whose directory passes PATH_MAX (every
/// draw of the `path-max-chain` class; one in five attack draws at the start of a
/// session): the worker says so at once, and the replay reports it as a `hang` that
/// stalled, not one that timed out.
#[test]
fn node_tar_7_never_settling_is_a_hang_told_by_the_worker() {
    let Some(pkg) = node_tar("7") else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let (bytes, _) = snapconf_harness::fuzz::attack_of(
        snapconf_harness::fuzz::AttackClass::PathMaxChain,
        &mut snapconf_tarbytes::Rng::new(1),
    );
    let (code, out) = replay_bytes(&pkg, work.path(), "chain", &bytes);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("reproduces: hang") && out.contains("hydrate request stalled"),
        "{out}"
    );
}
