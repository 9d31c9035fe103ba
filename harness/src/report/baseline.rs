//! Baselines of known causes: findings of a known cause are reported but do not fail a run,
//! new ones do, and baseline entries no longer seen are reported as fixed.
//!
//! An entry is keyed by a cause's signature ([`super::CauseKey`]: check, side, fingerprint),
//! not by pair: a cause stays known when it is found from another seed, in another pair,
//! or with a different `--producers`/`--extractors` set. The pairs and the shape an entry
//! was recorded with are kept for reviewers only.
//!
//! Baseline files of schema 1 (one entry per producer × extractor × check cell, with the
//! fingerprint of that time) are still read: such an entry makes the findings of its cell
//! with that old fingerprint known. `snapconf baseline update` rewrites them as schema 2,
//! keeping their notes.

use super::causes::{causes, CauseKey, Side};
use super::{FindingRecord, RunReport};
use crate::checks::Check;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The schema of the baseline files this version writes.
pub const BASELINE_SCHEMA: u32 = 2;

/// One known cause.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BaselineEntry {
    /// The cause's check.
    pub check: Check,
    /// `capture` or `hydration`.
    pub side: Side,
    /// The cause's fingerprint (see [`super::fingerprint`]).
    pub fingerprint: String,
    /// The message with names abstracted, as recorded (for reviewers; not compared).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub shape: String,
    /// `producer × extractor` pairs it was seen in when recorded (for reviewers; not
    /// compared).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<String>,
    /// Free text for reviewers (kept by `baseline update` while the cause is seen).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// A fuzz cause's signature as recorded (`1:d1->/d2`, `prior: …`; see
    /// [`super::FindingRecord::cause`]), for reviewers: the fingerprint is its digest
    /// ([`super::cause_fingerprint`]) and is what is compared. Absent for other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

impl BaselineEntry {
    fn key(&self) -> CauseKey {
        CauseKey {
            check: self.check,
            side: self.side,
            fingerprint: self.fingerprint.clone(),
        }
    }
}

/// One entry of a schema-1 baseline: a known finding of one cell, with the fingerprint of
/// that time (`fingerprint_v1`). Read, never written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellEntry {
    /// The cell's producer.
    pub producer: String,
    /// The cell's extractor.
    pub extractor: String,
    /// The cell's check.
    pub check: Check,
    /// The schema-1 fingerprint (`fingerprint_v1`).
    pub fingerprint: String,
    #[serde(default)]
    /// Free text for reviewers.
    pub note: String,
}

impl CellEntry {
    fn matches(&self, f: &FindingRecord) -> bool {
        self.producer == f.producer
            && self.extractor == f.extractor
            && self.check == f.check
            && self.fingerprint == fingerprint_v1(f.check, &f.message)
    }

    /// As a cause-keyed entry for the "fixed" list: the side follows from the check's
    /// usual side, the fingerprint is the old one.
    fn as_fixed(&self) -> BaselineEntry {
        let capture = self.check == Check::DANGLING_LINK || self.check == Check::EXCLUSION_LEAK;
        BaselineEntry {
            check: self.check,
            side: if capture {
                Side::Capture
            } else {
                Side::Hydration
            },
            fingerprint: self.fingerprint.clone(),
            shape: String::new(),
            pairs: vec![format!("{} × {}", self.producer, self.extractor)],
            note: self.note.clone(),
            cause: None,
        }
    }
}

/// The baseline file (JSON, `schema` 2), entries sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    /// [`BASELINE_SCHEMA`] when written; 1 for a file read in the old format.
    pub schema: u32,
    /// The known causes, sorted.
    pub known: Vec<BaselineEntry>,
    /// Entries of a schema-1 file (empty otherwise; never written).
    #[serde(skip)]
    pub cells: Vec<CellEntry>,
}

#[derive(Deserialize)]
struct SchemaOnly {
    schema: u32,
}

#[derive(Deserialize)]
struct V1 {
    known: Vec<CellEntry>,
}

