//! `snapconf fuzz`: mutate seed and adversarial archives and run them through one
//! extractor (`--extractor`), or hunt for parser disagreements (`--parsers`).

use super::adapters;
use super::args::FuzzArgs;
use super::Usage;
use snapconf_harness::engine::events::{JsonEvent, Output};
use snapconf_harness::engine::progress::{Event, FindingEvent, Progress};
use snapconf_harness::exit;
use snapconf_harness::fuzz::{
    fuzz as fuzz_session, read_replay, replay_archive, CoverageMode, FuzzEvent, FuzzOptions,
};
use snapconf_harness::jail::default_jail_base;
use snapconf_harness::jail::host_canary::HostCanary;
use snapconf_harness::model::policy_map::reference_policy;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The corpora directory: `--corpora` when given; else `corpora` in the working directory
/// when it has one; else the checkout's `corpora/` that this binary was built from.
pub fn corpora_dir(given: Option<&Path>) -> PathBuf {
    if let Some(p) = given {
        return p.to_path_buf();
    }
    let here = PathBuf::from("corpora");
    if here.join("seeds").is_dir() {
        return here;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora")
}

/// `(label, bytes)` of every `.tar` in `<corpora>/seeds` and `<corpora>/adversarial`; each
/// a regular file of at most [`ARCHIVE_LIMIT`](snapconf_producers::input::ARCHIVE_LIMIT)
/// bytes, else a usage error naming it.
pub fn load_bases(corpora: &Path) -> Result<Vec<(String, Vec<u8>)>, Usage> {
    let mut out = Vec::new();
    for sub in ["seeds", "adversarial"] {
        let dir = corpora.join(sub);
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if p.extension().is_some_and(|e| e == "tar") {
                let bytes = snapconf_producers::input::read_file(
                    &p,
                    snapconf_producers::input::ARCHIVE_LIMIT,
                )
                .map_err(|e| Usage(format!("corpus: {e}")))?;
                let label = format!(
                    "{sub}/{}",
                    p.file_name()
                        .map(|n| n.to_string_lossy())
                        .unwrap_or_default()
                );
                out.push((label, bytes));
            }
        }
    }
    if out.is_empty() {
        return Err(Usage(format!(
            "no base archives under `{}` (seeds/, adversarial/); pass --corpora",
            corpora.display()
        )));
    }
    Ok(out)
}

/// What a fuzz finding's `repro.sh` passes back besides `--extractor` and `--replay`: the
/// `--backend` files and the `--profile` of this session, absolute where they are paths,
/// so that the script runs from anywhere.
fn replay_args(a: &FuzzArgs) -> String {
    let absolute = |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.into());
    let backends: Vec<PathBuf> = a.backends.iter().map(|b| absolute(b)).collect();
    let mut args = snapconf_harness::engine::repro::backend_args(&backends);
    if let Some(p) = &a.profile {
        // A built-in profile's name stays a name; a file becomes an absolute path.
        let p = if std::path::Path::new(p).exists() {
            absolute(std::path::Path::new(p)).display().to_string()
        } else {
            p.clone()
        };
        args.push_str(" --profile ");
        args.push_str(&snapconf_harness::engine::repro::shell_word(&p));
    }
    args
}

