//! Worker backends (one persistent process): broken workers, their `setsid` children, the
//! shipped Python worker and the README's Python example.

use super::*;

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
