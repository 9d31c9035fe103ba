//! `snapconf run`.

use super::args::{PairArgs, RunArgs};
use super::Usage;
use super::{adapters, backends};
use anyhow::Context;
use snapconf_harness::engine::case::Env;
use snapconf_harness::engine::faults::FaultOptions;
use snapconf_harness::engine::progress::Progress;
use snapconf_harness::engine::shrink::ShrinkBudget;
use snapconf_harness::exit;
use snapconf_harness::gen::GenConfig;
use snapconf_harness::jail::cleanup::{stop_requested, INTERRUPTED};
use snapconf_harness::jail::default_jail_base;
use snapconf_harness::model::fault::FaultKind;
use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::report::{summary_text, write_report, Baseline, RunReport};
use snapconf_harness::run::runner::{run as run_matrix, RunOptions};
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
    super::stop_on_signals()?;
    // What killed snapconf processes left in the jail base goes first.
    snapconf_harness::jail::leftovers::sweep_at_start(pairs.jail_dir.as_deref());
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
    // Checked before the first case; not made when there is nothing to run.
    if !producers.run.is_empty() && !extractors.run.is_empty() {
        prepare_report_dir(&report_dir, pairs.report_dir.is_some())?;
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
    })
}

/// Nanoseconds since the epoch and the process id: what default run ids and clock seeds are
/// drawn from, so that two runs started in the same second differ.
fn clock_and_pid() -> (u128, u32) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    (nanos, std::process::id())
}

/// `reports/runs/<label>-<secs>-<nanos>-<pid>-seed<seed>`: unique to this process and
/// instant.
pub fn default_report_dir(label: &str, seed: u64) -> PathBuf {
    let (nanos, pid) = clock_and_pid();
    PathBuf::from("reports/runs").join(format!(
        "{label}-{}-{:09}-{pid}-seed{seed}",
        nanos / 1_000_000_000,
        nanos % 1_000_000_000
    ))
}

/// A seed drawn from the clock's nanoseconds and the process id (mixed, below 10^9), so
/// that two runs started together draw different seeds.
pub fn clock_seed() -> u64 {
    let (nanos, pid) = clock_and_pid();
    let z = (nanos as u64) ^ ((nanos >> 64) as u64) ^ (u64::from(pid) << 40);
    snapconf_harness::gen::Rng::new(z).next_u64() % 1_000_000_000
}

/// The files of a report directory that a run (or a fuzz session: `fuzz.json`) writes,
/// besides `cases/` (`lifecycle.json`: a lifecycle run).
const REPORT_FILES: [&str; 6] = [
    "report.json",
    "lifecycle.json",
    "summary.md",
    "junit.xml",
    "index.html",
    "fuzz.json",
];

