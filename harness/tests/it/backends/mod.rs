//! `snapconf run --backend FILE`: plugged-in backends end to end (command templates, the
//! persistent worker, the validate split pipeline), through the real binary.
//!
//! Every run uses a private report dir and jail dir under one temp dir; every worker and
//! helper process carries that temp dir's path in its argv, so `/proc` can show that none
//! is left behind.
//!
//! One file a topic: `templates` (backends of command templates, malformed backend files,
//! stragglers), `workers` (the persistent worker), `split` (the validate split pipeline and
//! a backend's reproducer) and `profiles` (a backend held to its `[profile]`). The run
//! helpers they share are here.

mod profiles;
mod split;
mod templates;
mod workers;

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