pub fn fuzz(a: FuzzArgs) -> anyhow::Result<i32> {
    let out = super::output::set(&a.output)?;
    // From the start: a signal while tools are probed leaves no probe's scratch behind.
    super::stop_on_signals()?;
    // What killed snapconf processes left in the jail base goes first.
    snapconf_harness::jail::leftovers::sweep_at_start(a.jail_dir.as_deref());
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    });
    if out.json() && (a.parsers || a.replay.is_some()) {
        return Err(Usage(
            "--message-format json applies to `--extractor` sessions, not --parsers or --replay"
                .into(),
        )
        .into());
    }
    if a.parsers {
        if a.baseline.is_some() {
            return Err(Usage(
                "--baseline applies to `--extractor` sessions, not --parsers".into(),
            )
            .into());
        }
        return super::parsers::hunt(&a, seed);
    }
    // Read before anything runs: a bad file is a usage error (exit 2), not a late failure.
    let baseline = a
        .baseline
        .as_deref()
        .map(|p| snapconf_harness::report::Baseline::load(p).map_err(Usage))
        .transpose()?;
    // The archive to replay too: a FIFO, a device or a huge file is refused here, at once.
    let replay = match &a.replay {
        None => None,
        Some(dir) if !dir.exists() => {
            return Err(Usage(format!(
                "--replay `{}`: no such reproducer directory or archive",
                dir.display()
            ))
            .into());
        }
        Some(dir) => Some(read_replay(dir).map_err(|e| Usage(format!("--replay: {e}")))?),
    };
    let Some(asked) = a.extractor.clone() else {
        return Err(Usage("pass --extractor NAME or --parsers".into()).into());
    };
    let names: Vec<String> = asked
        .split(',')
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .collect();
    // Before any tool is probed: in an unusable temp dir every one would look missing.
    super::common::temp_dir_usable()?;
    let backends = super::backends::load(&a.backends)?;
    let profile = super::backends::profile(a.profile.as_deref(), &backends)?;
    let chosen = adapters::extractors(&names, reference_policy(&profile, None), &backends)?;
    // Only what was asked: a `--backend`'s extractor is fuzzed when named (or with `all`).
    let every = names.iter().any(|n| n == "all");
    let exs: Vec<Box<dyn snapconf_producers::Extractor>> = chosen
        .run
        .into_iter()
        .filter(|e| every || names.iter().any(|n| n == e.name()))
        .collect();
    let skipped: Vec<_> = chosen
        .skipped
        .into_iter()
        .filter(|s| every || names.contains(&s.name))
        .collect();
    let incomplete = super::common::unavailable_asked("extractor", &names, &skipped, &backends);
    if exs.is_empty() {
        eprintln!("snapconf: extractor `{asked}` is not available here; nothing ran");
        return Ok(exit::NOTHING_RAN);
    }
    if a.replay.is_some() && (exs.len() > 1 || every) {
        return Err(Usage(format!(
            "--replay takes one --extractor, not `{asked}`: the one the finding names"
        ))
        .into());
    }
    let name = asked.clone();
    let bin = super::self_exe().unwrap_or_else(|_| PathBuf::from("snapconf"));
    let jail_base = a.jail_dir.clone().or_else(default_jail_base);
    let view = !a.no_view
        && match snapconf_harness::jail::view::probe(jail_base.as_deref()) {
            Ok(()) => true,
            Err(why) => {
                eprintln!(
                    "snapconf fuzz: no filesystem view ({why}); archives that could reach past \
                     the jail are skipped and counted"
                );
                false
            }
        };
    // In a view, the in-process reference runs as a child (`snapconf hydrate`) inside it.
    let exs: Vec<Box<dyn snapconf_producers::Extractor>> = exs
        .into_iter()
        .map(|ex| -> Box<dyn snapconf_producers::Extractor> {
            if view && ex.name() == "reference" {
                Box::new(snapconf_harness::engine::faults::ChildReference::new(
                    bin.clone(),
                    &reference_policy(&profile, None),
                ))
            } else {
                ex
            }
        })
        .collect();
    // A default directory is unique to this process (two sessions of one seed never share
    // one), as `run`'s is.
    let report_dir = a.report_dir.clone().unwrap_or_else(|| {
        let label = format!("fuzz-{}", names.join("+"));
        snapconf_harness::engine::report_dir::default_report_dir(&label, seed)
    });
    let opts = FuzzOptions {
        bases: if a.replay.is_some() {
            Vec::new()
        } else {
            load_bases(&corpora_dir(a.corpora.as_deref()))?
        },
        profile,
        time: Duration::from_secs(a.time),
        runs: a.runs,
        seed,
        timeout: Duration::from_secs(a.timeout),
        jail_base: jail_base.clone(),
        report_dir: report_dir.clone(),
        shrink_runs: a.shrink_runs,
        bin,
        checks: snapconf_harness::checks::Check::ALL.to_vec(),
        view,
        server: !a.one_shot,
        jobs: a
            .jobs
            .map_or_else(snapconf_harness::engine::pool::default_jobs, |j| j as usize),
        replay_args: replay_args(&a),
        known: baseline.clone().unwrap_or_default(),
        causes_per_check: snapconf_harness::fuzz::MAX_CAUSES_PER_CHECK,
        coverage: a.coverage,
    };
    if let (Some(dir), Some((file, bytes)), [ex]) = (&a.replay, &replay, exs.as_slice()) {
        let canary = HostCanary::take();
        let hits = replay_archive(file, bytes, ex.as_ref(), &opts)?;
        canary.check().map_err(super::Environment)?;
        if hits.is_empty() {
            outln!(
                "fixed: `{}` no longer shows a finding with `{name}`",
                dir.display()
            );
            return Ok(exit::OK);
        }
        for (check, message) in &hits {
            outln!("reproduces: {check}: {message}");
        }
        return Ok(exit::FINDINGS);
    }
    // `--coverage on` needs coverage from every extractor asked for, before any session.
    if a.coverage == CoverageMode::On {
        for ex in &exs {
            if !snapconf_harness::fuzz::coverage_available(ex.as_ref(), &opts)? {
                return Err(Usage(format!(
                    "--coverage on: extractor `{}` reports no coverage here (only the Python \
                     extractors and backends on snapconf_worker.py or snapconf_worker.js do, \
                     through their persistent worker in a filesystem view); use \
                     --coverage auto or off",
                    ex.name()
                ))
                .into());
            }
        }
    }
    // Checked (and an earlier session's files removed) before the session, as for `run`.
    super::not_interrupted()?;
    snapconf_harness::engine::report_dir::prepare_report_dir(&report_dir, a.report_dir.is_some())
        .map_err(Usage::from)?;
    super::output::event(JsonEvent::RunStarted {
        mode: "fuzz".into(),
        seed,
        profile: opts.profile.name.clone(),
        producers: Vec::new(),
        extractors: exs.iter().map(|e| e.name().to_owned()).collect(),
        jobs: opts.jobs,
        total: None,
        seconds: Some(a.time * exs.len() as u64),
        report_dir: report_dir.display().to_string(),
    });
    let mut summaries = Vec::with_capacity(exs.len());
    for ex in &exs {
        if snapconf_harness::jail::cleanup::stop_requested() {
            break;
        }
        summaries.push((ex.name().to_owned(), session(ex.as_ref(), &opts, &a, out)?));
    }
    std::fs::create_dir_all(&report_dir)
        .map_err(|e| Usage(format!("cannot create `{}`: {e}", report_dir.display())))?;
    // One extractor: its summary, as it always was; several: one object, by name.
    let json = match summaries.as_slice() {
        [(_, one)] => serde_json::to_string_pretty(one)?,
        many => serde_json::to_string_pretty(
            &many
                .iter()
                .map(|(n, s)| (n.as_str(), s))
                .collect::<std::collections::BTreeMap<_, _>>(),
        )?,
    };
    std::fs::write(report_dir.join("fuzz.json"), json)?;
    let mut report: Option<snapconf_harness::report::RunReport> = None;
    for (ex_name, summary) in &summaries {
        let r = snapconf_harness::fuzz::fuzz_report(summary, ex_name, &opts.profile.name, seed);
        match &mut report {
            None => report = Some(r),
            Some(all) => {
                all.cases += r.cases;
                all.pairs.extend(r.pairs);
                all.findings.extend(r.findings);
                for n in r.notes {
                    if !all.notes.contains(&n) {
                        all.notes.push(n);
                    }
                }
            }
        }
    }
    let Some(mut report) = report else {
        // Stopped before the first session began.
        return Err(super::Interrupted.into());
    };
    report.incomplete = incomplete;
    let total: u64 = summaries.iter().map(|(_, s)| s.executions).sum();
    for (ex_name, s) in &summaries {
        if s.executions == 0 && total > 0 {
            report
                .incomplete
                .push(format!("extractor `{ex_name}` ran 0 executions"));
        }
        // A worker that ends without an answer never ran the extractor on that archive: its
        // "refusals" are not the extractor's. Every one is said; on every request, or on half
        // of them or more, "every pair conforms" would be false: less than asked ran.
        let last = s.last_worker_death.as_deref().unwrap_or("(no message)");
        if s.extractor_runs > 0 && s.worker_deaths >= s.extractor_runs {
            report.incomplete.push(format!(
                "extractor `{ex_name}` never ran: its worker ended without an answer on each of its {} request(s); last: {last}",
                s.extractor_runs,
            ));
        } else if s.worker_deaths * 2 >= s.extractor_runs && s.worker_deaths > 0 {
            report.incomplete.push(format!(
                "extractor `{ex_name}` ran on half of its archives or fewer: its worker ended without an answer on {} of {} request(s); last: {last}",
                s.worker_deaths, s.extractor_runs,
            ));
        } else if s.worker_deaths > 0 {
            report.notes.push(format!(
                "extractor `{ex_name}`: its worker ended without an answer on {} of {} request(s) (counted as refusals); last: {last}",
                s.worker_deaths, s.extractor_runs,
            ));
        }
    }
    // The same report as `run`'s; exit 1 only for a cause the baseline does not list, 3
    // when nothing ran (0 executions) or an extractor asked for is not available.
    let code = super::common::finish(report, &report_dir, a.baseline.as_deref())?;
    if snapconf_harness::jail::cleanup::stop_requested() {
        eprintln!("snapconf fuzz: interrupted; the findings so far are written");
        return Ok(snapconf_harness::jail::cleanup::INTERRUPTED);
    }
    Ok(code)
}

