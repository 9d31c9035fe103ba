//! Causes: findings of a run grouped by what went wrong, ranked most severe first.
//!
//! A finding ([`FindingRecord`]) is one matrix cell: the first case of one (producer,
//! extractor, check). Many cells often share one bug: a producer that writes FIFOs badly
//! fails in every extractor's row, an extractor that drops char devices fails under every
//! producer. A [`Cause`] is the group of findings with one signature ([`CauseKey`]):
//!
//! - the check;
//! - the side: `capture` (the producer alone is at fault, whichever extractor follows) or
//!   `hydration` (the extractor, given what that producer wrote);
//! - the shape of the shrunk case's message: the message with names, paths, quoted strings,
//!   hashes and numbers replaced by placeholders ([`shape`]), and its digest, the finding's
//!   `fingerprint` ([`fingerprint`](super::fingerprint())).
//!
//! The pairs are not part of the signature, nor the seed, nor how far shrinking got, so a
//! cause found again from another seed or with other `--producers` keeps its key; the
//! baseline ([`super::Baseline`]) is keyed by it.
//!
//! Causes are ranked by the severity of their check in the registry
//! ([`crate::checks::CheckDef::severity`]), then new before known, then by how many cases
//! they failed.

use super::fingerprint::{cause_fingerprint, shape};
use super::{FindingRecord, RunReport};
use crate::checks::Check;
use crate::report::ShrinkEnd;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Which side of a pair a cause lies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// The producer alone is at fault (a capture-side check): the cause holds for every
    /// extractor paired with it.
    Capture,
    /// The extractor is at fault, given what the producer wrote.
    Hydration,
}

impl Side {
    /// The side of a finding.
    pub fn of(f: &FindingRecord) -> Side {
        if f.capture_side {
            Side::Capture
        } else {
            Side::Hydration
        }
    }
}

impl Side {
    /// Who is at fault, in words.
    pub fn explain(self) -> &'static str {
        match self {
            Side::Capture => "the producer alone is at fault, whichever extractor follows",
            Side::Hydration => "the extractor is at fault, given what the producer wrote",
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Capture => "capture",
            Side::Hydration => "hydration",
        })
    }
}

/// The signature of a cause: check, side and fingerprint (the digest of [`shape`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CauseKey {
    /// The check of the findings.
    pub check: Check,
    /// Which side is at fault.
    pub side: Side,
    /// [`fingerprint`](super::fingerprint()) of the check and the message.
    pub fingerprint: String,
}

impl CauseKey {
    /// The key of `f`, computed from its check, side and message (never from a stored
    /// fingerprint, so reports written with an older fingerprint group alike).
    pub fn of(f: &FindingRecord) -> CauseKey {
        CauseKey {
            check: f.check,
            side: Side::of(f),
            fingerprint: f.key_fingerprint(),
        }
    }

    /// The key of a fuzz finding of `check` with cause signature `cause` (every fuzz
    /// finding is on the hydration side: no producer made the archive).
    pub fn of_fuzz_cause(check: Check, cause: &str) -> CauseKey {
        CauseKey {
            check,
            side: Side::Hydration,
            fingerprint: cause_fingerprint(check, cause),
        }
    }
}

/// One producer × extractor pair of a cause.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CausePair {
    /// The producer of the pair.
    pub producer: String,
    /// The extractor of the pair.
    pub extractor: String,
}

