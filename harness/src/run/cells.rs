//! The matrix as the cases fill it: each pair's counts, the first finding of each
//! (pair, check) cell, capture refusals by feature, skipped entries and fault rows.

use crate::checks::Check;
use crate::engine::case::{Capture, CaseOutcome, Finding};
use crate::model::expected::features;
use crate::model::spec::Case;
use crate::report::{FaultRows, FindingRecord, PairReport, RefusalCount, RunReport};
use crate::run::matrix::RunOptions;
use snapconf_producers::{Extractor, Producer};
use std::collections::BTreeMap;

/// Key of a matrix cell.
pub(super) type Cell = (String, String, Check);

/// The first finding of a cell: the shrink job that writes its record, and the cases the
/// cell failed in.
struct FirstFinding {
    job: usize,
    count: u64,
    capture_side: bool,
}

/// What the cases of a run add up to so far.
pub(super) struct Cells {
    pairs: BTreeMap<(String, String), PairReport>,
    first: BTreeMap<Cell, FirstFinding>,
    refusals: BTreeMap<(String, String), u64>,
    /// Each producer's first capture refusal message, and its captures and refusals.
    first_refusal: BTreeMap<String, (String, u64, u64)>,
    skipped_entries: u64,
    fault_rows: FaultRows,
}

impl Cells {
    /// An empty matrix of every producer × extractor pair.
    pub(super) fn new(producers: &[Box<dyn Producer>], extractors: &[&dyn Extractor]) -> Cells {
        let mut pairs: BTreeMap<(String, String), PairReport> = BTreeMap::new();
        for p in producers {
            for e in extractors {
                pairs.insert(
                    (p.name().to_string(), e.name().to_string()),
                    PairReport::new(p.name(), e.name()),
                );
            }
        }
        Cells {
            pairs,
            first: BTreeMap::new(),
            refusals: BTreeMap::new(),
            first_refusal: BTreeMap::new(),
            skipped_entries: 0,
            fault_rows: FaultRows::default(),
        }
    }

    /// Adds what `producer`'s run of `case` says beside its pairs: skipped entries, fault
    /// rows, and the features of a refused capture.
    pub(super) fn add_outcome(
        &mut self,
        case: &Case,
        producer: &dyn Producer,
        outcome: &CaseOutcome,
    ) {
        self.skipped_entries += outcome.skipped_entries as u64;
        for t in &outcome.faults {
            self.fault_rows.add(t);
        }
        let tally = self
            .first_refusal
            .entry(producer.name().to_string())
            .or_insert_with(|| (String::new(), 0, 0));
        tally.1 += 1;
        if let Capture::Refused { message } = &outcome.capture {
            tally.2 += 1;
            if tally.0.is_empty() {
                tally.0 = one_line(message);
            }
            for f in features(&case.spec) {
                *self
                    .refusals
                    .entry((producer.name().to_string(), f.to_string()))
                    .or_default() += 1;
            }
        }
    }

    /// Counts `outcome` for the pair (`producer`, `extractor`) and returns its findings for
    /// that pair (none if the pair is not in the matrix).
    pub(super) fn add_pair<'o>(
        &mut self,
        producer: &str,
        extractor: &str,
        outcome: &'o CaseOutcome,
    ) -> Vec<&'o Finding> {
        let Some(pair) = self
            .pairs
            .get_mut(&(producer.to_string(), extractor.to_string()))
        else {
            return Vec::new();
        };
        pair.cases += 1;
        if matches!(outcome.capture, Capture::Refused { .. }) {
            pair.skipped += 1;
        }
        let hits: Vec<&Finding> = outcome
            .findings
            .iter()
            .filter(|f| f.extractor.is_none() || f.extractor.as_deref() == Some(extractor))
            .collect();
        if hits.is_empty() {
            if !matches!(outcome.capture, Capture::Refused { .. }) {
                pair.passed += 1;
            }
            return hits;
        }
        for f in &hits {
            *pair.findings.entry(f.check.id().to_string()).or_default() += 1;
        }
        hits
    }

    /// Counts one more case for `cell` if it has its first finding already; false if not.
    pub(super) fn hit_again(&mut self, cell: &Cell) -> bool {
        match self.first.get_mut(cell) {
            Some(ff) => {
                ff.count += 1;
                true
            }
            None => false,
        }
    }

    /// A capture-side finding already found for another extractor of this producer shares
    /// that cell's shrink job; `None` for another finding.
    pub(super) fn shared(&self, producer: &str, f: &Finding) -> Option<usize> {
        if f.extractor.is_some() {
            return None;
        }
        self.first
            .iter()
            .find(|((pp, _, c), ff)| pp == producer && *c == f.check && ff.capture_side)
            .map(|(_, ff)| ff.job)
    }

    /// Keeps shrink job `job` as the first finding of `cell` (found once so far).
    pub(super) fn insert(&mut self, cell: Cell, job: usize, capture_side: bool) {
        self.first.insert(
            cell,
            FirstFinding {
                job,
                count: 1,
                capture_side,
            },
        );
    }

    /// The number of cells hit.
    pub(super) fn len(&self) -> usize {
        self.first.len()
    }

    /// The report of a run of `opts` that ran `done` cases, with `notes`; `records` are the
    /// shrink jobs' records by job number (`None` for a job that did not run: the run was
    /// stopped).
    pub(super) fn into_report(
        self,
        opts: &RunOptions,
        done: u64,
        records: &[Option<FindingRecord>],
        notes: Vec<String>,
    ) -> RunReport {
        let mut findings: Vec<FindingRecord> = self
            .first
            .into_iter()
            .filter_map(|((_, extractor, _), ff)| {
                let mut r = records.get(ff.job)?.clone()?;
                r.extractor = extractor;
                r.count = ff.count;
                Some(r)
            })
            .collect();
        findings.sort_by(|a, b| {
            (&a.producer, &a.extractor, a.check).cmp(&(&b.producer, &b.extractor, b.check))
        });
        let mut notes = notes;
        notes.extend(refused_every_capture(&self.first_refusal));
        RunReport {
            schema: crate::report::REPORT_SCHEMA,
            mode: Default::default(),
            seed: opts.seed,
            cases: done,
            profile: opts.env.profile.name.clone(),
            pairs: self.pairs.into_values().collect(),
            findings,
            capture_refusals: RefusalCount::rows(self.refusals),
            skipped_adapters: opts.skipped_adapters.clone(),
            skipped_entries: self.skipped_entries,
            fixed: Vec::new(),
            faults: self.fault_rows.into_rows(),
            notes,
            audited: None,
            shard: None,
            incomplete: Vec::new(),
            partial: None,
        }
    }
}

/// A note for each producer that refused every capture it was given, naming what it said
/// the first time (the tool's own words: which path, and why, e.g. `Permission denied`),
/// so that a run or audit that ran no case says which producer refused what.
fn refused_every_capture(tally: &BTreeMap<String, (String, u64, u64)>) -> Vec<String> {
    tally
        .iter()
        .filter(|(_, (_, captures, refused))| *captures > 0 && refused == captures)
        .map(|(producer, (message, captures, _))| {
            format!("every capture by `{producer}` ({captures}) was refused; the first: {message}")
        })
        .collect()
}

/// `message` on one line (lines joined with ` | `), at most 600 characters.
fn one_line(message: &str) -> String {
    let joined = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" | ");
    match joined.char_indices().nth(600) {
        Some((i, _)) => format!("{}…", &joined[..i]),
        None => joined,
    }
}
