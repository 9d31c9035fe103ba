//! The conformance run: every case through every producer × extractor pair on a pool of
//! workers, then the first finding of each (pair, check) cell shrunk, most severe first,
//! and its reproducer written.

use crate::checks::Check;
use crate::engine::case::{run_case, CaseOutcome, Env, Finding};
use crate::engine::phases::{
    run_in_order, shrink_in_groups, units, InOrder, ShrinkPhase, Started, Unit,
};
use crate::engine::progress::{Event, FindingEvent};
use crate::engine::shard::Shard;
use crate::engine::shrink::ShrinkBudget;
use crate::error::HarnessError;
use crate::gen::{case_strategy, GenConfig, Strata};
use crate::model::spec::Case;
use crate::report::ShrinkEnd;
use crate::report::{RunReport, SkippedAdapter};
use crate::run::cells::Cells;
use crate::run::shrink_job::{Job, Shrinks};
use proptest::strategy::ValueTree;
use snapconf_producers::{Extractor, Producer};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Everything a run needs.
pub struct RunOptions {
    /// Cases to draw (each through every pair).
    pub cases: u64,
    /// The seed the cases are drawn from.
    pub seed: u64,
    /// What the generator draws.
    pub gen: GenConfig,
    /// The pipeline's settings (profile, timeout, jails, faults, checks).
    pub env: Env,
    /// Budget for shrinking one finding.
    pub shrink: ShrinkBudget,
    /// Wall time all shrinking of one run may take together; past it, findings are written
    /// as found (still replayable), so a wide matrix with many failing cells ends in time.
    pub shrink_total: std::time::Duration,
    /// Directory that receives `report.json`, `summary.md` and `cases/`.
    pub report_dir: PathBuf,
    /// The producers (`--producers`) in the run's order.
    pub producers: Vec<Box<dyn Producer>>,
    /// The extractors (`--extractors`) in the run's order.
    pub extractors: Vec<Box<dyn Extractor>>,
    /// Adapters that were asked for (or are built in) but cannot run here.
    pub skipped_adapters: Vec<SkippedAdapter>,
    /// The version each chosen adapter's tool printed when it was chosen, by adapter name
    /// (a producer and an extractor of one name share their tool); `repro.sh` names them.
    pub tool_versions: BTreeMap<String, String>,
    /// The binary `repro.sh` calls.
    pub bin: PathBuf,
    /// The `--backend` descriptions of this run (absolute paths), which `repro.sh` passes
    /// back to `snapconf replay` so that a backend's finding replays without
    /// `SNAPCONF_BACKEND`.
    pub backend_files: Vec<PathBuf>,
    /// Which case indices this process runs (`--shard K/N`; [`Shard::ALL`] by default).
    pub shard: Shard,
    /// Workers running cases and shrinks at once (`-j`; at least 1). The report does not
    /// depend on it.
    pub jobs: usize,
}

/// Run the whole matrix on `opts.cases` generated cases. `Err` only for faults of snapconf
/// itself.
pub fn run(opts: &RunOptions, on_event: &mut dyn FnMut(Event)) -> Result<RunReport, HarnessError> {
    let strategy = case_strategy(&opts.gen);
    // The opening cases cover every coverage shape, whatever the seed (`gen/strata.rs`).
    let strata = Strata::new(&opts.gen);
    // A stratified case is the simplest with its stratum's shapes, so that what a cell
    // first finds there is that shape's behaviour for every seed.
    let draw = |i: u64| -> Result<Case, HarnessError> {
        let case = strata
            .draw(&strategy, opts.seed, i)
            .map_err(HarnessError::Other)?
            .current();
        Ok(match strata.stratum(i) {
            Some(shapes) => crate::engine::shrink::simplest_with(case, shapes),
            None => case,
        })
    };
    matrix(opts, opts.cases, &draw, Some(&strategy), on_event)
}

