//! Fuzz throughput per built-in extractor: `snapconf fuzz --extractor X` for `-j 1` and
//! `-j 2`, and for an extractor with a persistent server (python-data, python-tar, the
//! reference) also with `--one-shot`, all in one run and interleaved round by round, so
//! that every figure sees the same (shared, noisy) machine. Prints executions per second
//! (the fuzz loop's archives, as the session's summary counts them), extractor runs per
//! second (shrinking included), and the ratios `-j 2 / -j 1` and server / one-shot.
//! Run with `cargo bench -p snapconf-harness --bench fuzz_rate`.
//!
//! `SNAPCONF_BENCH_TIME` sets each session's seconds (default 10), `SNAPCONF_BENCH_ROUNDS`
//! the rounds (default 1), `SNAPCONF_BENCH_SEED` the seed (default 5),
//! `SNAPCONF_BENCH_EXTRACTORS` the extractors (comma-separated; default every built-in one
//! that is available here), `SNAPCONF_BENCH_ARGS` extra arguments for every session (say
//! `--timeout 2`: python-tar's FIFO members hang each until the timeout). Sessions run
//! over the checkout's `corpora/`. Goals (issue 18):
//! python-data at least 200 executions/s with `-j 2`, the reference at least 1,000/s.
//!
//! `node-tar` is a plugged-in worker backend (`producers/backends/node-tar.toml`, node-tar
//! 7.x installed by `install_node_tar.sh` into `target/node-tar/7`; skipped without node
//! and npm): "server" is its persistent worker in each fuzz worker's view, "one-shot" one
//! `node` start per archive. Its ratio to python-data at `-j 2` is printed last. Goal
//! (issue 29): at least 100 executions/s at `-j 2`. For each persistent session a line says
//! where its time went (mean request, server starts, hangs, seconds per phase; from
//! `fuzz.json`): for node-tar, hangs and worker starts, not requests (`fuzz/README.md`,
//! "Rate of a node worker backend", has the figures).
//!
//! `SNAPCONF_BENCH_COVERAGE=1` measures coverage feedback instead ([`coverage_vs_blind`]):
//! python-data and the node-tar 6.1.0 backend (installed into `target/node-tar/6.1.0`),
//! each over seeds 1, 2 and 3, `--coverage off` and `--coverage on` interleaved, `-j 1`,
//! every session the same number of executions (`--runs`, `SNAPCONF_BENCH_RUNS`, default
//! 200; the time only a guard): causes found, seconds to the first, executions/s and
//! coverage figures, side by side.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Extractors with a persistent server: also measured with `--one-shot`.
const SERVED: [&str; 4] = ["reference", "python-data", "python-tar", NODE_TAR];
/// The plugged-in node-tar worker backend (see the module docs).
const NODE_TAR: &str = "node-tar";
/// The extractors measured by default.
const DEFAULT: [&str; 7] = [
    NODE_TAR,
    "reference",
    "python-data",
    "python-tar",
    "gnu-tar",
    "bsdtar",
    "busybox-tar",
];

/// One session's figures: executions and extractor runs, per second of wall time.
#[derive(Clone, Copy, Default)]
struct Rate {
    executions: f64,
    runs: f64,
}

