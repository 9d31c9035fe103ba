//! The fuzz loop: pick a base archive, mutate it, run it through the extractor over a small
//! prior workspace in a jail, judge the outcome, shrink and write each new finding kind.

use super::attack::attack;
use super::host_safe::host_safe;
use super::judge::judge;
use super::mutate::{mutate, Mutation};
use super::persist::Persist;
use super::signature::signature;
use crate::checks::{self, Check, Evidence, Violation};
use crate::engine::case::stragglers;
use crate::engine::repro::{shell_word, FindingFile, ReproDir, ReproMode, Script};
use crate::error::{HarnessError, IoContext};
use crate::jail::view::View;
use crate::jail::Jail;
use crate::model::profile::Profile;
use crate::report::ShrinkEnd;
use crate::workspace::observe::observe;
use serde::Serialize;
use snapconf_producers::process::view::with_view;
use snapconf_producers::{Extractor, HydrateRequest, Outcome};
use snapconf_tarbytes::Records;
use snapconf_tarbytes::Rng;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a fuzz session needs.
pub struct FuzzOptions {
    /// Base archives: `(label, bytes)`, e.g. the files of `corpora/seeds` and
    /// `corpora/adversarial`.
    pub bases: Vec<(String, Vec<u8>)>,
    /// The profile the extractor promises (decides which mode bits are outside policy).
    pub profile: Profile,
    /// Wall-clock budget for the whole session.
    pub time: Duration,
    /// Seed of the mutation generator.
    pub seed: u64,
    /// Timeout of one hydration.
    pub timeout: Duration,
    /// Where jails go (system temp dir when `None`).
    pub jail_base: Option<PathBuf>,
    /// Receives `cases/<id>/` for each finding.
    pub report_dir: PathBuf,
    /// Most extractor runs spent shrinking one finding.
    pub shrink_runs: u32,
    /// The binary `repro.sh` calls.
    pub bin: PathBuf,
    /// The checks each execution is judged by: [`Check::ALL`] unless a test adds its own.
    pub checks: Vec<Check>,
    /// Run each hydration in a filesystem view ([`crate::jail::view`]) when the extractor
    /// can run in one, so that no mutant is skipped for the host's safety. The caller
    /// sets it after [`crate::jail::view::probe`] succeeded.
    pub view: bool,
    /// Workers fuzzing at once (`-j`; at least 1), each with jails of its own and a seed of
    /// its own (worker `k` draws from `seed + k`), sharing the causes found: a cause is
    /// kept and shrunk once whichever worker finds it.
    pub jobs: usize,
    /// What `repro.sh` passes back to `snapconf fuzz` besides `--extractor` and `--replay`
    /// so that the finding replays the same way: ` --backend 'FILE'` for a backend's
    /// extractor, ` --profile 'P'` when one was given; shell-quoted words, each after a
    /// space. Empty for a built-in extractor under the default profile.
    pub replay_args: String,
    /// Run an extractor that has a persistent server
    /// ([`snapconf_producers::Extractor::server_command`]) through it, one server and one
    /// kept view per worker (`fuzz::persist`), when in a view; else (and for every
    /// other extractor) one process and one fresh view per archive. The checks see the
    /// same either way; `--one-shot` turns it off.
    pub server: bool,
    /// Known causes (`--baseline`): a shrunk finding whose cause the baseline lists
    /// ([`crate::report::CauseKey::of_fuzz_cause`]) is written and reported as known but
    /// takes none of its check's [`FuzzOptions::causes_per_check`] slots, and its shrink is
    /// given back (up to [`MAX_SHRINKS_PER_CHECK`] per check), so a documented behaviour
    /// hides no other cause of the same check. Empty: every cause is new.
    pub known: crate::report::Baseline,
    /// Distinct new causes kept per check ([`MAX_CAUSES_PER_CHECK`] for `snapconf fuzz`;
    /// `hang` keeps one whatever this says). At least 1.
    pub causes_per_check: usize,
}

/// Distinct causes kept per check in one session: a behaviour the extractor documents
/// takes one, and later, different findings of the same check are still reported.
pub const MAX_CAUSES_PER_CHECK: usize = 5;
/// Findings of one check shrunk per session (a repeat of a known cause costs a shrink to
/// tell it apart).
pub const MAX_SHRINKS_PER_CHECK: usize = 12;

