//! What the commands that run pairs and write a report share: resolving the pair
//! arguments (`run`, `audit`, `lifecycle`), writing the report at the end (every mode),
//! naming a full jail filesystem, the private mount namespace.

use super::args::PairArgs;
use super::Usage;
use super::{adapters, backends};
use snapconf_harness::engine::case::Env;
use snapconf_harness::engine::report_dir::{default_report_dir, prepare_report_dir};
use snapconf_harness::engine::shrink::ShrinkBudget;
use snapconf_harness::gen::GenConfig;
use snapconf_harness::jail::default_jail_base;
use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::report::{write_report, Baseline, RunReport};
use snapconf_harness::run::matrix::RunOptions;
use snapconf_producers::process::limits::{probe_private_mounts, set_private_mounts};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Resolved pair arguments shared by `run` and `audit`.
pub struct Setup {
    pub opts: RunOptions,
    /// The `--backend`s (also in `opts`), for their validator verdicts after the run.
    pub backends: Vec<snapconf_producers::Backend>,
    /// The adapters asked for that are not available here ([`unavailable_asked`]), for the
    /// report's `incomplete`.
    pub incomplete: Vec<String>,
}

/// An [`Environment`](super::Environment) error (exit 3) unless a directory can be made (and removed)
/// in the temp directory ([`std::env::temp_dir`], from `TMPDIR`): every external tool is
/// probed and run there, and without it each would only look "unavailable". Call before
/// probing any tool.
///
/// # Errors
/// The message names the directory, `TMPDIR`, and the error.
pub fn temp_dir_usable() -> Result<(), super::Environment> {
    let dir = std::env::temp_dir();
    let made = tempfile::Builder::new()
        .prefix(".snapconf-probe")
        .tempdir_in(&dir)
        .and_then(tempfile::TempDir::close);
    made.map_err(|e| {
        let from = match std::env::var_os("TMPDIR") {
            Some(v) if !v.is_empty() => "TMPDIR",
            _ => "the default; TMPDIR is not set",
        };
        super::Environment(format!(
            "nothing can run: the temp directory `{}` ({from}) is not usable: cannot make a \
             directory in it: {e}; every external tool is probed and run there. Point TMPDIR \
             at a writable directory",
            dir.display()
        ))
    })
}

/// The adapters of one `kind` (`producer`, `extractor`) that were asked for and are not
/// available here, each as a sentence with why: every skipped one when `wanted` names
/// any (a name, `all`, `none`), else (the default set) only those of a `--backend` file.
pub fn unavailable_asked(
    kind: &str,
    wanted: &[String],
    skipped: &[snapconf_harness::report::SkippedAdapter],
    backends: &[snapconf_producers::Backend],
) -> Vec<String> {
    skipped
        .iter()
        .filter(|s| !wanted.is_empty() || backends.iter().any(|b| b.name() == s.name))
        .map(|s| {
            format!(
                "{kind} `{}` was asked for and is not available here: {} (install: {})",
                s.name, s.reason, s.install_hint
            )
        })
        .collect()
}

/// How long shrinking may take: steps and seconds per finding, seconds per run.
#[derive(Clone, Copy, Debug)]
pub struct ShrinkLimits {
    pub steps: u32,
    pub per_finding: Duration,
    pub total: Duration,
}

/// [`exit::NOTHING_RAN`](snapconf_harness::exit::NOTHING_RAN), said on stderr, when no
/// producer or no extractor is available; `None` when there are pairs to run.
pub fn nothing_to_run<P, E>(producers: &[P], extractors: &[E]) -> Option<i32> {
    if producers.is_empty() || extractors.is_empty() {
        eprintln!(
            "snapconf: nothing to run: no available producer or extractor (see `snapconf list`)"
        );
        return Some(snapconf_harness::exit::NOTHING_RAN);
    }
    None
}