/// Run one fixed case (a real directory, `snapconf audit`) through the matrix; findings
/// are shrunk by dropping entries of the tree ([`crate::engine::shrink::minimise_tree`]).
pub fn audit(
    opts: &RunOptions,
    case: &Case,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunReport, HarnessError> {
    let draw = |_: u64| -> Result<Case, HarnessError> { Ok(case.clone()) };
    let mut report = matrix(
        opts,
        1,
        &draw,
        None::<&proptest::strategy::Just<Case>>,
        on_event,
    )?;
    report.cases = 1;
    Ok(report)
}

/// The matrix over cases `0..cases` (those of this shard), each drawn by `draw`: every
/// producer runs each case with every extractor on the pool of `opts.jobs` workers; the
/// outcomes are added up in case order (so the first finding of each cell is the same for
/// any `-j`), then the first finding of each new cell is shrunk (when the cases come from
/// `strategy`), most severe first, and written.
fn matrix<S>(
    opts: &RunOptions,
    cases: u64,
    draw: &(dyn Fn(u64) -> Result<Case, HarnessError> + Sync),
    strategy: Option<&S>,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunReport, HarnessError>
where
    S: proptest::strategy::Strategy<Value = Case> + Sync,
{
    let extractors: Vec<&dyn Extractor> = opts.extractors.iter().map(|e| e.as_ref()).collect();
    let mut cells = Cells::new(&opts.producers, &extractors);
    let mut found = Found::default();

    // A unit is a case through one producer (`part`) and every extractor.
    let units = units(cases, opts.shard, opts.producers.len());
    let total = (0..cases).filter(|i| opts.shard.contains(*i)).count() as u64;
    let per_case = opts.producers.len().max(1);
    let work =
        |u: &Unit, env: &Env, note: &dyn Fn(Event)| -> Result<(Case, CaseOutcome), HarnessError> {
            let case = draw(u.index)?;
            let p = opts.producers[u.part].as_ref();
            note(Event::CaseStarted {
                index: u.index,
                producer: p.name().to_string(),
                extractor: None,
            });
            let outcome = run_case(&case, p, &extractors, env, None)?;
            Ok((case, outcome))
        };
    let mut done = 0;
    run_in_order(opts.jobs, &opts.env, &units, &work, &mut |o| {
        let (i, (case, outcome)) = match o {
            InOrder::Next(i, r) => (i, r),
            InOrder::Note(ev) => return on_event(ev),
            InOrder::Arrived => return,
        };
        let u = &units[i];
        let p = opts.producers[u.part].as_ref();
        let new = found.add(&mut cells, u.index, &case, p, &extractors, outcome);
        on_event(Event::CaseFinished {
            index: u.index,
            producer: p.name().to_string(),
            extractor: None,
            new_findings: new.len(),
        });
        for f in new {
            on_event(Event::Finding(Box::new(f)));
        }
        if (i + 1) % per_case == 0 {
            done += 1;
            on_event(Event::CaseDone {
                done,
                total,
                findings: cells.len(),
            });
        }
    })?;
    let interrupted = crate::jail::cleanup::stop_requested();
    let records = shrink_all(opts, strategy, &found.jobs, on_event)?;
    let mut notes = notes(opts, interrupted, done, cases);
    if !interrupted && crate::jail::cleanup::stop_requested() {
        notes.push(
            "interrupted while shrinking: every case ran; findings shrunk as far as the stop allowed (see each finding's shrink)"
                .into(),
        );
    }
    Ok(cells.into_report(opts, done, &records, notes))
}

/// The first findings of new cells, in case order, as shrink jobs.
#[derive(Default)]
struct Found {
    jobs: Vec<Pending>,
}

impl Found {
    /// Adds the outcome of case `index` through `producer` to `cells`, and a shrink job
    /// for the first finding of each new cell (a capture-side finding shares the job of
    /// the producer's first extractor). Returns the first finding of each new cell.
    fn add(
        &mut self,
        cells: &mut Cells,
        index: u64,
        case: &Case,
        producer: &dyn Producer,
        extractors: &[&dyn Extractor],
        outcome: CaseOutcome,
    ) -> Vec<FindingEvent> {
        cells.add_outcome(case, producer, &outcome);
        let mut new: Vec<(usize, Finding)> = Vec::new();
        let mut cells_hit = Vec::new();
        for (x, e) in extractors.iter().enumerate() {
            for f in cells.add_pair(producer.name(), e.name(), &outcome) {
                let cell = (producer.name().to_string(), e.name().to_string(), f.check);
                if cells.hit_again(&cell) {
                    continue;
                }
                let job = match cells.shared(producer.name(), f) {
                    Some(job) => job,
                    None => {
                        new.push((x, f.clone()));
                        self.jobs.len() + new.len() - 1
                    }
                };
                cells.insert(cell, job, f.extractor.is_none());
                cells_hit.push(FindingEvent {
                    check: f.check,
                    producer: Some(producer.name().to_string()),
                    extractor: Some(e.name().to_string()),
                    case: Some(index),
                    case_dir: None,
                    known: None,
                    message: f.message.clone(),
                });
            }
        }
        for (x, finding) in new {
            let fault = (finding.check == Check::ATOMIC_HYDRATION)
                .then(|| {
                    outcome
                        .fault_plans
                        .iter()
                        .find(|(n, _)| n == extractors[x].name())
                        .map(|(_, plan)| plan.clone())
                })
                .flatten();
            self.jobs.push(Pending {
                index,
                case: case.clone(),
                producer: producer.name().to_string(),
                extractor: x,
                finding,
                fault,
            });
        }
        cells_hit
    }
}

/// Shrinks and writes every job, most severe check first; the jobs of one check and one
/// extractor run in turn on one worker, each trying the minima of those before it (one
/// run each) before shrinking on its own, so a cause seen with several producers is shrunk
/// once. Returns each job's record, by job number.
fn shrink_all<S>(
    opts: &RunOptions,
    strategy: Option<&S>,
    jobs: &[Pending],
    on_event: &mut dyn FnMut(Event),
) -> Result<Vec<Option<crate::report::FindingRecord>>, HarnessError>
where
    S: proptest::strategy::Strategy<Value = Case> + Sync,
{
    let groups = group_by_cause(jobs);
    let total = jobs.len();
    let shrinks = Shrinks::new(opts);
    let started = Started::default();
    let extractors: Vec<&dyn Extractor> = opts.extractors.iter().map(|e| e.as_ref()).collect();
    let work = |group: &Vec<usize>, env: &Env, note: &dyn Fn(Event)| {
        let mut out = Vec::new();
        let mut minima: Vec<(Case, ShrinkEnd)> = Vec::new();
        for &j in group {
            let p = &jobs[j];
            let producer = opts
                .producers
                .iter()
                .find(|x| x.name() == p.producer)
                .map(|x| x.as_ref())
                .ok_or_else(|| HarnessError::Other(format!("no producer `{}`", p.producer)))?;
            let job = Job {
                case: &p.case,
                index: p.index,
                producer,
                extractors: if p.finding.extractor.is_some() {
                    vec![extractors[p.extractor]]
                } else {
                    vec![]
                },
                finding: &p.finding,
                fault: p.fault.as_ref(),
            };
            note(Event::Shrinking {
                check: p.finding.check,
                producer: p.producer.clone(),
                extractor: extractors[p.extractor].name().to_string(),
                done: started.next(),
                total,
            });
            let (record, min) = shrinks.run(opts, env, strategy, &job, &minima)?;
            if !minima.iter().any(|(c, _)| *c == min.0) {
                minima.push(min);
            }
            out.push((j, record));
        }
        Ok(out)
    };
    let phase = ShrinkPhase {
        jobs: opts.jobs,
        total,
        budget: opts.shrink_total,
    };
    shrink_in_groups(phase, &opts.env, &groups, &work, on_event)
}

/// The jobs in groups that may share a cause, most severe first, each group in the order
/// its jobs were found: the extractor-side jobs of one check and one extractor form one
/// group; a capture-side job (one per producer and check already) is a group of its own.
/// The groups depend on the cases alone, so the shrinks do not depend on `-j`.
fn group_by_cause(jobs: &[Pending]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(u8, usize, Vec<usize>)> = Vec::new();
    let mut by_key: BTreeMap<(Check, String), usize> = BTreeMap::new();
    for (j, p) in jobs.iter().enumerate() {
        let key = (
            p.finding.check,
            p.finding.extractor.clone().unwrap_or_default(),
        );
        match by_key.get(&key) {
            Some(&g) if p.finding.extractor.is_some() => groups[g].2.push(j),
            _ => {
                by_key.insert(key, groups.len());
                groups.push((p.finding.check.severity(), j, vec![j]));
            }
        }
    }
    groups.sort_by_key(|(severity, first, _)| (*severity, *first));
    groups.into_iter().map(|(_, _, g)| g).collect()
}

/// A first finding waiting for its shrink.
pub(super) struct Pending {
    /// The case index it was found in.
    pub(super) index: u64,
    pub(super) case: Case,
    pub(super) producer: String,
    /// The extractor's number in the run's list (meaningless for a capture-side finding).
    pub(super) extractor: usize,
    pub(super) finding: Finding,
    /// The fault it came from (`atomic-hydration` under `--faults`).
    pub(super) fault: Option<crate::engine::faults::FaultPlan>,
}

/// The report's notes on a run that ran `done` of `cases` cases: stopped early, or a shard.
fn notes(opts: &RunOptions, interrupted: bool, done: u64, cases: u64) -> Vec<String> {
    let mut notes = Vec::new();
    if interrupted {
        notes.push(format!("interrupted: {done} cases run before the stop"));
    }
    if opts.shard != Shard::ALL {
        notes.push(format!("shard {}: {done} of {cases} cases", opts.shard));
    }
    notes
}
