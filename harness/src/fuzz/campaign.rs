//! The fuzz campaign (`snapconf fuzz`, a "fuzz session" to the user): start `-j` workers
//! ([`super::worker`]), gather their findings as they are written and add up their counts.

use super::causes::Causes;
use super::finding::FuzzFinding;
use super::options::{parsed_bases, FuzzOptions};
use super::worker::{worker, Shared, WorkerNote};
use crate::error::HarnessError;
use serde::Serialize;
use snapconf_producers::Extractor;
use std::collections::BTreeMap;
use std::time::Instant;

/// Progress events.
#[derive(Clone, Debug)]
pub enum FuzzEvent {
    /// A new finding kind was found and written.
    Found(Box<FuzzFinding>),
    /// About once a second (`TICK`): the executions of every worker so far (shrinking
    /// not counted), the findings written so far, and the time since the session began.
    Tick {
        /// Executions so far.
        executions: u64,
        /// Findings written so far.
        findings: usize,
        /// Since the session began.
        elapsed: std::time::Duration,
    },
}

/// How often a session tells [`FuzzEvent::Tick`] at most.
pub const TICK: std::time::Duration = std::time::Duration::from_secs(1);

/// The end of a session.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FuzzSummary {
    /// Archives run through the extractor.
    pub executions: u64,
    /// Mutants skipped because they could reach past the jail ([`super::host_safe`]).
    pub skipped_unsafe_for_host: u64,
    /// Extractor refusals, acceptances.
    pub refused: u64,
    /// Extractor acceptances.
    pub accepted: u64,
    /// Archives run through the extractor in all, the shrinking's included.
    pub extractor_runs: u64,
    /// Persistent servers started ([`FuzzOptions::server`]): one per worker, and one more
    /// after each that died or hung.
    pub server_starts: u64,
    /// Executions through a kept view that changed something outside the root, after
    /// which the jail was restored ([`crate::jail::restore`]) or laid out anew.
    pub view_restores: u64,
    /// Kept views laid out anew because a change outside the root could not be restored.
    pub view_rebuilds: u64,
    /// Executions ended at the shortened timeout (ten times the worker's slowest that
    /// finished, at least 1 s) once a `hang` was pending or kept: further hangs, not judged
    /// as findings of their own.
    pub hangs_cut_short: u64,
    /// Dead servers (killed at a hang, or died) and dropped jails replaced by the spare a
    /// worker had made ahead (`fuzz::persist`), instead of a start on the worker's path.
    #[serde(default)]
    pub spares_used: u64,
    /// Archives (shrinking included, as [`FuzzSummary::extractor_runs`]) during which the
    /// persistent server ended without answering and without a signal (a worker that
    /// exits at once, or on each request): each is a refusal the extractor never made.
    /// `snapconf fuzz` says so: a note for a few, exit 3 for half of the runs or more
    /// ("less than asked"; "never ran" when it is every run, after which the session
    /// stops early).
    #[serde(default)]
    pub worker_deaths: u64,
    /// The message of the last such run, naming the worker command and its exit status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_worker_death: Option<String>,
    /// Executions (shrinking not included) per origin: the attack class id that drew
    /// them, or `mutant` for a mutant of a base archive or a corpus entry without a class.
    #[serde(default)]
    pub drawn_by: BTreeMap<String, u64>,
    /// Executions that hung (at the full timeout or the cut) per origin, as
    /// [`FuzzSummary::drawn_by`]: each lowered the weight of the class or base that drew it.
    #[serde(default)]
    pub hung_by: BTreeMap<String, u64>,
    /// Seconds the persistent executions of all workers spent per phase (zero when every
    /// execution was one-shot).
    pub phases: super::persist::Phases,
    /// Each distinct cause found ([`FuzzFinding::cause`]; at most
    /// [`FuzzOptions::causes_per_check`] new ones per check and attack class, and the known
    /// ones besides), in order of discovery, with its hits over the whole session.
    pub findings: Vec<FuzzFinding>,
    /// Executions (shrinking not included) with a hit of each check, by check id.
    #[serde(default)]
    pub hits: BTreeMap<String, u64>,
    /// Executions with a hit of any check.
    #[serde(default)]
    pub failing: u64,
    /// Hits shrunk: one per new cause estimate (a hit whose cause was kept already is
    /// counted into it instead, [`FuzzFinding::hits`]).
    #[serde(default)]
    pub shrinks: u64,
    /// Coverage feedback's figures (`fuzz/feedback.rs`); `None` for a blind session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<CoverageFigures>,
}