/// One finding of a session (the first of its cause); its reproducer's `finding.json`
/// ([`crate::engine::repro::FindingFile`], mode `fuzz`) is written from it.
#[derive(Clone, Debug, Serialize)]
pub struct FuzzFinding {
    /// Format version.
    pub schema: u32,
    /// The violated check.
    pub check: Check,
    /// The extractor.
    pub extractor: String,
    /// The profile's name.
    pub profile: String,
    /// What happened.
    pub message: String,
    /// The session seed and the iteration that found it.
    pub seed: u64,
    /// 0-based iteration.
    pub iteration: u64,
    /// The base archive's label (`seeds/x.tar`), or the attack class and what it built
    /// (`attack/dir-to-symlink: ...`).
    pub base: String,
    /// The mutations applied to the base.
    pub mutations: Vec<Mutation>,
    /// The reference's verdict on the shrunk archive.
    pub reference: String,
    /// Records (headers, extension headers included) in the shrunk archive.
    pub records: usize,
    /// The cause: the signature of the shrunk archive ([`super::signature`]), or for
    /// `atomic-hydration` `prior: ` and the message (what the failure did to the prior);
    /// findings of one check with the same cause are one.
    pub cause: String,
    /// `cases/<id>` relative to the report directory.
    pub case_dir: String,
    /// The baseline ([`FuzzOptions::known`]) lists the cause: reported, not failing the
    /// session, and not counted against the check's slots.
    #[serde(default)]
    pub known: bool,
    /// How the shrink ended: `minimal`, or the budget that stopped it first (`steps`:
    /// `--shrink-runs`; `time`: the session's time), `interrupted`.
    #[serde(default)]
    pub shrink: ShrinkEnd,
}

/// Progress events.
#[derive(Clone, Debug)]
pub enum FuzzEvent {
    /// A new finding kind was found and written.
    Found(Box<FuzzFinding>),
}

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
    /// Seconds the persistent executions of all workers spent per phase (zero when every
    /// execution was one-shot).
    pub phases: super::persist::Phases,
    /// Each distinct cause found ([`FuzzFinding::cause`]; at most
    /// [`FuzzOptions::causes_per_check`] new ones per check, and the known ones besides),
    /// in order of discovery.
    pub findings: Vec<FuzzFinding>,
    /// Executions (shrinking not included) with a hit of each check, by check id.
    #[serde(default)]
    pub hits: BTreeMap<String, u64>,
    /// Executions with a hit of any check.
    #[serde(default)]
    pub failing: u64,
}

/// A finding of one execution (before shrinking): a violation of one check.
pub(super) type Hit = Violation;

/// What an execution found: its violations, and whether the extractor accepted.
pub(super) type Executed = (Vec<Hit>, bool);

/// The small prior every execution hydrates over: a file, a directory with a file, and a
/// link planted by the prior at the decoy in the root's parent (an extractor that writes
/// through it changes the decoy: `containment`).
pub(super) fn write_prior(root: &Path) -> std::io::Result<()> {
    std::fs::write(root.join("a"), b"old a\n")?;
    std::fs::create_dir(root.join("d"))?;
    std::fs::write(root.join("d/f"), b"old d/f\n")?;
    std::os::unix::fs::symlink("../decoy", root.join("l"))
}

/// Whether `bytes` can run through `ex` in this session: always in a filesystem view
/// ([`FuzzOptions::view`] and an extractor that can run in one), else only an archive
/// that cannot reach past the jail ([`host_safe`]).
fn runnable(bytes: &[u8], ex: &dyn Extractor, opts: &FuzzOptions) -> bool {
    (opts.view && ex.view_paths().is_some()) || host_safe(bytes)
}

/// Run `bytes` through `ex` once over the small prior and judge the hydration with the
/// session's checks; the violations and whether the extractor accepted. Through the
/// worker's persistent server and view when `persist` has one ([`Persist`]), else in a
/// fresh jail (and view) with a process of its own; the checks see the same either way.
fn execute(
    bytes: &[u8],
    ex: &dyn Extractor,
    opts: &FuzzOptions,
    persist: &mut Persist,
) -> Result<Executed, HarnessError> {
    persist.runs += 1;
    let began = Instant::now();
    let executed = if persist.enabled() {
        persist.execute(bytes, ex, opts)?
    } else {
        execute_once(bytes, ex, opts, persist.timeout(opts))?
    };
    if !executed.0.iter().any(|h| h.check == Check::HANG) {
        persist.slowest = persist.slowest.max(began.elapsed());
    }
    Ok(executed)
}

/// The shortest timeout [`hang_cut`] gives.
const HANG_CUT_MIN: Duration = Duration::from_secs(1);

/// How many times a worker's slowest execution that did not hang an execution may take
/// once the session's `hang` slot is taken ([`hang_cut`]).
const HANG_CUT_FACTOR: u32 = 10;

/// The timeout of a worker's fuzz-loop executions: ten times the worker's slowest
/// execution that did not hang, at least 1 s, at most the session's `--timeout`. An
/// archive that hangs the extractor (python-tar blocks on a FIFO member followed by a
/// regular file of the same name) would otherwise cost a whole `--timeout` each time the
/// fuzzer draws another of its kind, though a session keeps one `hang`. An execution past
/// the cut runs again at the full timeout while a `hang` could still become a finding
/// (none pending, none kept); after that it is another hang, counted in
/// [`FuzzSummary::hangs_cut_short`]. The same cut bounds each run of a shrink (a
/// candidate past it does not reproduce another check; it does reproduce a hang), and a
/// shrunk archive is confirmed at the full timeout (a hang's that was only slow is
/// replaced by the archive found).
fn hang_cut(full: Duration, slowest: Duration) -> Duration {
    (slowest * HANG_CUT_FACTOR).max(HANG_CUT_MIN).min(full)
}

