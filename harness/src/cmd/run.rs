//! `snapconf run`.

use super::args::{PairArgs, RunArgs};
use super::Usage;
use super::{adapters, backends};
use anyhow::Context;
use snapconf_harness::exit;
use snapconf_harness::faults::{FaultKind, FaultOptions};
use snapconf_harness::gen::GenConfig;
use snapconf_harness::jail::cleanup::{install_stop_handler, stop_requested, INTERRUPTED};
use snapconf_harness::jail::default_jail_base;
use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::report::{
    index_html, junit_xml, summary_markdown, Baseline, Progress, RunReport,
};
use snapconf_harness::run::case::Env;
use snapconf_harness::run::runner::{run as run_matrix, RunOptions};
use snapconf_harness::run::shrink::ShrinkBudget;
use snapconf_producers::process::limits::{probe_private_mounts, set_private_mounts};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Resolved pair arguments shared by `run` and `audit`.
pub struct Setup {
    pub opts: RunOptions,
    /// The `--backend`s (also in `opts`), for their validator verdicts after the run.
    pub backends: Vec<snapconf_producers::Backend>,
}

/// How long shrinking may take: steps and seconds per finding, seconds per run.
#[derive(Clone, Copy, Debug)]
pub struct ShrinkLimits {
    pub steps: u32,
    pub per_finding: Duration,
    pub total: Duration,
}

pub fn setup(
    pairs: &PairArgs,
    cases: u64,
    seed: u64,
    shrink: ShrinkLimits,
    label: &str,
) -> anyhow::Result<Setup> {
    let backends = backends::load(&pairs.backends)?;
    let profile = backends::profile(pairs.profile.as_deref(), &backends)?;
    if let Some(b) = &pairs.baseline {
        Baseline::load(b).map_err(Usage)?;
    }
    let producers = adapters::producers(&pairs.producers, &backends)?;
    let extractors = adapters::extractors(
        &pairs.extractors,
        reference_policy(&profile, None),
        &backends,
    )?;
    let mut skipped = producers.skipped;
    skipped.extend(extractors.skipped);
    let mut tool_versions: std::collections::BTreeMap<String, String> =
        producers.versions.into_iter().collect();
    tool_versions.extend(extractors.versions);
    let report_dir = match &pairs.report_dir {
        Some(d) => d.clone(),
        None => default_report_dir(label, seed),
    };
    let bin = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("snapconf"));
    let gen = GenConfig::from_env().map_err(|e| Usage(e.to_string()))?;
    Ok(Setup {
        opts: RunOptions {
            cases,
            seed,
            gen,
            env: Env {
                profile,
                timeout: Duration::from_secs(pairs.timeout.max(1)),
                jail_base: pairs.jail_dir.clone().or_else(default_jail_base),
                faults: Default::default(),
                jails: Default::default(),
                checks: snapconf_harness::checks::Check::ALL.to_vec(),
            },
            shrink: ShrinkBudget {
                steps: shrink.steps,
                time: shrink.per_finding,
            },
            shrink_total: shrink.total,
            report_dir,
            producers: producers.run,
            extractors: extractors.run,
            skipped_adapters: skipped,
            tool_versions,
            bin,
            backend_files: pairs
                .backends
                .iter()
                .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
                .collect(),
            shard: snapconf_harness::run::shard::Shard::ALL,
            jobs: pairs
                .jobs
                .map_or_else(snapconf_harness::run::pool::default_jobs, |j| j as usize),
        },
        backends,
    })
}

fn default_report_dir(label: &str, seed: u64) -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    PathBuf::from("reports/runs").join(format!("{label}-{secs}-seed{seed}"))
}

