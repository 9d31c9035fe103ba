//! One worker of a fuzz campaign (`-j` runs several): draw inputs from its own seed, run
//! them, queue the hits and shrink the most severe, and, with coverage feedback, keep the
//! inputs that reached new code in its corpus ([`super::feedback`]) to draw from; and
//! [`verdicts`], its first draws without shrinking, for tests.

use super::attack::{attack_lowered, AttackClass};
use super::campaign::FuzzSummary;
use super::causes::{Causes, FirstSeen, HitIs};
use super::effect::fuzz_cause;
use super::execute::{execute, hang_cut, runnable, Hit};
use super::feedback::Corpus;
use super::finding::{shrink_and_write, FuzzFinding};
use super::mutate::{mutate, Mutation};
use super::options::{parsed_bases, FuzzOptions};
use super::persist::Persist;
use crate::checks::Check;
use crate::error::HarnessError;
use snapconf_producers::Extractor;
use snapconf_tarbytes::{Records, Rng};
use std::time::{Duration, Instant};

/// What a worker tells the campaign: a finding written, or its end with its counts.
pub(super) enum WorkerNote {
    /// A finding written.
    Found(Box<FuzzFinding>),
    /// The worker ended: its counts, or the fault that ended it.
    Ended(Box<Result<FuzzSummary, HarnessError>>),
}

/// What every worker of one campaign shares: the extractor, the options, the parsed base
/// archives, the causes kept so far, whether a worker failed, and when the campaign began.
pub(super) struct Shared<'a> {
    /// The extractor fuzzed.
    pub(super) ex: &'a dyn Extractor,
    /// The campaign's options.
    pub(super) opts: &'a FuzzOptions,
    /// `opts.bases`, parsed ([`parsed_bases`]).
    pub(super) bases: &'a [(String, Records)],
    /// The causes kept and the shrinks spent, per check.
    pub(super) causes: &'a std::sync::Mutex<Causes>,
    /// Set by a worker that failed: the others stop.
    pub(super) failed: &'a std::sync::atomic::AtomicBool,
    /// When the campaign began (its time budget counts from here).
    pub(super) start: Instant,
    /// Executions so far, over every worker: numbers each cause's first sighting and
    /// feeds the campaign's progress ticks.
    pub(super) executions: &'a std::sync::atomic::AtomicU64,
    /// Executions begun, over every worker: each worker takes a number before it runs an
    /// input, so that `opts.runs` caps the session exactly whatever `-j`.
    pub(super) started: &'a std::sync::atomic::AtomicU64,
    /// Whether the session uses coverage feedback ([`super::feedback::guided`]).
    pub(super) guided: bool,
    /// The coverage ids any worker has seen (for the summary's count).
    pub(super) covered: &'a std::sync::Mutex<std::collections::HashSet<u32>>,
}

/// Worker `k` of a campaign sharing `shared`: draws from `opts.seed + k` until the
/// campaign's time is up, a stop is requested or another worker failed; its counts (its
/// findings go to `tx` as they are written). Its persistent server has a spare made
/// ahead on a thread of its own ([`Persist::with_spares`]), ended with it.
pub(super) fn worker(
    shared: &Shared,
    k: u64,
    tx: &std::sync::mpsc::Sender<WorkerNote>,
) -> Result<FuzzSummary, HarnessError> {
    std::thread::scope(|scope| {
        let persist = Persist::with_spares(shared.ex, shared.opts, shared.guided, scope);
        run(shared, k, tx, persist)
    })
}

