//! A fuzz session as a report: the same model (`report.json`, its causes, the summary,
//! HTML and JUnit) that `snapconf run` writes, in mode [`Mode::Fuzz`].

use super::campaign::FuzzSummary;
use crate::report::{FindingRecord, Mode, PairReport, RunReport, FUZZ_PRODUCER};

/// The report of a session of `extractor` under profile `profile` with seed `seed`: one
/// pair ([`FUZZ_PRODUCER`] × `extractor`) whose `cases` are the executions, `passed` those
/// without a hit, `skipped` the mutants skipped as unsafe for the host, and `findings` the
/// executions with a hit of each check; one finding per cause kept (several in a cell,
/// told apart by [`FindingRecord::cause`], each counted once), with `entries` the records
/// of its shrunk archive. `known` is as the session marked it; the writer applies the
/// baseline again (the same verdict) and lists what it no longer saw as fixed.
pub fn fuzz_report(summary: &FuzzSummary, extractor: &str, profile: &str, seed: u64) -> RunReport {
    let mut pair = PairReport::new(FUZZ_PRODUCER, extractor);
    pair.cases = summary.executions;
    pair.passed = summary.executions.saturating_sub(summary.failing);
    pair.skipped = summary.skipped_unsafe_for_host;
    pair.findings = summary.hits.clone();
    let mut findings: Vec<FindingRecord> = summary
        .findings
        .iter()
        .map(|f| FindingRecord {
            check: f.check,
            producer: FUZZ_PRODUCER.to_string(),
            extractor: f.extractor.clone(),
            case_dir: f.case_dir.clone(),
            entries: f.records,
            message: f.message.clone(),
            count: 1,
            capture_side: false,
            fingerprint: String::new(),
            known: f.known,
            shrink: f.shrink,
            cause: Some(f.cause.clone()),
            trigger: Default::default(),
        })
        .collect();
    findings.sort_by(|a, b| (a.check, &a.case_dir).cmp(&(b.check, &b.case_dir)));
    let mut notes = Vec::new();
    if summary.skipped_unsafe_for_host > 0 {
        notes.push(format!(
            "{} mutant(s) could reach past the jail and no filesystem view was available: \
             skipped, counted as the pair's `skipped`",
            summary.skipped_unsafe_for_host
        ));
    }
    let mut run = RunReport::empty(Mode::Fuzz, seed, summary.executions, profile);
    run.pairs = vec![pair];
    run.findings = findings;
    run.notes = notes;
    run
}