/// One execution in a fresh jail (and view) with a process of its own; see [`execute`].
fn execute_once(
    bytes: &[u8],
    ex: &dyn Extractor,
    opts: &FuzzOptions,
    timeout: Duration,
) -> Result<Executed, HarnessError> {
    let jail = Jail::new(opts.jail_base.as_deref()).ctx(|| "cannot create a jail".into())?;
    let archive = jail.archive();
    std::fs::write(&archive, bytes).ctx(|| "cannot write the archive".into())?;
    // The same layout with or without the view, so that findings do not depend on it.
    let paths = ex.view_paths().filter(|_| opts.view);
    let view = View::prepare(
        &jail,
        paths.as_deref().unwrap_or_default(),
        std::slice::from_ref(&archive),
    )
    .ctx(|| "cannot lay out the filesystem view".into())?;
    let root = view.root();
    write_prior(&root).ctx(|| "cannot write the prior workspace".into())?;
    // The adapter's scratch (its stdout and stderr captures) lives outside the jail: the
    // view shows the tool the whole jail, and every entry of it is compared.
    let scratch_dir = scratch_beside(&jail)?;
    let before = Before::take(&jail, &root)?;
    let req = HydrateRequest {
        archive: &archive,
        root: &root,
        scratch: scratch_dir.path(),
        limits: None,
        timeout,
    };
    let outcome = match paths {
        Some(_) => with_view(view.prefix().to_vec(), || ex.hydrate(&req))?,
        None => ex.hydrate(&req)?,
    };
    let left = match paths {
        // Nothing outlives a view: its PID namespace ends with the tool. What is reaped
        // here is bwrap's own process inside it, still on its way out.
        Some(_) => {
            let _ = stragglers(ex.in_process());
            Vec::new()
        }
        None => stragglers(ex.in_process()),
    };
    let (judged, _) = before.judge(&jail, &root, bytes, &outcome, &left, ex, opts)?;
    Ok(judged)
}

/// A scratch directory beside `jail` (outside it: the view shows the tool the whole jail).
pub(super) fn scratch_beside(jail: &Jail) -> Result<tempfile::TempDir, HarnessError> {
    // Named with this process's pid, beside a jail that holds this process's lock in the
    // base, so a sweep after a SIGKILL removes it (`crate::jail::leftovers`).
    tempfile::Builder::new()
        .prefix(&crate::jail::leftovers::dir_prefix("scratch"))
        .tempdir_in(jail.path().parent().unwrap_or(jail.path()))
        .ctx(|| "cannot create scratch".into())
}

/// What an execution observes before the hydration: the prior workspace and the whole
/// jail.
pub(super) struct Before {
    w0: crate::model::tree::Tree,
    last: crate::jail::Snapshot,
}

impl Before {
    /// Observe the prior in `root` and snapshot the whole jail.
    pub(super) fn take(jail: &Jail, root: &Path) -> Result<Before, HarnessError> {
        let w0 = observe(root).ctx(|| "cannot observe the prior".into())?;
        let last = jail
            .snapshot_whole(root)
            .ctx(|| "cannot observe the jail".into())?;
        Ok(Before { w0, last })
    }

    /// Judge a hydration of `bytes` into `root` that ended with `outcome`, leaving the
    /// processes `left`: the violations and whether the extractor accepted, and the
    /// snapshot of the jail after it when anything outside the root changed (besides the
    /// root's parent's timestamps), `None` when nothing did.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn judge(
        self,
        jail: &Jail,
        root: &Path,
        bytes: &[u8],
        outcome: &Outcome,
        left: &[String],
        ex: &dyn Extractor,
        opts: &FuzzOptions,
    ) -> Result<(Executed, Option<crate::jail::Snapshot>), HarnessError> {
        let now = jail
            .snapshot_whole(root)
            .ctx(|| "cannot observe the jail".into())?;
        let rel = jail.rel(root);
        // The root's parent may be touched by a staging sibling that is gone again.
        let parent = rel
            .iter()
            .rposition(|&b| b == b'/')
            .map_or(&rel[..0], |i| &rel[..i]);
        let outside = self.last.changes_touching(&now, &[&rel], &[parent]);
        let accepted = matches!(outcome, Outcome::Success);
        // The reference's judgement costs a parse: only an accepted archive needs it.
        let judged = accepted.then(|| judge(bytes, &opts.profile));
        let mut ev = Evidence::hydration("hydration", outcome, root);
        ev.outside = &outside;
        ev.stragglers = left;
        ev.prior = Some(&self.w0);
        ev.profile = Some(&opts.profile);
        ev.judged = judged.as_ref();
        ev.cleared_by = ex.clears_root().then(|| ex.name());
        ev.promises = Some(ex.link_promises());
        let hits = checks::violations_of(&opts.checks, &ev)?;
        Ok(((hits, accepted), (!outside.is_empty()).then_some(now)))
    }
}

