//! `producers/backends/snapconf_worker.py`, the Python side of the worker protocol, through a
//! worker of a few lines: a sync capture, an async hydrate that takes `scratch`, a capture
//! that raises (a refusal with the exception's text, and the worker goes on), a path that
//! is not UTF-8 (`{"hex": ...}`), user code that prints (never into the protocol), an
//! unknown op, and the end of stdin (the worker exits 0).

use crate::common;

use common::skip;
use std::io::Write;
use std::process::{Command, Stdio};

const WORKER: &str = r#"
import os, sys
import snapconf_worker

def capture(root, archive, exclude):
    print("chatty backend")          # must not reach the protocol
    if exclude == ["boom"]:
        raise RuntimeError("refused: " + root)
    with open(archive, "wb") as f:
        f.write(os.fsencode(root) + b"|" + b",".join(os.fsencode(x) for x in exclude))

async def hydrate(root, archive, scratch):
    with open(os.path.join(scratch, "seen"), "wb") as f:
        f.write(os.fsencode(root))

snapconf_worker.serve(capture=capture, hydrate=hydrate)
"#;

#[test]
fn a_few_lines_of_python_serve_the_protocol() {
    let python = snapconf_producers::adapters::python::interpreter();
    if Command::new(python).arg("--version").output().is_err() {
        skip::skip("python3", "apt-get install python3");
        return;
    }
    let t = tempfile::tempdir().expect("tempdir");
    let dir = t.path();
    let backends = concat!(env!("CARGO_MANIFEST_DIR"), "/backends");
    let archive = dir.join("a.tar");
    let scratch = dir.join("scratch");
    std::fs::create_dir(&scratch).expect("mkdir");
    let requests = [
        serde_json::json!({"op": "capture", "root": "/r", "archive": archive, "exclude": ["x", {"hex": "ff2f79"}], "scratch": scratch}),
        serde_json::json!({"op": "capture", "root": "/r", "archive": archive, "exclude": ["boom"]}),
        serde_json::json!({"op": "hydrate", "root": {"hex": "2f68ff"}, "archive": archive, "exclude": [], "scratch": scratch}),
        serde_json::json!({"op": "list", "root": "/r", "archive": archive}),
    ];
    let mut child = Command::new(python)
        .args(["-c", WORKER])
        .env("PYTHONPATH", backends)
        // No `__pycache__` is written into the source tree.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python starts");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for r in &requests {
            writeln!(stdin, "{r}").expect("write a request");
        }
    }
    let out = child.wait_with_output().expect("worker ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {}: {stderr}", out.status);
    let answers: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON `{l}`: {e}")))
        .collect();
    assert_eq!(
        answers.len(),
        4,
        "one answer per request: {answers:?}\n{stderr}"
    );
    assert_eq!(answers[0]["ok"], true, "{answers:?}");
    assert_eq!(
        std::fs::read(&archive).expect("the capture wrote"),
        b"/r|x,\xff/y",
        "non-UTF-8 paths reach the code as their bytes"
    );
    assert_eq!(answers[1]["ok"], false);
    assert_eq!(answers[1]["error"], "RuntimeError: refused: /r");
    assert_eq!(answers[2]["ok"], true, "{answers:?}\n{stderr}");
    assert_eq!(
        std::fs::read(scratch.join("seen")).expect("the async hydrate ran"),
        b"/h\xff"
    );
    assert_eq!(answers[3]["ok"], false);
    assert!(
        answers[3]["error"]
            .as_str()
            .is_some_and(|e| e.contains("unknown op")),
        "{answers:?}"
    );
    assert!(
        stderr.contains("chatty backend"),
        "prints go to stderr: {stderr}"
    );
    assert!(
        stderr.contains("Traceback"),
        "a refusal logs its traceback: {stderr}"
    );
}