/// [`worker`]'s loop, with `persist`, its persistent path.
fn run(
    shared: &Shared,
    k: u64,
    tx: &std::sync::mpsc::Sender<WorkerNote>,
    mut persist: Persist,
) -> Result<FuzzSummary, HarnessError> {
    let &Shared {
        ex,
        opts,
        bases,
        causes,
        failed,
        start,
        executions,
        started,
        guided,
        covered,
    } = shared;
    let lock = || causes.lock().unwrap_or_else(|e| e.into_inner());
    let seed = opts.seed.wrapping_add(k);
    let mut rng = Rng::new(seed);
    let mut summary = FuzzSummary::default();
    let mut iteration = 0u64;
    let mut pending: Vec<Pending> = Vec::new();
    let mut shrinking = Duration::ZERO;
    let mut corpus = Corpus::default();
    let mut with_coverage = 0u64;
    // A SIGINT/SIGTERM (with the binary's stop handler) ends the session after the current
    // execution, whose jail is then removed like any other.
    let go = || {
        start.elapsed() < opts.time
            && !crate::jail::cleanup::stop_requested()
            && !failed.load(std::sync::atomic::Ordering::SeqCst)
    };
    while go() {
        // A worker that ended on every request so far never ran the extractor: a session
        // of it would only count deaths (the session then reports "nothing ran").
        if persist.runs >= DEAD_WORKER_RUNS && persist.deaths >= persist.runs {
            break;
        }
        iteration += 1;
        let (halvings, base_halvings): (Vec<u32>, Vec<u32>) = {
            let c = lock();
            (
                AttackClass::ALL.iter().map(|&k| c.halvings(k)).collect(),
                bases.iter().map(|(l, _)| c.base_halvings(l)).collect(),
            )
        };
        let lowered = |k: AttackClass| {
            let i = AttackClass::ALL.iter().position(|&c| c == k);
            i.map_or(0, |i| halvings[i])
        };
        let Drawn {
            label,
            bytes,
            mutations,
            class,
        } = draw(&mut rng, bases, opts, (lowered, &base_halvings), &corpus);
        if !runnable(&bytes, ex, opts) {
            summary.skipped_unsafe_for_host += 1;
            continue;
        }
        let number = started.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if opts.runs.is_some_and(|runs| number >= runs) {
            break;
        }
        persist.cut = Some(loop_cut(opts, &persist, &lock(), None));
        let (mut hits, mut accepted) = execute(&bytes, ex, opts, &mut persist)?;
        let mut cut_short = false;
        let hang = |hits: &[Hit]| hits.iter().any(|h| h.check == Check::HANG);
        if persist.cut.take().is_some_and(|c| c < opts.timeout) && hang(&hits) {
            // Past the cut: a hang, or only slow. Told at the full timeout while a hang
            // could still become the session's finding; else counted and left.
            let wanted = !pending.iter().any(|p| p.hit.check == Check::HANG)
                && lock().room(Check::HANG, None);
            if wanted {
                (hits, accepted) = execute(&bytes, ex, opts, &mut persist)?;
            }
            if hang(&hits) && !wanted {
                summary.hangs_cut_short += 1;
                hits.retain(|h| h.check != Check::HANG);
                cut_short = true;
            }
        }
        let origin = class.map_or("mutant", AttackClass::id);
        *summary.drawn_by.entry(origin.to_owned()).or_default() += 1;
        if cut_short || hang(&hits) {
            // What drew it is drawn less from now on (its class, or its base).
            let base = label.strip_prefix(CORPUS_LABEL).unwrap_or(&label);
            lock().hung(class, base);
            *summary.hung_by.entry(origin.to_owned()).or_default() += 1;
        }
        summary.executions += 1;
        if let Some(ids) = persist.covered.take().filter(|_| guided) {
            with_coverage += 1;
            let base = label.strip_prefix(CORPUS_LABEL).unwrap_or(&label);
            let new = corpus.offer(&ids, &bytes, base, class);
            if !new.is_empty() {
                let mut all = covered.lock().unwrap_or_else(|e| e.into_inner());
                all.extend(new);
            }
        }
        let at = FirstSeen {
            secs: start.elapsed().as_secs_f64(),
            execution: executions.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1,
        };
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
        // Each hit is counted into its cause (estimated from the archive as drawn); only a
        // hit whose estimate is new is queued for its shrink.
        let mut counted: Vec<(Check, String)> = Vec::new();
        for hit in hits {
            let estimate = fuzz_cause(&hit, &bytes, class);
            let key = (hit.check, estimate);
            if counted.contains(&key) {
                continue;
            }
            let queued = pending.iter().filter(|p| p.hit.check == hit.check).count();
            // Slots are per check and class where causes name a class, else per check.
            let charged = super::effect::effect(&hit, &bytes)
                .and(class.or_else(|| super::recognise::recognise(&bytes)));
            let is = lock().hit(
                hit.check,
                &key.1,
                charged,
                origin,
                at,
                queued < PENDING_PER_CHECK,
            );
            if is == HitIs::New {
                pending.push(Pending {
                    hit,
                    bytes: bytes.clone(),
                    label: label.clone(),
                    mutations: mutations.clone(),
                    iteration: iteration - 1,
                    class,
                    estimate: key.1.clone(),
                });
            }
            counted.push(key);
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
            summary.shrinks += 1;
            let written = shrink_and_write(shared, &mut persist, p, seed)?;
            shrinking += began.elapsed();
            if let Some(finding) = written {
                if tx.send(WorkerNote::Found(Box::new(finding))).is_err() {
                    break;
                }
            }
        }
    }
    summary.server_starts = persist.starts;
    summary.spares_used = persist.spares_used;
    summary.extractor_runs = persist.runs;
    summary.worker_deaths = persist.deaths;
    summary.last_worker_death = persist.last_death.take();
    summary.view_rebuilds = persist.rebuilds;
    summary.view_restores = persist.restores;
    summary.phases = persist.phases;
    if guided {
        let (entries, bytes) = corpus.size();
        summary.coverage = Some(super::campaign::CoverageFigures {
            ids: corpus.ids() as u64,
            corpus: entries as u64,
            corpus_bytes: bytes as u64,
            kept: corpus.kept,
            executions: with_coverage,
        });
    }
    Ok(summary)
}