/// Apply the baseline (if any); write `report.json`, `summary.md`, `junit.xml` and
/// `index.html`; print the summary; return the exit code (1 only for new findings).
pub fn finish(report: &mut RunReport, dir: &Path, baseline: Option<&Path>) -> anyhow::Result<i32> {
    if let Some(path) = baseline {
        Baseline::load(path).map_err(Usage)?.apply(report);
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    let json = serde_json::to_string_pretty(report).context("cannot serialise the report")?;
    std::fs::write(dir.join("report.json"), json + "\n")
        .with_context(|| format!("cannot write `{}`", dir.join("report.json").display()))?;
    // Rendered whole before the file is written: a serialisation error leaves no empty
    // `junit.xml` behind.
    let junit = junit_xml(report).context("cannot render `junit.xml`")?;
    std::fs::write(dir.join("junit.xml"), junit)
        .with_context(|| format!("cannot write `{}`", dir.join("junit.xml").display()))?;
    std::fs::write(dir.join("index.html"), index_html(report, dir))
        .with_context(|| format!("cannot write `{}`", dir.join("index.html").display()))?;
    let md = summary_markdown(report);
    std::fs::write(dir.join("summary.md"), &md)
        .with_context(|| format!("cannot write `{}`", dir.join("summary.md").display()))?;
    outln!("{md}");
    outln!("report: {}", dir.display());
    Ok(if report.has_new_findings() {
        exit::FINDINGS
    } else {
        exit::OK
    })
}

pub fn run(a: RunArgs) -> anyhow::Result<i32> {
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() % 100_000)
            .unwrap_or(0)
    });
    let faults = FaultKind::parse_list(&a.faults).map_err(|e| Usage(e.to_string()))?;
    let limits = ShrinkLimits {
        steps: a.shrink.shrink_steps,
        per_finding: Duration::from_secs(a.shrink.shrink_time),
        total: Duration::from_secs(a.shrink.shrink_total),
    };
    let mut s = setup(&a.pairs, a.cases, seed, limits, "run")?;
    s.opts.shard = a
        .shard
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: snapconf_harness::run::shard::BadShard| Usage(e.to_string()))?
        .unwrap_or_default();
    s.opts.env.faults = FaultOptions {
        kinds: faults,
        bin: std::env::current_exe().ok(),
    };
    let notes = isolate();
    install_stop_handler().context("cannot install the SIGINT/SIGTERM handler")?;
    if a.cases == 0 {
        eprintln!("snapconf: nothing to run: --cases 0");
        return Ok(exit::NOTHING_RAN);
    }
    if s.opts.producers.is_empty() || s.opts.extractors.is_empty() {
        eprintln!(
            "snapconf: nothing to run: no available producer or extractor (see `snapconf list`)"
        );
        return Ok(exit::NOTHING_RAN);
    }
    eprintln!(
        "snapconf: {} cases, seed {seed}, profile `{}`, {} producer(s) x {} extractor(s)",
        a.cases,
        s.opts.env.profile.name,
        s.opts.producers.len(),
        s.opts.extractors.len()
    );
    let mut progress = Progress::new(a.cases);
    let mut report =
        run_matrix(&s.opts, &mut |ev| progress.event(&ev)).context("the run failed")?;
    progress.finish();
    backends::print_notes(&s.backends);
    report.notes.extend(notes);
    let code = finish(&mut report, &s.opts.report_dir, a.pairs.baseline.as_deref())?;
    if stop_requested() {
        eprintln!("snapconf: interrupted; partial report written");
        return Ok(INTERRUPTED);
    }
    Ok(code)
}

/// Run external tools in a private mount namespace when the machine allows it; otherwise
/// say so once (stderr and the report's notes) and go on with the canary checks alone.
fn isolate() -> Vec<String> {
    match probe_private_mounts() {
        Ok(()) => {
            set_private_mounts(true);
            Vec::new()
        }
        Err(why) => {
            let note = format!(
                "external tools run without a private mount namespace ({why}); containment relies on the jail canaries alone"
            );
            eprintln!("snapconf: {note}");
            vec![note]
        }
    }
}
