//! Shrinking the first finding of a cell: its job (the extractors and fault it runs with),
//! its share of the run's `--shrink-total`, and the shrink itself.

use crate::error::HarnessError;
use crate::faults::FaultPlan;
use crate::model::spec::Case;
use crate::report::FindingRecord;
use crate::run::case::{run_case, Env, Finding};
use crate::run::runner::RunOptions;
use crate::run::shrink::{draw_case, minimise, minimise_tree, shrink, ShrinkBudget, ShrinkEnd};
use crate::run::write::write_finding;
use snapconf_producers::{Extractor, Producer};
use std::path::PathBuf;

/// The first finding of a cell, to shrink and write.
pub(super) struct Job<'a> {
    pub(super) producer: &'a dyn Producer,
    /// The pair's extractor, or none for a capture-side finding.
    pub(super) extractors: Vec<&'a dyn Extractor>,
    pub(super) finding: &'a Finding,
    /// The fault the finding came from (`atomic-hydration` under `--faults`).
    pub(super) fault: Option<&'a FaultPlan>,
}

/// The run's shrinking: where reproducers go, and when all shrinks must have ended
/// (`--shrink-total` of wall time from the start of the shrink phase, however many run at
/// once).
pub(super) struct Shrinks {
    cases_dir: PathBuf,
    deadline: std::time::Instant,
}

impl Shrinks {
    /// The shrink phase starts now; reproducers go to `cases/` of `opts.report_dir`.
    pub(super) fn new(opts: &RunOptions) -> Shrinks {
        let now = std::time::Instant::now();
        Shrinks {
            cases_dir: opts.report_dir.join("cases"),
            deadline: now.checked_add(opts.shrink_total).unwrap_or(now),
        }
    }

    /// The budget of a shrink starting now: `--shrink-time` and `--shrink-steps`, with no
    /// more time than `--shrink-total` has left.
    fn budget(&self, opts: &RunOptions) -> ShrinkBudget {
        let left = self
            .deadline
            .saturating_duration_since(std::time::Instant::now());
        ShrinkBudget {
            time: opts.shrink.time.min(left),
            ..opts.shrink
        }
    }

    /// Shrinks `job` of case `index` (drawn from `strategy`, or fixed when `None`) under
    /// `env` and writes its reproducer; the record, and the minimum with how its shrink
    /// ended. When `known` (the minimum of another pair's finding of the same cause) still
    /// has `job`'s finding, that is the minimum, with that shrink's ending, and no shrink
    /// runs.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run<S>(
        &self,
        opts: &RunOptions,
        env: &Env,
        strategy: Option<&S>,
        case: &Case,
        index: u64,
        job: &Job<'_>,
        known: Option<&(Case, ShrinkEnd)>,
    ) -> Result<(FindingRecord, (Case, ShrinkEnd)), HarnessError>
    where
        S: proptest::strategy::Strategy<Value = Case>,
    {
        // A finding under a fault shrinks with that fault alone.
        let mut env = env.clone();
        if let Some(plan) = job.fault {
            env.faults.kinds = vec![plan.kind];
        }
        let env = &env;
        let shared = match known {
            Some((min, end)) if reproduces(job, env, min)? => Some((min.clone(), *end)),
            _ => None,
        };
        let (min, end) = match shared {
            Some(m) => m,
            None => shrink_case(opts, self.budget(opts), strategy, case, index, job, env)?,
        };
        let drawn = strategy.map(|_| index);
        let record = write_finding(opts, job, env, &min, end, drawn, &self.cases_dir)?;
        Ok((record, (min, end)))
    }
}

/// Whether `case` has `job`'s finding under `env`.
fn reproduces(job: &Job<'_>, env: &Env, case: &Case) -> Result<bool, HarnessError> {
    let ex_name = job.extractors.first().map(|e| e.name().to_string());
    let outcome = run_case(case, job.producer, &job.extractors, env, None)?;
    Ok(outcome.has(job.finding.check, ex_name.as_deref()))
}

/// How a shrink of two passes ended, from how each did: interrupted if the run was
/// stopped; else the polish's budget if it ran out; else the value-tree pass's ending (a
/// polish that finishes after a pass cut short by a budget has not reached a minimum: it
/// only removes and empties, it does not shorten names or change kinds).
fn shrink_end(pass: ShrinkEnd, polish: ShrinkEnd) -> ShrinkEnd {
    if crate::jail::cleanup::stop_requested() {
        ShrinkEnd::Interrupted
    } else if polish != ShrinkEnd::Minimal {
        polish
    } else {
        pass
    }
}

/// The smallest case that still has `job`'s finding under `env`, and how its shrink ended:
/// `case` itself when it has no `strategy` (an audit) or no time is left.
fn shrink_case<S>(
    opts: &RunOptions,
    budget: ShrinkBudget,
    strategy: Option<&S>,
    case: &Case,
    index: u64,
    job: &Job<'_>,
    env: &Env,
) -> Result<(Case, ShrinkEnd), HarnessError>
where
    S: proptest::strategy::Strategy<Value = Case>,
{
    let check = job.finding.check;
    let ex_name = job.extractors.first().map(|e| e.name().to_string());
    // A candidate that cannot be run stops the shrink with that error: counting it as "does
    // not reproduce" would shrink towards whatever breaks the harness.
    let fails = |c: &Case| -> Result<bool, HarnessError> {
        if crate::jail::cleanup::stop_requested() {
            return Ok(false);
        }
        let outcome = run_case(c, job.producer, &job.extractors, env, None).map_err(|e| {
            HarnessError::Shrink {
                finding: format!(
                    "the `{}` finding of `{}` × `{}`",
                    check.id(),
                    job.producer.name(),
                    ex_name.as_deref().unwrap_or("capture")
                ),
                source: Box::new(e),
            }
        })?;
        Ok(outcome.has(check, ex_name.as_deref()))
    };
    Ok(match strategy {
        // No time left: written as found (`--shrink-time 0` asks for that).
        Some(_) if budget.time.is_zero() => {
            let end = if opts.shrink.time.is_zero() {
                ShrinkEnd::Time
            } else {
                ShrinkEnd::TotalSpent
            };
            (case.clone(), end)
        }
        Some(strategy) => {
            let tree = draw_case(strategy, opts.seed, index).map_err(HarnessError::Other)?;
            let start = std::time::Instant::now();
            let shrunk = shrink(tree, fails, budget)?;
            // The polish gets its own step budget (with a shared one, the value-tree pass
            // can spend all 400 and leave H1 at 4 entries) and what is left of the time.
            let rest = ShrinkBudget {
                time: budget.time.saturating_sub(start.elapsed()),
                ..budget
            };
            let polished = minimise(shrunk.case, fails, rest)?;
            (polished.case, shrink_end(shrunk.end, polished.end))
        }
        // A real tree (an audit): entries of it are dropped.
        None if budget.time.is_zero() => (case.clone(), ShrinkEnd::TotalSpent),
        None => {
            let shrunk = minimise_tree(case.clone(), fails, budget)?;
            (shrunk.case, shrunk.end)
        }
    })
}
