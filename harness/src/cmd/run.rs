//! `snapconf run`.

use super::args::RunArgs;
use super::common::{finish, isolate, name_a_full_jail, nothing_to_run, setup, ShrinkLimits};
use super::{backends, Usage};
use anyhow::Context;
use snapconf_harness::engine::faults::FaultOptions;
use snapconf_harness::engine::progress::Progress;
use snapconf_harness::engine::report_dir::clock_seed;
use snapconf_harness::engine::shard::Shard;
use snapconf_harness::exit;
use snapconf_harness::jail::cleanup::{stop_requested, INTERRUPTED};
use snapconf_harness::model::fault::FaultKind;
use snapconf_harness::run::matrix::run as run_matrix;
use std::time::Duration;

pub fn run(a: RunArgs) -> anyhow::Result<i32> {
    let out = super::output::set(&a.output)?;
    let seed = a.seed.unwrap_or_else(clock_seed);
    let faults = FaultKind::parse_list(&a.faults).map_err(|e| Usage(e.to_string()))?;
    let limits = ShrinkLimits {
        steps: a.shrink.shrink_steps,
        per_finding: Duration::from_secs(a.shrink.shrink_time),
        total: Duration::from_secs(a.shrink.shrink_total),
    };
    if a.cases == 0 {
        eprintln!("snapconf: nothing to run: --cases 0");
        return Ok(exit::NOTHING_RAN);
    }
    let mut s = setup(&a.pairs, a.cases, seed, limits, "run")?;
    s.opts.shard = a
        .shard
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: snapconf_harness::engine::shard::BadShard| Usage(format!("--shard: {e}")))?
        .unwrap_or_default();
    s.opts.env.faults = FaultOptions {
        kinds: faults,
        bin: super::self_exe().ok(),
    };
    let notes = isolate();
    super::not_interrupted()?;
    if let Some(code) = nothing_to_run(&s.opts.producers, &s.opts.extractors) {
        return Ok(code);
    }
    super::output::note(&format!(
        "snapconf: {} cases, seed {seed}, profile `{}`, {} producer(s) x {} extractor(s), {} worker(s) (-j)",
        a.cases,
        s.opts.env.profile.name,
        s.opts.producers.len(),
        s.opts.extractors.len(),
        s.opts.jobs
    ));
    super::output::event(run_started("run", &s.opts));
    let mut progress = Progress::counting(shard_cases(&s.opts), "cases", out);
    let jail_base = s.opts.env.jail_base.clone();
    let mut report = run_matrix(&s.opts, &mut |ev| progress.event(&ev))
        .map_err(|e| name_a_full_jail(e.into(), jail_base.as_deref()))
        .context("the run failed")?;
    progress.finish();
    backends::print_notes(&s.backends);
    report.notes.extend(notes);
    report.incomplete = s.incomplete;
    report.shard = (s.opts.shard != Shard::ALL).then(|| s.opts.shard.to_string());
    let code = finish(report, &s.opts.report_dir, a.pairs.baseline.as_deref())?;
    if stop_requested() {
        eprintln!("snapconf: interrupted; partial report written");
        return Ok(INTERRUPTED);
    }
    Ok(code)
}

/// The `run-started` event of a `run` or `audit` (`mode`) of `opts`.
pub fn run_started(
    mode: &str,
    opts: &snapconf_harness::run::matrix::RunOptions,
) -> snapconf_harness::engine::events::JsonEvent {
    snapconf_harness::engine::events::JsonEvent::RunStarted {
        mode: mode.to_string(),
        seed: opts.seed,
        profile: opts.env.profile.name.clone(),
        producers: opts
            .producers
            .iter()
            .map(|p| p.name().to_string())
            .collect(),
        extractors: opts
            .extractors
            .iter()
            .map(|e| e.name().to_string())
            .collect(),
        jobs: opts.jobs,
        total: Some(shard_cases(opts)),
        seconds: None,
        report_dir: opts.report_dir.display().to_string(),
    }
}

/// The cases of `opts` in its shard.
fn shard_cases(opts: &snapconf_harness::run::matrix::RunOptions) -> u64 {
    (0..opts.cases).filter(|i| opts.shard.contains(*i)).count() as u64
}