/// One session of `ex` (see [`fuzz_session`]), its findings said as they come and its
/// figures after, on stdout and stderr.
///
/// # Errors
/// The session's error (a full jail filesystem named), or the host canary's: a session
/// that reached the host is not a result.
fn session(
    ex: &dyn snapconf_producers::Extractor,
    opts: &FuzzOptions,
    a: &FuzzArgs,
    out: Output,
) -> anyhow::Result<snapconf_harness::fuzz::FuzzSummary> {
    let name = ex.name();
    super::output::note(&format!(
        "snapconf fuzz: extractor `{name}`, seed {}, {} s, {} base archives, {} worker(s)",
        opts.seed,
        a.time,
        opts.bases.len(),
        opts.jobs
    ));
    // A signal ends the session at the next execution, so no jail is left behind.
    let began = std::time::Instant::now();
    let canary = HostCanary::take();
    let mut progress = Progress::counting(a.time, "fuzz", out);
    let summary = fuzz_session(ex, opts, &mut |e| progress.event(&fuzz_event(e, opts)))
        .map_err(|e| super::common::name_a_full_jail(e.into(), opts.jail_base.as_deref()))?;
    progress.finish();
    // Before anything is reported: a session that reached the host is not a result.
    canary.check().map_err(super::Environment)?;
    let secs = began.elapsed().as_secs_f64().max(1e-3);
    if out.json() {
        super::output::event(JsonEvent::FuzzFinished {
            executions: summary.executions,
            rate: summary.executions as f64 / secs,
            accepted: summary.accepted,
            refused: summary.refused,
            skipped_unsafe_for_host: summary.skipped_unsafe_for_host,
        });
    } else {
        outln!(
            "{name}: {} executions ({:.0}/s; {} accepted, {} refused, {} mutants skipped as unsafe for the host); {} finding kind(s); report in `{}`",
            summary.executions,
            summary.executions as f64 / secs,
            summary.accepted,
            summary.refused,
            summary.skipped_unsafe_for_host,
            summary.findings.len(),
            opts.report_dir.display()
        );
    }
    if let Some(c) = &summary.coverage {
        super::output::note(&format!(
            "snapconf fuzz: coverage feedback: {} coverage id(s) seen in {} execution(s); {} input(s) kept for new code, {} in the corpus at the end ({} bytes)",
            c.ids, c.executions, c.kept, c.corpus, c.corpus_bytes
        ));
    }
    if summary.hangs_cut_short > 0 {
        super::output::note(&format!(
            "snapconf fuzz: {} execution(s) ended as further hangs at a shortened timeout (twice the slowest that finished, at least 250 ms), once a `hang` was pending or found; hangs per class that drew them: {}",
            summary.hangs_cut_short,
            summary
                .hung_by
                .iter()
                .map(|(origin, n)| format!("{origin} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if summary.server_starts > 0 {
        super::output::note(&format!(
            "snapconf fuzz: {} persistent server start(s) ({} of them a spare made ahead that replaced a dead server); {} change(s) outside the root restored, {} view(s) laid out again",
            summary.server_starts,
            summary.spares_used,
            summary.view_restores - summary.view_rebuilds.min(summary.view_restores),
            summary.view_rebuilds
        ));
        let p = &summary.phases;
        super::output::note(&format!(
            "snapconf fuzz: seconds per phase (all workers): lay out {:.2}, server start {:.2}, before {:.2}, hydrate {:.2}, judge {:.2}, reset {:.2}",
            p.lay_out, p.start, p.before, p.hydrate, p.judge, p.reset
        ));
    }
    Ok(summary)
}

/// The progress event of a fuzz session's event (`opts`: the session's options).
fn fuzz_event(e: FuzzEvent, opts: &FuzzOptions) -> Event {
    match e {
        FuzzEvent::Found(f) => Event::Finding(Box::new(FindingEvent {
            check: f.check,
            producer: None,
            extractor: Some(f.extractor.clone()),
            case: None,
            case_dir: Some(f.case_dir.clone()),
            known: Some(f.known),
            message: f.message.clone(),
        })),
        FuzzEvent::Tick {
            executions,
            findings,
            elapsed,
        } => Event::Executions {
            executions,
            findings,
            elapsed,
            time: opts.time,
        },
    }
}