/// One cause: the findings of a run with one [`CauseKey`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cause {
    /// The check of every finding of the cause.
    pub check: Check,
    /// Which side is at fault.
    pub side: Side,
    /// The cause's key with check and side (see [`fingerprint`](super::fingerprint())).
    pub fingerprint: String,
    /// The message with names abstracted ([`shape`]).
    pub shape: String,
    /// What happened, in one line: the message of the reproducer's finding.
    pub message: String,
    /// Every pair with a finding of this cause, sorted.
    pub pairs: Vec<CausePair>,
    /// For a capture-side cause: its producers, each failing with every extractor it was
    /// paired with (empty for a hydration-side cause).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub producers: Vec<String>,
    /// Failing cases: the cells' counts summed over the pairs (a capture-side cause counts
    /// a producer's cases once, not once per extractor).
    pub cases: u64,
    /// The smallest reproducer of the cause (`cases/<id>`, relative to the report dir).
    pub case_dir: String,
    /// Entries in that reproducer's shrunk W1 spec.
    pub entries: usize,
    /// How that reproducer's shrink ended.
    pub shrink: ShrinkEnd,
    /// True when the baseline lists this cause (every finding of it is known).
    #[serde(default)]
    pub known: bool,
    /// A fuzz cause's signature ([`FindingRecord::cause`]); absent for the other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

impl Cause {
    /// The key of this cause.
    pub fn key(&self) -> CauseKey {
        CauseKey {
            check: self.check,
            side: self.side,
            fingerprint: self.fingerprint.clone(),
        }
    }

    /// The pairs in words: `python-tarfile × every extractor` for a capture-side cause,
    /// else `a × b, c × d` (more than `most` pairs are cut with `and N more`).
    pub fn pairs_text(&self, most: usize) -> String {
        let items: Vec<String> = if self.side == Side::Capture {
            self.producers
                .iter()
                .map(|p| format!("{p} × every extractor"))
                .collect()
        } else {
            self.pairs
                .iter()
                .map(|p| format!("{} × {}", p.producer, p.extractor))
                .collect()
        };
        if items.len() > most {
            format!(
                "{} and {} more",
                items[..most].join(", "),
                items.len() - most
            )
        } else {
            items.join(", ")
        }
    }

    /// `1 pair, 12 cases`, or over several pairs `2 pairs, 9 failures (cases × pairs)`:
    /// the count is summed over the pairs, so it can exceed the run's cases.
    pub fn counts_text(&self) -> String {
        let n = self.pairs.len();
        let c = self.cases;
        if n == 1 {
            format!("1 pair, {c} case{}", if c == 1 { "" } else { "s" })
        } else {
            format!(
                "{n} pairs, {c} failure{} (cases × pairs)",
                if c == 1 { "" } else { "s" }
            )
        }
    }
}

/// How good a reproducer's shrink is: smaller is better.
fn shrink_rank(e: ShrinkEnd) -> u8 {
    match e {
        ShrinkEnd::Minimal => 0,
        ShrinkEnd::Steps => 1,
        ShrinkEnd::Time => 2,
        ShrinkEnd::Interrupted => 3,
        ShrinkEnd::TotalSpent => 4,
        ShrinkEnd::NotShrunk => 5,
    }
}