fn main() {
    let var = |name: &str| std::env::var(name).ok();
    let time: u64 = var("SNAPCONF_BENCH_TIME")
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let rounds: u32 = var("SNAPCONF_BENCH_ROUNDS")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let seed = var("SNAPCONF_BENCH_SEED").unwrap_or_else(|| "5".into());
    let chosen: Vec<String> = var("SNAPCONF_BENCH_EXTRACTORS")
        .map(|v| v.split(',').map(str::to_owned).collect())
        .unwrap_or_else(|| DEFAULT.iter().map(|s| (*s).to_owned()).collect());
    let extra: Vec<String> = var("SNAPCONF_BENCH_ARGS")
        .map(|a| a.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    if var("SNAPCONF_BENCH_COVERAGE").is_some_and(|v| v == "1") {
        let runs: u64 = var("SNAPCONF_BENCH_RUNS")
            .and_then(|v| v.parse().ok())
            .unwrap_or(200);
        coverage_vs_blind(runs, &extra);
        return;
    }
    let bin = env!("CARGO_BIN_EXE_snapconf");
    let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora");
    let mut rates: BTreeMap<(String, &str, &str), Vec<Rate>> = BTreeMap::new();
    let mut skipped = Vec::new();
    // The node-tar backend: its description and the package, installed once.
    let node_tar = chosen
        .iter()
        .any(|e| e == NODE_TAR)
        .then(|| install_node_tar("7"))
        .flatten();
    if chosen.iter().any(|e| e == NODE_TAR) && node_tar.is_none() {
        skipped.push(NODE_TAR.to_owned());
    }
    for round in 0..rounds {
        for ex in &chosen {
            if skipped.contains(ex) {
                continue;
            }
            let modes: &[&str] = if SERVED.contains(&ex.as_str()) {
                &["server", "one-shot"]
            } else {
                &["one-shot"]
            };
            for mode in modes {
                for jobs in ["1", "2"] {
                    let dir = match tempfile::tempdir() {
                        Ok(d) => d,
                        Err(e) => {
                            eprintln!("bench: cannot create a report directory: {e}");
                            std::process::exit(3);
                        }
                    };
                    let mut cmd = Command::new(bin);
                    cmd.args(["fuzz", "--extractor", ex, "--seed", &seed, "-j", jobs])
                        .args(["--time", &time.to_string()])
                        .arg("--corpora")
                        .arg(&corpora)
                        .arg("--report-dir")
                        .arg(dir.path())
                        .args(&extra);
                    if *mode == "one-shot" && SERVED.contains(&ex.as_str()) {
                        cmd.arg("--one-shot");
                    }
                    if let (true, Some(pkg)) = (ex == NODE_TAR, &node_tar) {
                        cmd.arg("--backend")
                            .arg(backends_dir().join("node-tar.toml"))
                            .env("SNAPCONF_NODE_TAR", pkg);
                    }
                    let started = Instant::now();
                    let out = match cmd.output() {
                        Ok(o) => o,
                        Err(e) => {
                            eprintln!("bench: cannot run `{bin}`: {e}");
                            std::process::exit(3);
                        }
                    };
                    let took = started.elapsed().as_secs_f64();
                    let code = out.status.code().unwrap_or(-1);
                    if code == 3 {
                        eprintln!(
                            "bench: `{ex}` did not run (exit 3; not available here?); skipped: {}",
                            String::from_utf8_lossy(&out.stderr).trim()
                        );
                        skipped.push(ex.clone());
                        break;
                    }
                    if code != 0 && code != 1 {
                        eprintln!(
                            "bench: `{ex}` -j {jobs} exited {code}:\n{}",
                            String::from_utf8_lossy(&out.stderr)
                        );
                        std::process::exit(3);
                    }
                    let summary = read_summary(&dir.path().join("fuzz.json"));
                    if let Some(line) = where_time_went(&dir.path().join("fuzz.json")) {
                        println!("round {round}: {ex:<12} {mode:<8} -j {jobs}: {line}");
                    }
                    let rate = Rate {
                        executions: summary.0 / took,
                        runs: summary.1 / took,
                    };
                    println!(
                        "round {round}: {ex:<12} {mode:<8} -j {jobs}: {:>7.0} executions/s, {:>7.0} runs/s ({:.1} s)",
                        rate.executions, rate.runs, took
                    );
                    rates
                        .entry((ex.clone(), mode, jobs))
                        .or_default()
                        .push(rate);
                }
                if skipped.contains(ex) {
                    break;
                }
            }
        }
    }
    let mean = |v: &[Rate]| {
        let n = v.len().max(1) as f64;
        Rate {
            executions: v.iter().map(|r| r.executions).sum::<f64>() / n,
            runs: v.iter().map(|r| r.runs).sum::<f64>() / n,
        }
    };
    let get = |ex: &str, mode: &'static str, jobs: &'static str| {
        rates.get(&(ex.to_owned(), mode, jobs)).map(|v| mean(v))
    };
    println!();
    println!(
        "| extractor | path | `-j 1` | `-j 2` | `-j 2` / `-j 1` | runs/s `-j 1` | runs/s `-j 2` |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
    for ex in &chosen {
        for mode in ["server", "one-shot"] {
            let (Some(a), Some(b)) = (get(ex, mode, "1"), get(ex, mode, "2")) else {
                continue;
            };
            println!(
                "| `{ex}` | {mode} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} |",
                a.executions,
                b.executions,
                b.executions / a.executions.max(1e-9),
                a.runs,
                b.runs
            );
        }
    }
    println!();
    for ex in &chosen {
        for jobs in ["1", "2"] {
            if let (Some(s), Some(o)) = (get(ex, "server", jobs), get(ex, "one-shot", jobs)) {
                println!(
                    "{ex} -j {jobs}: server / one-shot = {:.1} (executions), {:.1} (runs)",
                    s.executions / o.executions.max(1e-9),
                    s.runs / o.runs.max(1e-9)
                );
            }
        }
    }
    if let (Some(n), Some(p)) = (
        get(NODE_TAR, "server", "2"),
        get("python-data", "server", "2"),
    ) {
        println!(
            "node-tar worker -j 2: {:.0} executions/s = {:.2} x python-data's server (goal: >= 100/s)",
            n.executions,
            n.executions / p.executions.max(1e-9)
        );
    }
}

/// The directory of the shipped backend descriptions.
fn backends_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../producers/backends")
}

/// node-tar `version` installed into `target/node-tar/<version>` (kept), its package
/// directory; `None` (said on stderr) when it cannot be.
fn install_node_tar(version: &str) -> Option<std::path::PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let out = Command::new("sh")
        .arg(backends_dir().join("install_node_tar.sh"))
        .arg(target.join("node-tar").join(version))
        .arg(version)
        .output();
    match out {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).trim().into()),
        Ok(o) => {
            eprintln!(
                "bench: node-tar not installed, skipped: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            None
        }
        Err(e) => {
            eprintln!("bench: cannot run sh for node-tar, skipped: {e}");
            None
        }
    }
}

