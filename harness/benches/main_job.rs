//! The default main job (`snapconf run --seed S`, every available pair, shrinking included)
//! with `-j 1` and `-j 2`, alternately in one run, so that both see the same machine:
//! prints each run's wall time, the ratio of the means, and how the findings' shrinks
//! ended. Run with `cargo bench -p snapconf-harness --bench main_job`.
//!
//! `SNAPCONF_BENCH_ROUNDS` sets the rounds (default 1: one run of each; a default run takes
//! minutes), `SNAPCONF_BENCH_SEED` the seed (default 1), `SNAPCONF_BENCH_ARGS` extra
//! arguments for both (say `--cases 20 --producers tar-rs,gnu-tar`). Goals (issue 17):
//! `-j 2` at least 1.8 times as fast as `-j 1`, the default job under 4 minutes on a
//! 2-core machine, every finding `minimal` or ended on its step budget.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

fn main() {
    let var = |name: &str| std::env::var(name).ok();
    let rounds: u32 = var("SNAPCONF_BENCH_ROUNDS")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let seed = var("SNAPCONF_BENCH_SEED").unwrap_or_else(|| "1".into());
    let extra: Vec<String> = var("SNAPCONF_BENCH_ARGS")
        .map(|a| a.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let bin = env!("CARGO_BIN_EXE_snapconf");
    let mut times: BTreeMap<&str, Vec<Duration>> = BTreeMap::new();
    for round in 0..rounds {
        for jobs in ["1", "2"] {
            let dir = match tempfile::tempdir() {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("bench: cannot create a report directory: {e}");
                    std::process::exit(3);
                }
            };
            let started = Instant::now();
            let out = Command::new(bin)
                .args(["run", "--seed", &seed, "-j", jobs])
                .args(&extra)
                .arg("--report-dir")
                .arg(dir.path())
                .output();
            let took = started.elapsed();
            let out = match out {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("bench: cannot run `{bin}`: {e}");
                    std::process::exit(3);
                }
            };
            let code = out.status.code().unwrap_or(-1);
            if code != 0 && code != 1 {
                eprintln!(
                    "bench: -j {jobs} exited {code}:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                std::process::exit(3);
            }
            let ends = shrink_ends(&dir.path().join("report.json"));
            println!(
                "round {} -j {jobs}: {:.1} s, findings by how their shrink ended: {ends:?}",
                round + 1,
                took.as_secs_f64()
            );
            times.entry(jobs).or_default().push(took);
        }
    }
    let mean = |j: &str| {
        let t = &times[j];
        t.iter().sum::<Duration>().as_secs_f64() / t.len() as f64
    };
    let (one, two) = (mean("1"), mean("2"));
    println!(
        "mean wall time: -j 1 {one:.1} s, -j 2 {two:.1} s; -j 2 is {:.2}x as fast",
        one / two
    );
}

/// How many findings of `report.json` ended their shrink each way (`minimal`, `steps`, …).
fn shrink_ends(report: &std::path::Path) -> BTreeMap<String, usize> {
    let mut ends = BTreeMap::new();
    let text = std::fs::read_to_string(report).unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    for f in json["findings"].as_array().into_iter().flatten() {
        let end = f["shrink"].as_str().unwrap_or("?").to_owned();
        *ends.entry(end).or_default() += 1;
    }
    ends
}