/// The causes of `report`'s findings, most severe first (see the module docs). Each
/// cause's reproducer is its finding with the fewest entries, then the best-ended shrink,
/// then the first pair. A cause is known when every finding of it is.
pub fn causes(report: &RunReport) -> Vec<Cause> {
    let mut groups: BTreeMap<CauseKey, Vec<&FindingRecord>> = BTreeMap::new();
    for f in &report.findings {
        groups.entry(CauseKey::of(f)).or_default().push(f);
    }
    let mut out: Vec<Cause> = groups
        .into_iter()
        .map(|(key, fs)| {
            let best = fs
                .iter()
                .copied()
                .min_by(|a, b| {
                    (a.entries, shrink_rank(a.shrink), &a.producer, &a.extractor).cmp(&(
                        b.entries,
                        shrink_rank(b.shrink),
                        &b.producer,
                        &b.extractor,
                    ))
                })
                .expect("a group has a finding");
            let pairs: BTreeSet<CausePair> = fs
                .iter()
                .map(|f| CausePair {
                    producer: f.producer.clone(),
                    extractor: f.extractor.clone(),
                })
                .collect();
            let (producers, cases) = if key.side == Side::Capture {
                let mut per: BTreeMap<&str, u64> = BTreeMap::new();
                for f in &fs {
                    let c = per.entry(f.producer.as_str()).or_default();
                    *c = (*c).max(f.count);
                }
                (
                    per.keys().map(|p| p.to_string()).collect(),
                    per.values().sum(),
                )
            } else {
                (Vec::new(), fs.iter().map(|f| f.count).sum())
            };
            Cause {
                check: key.check,
                side: key.side,
                shape: shape(&best.message),
                fingerprint: key.fingerprint,
                message: best.message.clone(),
                pairs: pairs.into_iter().collect(),
                producers,
                cases,
                case_dir: best.case_dir.clone(),
                entries: best.entries,
                shrink: best.shrink,
                known: fs.iter().all(|f| f.known),
                cause: best.cause.clone(),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        (
            a.check.severity(),
            a.check.id(),
            a.known,
            std::cmp::Reverse(a.cases),
            a.side,
            &a.fingerprint,
        )
            .cmp(&(
                b.check.severity(),
                b.check.id(),
                b.known,
                std::cmp::Reverse(b.cases),
                b.side,
                &b.fingerprint,
            ))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(check: Check, p: &str, e: &str, msg: &str, count: u64, entries: usize) -> FindingRecord {
        FindingRecord {
            check,
            producer: p.into(),
            extractor: e.into(),
            case_dir: format!("cases/{check}__{p}__{e}"),
            entries,
            message: msg.into(),
            count,
            capture_side: check == Check::DANGLING_LINK,
            fingerprint: String::new(),
            known: false,
            shrink: ShrinkEnd::Minimal,
            cause: None,
        }
    }

    /// One extractor-side cause over two producers, one capture-side cause over two
    /// extractors, a containment that ranks first despite fewer cases.
    #[test]
    fn findings_group_into_causes_ranked_by_severity() {
        let rt = "differs from the expected tree: + c---------  1,3  a-1";
        let rt2 = "differs from the expected tree: + c---------  1,3  b";
        let dl = "hardlink member `a` names `b`, which is not an earlier member (1 such member(s))";
        let report = RunReport {
            schema: 1,
            findings: vec![
                rec(Check::ROUNDTRIP, "gnu-tar", "busybox-tar", rt, 5, 1),
                rec(Check::ROUNDTRIP, "tar-rs", "busybox-tar", rt2, 4, 1),
                rec(
                    Check::DANGLING_LINK,
                    "python-tarfile",
                    "busybox-tar",
                    dl,
                    2,
                    3,
                ),
                rec(
                    Check::DANGLING_LINK,
                    "python-tarfile",
                    "reference",
                    dl,
                    2,
                    2,
                ),
                rec(
                    Check::CONTAINMENT,
                    "gnu-tar",
                    "python-tar",
                    "changed the jail outside the root: `x`",
                    1,
                    4,
                ),
            ],
            ..RunReport::empty(Default::default(), 1, 20, "default")
        };
        let cs = causes(&report);
        let ids: Vec<&str> = cs.iter().map(|c| c.check.id()).collect();
        assert_eq!(ids, ["containment", "dangling-link", "roundtrip"]);
        let dl = &cs[1];
        assert_eq!(dl.side, Side::Capture);
        assert_eq!(dl.cases, 2, "a producer's cases count once");
        assert_eq!(dl.pairs.len(), 2);
        assert_eq!(dl.entries, 2, "the smaller reproducer");
        assert_eq!(
            dl.case_dir,
            "cases/dangling-link__python-tarfile__reference"
        );
        assert_eq!(dl.pairs_text(5), "python-tarfile × every extractor");
        let rt = &cs[2];
        assert_eq!(rt.cases, 9);
        assert_eq!(rt.pairs_text(1), "gnu-tar × busybox-tar and 1 more");
        assert_eq!(rt.counts_text(), "2 pairs, 9 failures (cases × pairs)");
    }
}