/// Where a persistent session's time went, from its `fuzz.json`: the mean request
/// (hydrate phase per extractor run), the servers started (spares included) and the time
/// the workers waited per start (the start phase: a start on the worker's path, a backend
/// worker's warm-up included, or the wait for a spare still starting), the spares used,
/// and the hangs (each costs the hang cut). `None` for a one-shot session (no phases) or
/// an unreadable file.
fn where_time_went(path: &Path) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    let n = |k: &str| v.get(k).and_then(serde_json::Value::as_f64).unwrap_or(0.0);
    let phase = |k: &str| {
        v["phases"]
            .get(k)
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0)
    };
    let starts = n("server_starts");
    if starts == 0.0 {
        return None;
    }
    let hung: f64 = v["hung_by"]
        .as_object()
        .map(|m| m.values().filter_map(serde_json::Value::as_f64).sum())
        .unwrap_or(0.0);
    let hangs = v["hits"]
        .get("hang")
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(0.0)
        + n("hangs_cut_short");
    Some(format!(
        "{:.1} ms a request, {starts:.0} server start(s), {:.0} ms waited a start, {:.0} spare(s) used, \
         {hangs:.0} hang(s) ({hung:.0} in the loop, {:.0} cut short); \
         seconds hydrate {:.1}, start {:.1}, before {:.1}, judge {:.1}, reset {:.1}",
        phase("hydrate") * 1e3 / n("extractor_runs").max(1.0),
        phase("start") * 1e3 / starts,
        n("spares_used"),
        n("hangs_cut_short"),
        phase("hydrate"),
        phase("start"),
        phase("before"),
        phase("judge"),
        phase("reset"),
    ))
}

/// `(executions, extractor_runs)` of a session's `fuzz.json`.
fn read_summary(path: &Path) -> (f64, f64) {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("bench: cannot read `{}`: {e}", path.display());
            std::process::exit(3);
        }
    };
    let v: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("bench: `{}` is not JSON: {e}", path.display());
            std::process::exit(3);
        }
    };
    let n = |k: &str| v.get(k).and_then(serde_json::Value::as_f64).unwrap_or(0.0);
    (n("executions"), n("extractor_runs"))
}

/// One session's figures in [`coverage_vs_blind`].
#[derive(Clone, Debug, Default)]
struct Guided {
    /// New causes found (known ones not counted).
    causes: usize,
    /// Seconds to the first cause, if any.
    first: Option<f64>,
    /// Executions per second of wall time.
    rate: f64,
    /// Milliseconds per request to the persistent worker (the `hydrate` phase over the
    /// extractor runs, shrinking included): what coverage costs.
    hydrate_ms: f64,
    /// Distinct coverage ids seen, inputs kept for new code (guided sessions).
    ids: u64,
    kept: u64,
}

