//! Baselines of known findings: known findings are reported but do not fail a run, new ones
//! do, and baseline entries no longer seen are reported as fixed.
//!
//! A finding is keyed by (producer, extractor, check, fingerprint), where the fingerprint is
//! a digest of what went wrong (see [`fingerprint`]). Names, contents, the seed and how far
//! shrinking got do not enter it, so the same bug found from another seed, or shrunk less
//! on a loaded machine, keeps its key.

use super::{FindingRecord, RunReport};
use crate::checks::Check;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

/// One known finding.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BaselineEntry {
    pub producer: String,
    pub extractor: String,
    pub check: Check,
    /// 16 hex digits; see the module docs.
    pub fingerprint: String,
    /// Free text for reviewers (kept by `baseline update` when the key is unchanged).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// The baseline file (JSON, `schema` 1), entries sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    pub schema: u32,
    pub known: Vec<BaselineEntry>,
}

/// The stable fingerprint of a finding (16 lower-case hex digits): a digest of the check and
/// of the finding's message with every backticked span (names, paths, commands) and every
/// digit removed, so it keeps what went wrong (`hardlink-not-allowed`, `differs from the
/// expected tree: + p`) and drops what varies with the seed or with how far shrinking got.
pub fn fingerprint(check: Check, message: &str) -> String {
    let mut shape = String::new();
    let mut in_tick = false;
    for c in message.chars() {
        match c {
            '`' => in_tick = !in_tick,
            _ if in_tick || c.is_ascii_digit() => {}
            _ => shape.push(c),
        }
    }
    let shape: Vec<&str> = shape.split_whitespace().collect();
    let mut h = Sha256::new();
    h.update(check.id().as_bytes());
    h.update(b"\0");
    h.update(shape.join(" ").as_bytes());
    hex::encode(&h.finalize()[..8])
}

impl Baseline {
    /// Read a baseline file; `Err` names the file.
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read baseline `{}`: {e}", path.display()))?;
        let b: Baseline = serde_json::from_str(&text)
            .map_err(|e| format!("baseline `{}` is not valid: {e}", path.display()))?;
        if b.schema != 1 {
            return Err(format!(
                "baseline `{}` has schema {}, expected 1",
                path.display(),
                b.schema
            ));
        }
        Ok(b)
    }

    /// The baseline that makes every finding of `report` known, keeping notes from `old`.
    pub fn from_report(report: &RunReport, old: Option<&Baseline>) -> Baseline {
        let mut known: Vec<BaselineEntry> = report
            .findings
            .iter()
            .map(|f| {
                let mut e = entry(f);
                if let Some(prev) = old.and_then(|o| o.known.iter().find(|k| same(k, &e))) {
                    e.note = prev.note.clone();
                }
                e
            })
            .collect();
        known.sort();
        known.dedup();
        Baseline { schema: 1, known }
    }

    /// Mark each finding of `report` known or new, and list the baseline entries not seen.
    pub fn apply(&self, report: &mut RunReport) {
        for f in &mut report.findings {
            let e = entry(f);
            f.known = self.known.iter().any(|k| same(k, &e));
        }
        report.fixed = self
            .known
            .iter()
            .filter(|k| !report.findings.iter().any(|f| same(k, &entry(f))))
            .cloned()
            .collect();
    }
}

fn entry(f: &FindingRecord) -> BaselineEntry {
    BaselineEntry {
        producer: f.producer.clone(),
        extractor: f.extractor.clone(),
        check: f.check,
        fingerprint: f.fingerprint.clone(),
        note: String::new(),
    }
}

fn same(a: &BaselineEntry, b: &BaselineEntry) -> bool {
    a.producer == b.producer
        && a.extractor == b.extractor
        && a.check == b.check
        && a.fingerprint == b.fingerprint
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_ignore_names_and_numbers_but_not_the_reason() {
        let a = "hydration into an empty root was refused: hardlink-not-allowed: member `./venv/a`";
        let b = "hydration into an empty root was refused: hardlink-not-allowed: member `./x/y/z`";
        let c = "hydration into an empty root was refused: dangling-hardlink: member `./venv/a`";
        assert_eq!(
            fingerprint(Check::LATE_FAILURE, a),
            fingerprint(Check::LATE_FAILURE, b)
        );
        assert_ne!(
            fingerprint(Check::LATE_FAILURE, a),
            fingerprint(Check::LATE_FAILURE, c)
        );
        assert_ne!(
            fingerprint(Check::LATE_FAILURE, a),
            fingerprint(Check::ROUNDTRIP, a)
        );
        assert_eq!(
            fingerprint(Check::DANGLING_LINK, "(1 such member(s))"),
            fingerprint(Check::DANGLING_LINK, "(14 such member(s))")
        );
    }
}
