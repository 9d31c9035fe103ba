//! A fuzz session as a report: the same model (`report.json`, its causes, the summary,
//! HTML and JUnit) that `snapconf run` writes, in mode [`Mode::Fuzz`].

use super::campaign::FuzzSummary;
use crate::report::{FindingRecord, Mode, PairReport, RunReport, FUZZ_PRODUCER};

/// The report of a session of `extractor` under profile `profile` with seed `seed`: one
/// pair ([`FUZZ_PRODUCER`] × `extractor`) whose `cases` are the executions, `passed` those
/// without a hit, `skipped` the mutants skipped as unsafe for the host, and `findings` the
/// executions with a hit of each check; one finding per cause kept (several in a cell,
/// told apart by [`FindingRecord::cause`]), with `count` the executions that hit the cause
/// (repeats are counted, not shrunk) and `entries` the records of its shrunk archive; and a
/// note per cause ([`cause_lines`]: first seen, hits, classes). `known` is as the session
/// marked it; the writer applies the baseline again (the same verdict) and lists what it no
/// longer saw as fixed.
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
            count: f.hits.max(1),
            capture_side: false,
            fingerprint: String::new(),
            known: f.known,
            shrink: f.shrink,
            cause: Some(f.cause.clone()),
            trigger: Default::default(),
        })
        .collect();
    findings.sort_by(|a, b| (a.check, &a.case_dir).cmp(&(b.check, &b.case_dir)));
    let mut notes = cause_lines(summary);
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

/// One line per cause of `summary`, in order of discovery: the check, the cause, when it
/// was first seen (seconds and execution), its hits and the classes its hits came from;
/// e.g. `containment cause \`path-max-chain: a decoy gained a hardlink, through a link\`:
/// first seen at 12.3 s (execution 456), 37 hit(s), from path-max-chain, mutant`.
pub fn cause_lines(summary: &FuzzSummary) -> Vec<String> {
    summary
        .findings
        .iter()
        .map(|f| {
            format!(
                "{}{} cause `{}`: first seen at {:.1} s (execution {}), {} hit(s), from {}",
                f.check.id(),
                if f.known { " (known)" } else { "" },
                f.cause,
                f.first_seen.secs,
                f.first_seen.execution,
                f.hits.max(1),
                if f.classes.is_empty() {
                    f.class.clone()
                } else {
                    f.classes.join(", ")
                }
            )
        })
        .collect()
}
