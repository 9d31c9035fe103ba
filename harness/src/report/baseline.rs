//! Baselines of known causes: findings of a known cause are reported but do not fail a run,
//! new ones do, and baseline entries no longer seen are reported as fixed.
//!
//! An entry is keyed by a cause's key ([`super::CauseKey`]: check, side, and the digest of
//! the behaviour), with the keys of the symptoms folded into it (`also`), not by pair: a
//! cause stays known when it is found from another seed, with another `-j` or shard, in
//! another pair or mode, or with a different `--producers`/`--extractors` set. The pairs,
//! behaviour and shape an entry was recorded with are kept for reviewers only.
//!
//! `snapconf baseline update` merges: the causes of a file already there are kept and the
//! report's new causes (and new symptoms of known ones) are added ([`Baseline::merged`]);
//! with `--replace` the file holds the report's causes alone ([`Baseline::from_report`]).
//!
//! Older files are still read. Schema 2 entries (keyed by the message's shape, each entry
//! `key` 2) know the findings whose message has their fingerprint
//! ([`super::fingerprint()`]); schema 1 entries (one per producer × extractor × check cell,
//! with the fingerprint of that time) know the findings of their cell. A merge replaces an
//! old entry by a current one when the report has its cause, keeping its note, and keeps
//! the schema-2 entries not seen; schema-1 cells not seen are dropped.

use super::causes::{causes, Cause, CauseKey, Side};
use super::{FindingRecord, RunReport};
use crate::checks::Check;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The schema of the baseline files this version writes.
pub const BASELINE_SCHEMA: u32 = 3;

/// The key version of the entries this version writes ([`BaselineEntry::key`]).
pub const KEY_VERSION: u32 = 3;

fn legacy_key_version() -> u32 {
    2
}

/// One more key of a known cause: a symptom folded into it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BaselineKey {
    /// The symptom's check.
    pub check: Check,
    /// The side of that check.
    pub side: Side,
    /// The symptom's key fingerprint.
    pub fingerprint: String,
    /// Its behaviour, in words (for reviewers; not compared).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub behaviour: String,
}

impl BaselineKey {
    fn key(&self) -> CauseKey {
        CauseKey {
            check: self.check,
            side: self.side,
            fingerprint: self.fingerprint.clone(),
        }
    }
}

/// One known cause.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BaselineEntry {
    /// The cause's check.
    pub check: Check,
    /// `capture` or `hydration`: the side of the root's check.
    pub side: Side,
    /// The cause's key fingerprint (see [`super::CauseKey`]).
    pub fingerprint: String,
    /// How the fingerprint was made: `KEY_VERSION` (the behaviour), or 2 (the message's
    /// shape, [`super::fingerprint()`]; what entries without the field mean).
    #[serde(default = "legacy_key_version")]
    pub key: u32,
    /// The behaviour, in words, as recorded (for reviewers; not compared).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub behaviour: String,
    /// The message with names abstracted, as recorded (for reviewers; not compared).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub shape: String,
    /// `producer × extractor` pairs it was seen in when recorded (for reviewers; not
    /// compared).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<String>,
    /// Free text for reviewers (kept by `baseline update`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// A fuzz cause's signature as recorded (`1:d1->/d2`, `prior: …`; see
    /// [`super::FindingRecord::cause`]), for reviewers: the fingerprint is its digest
    /// ([`super::cause_fingerprint`]) and is what is compared. Absent for other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The keys of the symptoms folded into the cause (see [`super::causes()`]): a finding
    /// with one of them is known too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<BaselineKey>,
}

impl BaselineEntry {
    fn key(&self) -> CauseKey {
        CauseKey {
            check: self.check,
            side: self.side,
            fingerprint: self.fingerprint.clone(),
        }
    }

    /// True if this entry lists `key` (its own or a symptom's).
    fn lists(&self, key: &CauseKey) -> bool {
        self.key() == *key || self.also.iter().any(|a| a.key() == *key)
    }

