//! `snapconf lifecycle`: sessions of turns through one backend instance, and
//! `--replay` of their reproducers.

use super::args::LifecycleArgs;
use super::common::{finish, isolate, nothing_to_run, setup, ShrinkLimits};
use super::Usage;
use anyhow::Context;
use snapconf_harness::engine::faults::FaultOptions;
use snapconf_harness::engine::progress::Progress;
use snapconf_harness::engine::report_dir::clock_seed;
use snapconf_harness::engine::shard::{BadShard, Shard};
use snapconf_harness::engine::shrink::ShrinkBudget;
use snapconf_harness::exit;
use snapconf_harness::jail::cleanup::{stop_requested, INTERRUPTED};
use snapconf_harness::lifecycle::driver::{
    read_reproducer, replay as replay_sequence, run as run_lifecycle, LifecycleOptions,
    LifecycleReport,
};
use snapconf_harness::model::fault::FaultKind;
use snapconf_harness::model::policy_map::reference_policy;
use std::time::Duration;

pub fn lifecycle(a: LifecycleArgs) -> anyhow::Result<i32> {
    let out = super::output::set(&a.output)?;
    if let Some(dir) = &a.replay {
        if out.json() {
            return Err(Usage("--message-format json applies to runs, not --replay".into()).into());
        }
        return replay(&a, dir);
    }
    let seed = a.seed.unwrap_or_else(clock_seed);
    let faults = FaultKind::parse_list(&a.faults).map_err(|e| Usage(e.to_string()))?;
    let shard: Shard = a
        .shard
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: BadShard| Usage(format!("--shard: {e}")))?
        .unwrap_or_default();
    if a.sequences == 0 {
        eprintln!("snapconf: nothing to run: --sequences 0");
        return Ok(exit::NOTHING_RAN);
    }
    let limits = ShrinkLimits {
        steps: a.shrink.shrink_steps,
        per_finding: Duration::from_secs(a.shrink.shrink_time),
        total: Duration::from_secs(a.shrink.shrink_total),
    };
    let s = setup(&a.pairs, a.sequences, seed, limits, "lifecycle")?;
    let incomplete = s.incomplete;
    let mut env = s.opts.env;
    env.faults = FaultOptions {
        kinds: faults,
        bin: super::self_exe().ok(),
    };
    let opts = LifecycleOptions {
        sequences: a.sequences,
        max_turns: a.turns as usize,
        seed,
        gen: s.opts.gen,
        env,
        shrink: s.opts.shrink,
        shrink_total: s.opts.shrink_total,
        report_dir: s.opts.report_dir,
        producers: s.opts.producers,
        extractors: s.opts.extractors,
        backends: s.backends,
        bin: s.opts.bin,
        backend_files: s.opts.backend_files,
        jobs: s.opts.jobs,
        shard,
    };
    let notes = isolate();
    super::not_interrupted()?;
    if let Some(code) = nothing_to_run(&opts.producers, &opts.extractors) {
        return Ok(code);
    }
    super::output::note(&format!(
        "snapconf: lifecycle: {} sequence(s) of up to {} turn(s) per pair, seed {seed}, profile `{}`, {} producer(s) x {} extractor(s), {} worker(s) (-j)",
        opts.sequences,
        opts.max_turns,
        opts.env.profile.name,
        opts.producers.len(),
        opts.extractors.len(),
        opts.jobs
    ));
    let units = opts.shard_len() * (opts.producers.len() * opts.extractors.len()) as u64;
    super::output::event(snapconf_harness::engine::events::JsonEvent::RunStarted {
        mode: "lifecycle".into(),
        seed,
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
        total: Some(units),
        seconds: None,
        report_dir: opts.report_dir.display().to_string(),
    });
    let mut progress = Progress::counting(units, "sequences", out);
    let report = run_lifecycle(&opts, &mut |ev| progress.event(&ev))
        .map_err(|e| super::common::name_a_full_jail(e.into(), opts.env.jail_base.as_deref()))
        .context("the lifecycle run failed")?;
    progress.finish();
    let dir = &opts.report_dir;
    let json = serde_json::to_string_pretty(&report).context("cannot serialise the report")?;
    std::fs::write(dir.join("lifecycle.json"), json + "\n")
        .with_context(|| format!("cannot write `{}`", dir.join("lifecycle.json").display()))?;
    if !out.json() {
        print_summary(&report, dir);
    }
    // The same report as `run`'s (`report.json`, `summary.md`, ...), and its exit code:
    // 1 only for a cause the baseline does not list.
    let mut run = report.run_report();
    run.notes.extend(notes);
    run.incomplete = incomplete;
    run.shard = report.shard.clone();
    let code = finish(run, dir, a.pairs.baseline.as_deref())?;
    if stop_requested() {
        eprintln!("snapconf: interrupted; partial report written");
        return Ok(INTERRUPTED);
    }
    Ok(code)
}