/// The timeout of a worker's next run, in the loop or (`shrinking`: the check shrunk) a
/// shrink's: [`hang_cut`] while the session has no `hang` (none kept, none being
/// shrunk) and for the runs of a hang's own shrink; else [`later_hang_cut`], since a
/// later hang is only counted and a shrink candidate that hangs reproduces no other
/// check.
pub(super) fn loop_cut(
    opts: &FuzzOptions,
    persist: &Persist,
    causes: &Causes,
    shrinking: Option<Check>,
) -> Duration {
    if causes.room(Check::HANG, None) || shrinking == Some(Check::HANG) {
        hang_cut(opts.timeout, persist.slowest)
    } else {
        later_hang_cut(opts.timeout, persist.slowest)
    }
}

/// The shortest timeout [`later_hang_cut`] gives.
const LATER_HANG_CUT_MIN: Duration = Duration::from_millis(250);

/// How many times a worker's slowest execution that did not hang an execution may take
/// once the session has kept its `hang` ([`later_hang_cut`]).
const LATER_HANG_CUT_FACTOR: u32 = 2;

/// The timeout of a worker's runs once the session has kept its `hang` (or is shrinking
/// it; [`loop_cut`]): twice the worker's slowest execution that did not hang, at
/// least 250 ms, at most the session's `--timeout`. Such a hang is only counted
/// ([`FuzzSummary::hangs_cut_short`]), so waiting [`hang_cut`]'s ten times the slowest
/// buys nothing; an archive twice as slow as any that finished is cut as a hang. node-tar
/// spins on about one archive in eight, and each cost the cut (at least 1 s) and a new
/// worker.
fn later_hang_cut(full: Duration, slowest: Duration) -> Duration {
    (slowest * LATER_HANG_CUT_FACTOR)
        .max(LATER_HANG_CUT_MIN)
        .min(full)
}

/// One input a worker drew ([`draw`]).
struct Drawn {
    /// The base's label, or the attack class and what it built.
    label: String,
    /// The archive.
    bytes: Vec<u8>,
    /// The mutations applied.
    mutations: Vec<Mutation>,
    /// The attack class that generated it (kept through its mutation); `None` for a
    /// mutant of a base archive.
    class: Option<AttackClass>,
}

/// What the label of an input drawn from a corpus entry starts with (then the entry's).
const CORPUS_LABEL: &str = "corpus: ";