/// Coverage-guided against blind sessions of `runs` executions each (see the module docs):
/// one table row per extractor and seed, then each extractor's totals and its guided /
/// blind rate.
fn coverage_vs_blind(runs: u64, extra: &[String]) {
    let bin = env!("CARGO_BIN_EXE_snapconf");
    let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora");
    let mut subjects: Vec<(&str, Option<std::path::PathBuf>)> = vec![("python-data", None)];
    match install_node_tar("6.1.0") {
        Some(pkg) => subjects.push((NODE_TAR, Some(pkg))),
        None => eprintln!("bench: node-tar 6.1.0 skipped"),
    }
    let seeds = ["1", "2", "3"];
    let mut rows: Vec<(String, &str, Guided, Guided)> = Vec::new();
    for (ex, pkg) in &subjects {
        for seed in seeds {
            let mut pair: [Guided; 2] = Default::default();
            for (i, mode) in ["off", "on"].iter().enumerate() {
                let dir = match tempfile::tempdir() {
                    Ok(d) => d,
                    Err(e) => {
                        eprintln!("bench: cannot create a report directory: {e}");
                        std::process::exit(3);
                    }
                };
                let mut cmd = Command::new(bin);
                cmd.args(["fuzz", "--extractor", ex, "--seed", seed, "-j", "1"])
                    .args(["--coverage", mode, "--runs", &runs.to_string()])
                    .args(["--time", "3600"])
                    .arg("--corpora")
                    .arg(&corpora)
                    .arg("--report-dir")
                    .arg(dir.path())
                    .args(extra);
                if let Some(pkg) = pkg {
                    cmd.arg("--backend")
                        .arg(backends_dir().join("node-tar.toml"))
                        .env("SNAPCONF_NODE_TAR", pkg);
                }
                let started = Instant::now();
                let out = match cmd.output() {
                    Ok(o) => o,
                    Err(e) => {
                        eprintln!("bench: cannot run `{bin}`: {e}");
                        std::process::exit(3);
                    }
                };
                let took = started.elapsed().as_secs_f64();
                let code = out.status.code().unwrap_or(-1);
                if code != 0 && code != 1 {
                    eprintln!(
                        "bench: `{ex}` --coverage {mode} exited {code}:\n{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    std::process::exit(3);
                }
                pair[i] = read_guided(&dir.path().join("fuzz.json"), took);
                println!(
                    "{ex:<12} seed {seed} coverage {mode:<3}: {} cause(s), first at {}, {:.1} executions/s, {:.1} ms per request, {} ids, {} kept",
                    pair[i].causes,
                    pair[i].first.map_or("-".into(), |f| format!("{f:.1} s")),
                    pair[i].rate,
                    pair[i].hydrate_ms,
                    pair[i].ids,
                    pair[i].kept
                );
            }
            let [blind, guided] = pair;
            rows.push(((*ex).to_owned(), seed, blind, guided));
        }
    }
    let first = |g: &Guided| g.first.map_or("-".into(), |f| format!("{f:.1}"));
    println!();
    println!("| extractor | seed | causes blind | causes guided | first cause blind (s) | first cause guided (s) | exec/s blind | exec/s guided | ms/request blind | ms/request guided | ids | kept |");
    println!(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for (ex, seed, b, g) in &rows {
        println!(
            "| `{ex}` | {seed} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} |",
            b.causes,
            g.causes,
            first(b),
            first(g),
            b.rate,
            g.rate,
            b.hydrate_ms,
            g.hydrate_ms,
            g.ids,
            g.kept
        );
    }
    println!();
    for (ex, _) in &subjects {
        let mine: Vec<_> = rows.iter().filter(|r| r.0 == *ex).collect();
        let sum = |f: &dyn Fn(&Guided) -> f64, guided: bool| -> f64 {
            mine.iter()
                .map(|r| f(if guided { &r.3 } else { &r.2 }))
                .sum()
        };
        let causes = |g: &Guided| g.causes as f64;
        let rate = |g: &Guided| g.rate;
        let ms = |g: &Guided| g.hydrate_ms;
        println!(
            "{ex}: causes blind {:.0}, guided {:.0}; executions/s guided / blind = {:.2}; ms per request guided / blind = {:.2}",
            sum(&causes, false),
            sum(&causes, true),
            sum(&rate, true) / sum(&rate, false).max(1e-9),
            sum(&ms, true) / sum(&ms, false).max(1e-9)
        );
    }
}

/// A session's [`Guided`] figures from its `fuzz.json`, `took` seconds of wall time.
fn read_guided(path: &Path, took: f64) -> Guided {
    let v: serde_json::Value = match std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("bench: cannot read `{}`: {e}", path.display());
            std::process::exit(3);
        }
    };
    let empty = Vec::new();
    let findings = v["findings"].as_array().unwrap_or(&empty);
    let new: Vec<&serde_json::Value> = findings
        .iter()
        .filter(|f| !f["known"].as_bool().unwrap_or(false))
        .collect();
    let first = new
        .iter()
        .filter_map(|f| f["first_seen"]["secs"].as_f64())
        .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.min(s))));
    let n = |k: &str| v["coverage"][k].as_u64().unwrap_or(0);
    Guided {
        causes: new.len(),
        first,
        rate: v["executions"].as_f64().unwrap_or(0.0) / took.max(1e-9),
        hydrate_ms: v["phases"]["hydrate"].as_f64().unwrap_or(0.0) * 1e3
            / v["extractor_runs"].as_f64().unwrap_or(0.0).max(1.0),
        ids: n("ids"),
        kept: n("kept"),
    }
}
