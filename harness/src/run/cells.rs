//! The matrix as the cases fill it: each pair's counts, the first finding of each
//! (pair, check) cell, capture refusals by feature, skipped entries and fault rows.

use crate::checks::Check;
use crate::model::expected::features;
use crate::model::spec::Case;
use crate::report::{FaultRows, FindingRecord, PairReport, RefusalCount, RunReport};
use crate::run::case::{Capture, CaseOutcome, Finding};
use crate::run::runner::RunOptions;
use snapconf_producers::{Extractor, Producer};
use std::collections::BTreeMap;

/// Key of a matrix cell.
pub(super) type Cell = (String, String, Check);

struct FirstFinding {
    record: FindingRecord,
}

/// What the cases of a run add up to so far.
pub(super) struct Cells {
    pairs: BTreeMap<(String, String), PairReport>,
    first: BTreeMap<Cell, FirstFinding>,
    refusals: BTreeMap<(String, String), u64>,
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
        if let Capture::Refused { .. } = outcome.capture {
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
                ff.record.count += 1;
                true
            }
            None => false,
        }
    }

    /// A capture-side finding already shrunk for another extractor of this producer shares
    /// that reproducer: its record, counted once; `None` for another finding.
    pub(super) fn shared(&self, producer: &str, f: &Finding) -> Option<FindingRecord> {
        let shared = f.extractor.is_none().then(|| {
            self.first
                .iter()
                .find(|((pp, _, c), ff)| pp == producer && *c == f.check && ff.record.capture_side)
                .map(|(_, ff)| ff.record.clone())
        });
        shared.flatten().map(|mut r| {
            r.count = 1;
            r
        })
    }

    /// Keeps `record` as the first finding of `cell`, under the cell's extractor.
    pub(super) fn insert(&mut self, cell: Cell, mut record: FindingRecord) {
        record.extractor = cell.1.clone();
        self.first.insert(cell, FirstFinding { record });
    }

    /// The number of cells hit.
    pub(super) fn len(&self) -> usize {
        self.first.len()
    }

    /// The report of a run of `opts` that ran `done` cases, with `notes`.
    pub(super) fn into_report(self, opts: &RunOptions, done: u64, notes: Vec<String>) -> RunReport {
        let mut findings: Vec<FindingRecord> = self.first.into_values().map(|f| f.record).collect();
        findings.sort_by(|a, b| {
            (&a.producer, &a.extractor, a.check).cmp(&(&b.producer, &b.extractor, b.check))
        });
        RunReport {
            schema: 1,
            seed: opts.seed,
            cases: done,
            profile: opts.env.profile.name.clone(),
            pairs: self.pairs.into_values().collect(),
            findings,
            capture_refusals: self
                .refusals
                .into_iter()
                .map(|((producer, feature), count)| RefusalCount {
                    producer,
                    feature,
                    count,
                })
                .collect(),
            skipped_adapters: opts.skipped_adapters.clone(),
            skipped_entries: self.skipped_entries,
            fixed: Vec::new(),
            faults: self.fault_rows.into_rows(),
            notes,
            audited: None,
        }
    }
}