/// The next input of a worker drawing from `rng`, with each attack class's weight halved
/// `halvings.0(class)` times (the causes the session kept of it and its executions that
/// hung) and base `i`'s weight `halvings.1[i]` times (its mutants that hung; never below
/// 1/64 of an unlowered base's, and with none lowered the draw is uniform as before).
/// Once `corpus` holds an
/// input, one in [`super::feedback::CORPUS_SHARE`] is a structural mutation of one of its
/// entries (keeping the entry's attack class). Of the rest, half (a quarter without a
/// view, where most attacks cannot run) are drawn from the attack classes, sometimes
/// mutated further; the others are structural mutations of a base archive. Depends on
/// `rng`, `opts.view`, the halvings and the corpus alone, so a seed gives the same
/// sequence until the session keeps a cause or an input (never, without coverage), or an
/// execution hangs.
fn draw(
    rng: &mut Rng,
    bases: &[(String, Records)],
    opts: &FuzzOptions,
    halvings: (impl Fn(AttackClass) -> u32, &[u32]),
    corpus: &Corpus,
) -> Drawn {
    let (halvings, base_halvings) = halvings;
    if let Some(entry) = corpus.pick(rng) {
        let n = 1 + rng.below(4);
        let (bytes, mutations) = mutate(&entry.records, rng, n);
        return Drawn {
            label: format!("{CORPUS_LABEL}{}", entry.label),
            bytes,
            mutations,
            class: entry.class,
        };
    }
    let attack_share = if opts.view { 2 } else { 4 };
    if rng.below(attack_share) == 0 {
        let (drawn, class, description) = attack_lowered(rng, halvings);
        let label = format!("attack/{}: {description}", class.id());
        let (bytes, mutations) = match rng.below(3) {
            0 => mutate(&Records::parse(&drawn), rng, 1),
            _ => (drawn, Vec::new()),
        };
        Drawn {
            label,
            bytes,
            mutations,
            class: Some(class),
        }
    } else {
        let (label, base) = &bases[draw_base(rng, bases.len(), base_halvings)];
        let n = 1 + rng.below(4);
        let (bytes, mutations) = mutate(base, rng, n);
        Drawn {
            label: label.clone(),
            bytes,
            mutations,
            class: None,
        }
    }
}

/// The index of the base archive drawn (of `n`), base `i`'s weight halved `halvings[i]`
/// times (at most 6: never zero); uniform, as before any hang, when none is lowered.
fn draw_base(rng: &mut Rng, n: usize, halvings: &[u32]) -> usize {
    let halved = |i: usize| halvings.get(i).copied().unwrap_or(0).min(6);
    if (0..n).all(|i| halved(i) == 0) {
        return rng.below(n);
    }
    let weight = |i: usize| 64usize >> halved(i);
    let total: usize = (0..n).map(weight).sum();
    let mut at = rng.below(total);
    for i in 0..n {
        if at < weight(i) {
            return i;
        }
        at -= weight(i);
    }
    n - 1
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
        let Drawn { bytes, .. } = draw(&mut rng, &bases, opts, (|_| 0, &[]), &Corpus::default());
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

/// Requests after which a fuzz worker whose server ended without an answer on every one
/// of them stops ([`FuzzSummary::worker_deaths`]): the backend is broken, not the archives.
const DEAD_WORKER_RUNS: u64 = 20;

/// Hits of one check with new causes that may wait for their shrink in one worker.
const PENDING_PER_CHECK: usize = 4;

/// A hit waiting for its shrink, with what made it.
pub(super) struct Pending {
    /// The hit.
    pub(super) hit: Hit,
    /// The archive that gave it.
    pub(super) bytes: Vec<u8>,
    /// Its base's label ([`FuzzFinding::base`]).
    pub(super) label: String,
    /// The mutations applied to the base.
    pub(super) mutations: Vec<Mutation>,
    /// The 0-based iteration that drew it.
    pub(super) iteration: u64,
    /// The attack class that generated it, if any.
    pub(super) class: Option<AttackClass>,
    /// Its cause as estimated from the unshrunk archive ([`fuzz_cause`]).
    pub(super) estimate: String,
}