/// Make `dir` ready for a report before anything runs, or say why it cannot be (a usage
/// error, exit 2):
/// - a directory that does not exist is created (with its parents);
/// - an empty directory is used as it is;
/// - a directory holding nothing but an earlier report's files (`report.json`,
///   `summary.md`, `junit.xml`, `index.html`, `fuzz.json`, `cases/`; a run that died before its end
///   leaves only `cases/`) is reused only when asked for by name (`explicit`,
///   `--report-dir`, `report merge --out`): those are removed first, so nothing of the old
///   run is left to mistake for the new one;
/// - any other non-empty directory, or a default one that already exists, is refused: a run
///   never writes into someone else's files;
/// - finally a probe file is written and removed, so an unwritable directory fails now,
///   not after the run.
pub fn prepare_report_dir(dir: &Path, explicit: bool) -> Result<(), Usage> {
    let shown = dir.display();
    // Two runs never share one report directory: the first holds a lock on it until it
    // exits, and a second one is refused before it removes or writes anything there; nor
    // does one write inside another's (an ancestor locked), nor remove one that sits in
    // its own (`cases/` or below locked).
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    if let Some(other) = absolute.ancestors().skip(1).find(|a| held_elsewhere(a)) {
        return Err(Usage(format!(
            "report directory `{shown}` is inside `{}`, which another snapconf process is \
             writing; name a directory outside it",
            other.display()
        )));
    }
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        lock_report_dir(dir)?;
        let cases = dir.join("cases");
        if let Some(inner) = locked_below(&cases) {
            return Err(Usage(format!(
                "report directory `{shown}` holds `{}`, which another snapconf process is \
                 writing; not removing it",
                inner.display()
            )));
        }
    }
    match std::fs::symlink_metadata(dir) {
        // Not followed: what it names would be emptied and locked under another name.
        Ok(m) if m.is_symlink() => {
            let target = std::fs::read_link(dir)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|e| format!("(unreadable: {e})"));
            let what = match std::fs::metadata(dir) {
                Ok(t) if t.is_dir() => "a directory: name that directory itself",
                Ok(_) => "something that is not a directory",
                Err(_) => "nothing that exists",
            };
            return Err(Usage(format!(
                "report directory `{shown}` is a symlink to `{target}`, {what}; a report \
                 directory is never reached through a symlink"
            )));
        }
        Ok(m) if !m.is_dir() => {
            return Err(Usage(format!(
                "report directory `{shown}` exists and is not a directory"
            )))
        }
        Ok(_) => {
            let names: Vec<std::ffi::OsString> = std::fs::read_dir(dir)
                .and_then(|rd| rd.map(|e| e.map(|e| e.file_name())).collect())
                .map_err(|e| Usage(format!("cannot read report directory `{shown}`: {e}")))?;
            if !names.is_empty() {
                if !explicit {
                    return Err(Usage(format!(
                        "report directory `{shown}` already exists; not writing into it"
                    )));
                }
                let ours =
                    |n: &std::ffi::OsString| n == "cases" || REPORT_FILES.iter().any(|f| n == f);
                if let Some(other) = names.iter().find(|n| !ours(n)) {
                    return Err(Usage(format!(
                        "report directory `{shown}` holds `{}`, which is not part of a snapconf \
                         report; not writing into it (name a new or empty directory)",
                        other.to_string_lossy()
                    )));
                }
                for name in REPORT_FILES {
                    match std::fs::remove_file(dir.join(name)) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => {
                            return Err(Usage(format!(
                                "cannot replace `{}`: {e}",
                                dir.join(name).display()
                            )))
                        }
                    }
                }
                let cases = dir.join("cases");
                if cases.exists() {
                    snapconf_harness::workspace::materialise::remove_tree(&cases)
                        .map_err(|e| Usage(format!("cannot replace `{}`: {e}", cases.display())))?;
                }
            }
        }
        // Missing (or not reachable: a file on the way fails here too, and says so).
        Err(_) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| Usage(format!("cannot create report directory `{shown}`: {e}")))?;
            lock_report_dir(dir)?;
        }
    }
    let probe = dir.join(".snapconf-write-check");
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|e| Usage(format!("cannot write into report directory `{shown}`: {e}")))
}

/// Report directories this process writes, each locked (`flock`, exclusive) for as long
/// as the process lives; the kernel drops the locks when it exits, however it exits.
static REPORT_LOCKS: std::sync::Mutex<Vec<std::fs::File>> = std::sync::Mutex::new(Vec::new());

/// Lock the report directory `dir` for this process (see [`REPORT_LOCKS`]); refused (exit
/// 2) while another process holds it.
fn lock_report_dir(dir: &Path) -> Result<(), Usage> {
    hold_report_lock(dir, true)
}

/// Hold a shared lock on the report directory `dir` until this process exits, as a reader
/// (`report merge` of its inputs): a run cannot start writing there meanwhile, and one
/// writing there now is refused with a usage error.
///
/// # Errors
/// [`Usage`] when `dir` cannot be opened, or another snapconf process is writing it.
pub fn read_lock_report_dir(dir: &Path) -> Result<(), Usage> {
    hold_report_lock(dir, false)
}

/// [`lock_report_dir`] (`exclusive`) or [`read_lock_report_dir`].
fn hold_report_lock(dir: &Path, exclusive: bool) -> Result<(), Usage> {
    use rustix::fs::{flock, FlockOperation};
    let shown = dir.display();
    let f = std::fs::File::open(dir)
        .map_err(|e| Usage(format!("cannot open report directory `{shown}`: {e}")))?;
    let op = if exclusive {
        FlockOperation::NonBlockingLockExclusive
    } else {
        FlockOperation::NonBlockingLockShared
    };
    match flock(&f, op) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) if exclusive => {
            return Err(Usage(format!(
                "report directory `{shown}` is in use by another snapconf process; name \
                 another directory or wait for that one to end"
            )))
        }
        Err(rustix::io::Errno::WOULDBLOCK) => {
            return Err(Usage(format!(
                "report directory `{shown}` is being written by another snapconf process; \
                 read it once that one has ended"
            )))
        }
        Err(e) => {
            return Err(Usage(format!(
                "cannot lock report directory `{shown}`: {e}"
            )))
        }
    }
    REPORT_LOCKS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(f);
    Ok(())
}

