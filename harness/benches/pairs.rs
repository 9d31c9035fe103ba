//! Cases per second through whole pairs (materialise, capture, list, hydrate twice, observe,
//! compare), measured side by side in one run on one core:
//! `tar-rs` × `reference` (in process) and `gnu-tar` × `reference` (one `tar` process per
//! case). Run with `cargo bench -p snapconf-harness --bench pairs`; `SNAPCONF_BENCH_CASES`
//! sets the number of cases per pair (default 1,000: runs of under a second were too short
//! to read on a shared machine), `SNAPCONF_BENCH_PRODUCERS` limits the producers
//! (comma-separated). Goals (issue 2): ≥ 500 cases/s and ≥ 100 cases/s on one core.
//!
//! Each pair prints two rates: per second of wall-clock time, and per second of CPU time
//! (user + system, of this process and of the tools it waited for, from
//! `/proc/self/stat`). The run is single-threaded, so on an idle machine the two agree; on
//! a shared one the wall-clock rate drops with the other load while the CPU-time rate is
//! what one core does.

use proptest::strategy::ValueTree;
use snapconf_harness::engine::case::{run_case, Env};
use snapconf_harness::gen::draw_case;
use snapconf_harness::gen::{case_strategy, GenConfig};
use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::model::profile::Profile;
use snapconf_producers::{Availability, Extractor, Producer};
use std::time::{Duration, Instant};

fn main() {
    // As the binary does: stragglers of the tools are found after each step (a `/proc`
    // scan per step that ran a tool), so the figures include that cost.
    snapconf_producers::process::stragglers::become_subreaper();
    let n: u64 = std::env::var("SNAPCONF_BENCH_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let profile = Profile::default_profile();
    let env = Env {
        profile: profile.clone(),
        timeout: Duration::from_secs(20),
        jail_base: std::env::var_os("SNAPCONF_JAIL_DIR")
            .map(Into::into)
            .or_else(snapconf_harness::jail::default_jail_base),
        faults: Default::default(),
        jails: Default::default(),
        checks: snapconf_harness::checks::Check::ALL.to_vec(),
    };
    let strategy = case_strategy(&GenConfig::default());
    let cases: Vec<_> = (0..n)
        .filter_map(|i| draw_case(&strategy, 1, i).ok().map(|t| t.current()))
        .collect();
    let producers = snapconf_producers::producers();
    let extractors = snapconf_producers::extractors(reference_policy(&profile, None));
    let reference = extractors
        .iter()
        .find(|e| e.name() == "reference")
        .map(|e| e.as_ref() as &dyn Extractor);
    let Some(reference) = reference else {
        eprintln!("bench: no reference extractor");
        return;
    };
    let mut rates = Vec::new();
    let only = std::env::var("SNAPCONF_BENCH_PRODUCERS").unwrap_or_default();
    for name in ["tar-rs", "gnu-tar"] {
        if !only.is_empty() && !only.split(',').any(|o| o == name) {
            continue;
        }
        let Some(p) = producers.iter().find(|p| p.name() == name) else {
            continue;
        };
        if let Availability::Unavailable { reason, .. } = p.availability() {
            println!("{name} x reference: skipped ({reason})");
            continue;
        }
        let cpu0 = cpu_seconds();
        let start = Instant::now();
        let mut findings = 0;
        for case in &cases {
            match run_case(case, p.as_ref() as &dyn Producer, &[reference], &env, None) {
                Ok(o) => findings += o.findings.len(),
                Err(e) => eprintln!("bench: {e}"),
            }
        }
        let secs = start.elapsed().as_secs_f64();
        let cpu = cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
        let rate = cases.len() as f64 / secs;
        let per_cpu = match cpu {
            Some(c) if c > 0.0 => format!(
                "; {c:.2} s CPU = {:.0} cases per CPU-second",
                cases.len() as f64 / c
            ),
            _ => String::new(),
        };
        println!(
            "{name} x reference: {} cases in {secs:.2} s = {rate:.0} cases/s{per_cpu} ({findings} findings)",
            cases.len()
        );
        rates.push((name, rate));
    }
    if let [(a, ra), (b, rb)] = rates.as_slice() {
        println!("ratio {a} / {b}: {:.2}", ra / rb);
    }
}

/// CPU seconds used so far by this process and its waited-for children: fields 14–17
/// (`utime`, `stime`, `cutime`, `cstime`, in clock ticks) of `/proc/self/stat` (proc(5)).
/// `None` where it cannot be read.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) may hold spaces; the fields after it follow its `)`.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state), so field n is at index n - 3.
    let ticks: u64 = fields
        .get(11..15)?
        .iter()
        .map(|f| f.parse::<u64>().ok())
        .sum::<Option<u64>>()?;
    Some(ticks as f64 / rustix::param::clock_ticks_per_second() as f64)
}