    /// True if this entry knows finding `f`.
    fn knows(&self, f: &FindingRecord) -> bool {
        if self.key == KEY_VERSION || f.cause.is_some() {
            self.lists(&CauseKey::of(f))
        } else {
            self.key() == legacy_key(f)
        }
    }

    /// The entry of cause `c`, with `note`.
    fn of_cause(c: &Cause, note: String) -> BaselineEntry {
        let root = c.key();
        BaselineEntry {
            check: root.check,
            side: root.side,
            fingerprint: root.fingerprint.clone(),
            key: KEY_VERSION,
            behaviour: c.behaviour.clone(),
            pairs: c
                .pairs
                .iter()
                .map(|p| format!("{} × {}", p.producer, p.extractor))
                .collect(),
            shape: c.shape.clone(),
            note,
            cause: c.cause.clone(),
            also: c
                .members
                .iter()
                .skip(1)
                .map(|m| BaselineKey {
                    check: m.check,
                    side: m.side,
                    fingerprint: m.fingerprint.clone(),
                    behaviour: m.behaviour.clone(),
                })
                .collect(),
        }
    }
}

/// The key of `f` as schema-2 baselines made it: the side of its check and the digest of
/// its message's shape (of its cause signature for a fuzz finding).
fn legacy_key(f: &FindingRecord) -> CauseKey {
    CauseKey {
        check: f.check,
        side: Side::of(f),
        fingerprint: match &f.cause {
            Some(c) => super::cause_fingerprint(f.check, c),
            None => super::fingerprint(f.check, &f.message),
        },
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
            key: 1,
            behaviour: String::new(),
            pairs: vec![format!("{} × {}", self.producer, self.extractor)],
            note: self.note.clone(),
            cause: None,
            also: Vec::new(),
        }
    }
}