/// The fingerprint of schema-1 baselines: the check and the message with every backticked
/// span and every digit removed.
fn fingerprint_v1(check: Check, message: &str) -> String {
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
    /// Read a baseline file of schema 2 or 1: a regular file of at most
    /// [`CONFIG_LIMIT`](snapconf_producers::input::CONFIG_LIMIT) bytes; `Err` names the file.
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let text =
            snapconf_producers::input::read_text(path, snapconf_producers::input::CONFIG_LIMIT)
                .map_err(|e| format!("cannot use baseline: {e}"))?;
        let bad = |e: serde_json::Error| format!("baseline `{}` is not valid: {e}", path.display());
        let s: SchemaOnly = serde_json::from_str(&text).map_err(bad)?;
        match s.schema {
            BASELINE_SCHEMA => serde_json::from_str(&text).map_err(bad),
            1 => {
                let v1: V1 = serde_json::from_str(&text).map_err(bad)?;
                Ok(Baseline {
                    schema: 1,
                    known: Vec::new(),
                    cells: v1.known,
                })
            }
            n => Err(format!(
                "baseline `{}` has schema {n}, expected {BASELINE_SCHEMA} (or 1)",
                path.display()
            )),
        }
    }

    /// The baseline that makes every cause of `report` known, keeping notes from `old`
    /// (from an entry of the same cause, or a schema-1 entry of one of its findings).
    pub fn from_report(report: &RunReport, old: Option<&Baseline>) -> Baseline {
        let mut known: Vec<BaselineEntry> = causes(report)
            .into_iter()
            .map(|c| {
                let key = c.key();
                let note = old
                    .and_then(|o| {
                        o.known
                            .iter()
                            .find(|k| k.key() == key)
                            .map(|k| &k.note)
                            .or_else(|| {
                                o.cells
                                    .iter()
                                    .find(|e| {
                                        !e.note.is_empty()
                                            && report
                                                .findings
                                                .iter()
                                                .any(|f| CauseKey::of(f) == key && e.matches(f))
                                    })
                                    .map(|e| &e.note)
                            })
                    })
                    .cloned()
                    .unwrap_or_default();
                BaselineEntry {
                    check: c.check,
                    side: c.side,
                    fingerprint: c.fingerprint.clone(),
                    pairs: c
                        .pairs
                        .iter()
                        .map(|p| format!("{} × {}", p.producer, p.extractor))
                        .collect(),
                    shape: c.shape,
                    note,
                    cause: c.cause,
                }
            })
            .collect();
        known.sort();
        Baseline {
            schema: BASELINE_SCHEMA,
            known,
            cells: Vec::new(),
        }
    }

    /// True if the baseline lists the cause `key` (schema-2 entries; a schema-1 entry knows
    /// one cell's findings only, see [`Baseline::knows`]). What a fuzz session asks of a
    /// shrunk finding before it gives it one of its check's slots.
    pub fn knows_key(&self, key: &CauseKey) -> bool {
        self.known.iter().any(|k| k.key() == *key)
    }

    /// True if the baseline knows finding `f`.
    pub fn knows(&self, f: &FindingRecord) -> bool {
        let key = CauseKey::of(f);
        self.known.iter().any(|k| k.key() == key) || self.cells.iter().any(|e| e.matches(f))
    }

    /// Mark each finding of `report` known or new, and list the baseline entries not seen.
    pub fn apply(&self, report: &mut RunReport) {
        for f in &mut report.findings {
            f.known = self.knows(f);
        }
        let seen: Vec<CauseKey> = report.findings.iter().map(CauseKey::of).collect();
        let mut fixed: Vec<BaselineEntry> = self
            .known
            .iter()
            .filter(|k| !seen.contains(&k.key()))
            .cloned()
            .collect();
        fixed.extend(
            self.cells
                .iter()
                .filter(|e| !report.findings.iter().any(|f| e.matches(f)))
                .map(CellEntry::as_fixed),
        );
        report.fixed = fixed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ShrinkEnd;

    fn rec(p: &str, e: &str, name: &str) -> FindingRecord {
        FindingRecord {
            check: Check::LATE_FAILURE,
            producer: p.into(),
            extractor: e.into(),
            case_dir: "cases/x".into(),
            entries: 2,
            message: format!("refused: hardlink-not-allowed: member `{name}`"),
            count: 1,
            capture_side: false,
            fingerprint: String::new(),
            known: false,
            shrink: ShrinkEnd::Minimal,
            cause: None,
        }
    }

    fn report(findings: Vec<FindingRecord>) -> RunReport {
        RunReport {
            schema: 1,
            findings,
            ..RunReport::empty(Default::default(), 1, 1, "default")
        }
    }

    /// A cause known in one pair is known in another pair and with other names; a cause
    /// not seen again is fixed.
    #[test]
    fn a_known_cause_is_known_in_any_pair() {
        let b = Baseline::from_report(&report(vec![rec("a", "reference", "./x")]), None);
        assert_eq!(b.known.len(), 1);
        assert_eq!(b.known[0].pairs, ["a × reference"]);
        let mut r = report(vec![rec("b", "gnu-tar", "./y/z")]);
        b.apply(&mut r);
        assert!(r.findings[0].known);
        assert!(r.fixed.is_empty());
        let mut other = rec("b", "gnu-tar", "./y");
        other.message = "refused: dangling-hardlink".into();
        let mut r = report(vec![other]);
        b.apply(&mut r);
        assert!(!r.findings[0].known);
        assert_eq!(r.fixed.len(), 1);
    }

    /// A schema-1 file is read: its entry knows the findings of its own cell only.
    #[test]
    fn schema_1_baselines_still_match_their_cells() {
        let f = rec("a", "reference", "./x");
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("b.json");
        let v1 = serde_json::json!({"schema": 1, "known": [{
            "producer": "a", "extractor": "reference", "check": "late-failure",
            "fingerprint": fingerprint_v1(f.check, &f.message), "note": "tracked in #3"}]});
        std::fs::write(&path, v1.to_string()).expect("write");
        let b = Baseline::load(&path).expect("loads");
        assert!(b.knows(&f));
        assert!(!b.knows(&rec("b", "reference", "./x")));
        let updated = Baseline::from_report(&report(vec![f]), Some(&b));
        assert_eq!(updated.schema, BASELINE_SCHEMA);
        assert_eq!(updated.known[0].note, "tracked in #3");
        std::fs::write(&path, "{\"schema\": 7, \"known\": []}").expect("write");
        let err = Baseline::load(&path).expect_err("schema 7");
        assert!(err.contains("b.json") && err.contains("schema 7"), "{err}");
        std::fs::write(&path, "not json").expect("write");
        assert!(Baseline::load(&path).expect_err("bad").contains("b.json"));
    }
}
