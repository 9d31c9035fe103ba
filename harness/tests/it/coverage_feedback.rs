//! Coverage feedback (`snapconf fuzz --coverage`): the Python server reports the lines of
//! `tarfile` each request ran (the same for the same archive, different for archives that
//! take other paths), a guided session keeps the inputs that reached new code, and
//! `--coverage on` for an extractor that reports none is a usage error before the session.

use crate::support;

use snapconf_producers::coverage::COVERAGE_VAR;
use snapconf_producers::process::server::Server;
use snapconf_producers::{Availability, Extractor, HydrateRequest, Outcome, PythonFilterExtractor};
use snapconf_tarbytes::raw::RawTar;
use std::path::Path;
use std::time::Duration;
use support::skip::skip;

/// python-data, when its Python is here (else after a skip).
fn python_data() -> Option<PythonFilterExtractor> {
    let ex = PythonFilterExtractor::DATA;
    if let Availability::Unavailable { install_hint, .. } = ex.availability() {
        skip("python3 with tarfile filters", &install_hint);
        return None;
    }
    Some(ex)
}

/// Hydrate `archive` (benign) into a fresh root under `dir` through `server`: the outcome
/// and the coverage ids the answer carried.
fn served(
    ex: &PythonFilterExtractor,
    server: &mut Server,
    dir: &Path,
    n: usize,
    archive: &[u8],
) -> (Outcome, Option<Vec<u32>>) {
    let file = dir.join(format!("a{n}.tar"));
    std::fs::write(&file, archive).expect("write the archive");
    let root = dir.join(format!("root{n}"));
    let scratch = dir.join(format!("scratch{n}"));
    std::fs::create_dir(&root).expect("root");
    std::fs::create_dir(&scratch).expect("scratch");
    let req = HydrateRequest {
        archive: &file,
        root: &root,
        scratch: &scratch,
        limits: None,
        timeout: Duration::from_secs(30),
    };
    let outcome = ex.hydrate_served(&req, server).expect("the request runs");
    (outcome, server.take_coverage())
}

/// Two archives that take different paths through `tarfile` (a file alone; a file, a
/// directory and a symlink) give different ids, the second some the first never reached;
/// the same archive twice gives the same ids; a server not asked for coverage sends none.
#[test]
fn python_server_reports_the_lines_of_tarfile_each_archive_ran() {
    let Some(ex) = python_data() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = RawTar::new().file("a", b"hello\n").finish();
    let mut t = RawTar::new();
    t.file("a", b"hello\n").dir("d/").symlink("l", "a");
    let three = t.finish();
    let mut cmd = ex.server_command().expect("python-data has a server");
    cmd.env(COVERAGE_VAR, "1");
    let mut server = Server::start(&mut cmd, dir.path()).expect("the server starts");
    let (o1, a1) = served(&ex, &mut server, dir.path(), 1, &file);
    let (o2, a2) = served(&ex, &mut server, dir.path(), 2, &file);
    let (o3, b) = served(&ex, &mut server, dir.path(), 3, &three);
    for o in [&o1, &o2, &o3] {
        assert!(matches!(o, Outcome::Success), "{o:?}");
    }
    let (a1, a2, b) = (
        a1.expect("coverage of the first"),
        a2.expect("coverage of the second"),
        b.expect("coverage of the third"),
    );
    assert!(a1.len() > 50, "tarfile ran more lines than {}", a1.len());
    assert_eq!(a1, a2, "the same archive, the same lines");
    assert_ne!(a1, b, "another path, other lines");
    assert!(
        b.iter().any(|id| !a1.contains(id)),
        "a directory and a symlink reach lines a lone file does not"
    );
    drop(server);
    let mut blind = ex.server_command().expect("python-data has a server");
    blind.env_remove(COVERAGE_VAR);
    let mut server = Server::start(&mut blind, dir.path()).expect("the server starts");
    let (o, none) = served(&ex, &mut server, dir.path(), 4, &file);
    assert!(matches!(o, Outcome::Success), "{o:?}");
    assert_eq!(none, None, "not asked, no coverage");
}

/// `--coverage on` for an extractor that reports none (the reference) is a usage error
/// (exit 2) naming it, before the session: no report directory is made.
#[test]
fn coverage_on_without_coverage_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("report");
    let (code, _, err) = support::Snapconf::new()
        .args(["fuzz", "--extractor", "reference", "--coverage", "on"])
        .args(["--time", "5", "--seed", "1", "-j", "1", "--report-dir"])
        .arg(&report)
        .run();
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--coverage on") && err.contains("`reference` reports no coverage"),
        "{err}"
    );
    assert!(!report.exists(), "nothing ran");
}

