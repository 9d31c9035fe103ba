//! Cases per second through whole pairs (materialise, capture, list, hydrate twice, observe,
//! compare), measured side by side in one run on one core:
//! `tar-rs` × `reference` (in process) and `gnu-tar` × `reference` (one `tar` process per
//! case). Run with `cargo bench -p snapconf-harness --bench pairs`; `SNAPCONF_BENCH_CASES`
//! sets the number of cases per pair (default 400), `SNAPCONF_BENCH_PRODUCERS` limits the
//! producers (comma-separated). Goals (issue 2): ≥ 500 cases/s and
//! ≥ 100 cases/s.

use proptest::strategy::ValueTree;
use snapconf_harness::gen::{case_strategy, GenConfig};
use snapconf_harness::pipeline::{run_case, Env};
use snapconf_harness::policy_map::reference_policy;
use snapconf_harness::profile::Profile;
use snapconf_harness::shrink::draw_case;
use snapconf_producers::{Availability, Extractor, Producer};
use std::time::{Duration, Instant};

fn main() {
    let n: u64 = std::env::var("SNAPCONF_BENCH_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let profile = Profile::default_profile();
    let env = Env {
        profile: profile.clone(),
        timeout: Duration::from_secs(20),
        jail_base: std::env::var_os("SNAPCONF_JAIL_DIR")
            .map(Into::into)
            .or_else(snapconf_harness::jail::default_jail_base),
        faults: Default::default(),
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
        let start = Instant::now();
        let mut findings = 0;
        for case in &cases {
            match run_case(case, p.as_ref() as &dyn Producer, &[reference], &env, None) {
                Ok(o) => findings += o.findings.len(),
                Err(e) => eprintln!("bench: {e}"),
            }
        }
        let secs = start.elapsed().as_secs_f64();
        let rate = cases.len() as f64 / secs;
        println!(
            "{name} x reference: {} cases in {secs:.2} s = {rate:.0} cases/s ({findings} findings)",
            cases.len()
        );
        rates.push((name, rate));
    }
    if let [(a, ra), (b, rb)] = rates.as_slice() {
        println!("ratio {a} / {b}: {:.2}", ra / rb);
    }
}
