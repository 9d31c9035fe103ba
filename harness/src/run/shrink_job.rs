//! Shrinking the first finding of a cell: its job (the extractors and fault it runs with),
//! its share of the run's `--shrink-total`, and the shrink itself.

use crate::checks::Check;
use crate::error::HarnessError;
use crate::faults::FaultPlan;
use crate::model::spec::Case;
use crate::report::FindingRecord;
use crate::run::case::{run_case, CaseOutcome, Env, Finding};
use crate::run::runner::RunOptions;
use crate::run::shrink::{draw_case, minimise, shrink, ShrinkBudget, ShrinkEnd};
use crate::run::write::write_finding;
use snapconf_producers::{Extractor, Producer};
use std::path::PathBuf;
use std::time::Duration;

/// The first finding of a cell, to shrink and write.
pub(super) struct Job<'a> {
    pub(super) producer: &'a dyn Producer,
    /// The pair's extractor, or none for a capture-side finding.
    pub(super) extractors: Vec<&'a dyn Extractor>,
    pub(super) finding: &'a Finding,
    /// The fault the finding came from (`atomic-hydration` under `--faults`).
    pub(super) fault: Option<&'a FaultPlan>,
}

impl<'a> Job<'a> {
    /// The job for `f`, the first finding of the cell (`producer`, `extractor`) in
    /// `outcome`.
    pub(super) fn new(
        producer: &'a dyn Producer,
        extractor: &'a dyn Extractor,
        f: &'a Finding,
        outcome: &'a CaseOutcome,
    ) -> Job<'a> {
        let ex: Vec<&dyn Extractor> = if f.extractor.is_some() {
            vec![extractor]
        } else {
            vec![]
        };
        let fault = (f.check == Check::ATOMIC_HYDRATION)
            .then(|| {
                outcome
                    .fault_plans
                    .iter()
                    .find(|(x, _)| x == extractor.name())
                    .map(|(_, plan)| plan)
            })
            .flatten();
        Job {
            producer,
            extractors: ex,
            finding: f,
            fault,
        }
    }
}

/// The run's shrinking: where reproducers go, and the time all shrinks have taken.
pub(super) struct Shrinks {
    cases_dir: PathBuf,
    spent: Duration,
}

impl Shrinks {
    /// No shrink yet; reproducers go to `cases/` of `opts.report_dir`.
    pub(super) fn new(opts: &RunOptions) -> Shrinks {
        Shrinks {
            cases_dir: opts.report_dir.join("cases"),
            spent: Duration::ZERO,
        }
    }

    /// The budget of the next shrink: `--shrink-time` and `--shrink-steps`, with no more
    /// time than `--shrink-total` has left.
    fn budget(&self, opts: &RunOptions) -> ShrinkBudget {
        ShrinkBudget {
            time: opts
                .shrink
                .time
                .min(opts.shrink_total.saturating_sub(self.spent)),
            ..opts.shrink
        }
    }

    /// Shrinks `job` of case `index` (drawn from `strategy`, or fixed when `None`) and
    /// writes its reproducer, counting the time against `--shrink-total`.
    pub(super) fn run<S>(
        &mut self,
        opts: &RunOptions,
        strategy: Option<&S>,
        case: &Case,
        index: u64,
        job: &Job<'_>,
    ) -> Result<FindingRecord, HarnessError>
    where
        S: proptest::strategy::Strategy<Value = Case>,
    {
        let budget = self.budget(opts);
        let started = std::time::Instant::now();
        let r = shrink_and_write(opts, budget, strategy, case, index, job, &self.cases_dir);
        self.spent += started.elapsed();
        r
    }
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

fn shrink_and_write<S>(
    opts: &RunOptions,
    budget: ShrinkBudget,
    strategy: Option<&S>,
    case: &Case,
    index: u64,
    job: &Job<'_>,
    cases_dir: &std::path::Path,
) -> Result<FindingRecord, HarnessError>
where
    S: proptest::strategy::Strategy<Value = Case>,
{
    // A finding under a fault shrinks with that fault alone.
    let mut env = opts.env.clone();
    if let Some(plan) = job.fault {
        env.faults.kinds = vec![plan.kind];
    }
    let env = &env;
    let (min, end) = shrink_case(opts, budget, strategy, case, index, job, env)?;
    let drawn = strategy.map(|_| index);
    write_finding(opts, job, env, &min, end, drawn, cases_dir)
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
        None => (case.clone(), ShrinkEnd::NotShrunk),
    })
}
