//! Cases per second through the whole pipeline for the shipped Python backend
//! (`producers/backends/pytar.toml`, `tarfile`) paired with itself, side by side in one run:
//! worker mode (one `python3` for the run, JSON lines) versus command mode (one `python3` per
//! capture and per hydration). Run with `cargo bench -p snapconf-harness --bench worker`;
//! `SNAPCONF_BENCH_CASES` sets the number of cases (default 200; command mode runs a fifth of
//! them). Goal (issue 4): worker mode ≥ 10× command mode.

use proptest::strategy::ValueTree;
use snapconf_harness::engine::case::{run_case, Env};
use snapconf_harness::gen::draw_case;
use snapconf_harness::gen::{case_strategy, GenConfig};
use snapconf_harness::model::backend_profile::backend_profile;
use snapconf_producers::backend::{BackendDescription, Mode};
use snapconf_producers::{Availability, Backend, Extractor, Producer};
use std::path::Path;
use std::time::{Duration, Instant};

fn main() {
    let n: u64 = std::env::var("SNAPCONF_BENCH_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../producers/backends/pytar.toml");
    let desc = match BackendDescription::load(&file) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("worker bench: {e}");
            std::process::exit(2);
        }
    };
    let profile = match backend_profile(&desc) {
        Ok(Some(p)) => p,
        Ok(None) => snapconf_harness::model::profile::Profile::default_profile(),
        Err(e) => {
            eprintln!("worker bench: {e}");
            std::process::exit(2);
        }
    };
    let env = Env {
        profile,
        timeout: Duration::from_secs(20),
        faults: Default::default(),
        jails: Default::default(),
        checks: snapconf_harness::checks::Check::ALL.to_vec(),
        jail_base: std::env::var_os("SNAPCONF_JAIL_DIR")
            .map(Into::into)
            .or_else(snapconf_harness::jail::default_jail_base),
    };
    let strategy = case_strategy(&GenConfig::default());
    let cases: Vec<_> = (0..n)
        .filter_map(|i| draw_case(&strategy, 1, i).ok().map(|t| t.current()))
        .collect();

    let worker = Backend::new(desc.clone());
    let mut per_call = desc;
    per_call.mode = Mode::Command;
    let per_call = Backend::new(per_call);
    if let Availability::Unavailable { reason, .. } = worker.producer().availability() {
        println!("worker bench: skipped: {reason}");
        return;
    }

    println!(
        "{:<34} {:>6} {:>10} {:>10} {:>8}",
        "pytar x pytar (whole pipeline)", "cases", "seconds", "cases/s", "findings"
    );
    let mut rates = Vec::new();
    for (label, backend, count) in [
        ("worker mode (one python3)", &worker, cases.len()),
        (
            "command mode (python3 per call)",
            &per_call,
            cases.len().div_ceil(5),
        ),
    ] {
        let producer = backend.producer();
        let extractor = backend.extractor();
        let ex: [&dyn Extractor; 1] = [&extractor];
        let started = Instant::now();
        let mut findings = 0;
        for case in &cases[..count] {
            match run_case(case, &producer as &dyn Producer, &ex, &env, None) {
                Ok(o) => findings += o.findings.len(),
                Err(e) => {
                    eprintln!("worker bench: {label}: {e}");
                    std::process::exit(3);
                }
            }
        }
        let secs = started.elapsed().as_secs_f64();
        let rate = count as f64 / secs;
        rates.push(rate);
        println!("{label:<34} {count:>6} {secs:>10.2} {rate:>10.1} {findings:>8}");
    }
    if let [w, c] = rates[..] {
        println!("worker / command: {:.1}x (goal >= 10x)", w / c);
    }
}
