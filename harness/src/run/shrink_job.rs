//! Shrinking the first finding of a cell: its job (the extractors and fault it runs with),
//! its share of the run's `--shrink-total`, and the shrink itself.

use crate::engine::case::{run_case, Env, Finding};
use crate::engine::faults::FaultPlan;
use crate::engine::phases::ShrinkDeadline;
use crate::engine::shrink::{minimise_tree, Names, ShrinkBudget};
use crate::error::HarnessError;
use crate::model::spec::Case;
use crate::report::FindingRecord;
use crate::report::ShrinkEnd;
use crate::run::matrix::RunOptions;
use crate::run::write::write_finding;
use snapconf_producers::{Extractor, Producer};
use std::path::PathBuf;

/// The first finding of a cell, to shrink and write.
pub(super) struct Job<'a> {
    /// The case it was found in, as found.
    pub(super) case: &'a Case,
    /// That case's index in the run.
    pub(super) index: u64,
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
    deadline: ShrinkDeadline,
}

impl Shrinks {
    /// The shrink phase starts now; reproducers go to `cases/` of `opts.report_dir`.
    pub(super) fn new(opts: &RunOptions) -> Shrinks {
        Shrinks {
            cases_dir: opts.report_dir.join("cases"),
            deadline: ShrinkDeadline::starting_now(opts.shrink_total),
        }
    }

    /// The budget of a shrink starting now: `--shrink-time` and `--shrink-steps`, with no
    /// more time than `--shrink-total` has left.
    fn budget(&self, opts: &RunOptions) -> ShrinkBudget {
        self.deadline.budget(opts.shrink)
    }

    /// Shrinks `job` (its case drawn from `strategy`, or fixed when `None`) under `env`
    /// and writes its reproducer; the record, and the minimum with how its shrink ended.
    /// When one of `known` (the minima of other pairs' findings of the same check, in
    /// order) has `job`'s finding too, the first such is the minimum, with that shrink's
    /// ending, and no shrink runs.
    pub(super) fn run<S>(
        &self,
        opts: &RunOptions,
        env: &Env,
        strategy: Option<&S>,
        job: &Job<'_>,
        known: &[(Case, ShrinkEnd)],
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
        let mut shared = None;
        for (min, end) in known {
            if reproduces(job, env, min)? {
                shared = Some((min.clone(), *end));
                break;
            }
        }
        let (min, end) = match shared {
            Some(m) => m,
            None => shrink_case(opts, self.budget(opts), strategy.is_some(), job, env)?,
        };
        let drawn = strategy.map(|_| job.index);
        let record = write_finding(opts, job, env, &min, end, drawn, &self.cases_dir)?;
        Ok((record, (min, end)))
    }
}

/// Whether `case` has `job`'s finding under `env` (false, without a run, once a stop is
/// requested).
fn reproduces(job: &Job<'_>, env: &Env, case: &Case) -> Result<bool, HarnessError> {
    if crate::jail::cleanup::stop_requested() {
        return Ok(false);
    }
    let ex_name = job.extractors.first().map(|e| e.name().to_string());
    let outcome = run_case(case, job.producer, &job.extractors, env, None)?;
    Ok(outcome.has(job.finding.check, ex_name.as_deref()))
}

/// The smallest case that still has `job`'s finding under `env`, and how its shrink ended:
/// the case as found when no time is left. Only a `generated` case's names are shortened.
fn shrink_case(
    opts: &RunOptions,
    budget: ShrinkBudget,
    generated: bool,
    job: &Job<'_>,
    env: &Env,
) -> Result<(Case, ShrinkEnd), HarnessError> {
    let (case, check) = (job.case, job.finding.check);
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
    // No time left: written as found (`--shrink-time 0` asks for that).
    if budget.time.is_zero() {
        let end = if opts.shrink.time.is_zero() {
            ShrinkEnd::Time
        } else {
            ShrinkEnd::TotalSpent
        };
        return Ok((case.clone(), end));
    }
    // Runs of entries are dropped first, halving (a few dozen runs take a case of 40
    // entries to its culprits), then single entries, contents and modes; a generated case
    // and a real tree (an audit) alike. The generator's value tree is not walked: its
    // one-step-at-a-time shrinking spent the whole step budget on most findings of a
    // default run.
    // A real tree keeps its names: they are what the user has to find.
    let names = if generated {
        Names::Shorten
    } else {
        Names::Keep
    };
    let shrunk = minimise_tree(case.clone(), fails, budget, names)?;
    let end = if crate::jail::cleanup::stop_requested() {
        ShrinkEnd::Interrupted
    } else {
        shrunk.end
    };
    Ok((shrunk.case, end))
}