/// What coverage feedback saw in a session ([`FuzzSummary::coverage`]).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct CoverageFigures {
    /// Distinct coverage ids seen (lines of `tarfile.py`, blocks of a JavaScript file):
    /// over every worker for a session, one worker's for a worker's part.
    pub ids: u64,
    /// Inputs held in the workers' corpora at the end.
    pub corpus: u64,
    /// Their bytes.
    pub corpus_bytes: u64,
    /// Inputs kept over the session for reaching new code (those dropped for room
    /// included).
    pub kept: u64,
    /// Executions whose answer carried coverage.
    pub executions: u64,
}

/// Run a fuzz session against `ex` on `opts.jobs` workers. Findings are in the order they
/// were written. `Err` only for faults of snapconf itself (the first worker's to fail).
pub fn fuzz(
    ex: &dyn Extractor,
    opts: &FuzzOptions,
    on_event: &mut dyn FnMut(FuzzEvent),
) -> Result<FuzzSummary, HarnessError> {
    let bases = parsed_bases(opts)?;
    // Before the clock starts: `auto` runs one execution to see whether the extractor
    // reports coverage.
    let guided = super::feedback::guided(ex, opts)?;
    let start = Instant::now();
    let causes = std::sync::Mutex::new(Causes::new(opts.causes_per_check));
    let failed = std::sync::atomic::AtomicBool::new(false);
    let executions = std::sync::atomic::AtomicU64::new(0);
    let started = std::sync::atomic::AtomicU64::new(0);
    let workers = opts.jobs.max(1);
    let covered = std::sync::Mutex::new(std::collections::HashSet::new());
    let mut summary = FuzzSummary::default();
    let mut first_error = None;
    let shared = Shared {
        ex,
        opts,
        bases: &bases,
        causes: &causes,
        failed: &failed,
        start,
        executions: &executions,
        started: &started,
        guided,
        covered: &covered,
    };
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel::<WorkerNote>();
        for k in 0..workers {
            let tx = tx.clone();
            let shared = &shared;
            scope.spawn(move || {
                let r = worker(shared, k as u64, &tx);
                if r.is_err() {
                    shared
                        .failed
                        .store(true, std::sync::atomic::Ordering::SeqCst);
                }
                let _ = tx.send(WorkerNote::Ended(Box::new(r)));
            });
        }
        drop(tx);
        let mut ticked = Instant::now();
        loop {
            if ticked.elapsed() >= TICK {
                ticked = Instant::now();
                on_event(FuzzEvent::Tick {
                    executions: executions.load(std::sync::atomic::Ordering::Relaxed),
                    findings: summary.findings.len(),
                    elapsed: start.elapsed(),
                });
            }
            let note = match rx.recv_timeout(TICK.saturating_sub(ticked.elapsed())) {
                Ok(note) => note,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            };
            match note {
                WorkerNote::Found(f) => {
                    on_event(FuzzEvent::Found(f.clone()));
                    summary.findings.push(*f);
                }
                WorkerNote::Ended(r) => match *r {
                    Ok(part) => {
                        summary.executions += part.executions;
                        summary.skipped_unsafe_for_host += part.skipped_unsafe_for_host;
                        summary.accepted += part.accepted;
                        summary.refused += part.refused;
                        summary.server_starts += part.server_starts;
                        summary.extractor_runs += part.extractor_runs;
                        summary.view_rebuilds += part.view_rebuilds;
                        summary.view_restores += part.view_restores;
                        summary.hangs_cut_short += part.hangs_cut_short;
                        summary.spares_used += part.spares_used;
                        summary.worker_deaths += part.worker_deaths;
                        if part.last_worker_death.is_some() {
                            summary.last_worker_death = part.last_worker_death;
                        }
                        for (origin, n) in part.drawn_by {
                            *summary.drawn_by.entry(origin).or_default() += n;
                        }
                        for (origin, n) in part.hung_by {
                            *summary.hung_by.entry(origin).or_default() += n;
                        }
                        summary.phases.add(&part.phases);
                        summary.failing += part.failing;
                        summary.shrinks += part.shrinks;
                        if let Some(c) = part.coverage {
                            let all = summary.coverage.get_or_insert_with(Default::default);
                            all.corpus += c.corpus;
                            all.corpus_bytes += c.corpus_bytes;
                            all.kept += c.kept;
                            all.executions += c.executions;
                        }
                        for (check, n) in part.hits {
                            *summary.hits.entry(check).or_default() += n;
                        }
                    }
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                },
            }
        }
    });
    if let Some(c) = &mut summary.coverage {
        c.ids = covered
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .len() as u64;
    }
    // Hits counted after a cause's finding was written belong to it too.
    let causes = causes.into_inner().unwrap_or_else(|e| e.into_inner());
    for f in &mut summary.findings {
        if let Some(k) = causes
            .kept()
            .iter()
            .find(|k| k.check == f.check && k.cause == f.cause)
        {
            f.hits = k.hits;
            f.first_seen = k.first;
            f.classes = k.origins.iter().cloned().collect();
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}
