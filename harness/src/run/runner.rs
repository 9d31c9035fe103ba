//! The conformance run: every case through every producer × extractor pair, shrinking the
//! first finding of each (pair, check) cell and writing its reproducer.

use crate::checks::Check;
use crate::error::HarnessError;
use crate::gen::{case_strategy, GenConfig};
use crate::model::spec::Case;
use crate::report::{RunReport, SkippedAdapter};
use crate::run::case::{run_case, Env};
use crate::run::cells::Cells;
use crate::run::shard::Shard;
use crate::run::shrink::{draw_case, ShrinkBudget};
use crate::run::shrink_job::{Job, Shrinks};
use proptest::strategy::ValueTree;
use snapconf_producers::{Extractor, Producer};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Everything a run needs.
pub struct RunOptions {
    pub cases: u64,
    pub seed: u64,
    pub gen: GenConfig,
    pub env: Env,
    /// Budget for shrinking one finding.
    pub shrink: ShrinkBudget,
    /// Wall time all shrinking of one run may take together; past it, findings are written
    /// as found (still replayable), so a wide matrix with many failing cells ends in time.
    pub shrink_total: std::time::Duration,
    /// Directory that receives `report.json`, `summary.md` and `cases/`.
    pub report_dir: PathBuf,
    pub producers: Vec<Box<dyn Producer>>,
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
}

/// Progress events, in order; one stream feeds every reporter.
#[derive(Clone, Debug)]
pub enum Event {
    /// Case `index` (0-based) of `total` is done; `findings` is the running total of cells hit.
    CaseDone {
        index: u64,
        total: u64,
        findings: usize,
    },
    /// A new (pair, check) cell failed; shrinking starts.
    Shrinking {
        check: Check,
        producer: String,
        extractor: String,
    },
}

/// Run the whole matrix on `opts.cases` generated cases. `Err` only for faults of snapconf
/// itself.
pub fn run(opts: &RunOptions, on_event: &mut dyn FnMut(Event)) -> Result<RunReport, HarnessError> {
    let strategy = case_strategy(&opts.gen);
    let draw = |i: u64| -> Result<Case, HarnessError> {
        Ok(draw_case(&strategy, opts.seed, i)
            .map_err(HarnessError::Other)?
            .current())
    };
    matrix(opts, opts.cases, &draw, Some(&strategy), on_event)
}

/// Run one fixed case (a real directory, `snapconf audit`) through the matrix; findings
/// are written without shrinking.
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
/// producer runs each case with every extractor, and the first finding of each new cell is
/// shrunk (when the cases come from `strategy`) and written as soon as it is found.
fn matrix<S>(
    opts: &RunOptions,
    cases: u64,
    draw: &dyn Fn(u64) -> Result<Case, HarnessError>,
    strategy: Option<&S>,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunReport, HarnessError>
where
    S: proptest::strategy::Strategy<Value = Case>,
{
    let extractors: Vec<&dyn Extractor> = opts.extractors.iter().map(|e| e.as_ref()).collect();
    let mut cells = Cells::new(&opts.producers, &extractors);
    let mut shrinks = Shrinks::new(opts);

    let mut done = 0;
    let mut interrupted = false;
    for index in 0..cases {
        if !opts.shard.contains(index) {
            continue;
        }
        if crate::jail::cleanup::stop_requested() {
            interrupted = true;
            break;
        }
        done += 1;
        let case = draw(index)?;
        for p in &opts.producers {
            let outcome = run_case(&case, p.as_ref(), &extractors, &opts.env, None)?;
            cells.add_outcome(&case, p.as_ref(), &outcome);
            for e in &extractors {
                for f in cells.add_pair(p.name(), e.name(), &outcome) {
                    let cell = (p.name().to_string(), e.name().to_string(), f.check);
                    if cells.hit_again(&cell) {
                        continue;
                    }
                    let record = match cells.shared(p.name(), f) {
                        Some(r) => r,
                        None => {
                            on_event(Event::Shrinking {
                                check: f.check,
                                producer: p.name().to_string(),
                                extractor: e.name().to_string(),
                            });
                            let job = Job::new(p.as_ref(), *e, f, &outcome);
                            shrinks.run(opts, strategy, &case, index, &job)?
                        }
                    };
                    cells.insert(cell, record);
                }
            }
        }
        on_event(Event::CaseDone {
            index,
            total: cases,
            findings: cells.len(),
        });
    }
    Ok(cells.into_report(opts, done, notes(opts, interrupted, done, cases)))
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