pub fn setup(
    pairs: &PairArgs,
    cases: u64,
    seed: u64,
    shrink: ShrinkLimits,
    label: &str,
) -> anyhow::Result<Setup> {
    super::stop_on_signals()?;
    // What killed snapconf processes left in the jail base goes first.
    snapconf_harness::jail::leftovers::sweep_at_start(pairs.jail_dir.as_deref());
    // Before any tool is probed: in an unusable temp dir every one would look missing.
    temp_dir_usable()?;
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
    let mut incomplete =
        unavailable_asked("producer", &pairs.producers, &producers.skipped, &backends);
    incomplete.extend(unavailable_asked(
        "extractor",
        &pairs.extractors,
        &extractors.skipped,
        &backends,
    ));
    let mut skipped = producers.skipped;
    skipped.extend(extractors.skipped);
    let mut tool_versions: std::collections::BTreeMap<String, String> =
        producers.versions.into_iter().collect();
    tool_versions.extend(extractors.versions);
    let report_dir = match &pairs.report_dir {
        Some(d) => d.clone(),
        None => default_report_dir(label, seed),
    };
    // Checked before the first case; not made when there is nothing to run.
    if !producers.run.is_empty() && !extractors.run.is_empty() {
        prepare_report_dir(&report_dir, pairs.report_dir.is_some()).map_err(Usage::from)?;
    }
    let bin = super::self_exe().unwrap_or_else(|_| PathBuf::from("snapconf"));
    let gen = GenConfig::from_env().map_err(|e| Usage(e.to_string()))?;
    Ok(Setup {
        opts: RunOptions {
            cases,
            seed,
            gen,
            env: Env {
                profile,
                timeout: Duration::from_secs(pairs.timeout),
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
            shard: snapconf_harness::engine::shard::Shard::ALL,
            jobs: pairs
                .jobs
                .map_or_else(snapconf_harness::engine::pool::default_jobs, |j| j as usize),
        },
        backends,
        incomplete,
    })
}

/// Apply the baseline (if any); write `report.json` (with the causes), `summary.md`,
/// `junit.xml` and `index.html`; print the causes and the report path; return the exit
/// code ([`ReportFile::exit_code`](snapconf_harness::report::ReportFile::exit_code): 3
/// when something asked did not run or nothing ran, else 1 only for new findings). What
/// did not run is said again last on stderr.
/// Every mode ends here (`run`, `audit`, `fuzz`, `lifecycle`, `report merge`).
pub fn finish(report: RunReport, dir: &Path, baseline: Option<&Path>) -> anyhow::Result<i32> {
    let baseline = baseline
        .map(|path| Baseline::load(path).map_err(Usage))
        .transpose()?;
    let file = write_report(report, dir, baseline.as_ref())?;
    super::output::summary(&file, dir);
    for s in &file.run.incomplete {
        eprintln!("snapconf: incomplete: {s}");
    }
    Ok(file.exit_code())
}

/// `e`, with "the jail filesystem `MOUNT` is full (ENOSPC)" added as its context when one
/// of its causes is `ENOSPC` (or prints `os error 28`, as a tool's or reaper's stderr does)
/// and no cause says so already; `jail_base` is where the jails were made (the system temp
/// dir when `None`).
pub fn name_a_full_jail(e: anyhow::Error, jail_base: Option<&Path>) -> anyhow::Error {
    let said = e
        .chain()
        .any(|c| c.to_string().contains("is full (ENOSPC)"));
    if !is_no_space(&e) || said {
        return e;
    }
    let base = jail_base.map_or_else(std::env::temp_dir, Path::to_path_buf);
    let message = snapconf_producers::process::full_filesystem(&base);
    e.context(message)
}

/// Whether one of `e`'s causes is `ENOSPC` (an [`std::io::Error`], or a tool's or
/// reaper's stderr that prints `os error 28`, or a message that already names a full
/// filesystem): the machine failed, not snapconf.
pub fn is_no_space(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        let text = c.to_string();
        c.downcast_ref::<std::io::Error>()
            .is_some_and(snapconf_producers::process::is_no_space)
            || text.contains("(os error 28)")
            || text.contains("is full (ENOSPC)")
    })
}

/// Run external tools in a private mount namespace when the machine allows it; otherwise
/// say so once (stderr and the report's notes) and go on with the canary checks alone.
pub fn isolate() -> Vec<String> {
    match probe_private_mounts() {
        Ok(ns) => {
            set_private_mounts(Some(ns));
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