/// The baseline file (JSON, `schema` 3), entries sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    /// [`BASELINE_SCHEMA`] when written; 2 or 1 for a file read in an old format.
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
    /// Read a baseline file of schema 3, 2 or 1: a regular file of at most
    /// [`CONFIG_LIMIT`](snapconf_producers::input::CONFIG_LIMIT) bytes; `Err` names the file.
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let text =
            snapconf_producers::input::read_text(path, snapconf_producers::input::CONFIG_LIMIT)
                .map_err(|e| format!("cannot use baseline: {e}"))?;
        let bad = |e: serde_json::Error| format!("baseline `{}` is not valid: {e}", path.display());
        let s: SchemaOnly = serde_json::from_str(&text).map_err(bad)?;
        match s.schema {
            2 | BASELINE_SCHEMA => serde_json::from_str(&text).map_err(bad),
            1 => {
                let v1: V1 = serde_json::from_str(&text).map_err(bad)?;
                Ok(Baseline {
                    schema: 1,
                    known: Vec::new(),
                    cells: v1.known,
                })
            }
            n => Err(format!(
                "baseline `{}` has schema {n}, expected {BASELINE_SCHEMA} (or 2, 1)",
                path.display()
            )),
        }
    }

    /// The note an old baseline has for cause `c` of `report`: from an entry listing one of
    /// its keys, or an old entry or schema-1 cell that knows one of its findings.
    fn note_for(&self, c: &Cause, report: &RunReport) -> Option<String> {
        let keys = c.keys();
        let findings: Vec<&FindingRecord> = report
            .findings
            .iter()
            .filter(|f| keys.contains(&CauseKey::of(f)))
            .collect();
        self.known
            .iter()
            .filter(|e| !e.note.is_empty())
            .find(|e| keys.iter().any(|k| e.lists(k)) || findings.iter().any(|f| e.knows(f)))
            .map(|e| e.note.clone())
            .or_else(|| {
                self.cells
                    .iter()
                    .find(|e| !e.note.is_empty() && findings.iter().any(|f| e.matches(f)))
                    .map(|e| e.note.clone())
            })
    }

    /// The baseline that makes every cause of `report` known and nothing else (`baseline
    /// update --replace`), keeping notes from `old` (see [`Baseline::merged`]).
    pub fn from_report(report: &RunReport, old: Option<&Baseline>) -> Baseline {
        let mut known: Vec<BaselineEntry> = causes(report)
            .iter()
            .map(|c| {
                let note = old.and_then(|o| o.note_for(c, report)).unwrap_or_default();
                BaselineEntry::of_cause(c, note)
            })
            .collect();
        known.sort();
        Baseline {
            schema: BASELINE_SCHEMA,
            known,
            cells: Vec::new(),
        }
    }

    /// `old` with the causes of `report` added (`baseline update`): every entry of `old` is
    /// kept; a cause of `report` that `old` lists under one of its keys adds the keys it
    /// lacks to that entry, any other cause becomes a new entry (with the note of an old
    /// entry or schema-1 cell that knew one of its findings, which it replaces). Schema-1
    /// cells are not kept.
    pub fn merged(report: &RunReport, old: &Baseline) -> Baseline {
        let mut known: Vec<BaselineEntry> = old.known.clone();
        for c in causes(report) {
            let keys = c.keys();
            let current = known
                .iter_mut()
                .find(|e| e.key == KEY_VERSION && keys.iter().any(|k| e.lists(k)));
            if let Some(e) = current {
                let fresh = BaselineEntry::of_cause(&c, String::new());
                for k in std::iter::once(BaselineKey {
                    check: fresh.check,
                    side: fresh.side,
                    fingerprint: fresh.fingerprint.clone(),
                    behaviour: fresh.behaviour.clone(),
                })
                .chain(fresh.also)
                {
                    if !e.lists(&k.key()) {
                        e.also.push(k);
                    }
                }
                continue;
            }
            let note = old.note_for(&c, report).unwrap_or_default();
            // An old-format entry that knew this cause's findings is replaced.
            let findings: Vec<&FindingRecord> = report
                .findings
                .iter()
                .filter(|f| keys.contains(&CauseKey::of(f)))
                .collect();
            known.retain(|e| e.key == KEY_VERSION || !findings.iter().any(|f| e.knows(f)));
            known.push(BaselineEntry::of_cause(&c, note));
        }
        known.sort();
        Baseline {
            schema: BASELINE_SCHEMA,
            known,
            cells: Vec::new(),
        }
    }

    /// True if the baseline lists the cause `key` (an entry's own key or a symptom's; a
    /// schema-1 entry knows one cell's findings only, see [`Baseline::knows`]). What a
    /// fuzz session asks of a shrunk finding before it gives it one of its check's slots.
    pub fn knows_key(&self, key: &CauseKey) -> bool {
        self.known.iter().any(|k| k.lists(key))
    }

    /// True if the baseline knows finding `f`.
    pub fn knows(&self, f: &FindingRecord) -> bool {
        self.known.iter().any(|k| k.knows(f)) || self.cells.iter().any(|e| e.matches(f))
    }

    /// Mark each finding of `report` known or new, and list the baseline entries not seen
    /// (none of their keys found). A finding is known when the baseline knows it or any
    /// other finding of its cause ([`causes()`]): a new symptom of a known root cause is
    /// not a new cause.
    pub fn apply(&self, report: &mut RunReport) {
        let mut known_keys: Vec<CauseKey> = Vec::new();
        for c in causes(report) {
            let keys = c.keys();
            let any = report
                .findings
                .iter()
                .any(|f| keys.contains(&CauseKey::of(f)) && self.knows(f));
            if any {
                known_keys.extend(keys);
            }
        }
        for f in &mut report.findings {
            f.known = self.knows(f) || known_keys.contains(&CauseKey::of(f));
        }
        let mut fixed: Vec<BaselineEntry> = self
            .known
            .iter()
            .filter(|k| !report.findings.iter().any(|f| k.knows(f)))
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
            trigger: Default::default(),
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