/// True if another process holds a report-directory lock on `dir` (a shared lock is
/// refused, then released at once); false for anything that is not a directory we can open.
fn held_elsewhere(dir: &Path) -> bool {
    use rustix::fs::{flock, FlockOperation};
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return false;
    }
    let Ok(f) = std::fs::File::open(dir) else {
        return false;
    };
    match flock(&f, FlockOperation::NonBlockingLockShared) {
        Err(rustix::io::Errno::WOULDBLOCK) => true,
        Ok(()) => {
            let _ = flock(&f, FlockOperation::Unlock);
            false
        }
        Err(_) => false,
    }
}

/// The first directory at or below `dir` (walked without following links) that another
/// process holds as its report directory; `None` when there is none, or `dir` is not a
/// directory.
fn locked_below(dir: &Path) -> Option<std::path::PathBuf> {
    if held_elsewhere(dir) {
        return Some(dir.to_path_buf());
    }
    let entries = std::fs::read_dir(dir).ok()?;
    entries.flatten().find_map(|e| {
        e.file_type()
            .ok()
            .filter(std::fs::FileType::is_dir)
            .and_then(|_| locked_below(&e.path()))
    })
}

/// Apply the baseline (if any); write `report.json` (with the causes), `summary.md`,
/// `junit.xml` and `index.html`; print the causes and the report path; return the exit
/// code (1 only for new findings).
/// Every mode ends here (`run`, `audit`, `fuzz`, `lifecycle`, `report merge`).
pub fn finish(report: RunReport, dir: &Path, baseline: Option<&Path>) -> anyhow::Result<i32> {
    let baseline = baseline
        .map(|path| Baseline::load(path).map_err(Usage))
        .transpose()?;
    let file = write_report(report, dir, baseline.as_ref())?;
    outln!("{}", summary_text(&file, dir).trim_end());
    Ok(file.exit_code())
}

pub fn run(a: RunArgs) -> anyhow::Result<i32> {
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
    if s.opts.producers.is_empty() || s.opts.extractors.is_empty() {
        eprintln!(
            "snapconf: nothing to run: no available producer or extractor (see `snapconf list`)"
        );
        return Ok(exit::NOTHING_RAN);
    }
    eprintln!(
        "snapconf: {} cases, seed {seed}, profile `{}`, {} producer(s) x {} extractor(s), {} worker(s) (-j)",
        a.cases,
        s.opts.env.profile.name,
        s.opts.producers.len(),
        s.opts.extractors.len(),
        s.opts.jobs
    );
    let mut progress = Progress::new(a.cases);
    let jail_base = s.opts.env.jail_base.clone();
    let mut report = run_matrix(&s.opts, &mut |ev| progress.event(&ev))
        .map_err(|e| name_a_full_jail(e.into(), jail_base.as_deref()))
        .context("the run failed")?;
    progress.finish();
    backends::print_notes(&s.backends);
    report.notes.extend(notes);
    let code = finish(report, &s.opts.report_dir, a.pairs.baseline.as_deref())?;
    if stop_requested() {
        eprintln!("snapconf: interrupted; partial report written");
        return Ok(INTERRUPTED);
    }
    Ok(code)
}

/// `e`, with "the jail filesystem `MOUNT` is full (ENOSPC)" added as its context when one
/// of its causes is `ENOSPC` (or prints `os error 28`, as a tool's or reaper's stderr does)
/// and no cause says so already; `jail_base` is where the jails were made (the system temp
/// dir when `None`).
pub fn name_a_full_jail(e: anyhow::Error, jail_base: Option<&Path>) -> anyhow::Error {
    let said = e
        .chain()
        .any(|c| c.to_string().contains("is full (ENOSPC)"));
    let full = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(snapconf_producers::process::is_no_space)
            || c.to_string().contains("(os error 28)")
    });
    if !full || said {
        return e;
    }
    let base = jail_base.map_or_else(std::env::temp_dir, Path::to_path_buf);
    let message = snapconf_producers::process::full_filesystem(&base);
    e.context(message)
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