/// A guided python-data session keeps inputs that reached new lines of `tarfile` (its
/// corpus is not empty and every kept input brought at least one id), and says so; a blind
/// one reports no coverage.
#[test]
fn a_guided_session_keeps_inputs_that_reach_new_code() {
    if python_data().is_none() {
        return;
    }
    if !crate::support::view_or_skip("") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let session = |mode: &str| {
        let report = dir.path().join(mode);
        let (code, _, err) = support::Snapconf::new()
            .args(["fuzz", "--extractor", "python-data", "--coverage", mode])
            .args(["--time", "4", "--seed", "3", "-j", "1", "--timeout", "5"])
            .arg("--report-dir")
            .arg(&report)
            .run();
        assert!(code == 0 || code == 1, "exit {code}: {err}");
        let text = std::fs::read_to_string(report.join("fuzz.json")).expect("fuzz.json");
        let json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        (json, err)
    };
    let (guided, err) = session("on");
    let c = &guided["coverage"];
    let n = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("{k} in {c}"));
    assert!(n("executions") > 0, "{c}");
    assert!(n("ids") > 50, "{c}");
    assert!(n("kept") >= 1 && n("corpus") >= 1, "{c}");
    assert!(
        n("kept") <= n("ids"),
        "each input kept brought a new id: {c}"
    );
    assert!(err.contains("coverage feedback:"), "{err}");
    let (blind, _) = session("off");
    assert!(blind.get("coverage").is_none(), "{blind}");
}

/// The answers of a worker started as `cmd` (with `SNAPCONF_COVERAGE=1`) to hydrate
/// requests for `archives` (benign), each into a fresh root under `dir`: their
/// `coverage` fields.
fn worker_coverage(
    mut cmd: std::process::Command,
    dir: &Path,
    archives: &[&[u8]],
) -> Vec<Option<String>> {
    use std::io::{BufRead, Write};
    let mut lines = String::new();
    for (i, bytes) in archives.iter().enumerate() {
        let archive = dir.join(format!("w{i}.tar"));
        let root = dir.join(format!("wroot{i}"));
        let scratch = dir.join(format!("wscratch{i}"));
        std::fs::write(&archive, bytes).expect("write the archive");
        std::fs::create_dir(&root).expect("root");
        std::fs::create_dir(&scratch).expect("scratch");
        let request = serde_json::json!({
            "op": "hydrate", "root": root, "archive": archive, "exclude": [], "scratch": scratch,
        });
        lines.push_str(&format!("{request}\n"));
    }
    let mut child = cmd
        .env(COVERAGE_VAR, "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the worker starts");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(lines.as_bytes()).expect("requests");
    drop(stdin);
    let out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let answers: Vec<Option<String>> = out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(&l.expect("a line")).expect("JSON");
            assert_eq!(v["ok"], true, "{v}");
            v["coverage"].as_str().map(str::to_owned)
        })
        .collect();
    assert!(child.wait().expect("the worker ends").success());
    answers
}

/// The Python and Node worker libraries answer with coverage when asked: the same
/// archive twice gives the same ids, an archive that takes other paths other ids.
#[test]
fn worker_libraries_report_coverage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let backends = Path::new(env!("CARGO_MANIFEST_DIR")).join("../producers/backends");
    let file = RawTar::new().file("a", b"hello\n").finish();
    let mut t = RawTar::new();
    t.file("a", b"hello\n").dir("d/").symlink("l", "a");
    let three = t.finish();
    if python_data().is_some() {
        let mut cmd =
            std::process::Command::new(snapconf_producers::adapters::python::interpreter());
        cmd.args(["-I", "-B"]).arg(backends.join("minimal.py"));
        std::fs::create_dir(dir.path().join("py")).expect("dir");
        let got = worker_coverage(cmd, &dir.path().join("py"), &[&file, &file, &three]);
        assert!(
            got.iter()
                .all(|c| c.as_ref().is_some_and(|c| c.len() > 400)),
            "{got:?}"
        );
        assert_eq!(got[0], got[1], "the same archive, the same lines");
        assert_ne!(got[0], got[2], "another path, other lines");
    }
    let node = std::process::Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        skip("`node` is not installed", "apt-get install nodejs");
        return;
    }
    // A tiny extractor with a branch on the archive's size.
    let js = dir.path().join("branchy.js");
    std::fs::write(
        &js,
        format!(
            "const fs = require('fs');\n\
             const {{ serve }} = require({:?});\n\
             function big(root) {{ fs.writeFileSync(root + '/big', 'x'); }}\n\
             function small(root) {{ fs.writeFileSync(root + '/small', 'x'); }}\n\
             serve({{ hydrate: (root, archive) => fs.statSync(archive).size > 2048 ? big(root) : small(root) }});\n",
            backends.join("snapconf_worker.js")
        ),
    )
    .expect("write the script");
    let mut cmd = std::process::Command::new("node");
    cmd.arg(&js);
    std::fs::create_dir(dir.path().join("js")).expect("dir");
    let got = worker_coverage(cmd, &dir.path().join("js"), &[&file, &file, &three]);
    assert!(
        got.iter()
            .all(|c| c.as_ref().is_some_and(|c| !c.is_empty())),
        "{got:?}"
    );
    assert_eq!(got[0], got[1], "the same archive, the same blocks");
    assert_ne!(got[0], got[2], "the other branch, other blocks");
}
