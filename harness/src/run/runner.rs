//! The conformance run: every case through every producer × extractor pair, shrinking the
//! first finding of each (pair, check) cell and writing its reproducer.

use crate::checks::Check;
use crate::error::HarnessError;
use crate::faults::{write_fault_json, FaultPlan};
use crate::gen::{case_strategy, GenConfig};
use crate::model::expected::features;
use crate::model::spec::Case;
use crate::report::{
    fingerprint, FaultRows, FindingRecord, PairReport, RefusalCount, RunReport, SkippedAdapter,
};
use crate::run::case::{run_case, Capture, CaseOutcome, Env, Finding};
use crate::run::repro::{write_case_dir, FindingMeta};
use crate::run::shard::Shard;
use crate::run::shrink::{draw_case, minimise, shrink, ShrinkBudget, ShrinkEnd};
use proptest::strategy::ValueTree;
use snapconf_producers::{Extractor, Producer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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

/// Key of a matrix cell.
type Cell = (String, String, Check);

struct FirstFinding {
    record: FindingRecord,
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
    let mut pairs: BTreeMap<(String, String), PairReport> = BTreeMap::new();
    for p in &opts.producers {
        for e in &extractors {
            pairs.insert(
                (p.name().to_string(), e.name().to_string()),
                PairReport::new(p.name(), e.name()),
            );
        }
    }
    let mut first: BTreeMap<Cell, FirstFinding> = BTreeMap::new();
    let mut refusals: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut skipped_entries = 0;
    let mut shrink_spent = std::time::Duration::ZERO;
    let mut fault_rows = FaultRows::default();
    let cases_dir = opts.report_dir.join("cases");

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
            skipped_entries += outcome.skipped_entries as u64;
            for t in &outcome.faults {
                fault_rows.add(t);
            }
            if let Capture::Refused { .. } = outcome.capture {
                for f in features(&case.spec) {
                    *refusals
                        .entry((p.name().to_string(), f.to_string()))
                        .or_default() += 1;
                }
            }
            for e in &extractors {
                let Some(pair) = pairs.get_mut(&(p.name().to_string(), e.name().to_string()))
                else {
                    continue;
                };
                pair.cases += 1;
                if matches!(outcome.capture, Capture::Refused { .. }) {
                    pair.skipped += 1;
                }
                let hits: Vec<&Finding> = outcome
                    .findings
                    .iter()
                    .filter(|f| f.extractor.is_none() || f.extractor.as_deref() == Some(e.name()))
                    .collect();
                if hits.is_empty() {
                    if !matches!(outcome.capture, Capture::Refused { .. }) {
                        pair.passed += 1;
                    }
                    continue;
                }
                for f in hits {
                    *pair.findings.entry(f.check.id().to_string()).or_default() += 1;
                    let cell = (p.name().to_string(), e.name().to_string(), f.check);
                    if let Some(ff) = first.get_mut(&cell) {
                        ff.record.count += 1;
                        continue;
                    }
                    // A capture-side finding already shrunk for another extractor of this
                    // producer shares that reproducer.
                    let shared = f.extractor.is_none().then(|| {
                        first
                            .iter()
                            .find(|((pp, _, c), ff)| {
                                pp == p.name() && *c == f.check && ff.record.capture_side
                            })
                            .map(|(_, ff)| ff.record.clone())
                    });
                    let record = match shared.flatten() {
                        Some(mut r) => {
                            r.count = 1;
                            r
                        }
                        None => {
                            on_event(Event::Shrinking {
                                check: f.check,
                                producer: p.name().to_string(),
                                extractor: e.name().to_string(),
                            });
                            let ex: Vec<&dyn Extractor> = if f.extractor.is_some() {
                                vec![*e]
                            } else {
                                vec![]
                            };
                            let fault = (f.check == Check::AtomicHydration)
                                .then(|| {
                                    outcome
                                        .fault_plans
                                        .iter()
                                        .find(|(x, _)| x == e.name())
                                        .map(|(_, plan)| plan)
                                })
                                .flatten();
                            let budget = ShrinkBudget {
                                time: opts
                                    .shrink
                                    .time
                                    .min(opts.shrink_total.saturating_sub(shrink_spent)),
                                ..opts.shrink
                            };
                            let started = std::time::Instant::now();
                            let r = shrink_and_write(
                                opts,
                                budget,
                                strategy,
                                &case,
                                index,
                                p.as_ref(),
                                &ex,
                                f,
                                fault,
                                &cases_dir,
                            );
                            shrink_spent += started.elapsed();
                            r?
                        }
                    };
                    let mut record = record;
                    record.extractor = e.name().to_string();
                    first.insert(cell, FirstFinding { record });
                }
            }
        }
        on_event(Event::CaseDone {
            index,
            total: cases,
            findings: first.len(),
        });
    }

    let mut findings: Vec<FindingRecord> = first.into_values().map(|f| f.record).collect();
    findings.sort_by(|a, b| {
        (&a.producer, &a.extractor, a.check).cmp(&(&b.producer, &b.extractor, b.check))
    });
    let mut notes = Vec::new();
    if interrupted {
        notes.push(format!("interrupted: {done} cases run before the stop"));
    }
    if opts.shard != Shard::ALL {
        notes.push(format!("shard {}: {done} of {cases} cases", opts.shard));
    }
    Ok(RunReport {
        schema: 1,
        seed: opts.seed,
        cases: done,
        profile: opts.env.profile.name.clone(),
        pairs: pairs.into_values().collect(),
        findings,
        capture_refusals: refusals
            .into_iter()
            .map(|((producer, feature), count)| RefusalCount {
                producer,
                feature,
                count,
            })
            .collect(),
        skipped_adapters: opts.skipped_adapters.clone(),
        skipped_entries,
        fixed: Vec::new(),
        faults: fault_rows.into_rows(),
        notes,
        audited: None,
    })
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