/// The smallest archive that still gives a hit of `check` ([`super::shrink::shrink_archive`]:
/// members, then records, then the tail), within `opts.shrink_runs` runs and the session's
/// time; and how the shrink ended (`minimal` unless a budget or a stop cut it short).
fn shrink(
    bytes: &[u8],
    check: Check,
    ex: &dyn Extractor,
    opts: &FuzzOptions,
    persist: &mut Persist,
    session_end: Instant,
) -> Result<(Vec<u8>, ShrinkEnd), HarnessError> {
    let mut runs = 0;
    let mut end = ShrinkEnd::Minimal;
    // Within the session's time; a finding made near its end still gets two timeouts'
    // worth (a `hang` costs a full timeout per run).
    let deadline = session_end.max(Instant::now() + opts.timeout * 2);
    let min = super::shrink::shrink_archive(bytes, |b| -> Result<Option<bool>, HarnessError> {
        let cut = if crate::jail::cleanup::stop_requested() {
            Some(ShrinkEnd::Interrupted)
        } else if runs >= opts.shrink_runs {
            Some(ShrinkEnd::Steps)
        } else if Instant::now() >= deadline {
            Some(ShrinkEnd::Time)
        } else {
            None
        };
        if let Some(c) = cut {
            end = c;
            return Ok(None);
        }
        runs += 1;
        Ok(Some(
            runnable(b, ex, opts)
                && execute(b, ex, opts, persist)?
                    .0
                    .iter()
                    .any(|h| h.check == check),
        ))
    })?;
    Ok((min, end))
}

/// The cause of a shrunk finding: for `atomic-hydration`, what the failure did to the prior
/// (its message: any refused archive shows the extractor's one way of failing, so archives
/// of every shape would otherwise fill the check's slots with one behaviour); for every
/// other check, the archive's [`signature`].
fn cause_of(check: Check, min: &[u8], message: &str) -> String {
    if check == Check::ATOMIC_HYDRATION {
        format!("prior: {message}")
    } else {
        signature(min)
    }
}

/// The causes a session has kept and the shrinks it has spent, per check; shared by its
/// workers. Known causes (the baseline's) are kept apart: they take no slot, and the
/// shrinks that led to one are given back, up to `MAX_SHRINKS_PER_CHECK` per check.
struct Causes {
    cap: usize,
    kept: BTreeMap<Check, Vec<String>>,
    tried: BTreeMap<Check, usize>,
    known: BTreeMap<Check, Vec<String>>,
    refunded: BTreeMap<Check, usize>,
}

impl Causes {
    /// No cause kept yet; at most `cap` new causes per check (at least 1).
    fn new(cap: usize) -> Causes {
        Causes {
            cap: cap.max(1),
            kept: BTreeMap::new(),
            tried: BTreeMap::new(),
            known: BTreeMap::new(),
            refunded: BTreeMap::new(),
        }
    }

    /// Whether a hit of `check` may be shrunk now (its check has room for another cause and
    /// shrinks left); counts the shrink if so.
    fn may_shrink(&mut self, check: Check) -> bool {
        if !self.room(check) {
            return false;
        }
        *self.tried.entry(check).or_default() += 1;
        true
    }

    /// Whether a hit of `check` could still become a finding: its check has room for
    /// another cause and shrinks left.
    fn room(&self, check: Check) -> bool {
        // A hang costs a timeout per shrink step, and its causes rarely differ: one, and
        // one shrink (two workers would otherwise shrink one each at the same time).
        let cap = self.cap_of(check);
        let shrinks = if check == Check::HANG {
            1
        } else {
            MAX_SHRINKS_PER_CHECK
        };
        self.kept.get(&check).map_or(0, Vec::len) < cap
            && self.tried.get(&check).copied().unwrap_or(0) < shrinks
    }

    /// Keeps `cause` of `check` if it was not kept before: its number among the check's
    /// new causes (1 for the first) or, when `known`, among its known causes; `None` for a
    /// cause kept already. A known cause gives the shrink that found it back.
    fn keep(&mut self, check: Check, cause: &str, known: bool) -> Option<usize> {
        if known {
            let refunded = self.refunded.entry(check).or_default();
            if *refunded < MAX_SHRINKS_PER_CHECK {
                *refunded += 1;
                if let Some(t) = self.tried.get_mut(&check) {
                    *t = t.saturating_sub(1);
                }
            }
        }
        let cap = self.cap_of(check);
        let list = if known {
            self.known.entry(check).or_default()
        } else {
            self.kept.entry(check).or_default()
        };
        // A new cause past the cap is dropped: two workers' shrinks that were both allowed
        // when they began cannot both fill the last slot.
        if list.iter().any(|c| c == cause) || (!known && list.len() >= cap) {
            return None;
        }
        list.push(cause.to_owned());
        Some(list.len())
    }