/// The pairs' counts and each shrunk finding, on stdout.
fn print_summary(report: &LifecycleReport, dir: &std::path::Path) {
    let rate = |n: u64| {
        if report.seconds > 0.0 {
            n as f64 / report.seconds
        } else {
            0.0
        }
    };
    let all: u64 = report.pairs.iter().map(|p| p.sequences).sum();
    outln!(
        "lifecycle: {all} sequence(s) in {:.1} s ({:.1} sequences/s over every pair)",
        report.seconds,
        rate(all)
    );
    for p in &report.pairs {
        let found: Vec<String> = p.findings.iter().map(|(c, n)| format!("{c} {n}")).collect();
        outln!(
            "  {} x {}: {} sequences ({:.1}/s on one worker), {} passed, {} turns, {} captures refused, {} restores, {} faulted restores{}",
            p.producer,
            p.extractor,
            p.sequences,
            if p.seconds > 0.0 {
                p.sequences as f64 / p.seconds
            } else {
                0.0
            },
            p.passed,
            p.turns,
            p.refused,
            p.restores,
            p.faulted,
            if found.is_empty() {
                String::new()
            } else {
                format!("; failing: {}", found.join(", "))
            }
        );
    }
    for f in &report.findings {
        outln!(
            "{} ({} x {}): {}\n  {} turn(s), {} edit(s), {} initial entr{} ({}); replay: {}",
            f.check,
            f.producer,
            f.extractor,
            f.message,
            f.turns,
            f.edits,
            f.entries,
            if f.entries == 1 { "y" } else { "ies" },
            f.shrink.describe(f.entries),
            dir.join(&f.case_dir).join("repro.sh").display()
        );
    }
    outln!("counts: {}", dir.join("lifecycle.json").display());
}

/// `snapconf lifecycle --replay DIR`.
fn replay(a: &LifecycleArgs, dir: &std::path::Path) -> anyhow::Result<i32> {
    snapconf_harness::jail::leftovers::sweep_at_start(a.pairs.jail_dir.as_deref());
    let (meta, seq) = read_reproducer(dir).map_err(Usage)?;
    // `read_reproducer` refuses a lifecycle finding without either.
    let producer = meta.producer.clone().unwrap_or_default();
    let extractor = meta.extractor.clone().unwrap_or_default();
    let backends = super::backends::load(&a.pairs.backends)?;
    let hint = " (a `--backend` run's reproducer needs `--backend FILE` or `SNAPCONF_BACKEND`)";
    let producers = super::adapters::producers(std::slice::from_ref(&producer), &backends)
        .map_err(|e| Usage(format!("{e}{hint}")))?;
    let extractors = super::adapters::extractors(
        std::slice::from_ref(&extractor),
        reference_policy(&meta.profile, None),
        &backends,
    )
    .map_err(|e| Usage(format!("{e}{hint}")))?;
    if let Some(s) = producers.skipped.iter().chain(&extractors.skipped).next() {
        eprintln!(
            "snapconf: cannot replay: {} (install: {})",
            s.reason, s.install_hint
        );
        return Ok(exit::NOTHING_RAN);
    }
    let faults = FaultKind::parse_list(&meta.faults).map_err(|e| Usage(e.to_string()))?;
    let opts = LifecycleOptions {
        sequences: 1,
        max_turns: seq.turns.len(),
        seed: meta.seed.unwrap_or_default(),
        gen: Default::default(),
        env: snapconf_harness::engine::case::Env {
            profile: meta.profile.clone(),
            timeout: Duration::from_secs(meta.timeout_secs.max(1)),
            jail_base: a
                .pairs
                .jail_dir
                .clone()
                .or_else(snapconf_harness::jail::default_jail_base),
            faults: FaultOptions {
                kinds: faults,
                bin: super::self_exe().ok(),
            },
            jails: Default::default(),
            checks: snapconf_harness::checks::Check::ALL.to_vec(),
        },
        shrink: ShrinkBudget::default(),
        shrink_total: Duration::ZERO,
        report_dir: dir.to_path_buf(),
        producers: producers.run,
        extractors: extractors.run,
        backends,
        bin: super::self_exe().unwrap_or_else(|_| "snapconf".into()),
        backend_files: Vec::new(),
        jobs: 1,
        shard: Shard::ALL,
    };
    let pair = format!("{producer} x {extractor}");
    let r = replay_sequence(&opts, &meta, &seq).context("the replay failed")?;
    match r.finding {
        Some(f) => {
            outln!("{} ({pair}): {}", meta.check, f.message);
            if let Some(o) = &f.observed {
                outln!("{o}");
            }
            outln!("reproduces: {} ({pair})", meta.check);
            Ok(exit::FINDINGS)
        }
        None => {
            outln!("fixed: {} ({pair}) no longer reproduces", meta.check);
            Ok(exit::OK)
        }
    }
}