#[allow(clippy::too_many_arguments)]
fn shrink_and_write<S>(
    opts: &RunOptions,
    budget: ShrinkBudget,
    strategy: Option<&S>,
    case: &Case,
    index: u64,
    producer: &dyn Producer,
    extractors: &[&dyn Extractor],
    finding: &Finding,
    fault: Option<&FaultPlan>,
    cases_dir: &Path,
) -> Result<FindingRecord, HarnessError>
where
    S: proptest::strategy::Strategy<Value = Case>,
{
    let check = finding.check;
    let ex_name = extractors.first().map(|e| e.name().to_string());
    // A finding under a fault shrinks with that fault alone.
    let mut env = opts.env.clone();
    if let Some(plan) = fault {
        env.faults.kinds = vec![plan.kind];
    }
    let env = &env;
    let fails = |c: &Case| -> bool {
        if crate::jail::cleanup::stop_requested() {
            return false;
        }
        match run_case(c, producer, extractors, env, None) {
            Ok(o) => o.has(check, ex_name.as_deref()),
            Err(_) => false,
        }
    };
    let (min, end) = match strategy {
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
            let shrunk = shrink(tree, fails, budget);
            // The polish gets its own step budget (with a shared one, the value-tree pass
            // can spend all 400 and leave H1 at 4 entries) and what is left of the time.
            let rest = ShrinkBudget {
                time: budget.time.saturating_sub(start.elapsed()),
                ..budget
            };
            let polished = minimise(shrunk.case, fails, rest);
            (polished.case, shrink_end(shrunk.end, polished.end))
        }
        None => (case.clone(), ShrinkEnd::NotShrunk),
    };
    let id = format!(
        "{}__{}__{}",
        check.id(),
        producer.name(),
        ex_name.as_deref().unwrap_or("capture")
    );
    let dir = cases_dir.join(&id);
    if dir.exists() {
        crate::workspace::materialise::remove_tree(&dir).map_err(|source| HarnessError::Io {
            context: format!("cannot replace `{}`", dir.display()),
            source,
        })?;
    }
    std::fs::create_dir_all(&dir).map_err(|source| HarnessError::Io {
        context: format!("cannot create `{}`", dir.display()),
        source,
    })?;
    // Run the shrunk case once more to keep its archive and evidence.
    let outcome: CaseOutcome = run_case(&min, producer, extractors, env, Some(&dir))?;
    // The shrunk case's finding came from a fault when a plan was recorded for it.
    if check == Check::AtomicHydration {
        let plan = outcome
            .fault_plans
            .iter()
            .find(|(x, _)| Some(x) == ex_name.as_ref())
            .map(|(_, p)| p);
        if let Some(plan) = plan {
            write_fault_json(&dir, plan)?;
        }
    }
    let shrunk = outcome
        .findings
        .iter()
        .find(|f| f.check == check && (f.extractor.is_none() || f.extractor == ex_name))
        .cloned()
        .unwrap_or_else(|| finding.clone());
    let meta = FindingMeta {
        schema: 1,
        check,
        producer: producer.name().to_string(),
        extractor: finding.extractor.clone(),
        profile: opts.env.profile.clone(),
        message: shrunk.message.clone(),
        seed: strategy.map(|_| opts.seed),
        case_index: strategy.map(|_| index),
        timeout_secs: opts.env.timeout.as_secs(),
        entries: min.spec.entries.len(),
    };
    // Each adapter with the version of the tool behind it, as `snapconf list` shows it.
    let tool = |name: &str| match opts.tool_versions.get(name) {
        Some(version) => format!("{name} ({version})"),
        None => name.to_string(),
    };
    let mut tools = vec![tool(producer.name())];
    tools.extend(extractors.iter().map(|e| tool(e.name())));
    write_case_dir(
        &dir,
        &meta,
        &min,
        &shrunk,
        &tools,
        &opts.bin,
        &opts.backend_files,
    )?;
    Ok(FindingRecord {
        check,
        producer: producer.name().to_string(),
        extractor: ex_name.unwrap_or_else(|| "capture".into()),
        case_dir: format!("cases/{id}"),
        entries: min.spec.entries.len(),
        fingerprint: fingerprint(check, &shrunk.message),
        message: shrunk.message,
        count: 1,
        capture_side: finding.extractor.is_none(),
        known: false,
        shrink: end,
    })
}