    /// The most causes of `check` a session keeps: one `hang`, else the session's cap.
    fn cap_of(&self, check: Check) -> usize {
        if check == Check::HANG {
            1
        } else {
            self.cap
        }
    }
}

/// Run a fuzz session against `ex` on `opts.jobs` workers. Findings are in the order they
/// were written. `Err` only for faults of snapconf itself (the first worker's to fail).
pub fn fuzz(
    ex: &dyn Extractor,
    opts: &FuzzOptions,
    on_event: &mut dyn FnMut(FuzzEvent),
) -> Result<FuzzSummary, HarnessError> {
    let bases = parsed_bases(opts)?;
    let start = Instant::now();
    let causes = std::sync::Mutex::new(Causes::new(opts.causes_per_check));
    let failed = std::sync::atomic::AtomicBool::new(false);
    let workers = opts.jobs.max(1);
    let mut summary = FuzzSummary::default();
    let mut first_error = None;
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel::<WorkerNote>();
        for k in 0..workers {
            let tx = tx.clone();
            let (bases, causes, failed) = (&bases, &causes, &failed);
            scope.spawn(move || {
                let r = worker(ex, opts, bases, causes, failed, k as u64, start, &tx);
                if r.is_err() {
                    failed.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                let _ = tx.send(WorkerNote::Ended(Box::new(r)));
            });
        }
        drop(tx);
        for note in rx {
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
                        summary.phases.add(&part.phases);
                        summary.failing += part.failing;
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
    match first_error {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

/// What a worker tells the session: a finding written, or its end with its counts.
enum WorkerNote {
    Found(Box<FuzzFinding>),
    Ended(Box<Result<FuzzSummary, HarnessError>>),
}

/// Worker `k` of a session started at `start`: draws from `opts.seed + k` until the
/// session's time is up, a stop is requested or another worker `failed`; its counts (its
/// findings go to `tx` as they are written).
#[allow(clippy::too_many_arguments)]
fn worker(
    ex: &dyn Extractor,
    opts: &FuzzOptions,
    bases: &[(String, Records)],
    causes: &std::sync::Mutex<Causes>,
    failed: &std::sync::atomic::AtomicBool,
    k: u64,
    start: Instant,
    tx: &std::sync::mpsc::Sender<WorkerNote>,
) -> Result<FuzzSummary, HarnessError> {
    let seed = opts.seed.wrapping_add(k);
    let mut rng = Rng::new(seed);
    let mut summary = FuzzSummary::default();
    let mut iteration = 0u64;
    let mut pending: Vec<Pending> = Vec::new();
    let mut shrinking = Duration::ZERO;
    let mut persist = Persist::new(ex, opts);
    // A SIGINT/SIGTERM (with the binary's stop handler) ends the session after the current
    // execution, whose jail is then removed like any other.
    let go = || {
        start.elapsed() < opts.time
            && !crate::jail::cleanup::stop_requested()
            && !failed.load(std::sync::atomic::Ordering::SeqCst)
    };
    while go() {
        iteration += 1;
        let (label, bytes, mutations) = draw(&mut rng, bases, opts);
        if !runnable(&bytes, ex, opts) {
            summary.skipped_unsafe_for_host += 1;
            continue;
        }
        persist.cut = Some(hang_cut(opts.timeout, persist.slowest));
        let (mut hits, mut accepted) = execute(&bytes, ex, opts, &mut persist)?;
        let hang = |hits: &[Hit]| hits.iter().any(|h| h.check == Check::HANG);
        if persist.cut.take().is_some_and(|c| c < opts.timeout) && hang(&hits) {
            // Past the cut: a hang, or only slow. Told at the full timeout while a hang
            // could still become the session's finding; else counted and left.
            let wanted = !pending.iter().any(|p| p.hit.check == Check::HANG)
                && causes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .room(Check::HANG);
            if wanted {
                (hits, accepted) = execute(&bytes, ex, opts, &mut persist)?;
            }
            if hang(&hits) && !wanted {
                summary.hangs_cut_short += 1;
                hits.retain(|h| h.check != Check::HANG);
            }
        }
        summary.executions += 1;
        if accepted {
            summary.accepted += 1;
        } else {
            summary.refused += 1;
        }
        if !hits.is_empty() {
            summary.failing += 1;
        }
        let mut seen: Vec<Check> = Vec::new();
        for h in &hits {
            if !seen.contains(&h.check) {
                seen.push(h.check);
                *summary.hits.entry(h.check.id().to_string()).or_default() += 1;
            }
        }
        for hit in hits {
            let queued = pending.iter().filter(|p| p.hit.check == hit.check).count();
            if queued < PENDING_PER_CHECK {
                pending.push(Pending {
                    hit,
                    bytes: bytes.clone(),
                    label: label.clone(),
                    mutations: mutations.clone(),
                    iteration: iteration - 1,
                });
            }
        }
        // The most severe hit waiting is shrunk now if it is an escape (`containment`,
        // `escaping-link`), or if shrinking has had less than half of the session so far;
        // else the session explores on. So a finding that does not matter much cannot use
        // up a short session before an escape is found.
        pending.sort_by_key(|p| p.hit.check.severity());
        while let Some(first) = pending.first() {
            let urgent = first.hit.check.severity() <= 1;
            if !go() || !(urgent || shrinking * 2 < start.elapsed()) {
                break;
            }
            let p = pending.remove(0);
            let began = Instant::now();
            let written = shrink_and_write(ex, opts, &mut persist, causes, p, seed, &start)?;
            shrinking += began.elapsed();
            if let Some(finding) = written {
                if tx.send(WorkerNote::Found(Box::new(finding))).is_err() {
                    break;
                }
            }
        }
    }
    summary.server_starts = persist.starts;
    summary.extractor_runs = persist.runs;
    summary.view_rebuilds = persist.rebuilds;
    summary.view_restores = persist.restores;
    summary.phases = persist.phases;
    Ok(summary)
}

/// The next input of a worker drawing from `rng`: its label, bytes and the mutations
/// applied. Half the inputs (a quarter without a view, where most attacks cannot run) are
/// drawn from the attack classes, sometimes mutated further; the rest are structural
/// mutations of a base archive. Depends on `rng` and `opts.view` alone, never on timing
/// or outcomes, so a seed always gives the same sequence.
fn draw(
    rng: &mut Rng,
    bases: &[(String, Records)],
    opts: &FuzzOptions,
) -> (String, Vec<u8>, Vec<Mutation>) {
    let attack_share = if opts.view { 2 } else { 4 };
    if rng.below(attack_share) == 0 {
        let (drawn, class, description) = attack(rng);
        let label = format!("attack/{}: {description}", class.id());
        match rng.below(3) {
            0 => {
                let (b, m) = mutate(&Records::parse(&drawn), rng, 1);
                (label, b, m)
            }
            _ => (label, drawn, Vec::new()),
        }
    } else {
        let (label, base) = &bases[rng.below(bases.len())];
        let n = 1 + rng.below(4);
        let (b, m) = mutate(base, rng, n);
        (label.clone(), b, m)
    }
}

/// `opts.bases`, parsed into records.
///
/// # Errors
/// There are none.
fn parsed_bases(opts: &FuzzOptions) -> Result<Vec<(String, Records)>, HarnessError> {
    if opts.bases.is_empty() {
        return Err(HarnessError::Other("no base archives to mutate".into()));
    }
    Ok(opts
        .bases
        .iter()
        .map(|(l, b)| (l.clone(), Records::parse(b)))
        .collect())
}

/// One input's verdict, from [`verdicts`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrawnVerdict {
    /// The archive run.
    pub archive: Vec<u8>,
    /// Whether the extractor accepted it.
    pub accepted: bool,
    /// The checks it violated, in the order judged.
    pub checks: Vec<Check>,
}

/// The first `n` inputs worker 0 of a session of `opts` draws (`opts.bases`, `opts.seed`),
/// each run through `ex` as the session runs it (through the persistent server when
/// [`FuzzOptions::server`] and `ex` has one; one-shot otherwise), with no shrinking: what
/// tests compare to tell the two paths agree. Inputs the session would skip are left out.
///
/// # Errors
/// No base archives, or a fault of snapconf itself.
pub fn verdicts(
    ex: &dyn Extractor,
    opts: &FuzzOptions,
    n: usize,
) -> Result<Verdicts, HarnessError> {
    let bases = parsed_bases(opts)?;
    let mut rng = Rng::new(opts.seed);
    let mut persist = Persist::new(ex, opts);
    let mut out = Vec::new();
    for _ in 0..n {
        let (_, bytes, _) = draw(&mut rng, &bases, opts);
        if !runnable(&bytes, ex, opts) {
            continue;
        }
        let (hits, accepted) = execute(&bytes, ex, opts, &mut persist)?;
        out.push(DrawnVerdict {
            archive: bytes,
            accepted,
            checks: hits.iter().map(|h| h.check).collect(),
        });
    }
    Ok(Verdicts {
        drawn: out,
        server_starts: persist.starts,
        view_restores: persist.restores,
        view_rebuilds: persist.rebuilds,
    })
}

/// What [`verdicts`] ran: each input's verdict, and the counts of [`FuzzSummary`]'s
/// fields of the same names.
#[derive(Clone, Debug)]
pub struct Verdicts {
    /// Each input run, in draw order.
    pub drawn: Vec<DrawnVerdict>,
    /// Persistent servers started.
    pub server_starts: u64,
    /// Executions that changed something outside the root.
    pub view_restores: u64,
    /// Views laid out again.
    pub view_rebuilds: u64,
}

/// Hits of one check that may wait for their shrink in one worker.
const PENDING_PER_CHECK: usize = 2;

/// A hit waiting for its shrink, with what made it.
struct Pending {
    hit: Hit,
    bytes: Vec<u8>,
    label: String,
    mutations: Vec<Mutation>,
    iteration: u64,
}

/// Shrinks `p` (if its check has room for another cause) and writes its reproducer when
/// its cause is new; the finding written, if any.
fn shrink_and_write(
    ex: &dyn Extractor,
    opts: &FuzzOptions,
    persist: &mut Persist,
    causes: &std::sync::Mutex<Causes>,
    p: Pending,
    seed: u64,
    start: &Instant,
) -> Result<Option<FuzzFinding>, HarnessError> {
    let lock = || causes.lock().unwrap_or_else(|e| e.into_inner());
    let Pending {
        hit,
        bytes,
        label,
        mutations,
        iteration,
    } = p;
    if start.elapsed() > opts.time || !lock().may_shrink(hit.check) {
        return Ok(None);
    }
    // Every run of a shrink under the cut: a candidate that hangs is not the smaller
    // reproducer of another check, and one that hangs is a hang.
    persist.cut = Some(hang_cut(opts.timeout, persist.slowest));
    let shrunk = shrink(&bytes, hit.check, ex, opts, persist, *start + opts.time);
    persist.cut = None;
    let (mut min, mut end) = shrunk?;
    let (again, _) = execute(&min, ex, opts, persist)?;
    let confirmed = again.into_iter().find(|h| h.check == hit.check);
    // A hang shrunk under the cut may only have been slow: the archive found at the full
    // timeout is kept instead.
    if confirmed.is_none() && hit.check == Check::HANG {
        min = bytes;
        end = crate::report::ShrinkEnd::NotShrunk;
    }
    let hit = confirmed.unwrap_or(hit);
    let cause = cause_of(hit.check, &min, &hit.message);
    let known = opts
        .known
        .knows_key(&crate::report::CauseKey::of_fuzz_cause(hit.check, &cause));
    let Some(n) = lock().keep(hit.check, &cause, known) else {
        return Ok(None);
    };
    let id = match (known, n) {
        (false, 1) => format!("{}__fuzz__{}", hit.check.id(), ex.name()),
        (false, _) => format!("{}__fuzz__{}__{n}", hit.check.id(), ex.name()),
        (true, 1) => format!("{}__fuzz__{}__known", hit.check.id(), ex.name()),
        (true, _) => format!("{}__fuzz__{}__known-{n}", hit.check.id(), ex.name()),
    };
    let finding = FuzzFinding {
        schema: 1,
        check: hit.check,
        extractor: ex.name().to_string(),
        profile: opts.profile.name.clone(),
        message: hit.message.clone(),
        seed,
        iteration,
        base: label,
        mutations,
        reference: judge(&min, &opts.profile).verdict,
        records: Records::parse(&min).records.len(),
        cause,
        case_dir: format!("cases/{id}"),
        known,
        shrink: end,
    };
    write_reproducer(
        &opts.report_dir.join("cases"),
        &id,
        &finding,
        &min,
        &hit,
        opts,
    )?;
    Ok(Some(finding))
}

/// Write the reproducer of `f` (its shrunk archive `archive`, the hit `hit`) as
/// `cases_dir/<id>`: `archive.tar`, `finding.json` (mode `fuzz`), `observed.txt` and
/// `repro.sh` (`snapconf fuzz --replay`).
fn write_reproducer(
    cases_dir: &Path,
    id: &str,
    f: &FuzzFinding,
    archive: &[u8],
    hit: &Hit,
    opts: &FuzzOptions,
) -> Result<(), HarnessError> {
    let repro = ReproDir::create(cases_dir, id)?;
    repro.write("archive.tar", archive)?;
    let mut meta = FindingFile::new(
        ReproMode::Fuzz,
        f.check,
        Some(f.extractor.clone()),
        opts.profile.clone(),
        f.message.clone(),
        Some(f.seed),
        None,
        opts.timeout.as_secs(),
    );
    meta.iteration = Some(f.iteration);
    meta.base = Some(f.base.clone());
    meta.mutations = f
        .mutations
        .iter()
        .map(|m| serde_json::to_value(m).unwrap_or_default())
        .collect();
    meta.reference = Some(f.reference.clone());
    meta.records = Some(f.records);
    meta.cause = Some(f.cause.clone());
    meta.case_dir = Some(f.case_dir.clone());
    meta.known = f.known;
    meta.shrink = Some(f.shrink);
    repro.write_finding(&meta)?;
    repro.write_evidence(None, false, &hit.message, hit.observed.as_deref())?;
    let ex = shell_word(&f.extractor);
    repro.write_script(
        f.check,
        &Script {
            pair: &format!(
                "fuzz of extractor `{}`: archive.tar over the fuzzer's prior workspace, in a fresh jail",
                f.extractor
            ),
            tools: &[format!("the tool behind extractor `{}`", f.extractor)],
            bin: &opts.bin,
            backends: &[],
            command: &format!(
                "fuzz --extractor {ex}{} --replay \"$here\"",
                opts.replay_args
            ),
        },
    )
}

/// The archive `--replay` names: `dir/archive.tar` of a reproducer directory, or the
/// archive file `dir` itself; read whole, as a regular file of at most
/// [`ARCHIVE_LIMIT`](snapconf_producers::input::ARCHIVE_LIMIT) bytes. Returns the file read
/// and its bytes.
///
/// # Errors
/// [`InputError`](snapconf_producers::input::InputError) naming the file: missing, not a
/// regular file (a FIFO, a device), or larger than the limit.
pub fn read_replay(
    dir: &Path,
) -> Result<(std::path::PathBuf, Vec<u8>), snapconf_producers::input::InputError> {
    let file = if dir.is_dir() {
        dir.join("archive.tar")
    } else {
        dir.to_path_buf()
    };
    let bytes =
        snapconf_producers::input::read_file(&file, snapconf_producers::input::ARCHIVE_LIMIT)?;
    Ok((file, bytes))
}

/// Re-run a reproducer directory's `archive.tar` (or the archive file `dir`) through `ex`,
/// one-shot: the checks that fail now, with their messages ([`read_replay`], then
/// [`replay_archive`]).
///
/// # Errors
/// The archive cannot be read, or a fault of snapconf itself.
pub fn replay_finding(
    dir: &Path,
    ex: &dyn Extractor,
    opts: &FuzzOptions,
) -> Result<Vec<(Check, String)>, HarnessError> {
    let (file, bytes) = read_replay(dir).map_err(|e| HarnessError::Other(e.to_string()))?;
    replay_archive(&file, &bytes, ex, opts)
}

/// Run archive `bytes` (read from `file`, named in messages) through `ex`, one-shot: the
/// checks that fail now, with their messages.
///
/// # Errors
/// The archive could reach past the jail where no filesystem view is available, or a
/// fault of snapconf itself.
pub fn replay_archive(
    file: &Path,
    bytes: &[u8],
    ex: &dyn Extractor,
    opts: &FuzzOptions,
) -> Result<Vec<(Check, String)>, HarnessError> {
    if !runnable(bytes, ex, opts) {
        return Err(HarnessError::Other(format!(
            "`{}` could reach past the jail (absolute names or several `..`) and `{}` \
             cannot run in a filesystem view here; not run",
            file.display(),
            ex.name()
        )));
    }
    // One-shot: a reproducer runs as it would with no session around it.
    Ok(execute(bytes, ex, opts, &mut Persist::one_shot())?
        .0
        .into_iter()
        .map(|h| (h.check, h.message))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use snapconf_tarbytes::raw::RawTar;

    /// Shrinks allowed at the same time cannot keep more new causes than the cap (two
    /// workers each kept a sixth `containment`), nor more than one `hang`; known causes
    /// take no slot.
    #[test]
    fn no_check_keeps_more_causes_than_its_cap() {
        let mut c = Causes::new(2);
        assert!(c.may_shrink(Check::CONTAINMENT) && c.may_shrink(Check::CONTAINMENT));
        assert!(c.may_shrink(Check::CONTAINMENT), "a third shrink may start");
        assert_eq!(c.keep(Check::CONTAINMENT, "a", false), Some(1));
        assert_eq!(c.keep(Check::CONTAINMENT, "b", false), Some(2));
        assert_eq!(c.keep(Check::CONTAINMENT, "c", false), None, "past the cap");
        assert_eq!(
            c.keep(Check::CONTAINMENT, "k", true),
            Some(1),
            "known: no slot"
        );
        assert!(!c.may_shrink(Check::CONTAINMENT), "full");
        assert!(c.may_shrink(Check::HANG));
        assert!(!c.may_shrink(Check::HANG), "one hang shrink at a time");
        assert_eq!(c.keep(Check::HANG, "h", false), Some(1));
        assert_eq!(c.keep(Check::HANG, "h2", false), None);
    }

    /// `atomic-hydration` findings are one cause per way the prior was damaged, whatever
    /// the archive; every other check's causes are told apart by the archive's shape.
    #[test]
    fn causes_are_keyed_by_what_tells_them_apart() {
        let a = {
            let mut t = RawTar::new();
            t.file("x", b"1");
            t.finish()
        };
        let b = {
            let mut t = RawTar::new();
            t.symlink("l", "/etc").file("l/passwd", b"2");
            t.finish()
        };
        let damaged = "refused hydration changed the prior workspace: - a";
        assert_eq!(
            cause_of(Check::ATOMIC_HYDRATION, &a, damaged),
            cause_of(Check::ATOMIC_HYDRATION, &b, damaged)
        );
        assert_ne!(
            cause_of(Check::ATOMIC_HYDRATION, &a, damaged),
            cause_of(
                Check::ATOMIC_HYDRATION,
                &a,
                "refused hydration changed the prior workspace: + b"
            )
        );
        assert_ne!(
            cause_of(Check::CONTAINMENT, &a, "changed out/target"),
            cause_of(Check::CONTAINMENT, &b, "changed out/target")
        );
    }
}
