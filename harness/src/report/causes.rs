//! Causes: findings of a run grouped by behaviour, symptoms folded into their root cause,
//! ranked most severe first.
//!
//! A finding ([`FindingRecord`]) is one matrix cell: the first case of one (producer,
//! extractor, check), shrunk. Its key ([`CauseKey::of`]) is a behaviour, not a sample:
//!
//! - the check;
//! - the side the check itself lies on: `capture` (a capture-side check: the producer alone
//!   is at fault) or `hydration`;
//! - the behaviour ([`super::behaviour()`]): the refusal class or error kind, the kinds of
//!   a tree difference, and the features of the shrunk workspace that trigger it; never
//!   names, lengths, counts, seeds or which line of a diff came first. Its digest with the
//!   check and side is the key's `fingerprint`.
//!
//! Findings with one key form a group. Groups fold into one [`Cause`] when they are the
//! symptoms of one fault: a hydration-side group whose findings have the same trigger
//! features as a *producer fault* of the same producers folds into it, and one whose pairs
//! and trigger are those of an earlier stage of the extractors (what a refusal left
//! behind, after the refusal) folds into that. An extractor's write through a link seen
//! inside the root (a tree difference that only changes modes or contents) folds into the
//! same write seen outside it (`containment`), see `fold_writes_through_links`. A producer
//! fault is a capture-side check (`dangling-link`, `exclusion-leak`), a `roundtrip` finding
//! of the `reference` extractor (it restores exactly what the archive holds, so a wrong
//! tree is a wrong archive), or a trigger that every extractor paired with a producer fails
//! on (with two extractors or more). Such a cause is on the capture side; its root, the
//! earliest stage (capture before hydration, a refusal before what it left behind, before
//! a tree that differs), gives the cause its key, and the others are listed as the checks
//! it shows as ([`Cause::members`]).
//!
//! The pairs are not part of any key, nor the seed, `-j`, the shard or how far shrinking
//! got; the baseline ([`super::Baseline`]) lists each cause's keys. Causes are ranked by
//! the most severe check they show as ([`crate::checks::CheckDef::severity`]), then new
//! before known, then by how many cases they failed.

use super::behaviour::{behaviour, changes_entries, changes_outside, kind};
use super::fingerprint::{behaviour_fingerprint, cause_fingerprint, shape};
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

/// The key of a cause: check, side and fingerprint (the digest of the check, the side and
/// the behaviour, `behaviour_fingerprint`; for a fuzz cause the digest
/// of its signature, [`cause_fingerprint`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CauseKey {
    /// The check of the findings.
    pub check: Check,
    /// The side of the check.
    pub side: Side,
    /// The digest of check, side and behaviour.
    pub fingerprint: String,
}

impl CauseKey {
    /// The key of `f`, computed from its check, side, message and trigger (never from a
    /// stored fingerprint); a fuzz finding's from its cause signature
    /// ([`CauseKey::of_fuzz_cause`]).
    pub fn of(f: &FindingRecord) -> CauseKey {
        if let Some(c) = &f.cause {
            return CauseKey::of_fuzz_cause(f.check, c);
        }
        let side = Side::of(f);
        CauseKey {
            check: f.check,
            side,
            fingerprint: behaviour_fingerprint(f.check, &side.to_string(), &behaviour(f)),
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

/// One key of a cause: the root's, or a symptom's (the same fault seen by another check or
/// as another behaviour of the extractors that follow).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CauseMember {
    /// The check of the member's findings.
    pub check: Check,
    /// The side of that check.
    pub side: Side,
    /// The member's key fingerprint.
    pub fingerprint: String,
    /// The behaviour, in words ([`super::behaviour()`]).
    pub behaviour: String,
    /// Its pairs, sorted.
    pub pairs: Vec<CausePair>,
}

impl CauseMember {
    /// The member's key.
    pub fn key(&self) -> CauseKey {
        CauseKey {
            check: self.check,
            side: self.side,
            fingerprint: self.fingerprint.clone(),
        }
    }
}

/// One cause: the findings of a run with one behaviour, and the symptoms folded into it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cause {
    /// The check of the root's findings.
    pub check: Check,
    /// Who is at fault: `capture` for a producer fault (see the module docs), else the
    /// side of the root's check.
    pub side: Side,
    /// The root's key fingerprint ([`CauseKey`]).
    pub fingerprint: String,
    /// The reproducer's message with names abstracted ([`shape`]).
    pub shape: String,
    /// What happened, in one line: the message of the reproducer's finding.
    pub message: String,
    /// Every pair with a finding of this cause (root and symptoms), sorted.
    pub pairs: Vec<CausePair>,
    /// For a fault every extractor paired with a producer shows: those producers (empty
    /// otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub producers: Vec<String>,
    /// Failing cases of the root: the cells' counts summed over its pairs (a capture-side
    /// root counts a producer's cases once, not once per extractor).
    pub cases: u64,
    /// The smallest reproducer of the root (`cases/<id>`, relative to the report dir).
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
    /// The root's behaviour, in words ([`super::behaviour()`]).
    #[serde(default)]
    pub behaviour: String,
    /// The root first, then each symptom folded into it, earliest stage first.
    #[serde(default)]
    pub members: Vec<CauseMember>,
}

impl Cause {
    /// The key of this cause: its root's.
    pub fn key(&self) -> CauseKey {
        match self.members.first() {
            Some(m) => m.key(),
            None => CauseKey {
                check: self.check,
                side: self.side,
                fingerprint: self.fingerprint.clone(),
            },
        }
    }

    /// The keys of every member, root first.
    pub fn keys(&self) -> Vec<CauseKey> {
        if self.members.is_empty() {
            return vec![self.key()];
        }
        self.members.iter().map(CauseMember::key).collect()
    }

    /// The checks this cause shows as, root first, each once: `dangling-link,
    /// late-failure, atomic-hydration`.
    pub fn checks_text(&self) -> String {
        let mut seen: Vec<&str> = vec![self.check.id()];
        for m in &self.members {
            if !seen.contains(&m.check.id()) {
                seen.push(m.check.id());
            }
        }
        seen.join(", ")
    }

    /// The symptoms folded into this cause, in words, or `None` without one:
    /// `late-failure (refused: hardlink-target-missing; …) in 10 pairs; atomic-hydration
    /// (cleared-root) in 5 pairs`.
    pub fn symptoms_text(&self) -> Option<String> {
        let parts: Vec<String> = self
            .members
            .iter()
            .skip(1)
            .map(|m| {
                let n = m.pairs.len();
                format!(
                    "{} ({}) in {n} pair{}",
                    m.check.id(),
                    m.behaviour,
                    if n == 1 { "" } else { "s" }
                )
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// The pairs in words: `python-tarfile × every extractor` for a fault of producers,
    /// else `a × b, c × d` (more than `most` pairs are cut with `and N more`).
    pub fn pairs_text(&self, most: usize) -> String {
        let items: Vec<String> = if !self.producers.is_empty() {
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

/// The stage of a group, earliest first: a capture-side check, then a refusal, then what a
/// refusal left behind, then a tree that differs, then the rest.
fn stage(key: &CauseKey) -> u8 {
    if key.side == Side::Capture {
        0
    } else if key.check == Check::LATE_FAILURE || key.check == Check::HANG {
        1
    } else if key.check == Check::ATOMIC_HYDRATION {
        2
    } else if key.check == Check::ROUNDTRIP || key.check == Check::CHECKPOINT_RESTORE {
        3
    } else {
        4
    }
}

/// One group of findings with one key.
struct Group<'a> {
    key: CauseKey,
    findings: Vec<&'a FindingRecord>,
    /// The trigger's key features (empty for a fuzz finding or an old report).
    features: Vec<String>,
    /// Every extractor paired with its producers shows its trigger ([`producer_faults`]).
    everywhere: bool,
    /// A producer fault: capture side, the reference's roundtrip, or `everywhere`.
    fault: bool,
}

impl Group<'_> {
    fn producers(&self) -> BTreeSet<&str> {
        self.findings.iter().map(|f| f.producer.as_str()).collect()
    }

    fn pairs(&self) -> BTreeSet<(&str, &str)> {
        self.findings
            .iter()
            .map(|f| (f.producer.as_str(), f.extractor.as_str()))
            .collect()
    }
}

/// The (producer, trigger features) that every extractor paired with the producer in
/// `report` fails on (two extractors or more), from the hydration-side findings.
fn producer_faults(report: &RunReport) -> BTreeSet<(String, Vec<String>)> {
    let mut paired: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for p in &report.pairs {
        paired
            .entry(p.producer.as_str())
            .or_default()
            .insert(p.extractor.as_str());
    }
    let mut seen: BTreeMap<(String, Vec<String>), BTreeSet<&str>> = BTreeMap::new();
    for f in &report.findings {
        if f.capture_side || f.cause.is_some() || f.trigger.features.is_empty() {
            continue;
        }
        seen.entry((f.producer.clone(), f.trigger.key_features()))
            .or_default()
            .insert(f.extractor.as_str());
    }
    seen.into_iter()
        .filter(|((p, _), ex)| {
            ex.len() >= 2 && paired.get(p.as_str()).is_some_and(|all| all.is_subset(ex))
        })
        .map(|(k, _)| k)
        .collect()
}

/// The causes of `report`'s findings, most severe first (see the module docs). Each
/// cause's reproducer is its root's finding with the fewest entries, then the best-ended
/// shrink, then the first pair. A cause is known when every finding of it is.
pub fn causes(report: &RunReport) -> Vec<Cause> {
    let mut by_key: BTreeMap<CauseKey, Vec<&FindingRecord>> = BTreeMap::new();
    for f in &report.findings {
        by_key.entry(CauseKey::of(f)).or_default().push(f);
    }
    let everywhere = producer_faults(report);
    let mut groups: Vec<Group<'_>> = by_key
        .into_iter()
        .map(|(key, findings)| {
            // The trigger's features (none for a cleared root: the adapter clears whatever
            // the tool then refuses, so it is no symptom of the refusal).
            let f0 = findings[0];
            let cleared =
                f0.check == Check::ATOMIC_HYDRATION && !kind(f0.check, &f0.message, &f0.trigger).1;
            let features = if !cleared {
                f0.trigger.key_features()
            } else {
                Vec::new()
            };
            let all = findings.iter().all(|f| {
                f.cause.is_none()
                    && !f.capture_side
                    && everywhere.contains(&(f.producer.clone(), f.trigger.key_features()))
            });
            let reference_tree = key.check == Check::ROUNDTRIP
                && findings.iter().any(|f| f.extractor == "reference");
            let fault =
                !features.is_empty() && (key.side == Side::Capture || all || reference_tree);
            Group {
                key,
                findings,
                features,
                everywhere: all,
                fault,
            }
        })
        .collect();
    // Earliest stage first, so that a root comes before its symptoms.
    groups.sort_by(|a, b| (stage(&a.key), &a.key).cmp(&(stage(&b.key), &b.key)));
    // Fold: each group joins the first producer fault (earlier in that order) with the
    // same trigger features whose producers include its own.
    let mut root_of: Vec<usize> = (0..groups.len()).collect();
    // A write through a link inside the root joins the same write outside it first, so
    // that the escape is its root.
    fold_writes_through_links(&groups, &mut root_of);
    for i in 0..groups.len() {
        let g = &groups[i];
        // A capture-side check is a root of its own; nothing is known of an empty trigger;
        // a group folded already stays where it is.
        if g.features.is_empty() || g.key.side == Side::Capture || root_of[i] != i {
            continue;
        }
        let mine = g.producers();
        let my_pairs: BTreeSet<(&str, &str)> = g.pairs();
        let root = (0..i).find(|&j| {
            let r = &groups[j];
            let of_producer = r.fault && mine.is_subset(&r.producers());
            let of_extractor = !r.fault
                && !g.fault
                && stage(&r.key) < stage(&g.key)
                && my_pairs.is_subset(&r.pairs());
            root_of[j] == j && r.features == g.features && (of_producer || of_extractor)
        });
        if let Some(j) = root {
            root_of[i] = j;
        }
    }
    // A root that folded into an earlier one takes what had folded into it along.
    for i in 0..root_of.len() {
        let mut r = root_of[i];
        while root_of[r] != r {
            r = root_of[r];
        }
        root_of[i] = r;
    }
    let mut out: Vec<Cause> = Vec::new();
    for (i, root) in groups.iter().enumerate() {
        if root_of[i] != i {
            continue;
        }
        // The root first, then its symptoms in stage order.
        let members: Vec<&Group<'_>> = std::iter::once(root)
            .chain(
                groups
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i && root_of[*j] == i)
                    .map(|(_, g)| g),
            )
            .collect();
        out.push(cause_of(root, &members));
    }
    out.sort_by(|a, b| {
        let sev = |c: &Cause| {
            c.members
                .iter()
                .map(|m| m.check.severity())
                .chain([c.check.severity()])
                .min()
                .unwrap_or(u8::MAX)
        };
        (
            sev(a),
            a.check.id(),
            a.known,
            std::cmp::Reverse(a.cases),
            a.side,
            &a.fingerprint,
        )
            .cmp(&(
                sev(b),
                b.check.id(),
                b.known,
                std::cmp::Reverse(b.cases),
                b.side,
                &b.fingerprint,
            ))
    });
    out
}

/// True for a group whose findings are an extractor's write landing on entries the archive
/// put there (a tree comparison whose every difference is a `changed <type> mode` or
/// `changed <type> content`, nothing missing or extra).
fn writes_inside(g: &Group<'_>) -> bool {
    let tree = g.key.check == Check::ROUNDTRIP || g.key.check == Check::CHECKPOINT_RESTORE;
    tree && g.key.side == Side::Hydration
        && !g.fault
        && g.findings
            .iter()
            .all(|f| changes_entries(&kind(f.check, &f.message, &f.trigger).0))
}

/// True for a group of escapes that changed an entry outside the root (`containment`,
/// `changed <path>`), by the extractor.
fn writes_outside(g: &Group<'_>) -> bool {
    g.key.check == Check::CONTAINMENT
        && g.key.side == Side::Hydration
        && g.findings
            .iter()
            .all(|f| changes_outside(&kind(f.check, &f.message, &f.trigger).0))
}

/// Folds one extractor's write through a link seen inside the root into the same write
/// seen outside it: where the write lands depends only on where the shrunk case's link
/// leads (Python `tarfile` with `filter="tar"` sets a hardlink member's mode through the
/// symlink it links to: on a decoy outside the root, `containment`, or on a file inside
/// it, `roundtrip`; seed 2 and seed 6 of the default job each found one of the two). A
/// group that is its own root and only changes the mode or content of entries
/// (`writes_inside`) joins a root `containment` group that changed an entry outside
/// (`writes_outside`) with the same trigger features whose extractors include its own.
fn fold_writes_through_links(groups: &[Group<'_>], root_of: &mut [usize]) {
    let extractors = |g: &Group<'_>| -> BTreeSet<String> {
        g.findings.iter().map(|f| f.extractor.clone()).collect()
    };
    for i in 0..groups.len() {
        let g = &groups[i];
        if root_of[i] != i || g.features.is_empty() || !writes_inside(g) {
            continue;
        }
        let mine = extractors(g);
        let root = (0..groups.len()).find(|&j| {
            let r = &groups[j];
            j != i
                && root_of[j] == j
                && r.features == g.features
                && writes_outside(r)
                && mine.is_subset(&extractors(r))
        });
        if let Some(j) = root {
            root_of[i] = j;
        }
    }
}

/// The pairs of `fs`, sorted, each once.
fn pairs_of(fs: &[&FindingRecord]) -> Vec<CausePair> {
    let set: BTreeSet<CausePair> = fs
        .iter()
        .map(|f| CausePair {
            producer: f.producer.clone(),
            extractor: f.extractor.clone(),
        })
        .collect();
    set.into_iter().collect()
}

/// The cause of `root` with `members` (root first) folded into it.
fn cause_of(root: &Group<'_>, members: &[&Group<'_>]) -> Cause {
    let fs = &root.findings;
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
        .unwrap_or(fs[0]);
    let capture = root.key.side == Side::Capture;
    let cases = if capture {
        let mut per: BTreeMap<&str, u64> = BTreeMap::new();
        for f in fs {
            let c = per.entry(f.producer.as_str()).or_default();
            *c = (*c).max(f.count);
        }
        per.values().sum()
    } else {
        fs.iter().map(|f| f.count).sum()
    };
    let producers: Vec<String> = if capture || root.everywhere {
        root.producers().into_iter().map(str::to_string).collect()
    } else {
        Vec::new()
    };
    let all: Vec<&FindingRecord> = members.iter().flat_map(|m| m.findings.clone()).collect();
    Cause {
        check: root.key.check,
        side: if root.fault {
            Side::Capture
        } else {
            root.key.side
        },
        fingerprint: root.key.fingerprint.clone(),
        shape: shape(&best.message),
        message: best.message.clone(),
        pairs: pairs_of(&all),
        producers,
        cases,
        case_dir: best.case_dir.clone(),
        entries: best.entries,
        shrink: best.shrink,
        known: all.iter().all(|f| f.known),
        cause: best.cause.clone(),
        behaviour: behaviour(best),
        members: members
            .iter()
            .map(|m| CauseMember {
                check: m.key.check,
                side: m.key.side,
                fingerprint: m.key.fingerprint.clone(),
                behaviour: behaviour(m.findings[0]),
                pairs: pairs_of(&m.findings),
            })
            .collect(),
    }
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
            trigger: Default::default(),
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

    fn with(mut f: FindingRecord, features: &[&str], diff: &[&str]) -> FindingRecord {
        f.trigger = crate::report::Trigger {
            features: features.iter().map(|s| s.to_string()).collect(),
            diff: diff.iter().map(|s| s.to_string()).collect(),
        };
        f
    }

    /// One behaviour with other names, another tool's wording, another first diff line or
    /// another special file shares a key; another refusal class, another difference or
    /// another triggering feature does not.
    #[test]
    fn one_behaviour_one_key_two_behaviours_two_keys() {
        let key = |f: &FindingRecord| CauseKey::of(f);
        let lf = |e: &str, msg: &str, feats: &[&str]| {
            with(
                rec(Check::LATE_FAILURE, "python-tarfile", e, msg, 1, 2),
                feats,
                &[],
            )
        };
        let h2 = ["excluded-alias", "shared-inode"];
        let gnu = lf(
            "gnu-tar",
            "capture succeeded but hydration into an empty root was refused: `tar -xf x` \
             exited with status 2: tar: ./x y/a: Cannot hard link to ‘./store/a’: No such file",
            &h2,
        );
        let bb = lf(
            "busybox-tar",
            "capture succeeded but hydration into an empty root was refused: `busybox tar -xf \
             y` exited with status 1: tar: can't create hardlink './node_modules/a' to './a'",
            &h2,
        );
        assert_eq!(key(&gnu), key(&bb));
        let refused = lf(
            "reference",
            "capture succeeded but hydration into an empty root was refused: \
             hardlink-not-allowed: member `./mod.py/f` (hardlink members are refused by policy)",
            &h2,
        );
        assert_ne!(key(&gnu), key(&refused), "another refusal class");
        let mut h1 = bb.clone();
        h1.trigger.features = vec!["shared-inode".into()];
        assert_ne!(key(&bb), key(&h1), "another trigger");

        // The adapter emptied the root: whatever the first line and the trigger.
        let cleared = |first: &str, feats: &[&str]| {
            let msg = format!(
                "refused hydration changed the prior workspace: {first} (snapconf's \
                 `python-data` adapter emptied the root before the tool ran: clear then extract)"
            );
            with(
                rec(Check::ATOMIC_HYDRATION, "a", "python-data", &msg, 1, 1),
                feats,
                &[],
            )
        };
        let a = cleared("- ----------  51  sha256:b9f55b23  a", &["char-device"]);
        let b = cleared("- drwxr-xr-x  d0_ddddddd/", &["absolute-symlink"]);
        let c = cleared("+ lrwxrwxrwx  b -> foo", &["fifo"]);
        assert_eq!(key(&a), key(&b));
        assert_eq!(key(&a), key(&c));

        // Tree differences by kind, not by which line came first.
        let rt = |first: &str, feats: &[&str], diff: &[&str]| {
            let msg =
                format!("hydration into an empty root differs from the expected tree: {first}");
            with(
                rec(Check::ROUNDTRIP, "gnu-tar", "bsdtar", &msg, 1, 1),
                feats,
                diff,
            )
        };
        let dev = rt("+ c?????????  1,3  a", &["char-device"], &["extra special"]);
        let fifo = rt("+ p?????????  zz", &["fifo"], &["extra special"]);
        assert_eq!(key(&dev), key(&fifo), "special files are one class");
        let two = rt(
            "- d?????????  a/",
            &["exclusion"],
            &["missing dir", "missing file"],
        );
        let swapped = rt(
            "- -?????????  0  sha256:e3b0  b",
            &["exclusion"],
            &["missing dir", "missing file"],
        );
        assert_eq!(key(&two), key(&swapped));
        let file = rt(
            "+ -??-??????  0  sha256:e3b0c442  a",
            &["char-device"],
            &["extra file"],
        );
        assert_ne!(key(&dev), key(&file), "another difference");
        assert_ne!(key(&two), key(&dev));
    }

    /// The symptoms of a producer's fault fold into it, the capture-side root first; the
    /// reference's `roundtrip` makes a producer fault; an extractor's own fault stays apart.
    #[test]
    fn symptoms_fold_into_the_root_cause() {
        let h2 = ["excluded-alias", "shared-inode"];
        let dl = "hardlink member `x y/a` names `store/a`, which is not an earlier member (1 such member(s))";
        let lf = "capture succeeded but hydration into an empty root was refused: `tar -xf a` \
                  exited with status 2: tar: ./x y/a: Cannot hard link to ‘./store/a’: No such";
        let ah = "refused hydration changed the prior workspace: - drwxr-xr-x  data.bin/ \
                  (snapconf's `gnu-tar` adapter emptied the root before the tool ran: clear then extract)";
        let rt = "hydration into an empty root differs from the expected tree: - d?????????  a/";
        let report = RunReport {
            schema: 1,
            findings: vec![
                with(rec(Check::LATE_FAILURE, "python-tarfile", "gnu-tar", lf, 3, 2), &h2, &[]),
                with(rec(Check::ATOMIC_HYDRATION, "python-tarfile", "gnu-tar", ah, 2, 2), &h2, &[]),
                with(rec(Check::DANGLING_LINK, "python-tarfile", "gnu-tar", dl, 4, 2), &h2, &[]),
                with(rec(Check::DANGLING_LINK, "python-tarfile", "reference", dl, 4, 2), &h2, &[]),
                with(rec(Check::ROUNDTRIP, "busybox-tar", "python-data", rt, 2, 1), &["exclusion"], &["missing dir"]),
                with(rec(Check::ROUNDTRIP, "busybox-tar", "reference", rt, 3, 1), &["exclusion"], &["missing dir"]),
                with(rec(Check::ROUNDTRIP, "gnu-tar", "bsdtar", "hydration into an empty root differs from the expected tree: + c?????????  1,3  a", 5, 1), &["char-device"], &["extra special"]),
            ],
            ..RunReport::empty(Default::default(), 1, 20, "default")
        };
        let cs = causes(&report);
        assert_eq!(cs.len(), 4, "{cs:#?}");
        let h2 = cs
            .iter()
            .find(|c| c.pairs[0].producer == "python-tarfile" && c.check != Check::ATOMIC_HYDRATION)
            .expect("h2");
        assert_eq!(
            h2.check,
            Check::DANGLING_LINK,
            "the root comes first: {cs:#?}"
        );
        assert_eq!(h2.side, Side::Capture);
        assert_eq!(h2.checks_text(), "dangling-link, late-failure");
        assert_eq!(h2.members.len(), 2);
        assert_eq!(h2.pairs_text(4), "python-tarfile × every extractor");
        // The cleared root is the extractors' own behaviour, whatever set it off.
        let cleared = cs.iter().find(|c| c.check == Check::ATOMIC_HYDRATION);
        assert_eq!(cleared.map(|c| c.side), Some(Side::Hydration), "{cs:#?}");
        let bb = cs
            .iter()
            .find(|c| c.pairs[0].producer == "busybox-tar")
            .expect("busybox");
        assert_eq!(
            bb.side,
            Side::Capture,
            "the reference restores what the archive holds"
        );
        assert_eq!(bb.pairs.len(), 2);
        let dev = cs
            .iter()
            .find(|c| c.pairs[0].producer == "gnu-tar")
            .expect("gnu-tar");
        assert_eq!(dev.side, Side::Hydration);
    }

    /// One extractor's write through a link is one cause wherever the link leads: the
    /// mode it sets on a file inside the root (`roundtrip`) folds into the same write on
    /// an entry outside (`containment`), the escape first; another difference, another
    /// trigger or another extractor stays apart. A baseline that knows the escape knows
    /// the write inside (seed 6 of the default job against seed 2's baseline).
    #[test]
    fn a_write_through_a_link_is_one_cause_inside_and_outside_the_root() {
        let h = ["hardlink-to-symlink"];
        let out = |p: &str| {
            with(
                rec(
                    Check::CONTAINMENT,
                    p,
                    "python-tar",
                    "hydration changed the jail outside the root: changed out/target (mode 0644 -> 0755)",
                    4,
                    2,
                ),
                &h,
                &[],
            )
        };
        let inside = |e: &str, feats: &[&str], diff: &[&str]| {
            with(
                rec(
                    Check::ROUNDTRIP,
                    "bsdtar",
                    e,
                    "hydration into an empty root differs from the expected tree: - -??-??????  0  sha256:e3b0c442  f",
                    9,
                    3,
                ),
                feats,
                diff,
            )
        };
        let report = |findings: Vec<FindingRecord>| RunReport {
            schema: 1,
            findings,
            ..RunReport::empty(Default::default(), 1, 20, "default")
        };
        let both = report(vec![
            out("bsdtar"),
            out("busybox-tar"),
            inside("python-tar", &h, &["changed file mode"]),
        ]);
        let cs = causes(&both);
        assert_eq!(cs.len(), 1, "{cs:#?}");
        assert_eq!(cs[0].check, Check::CONTAINMENT, "the escape is the root");
        assert_eq!(cs[0].key().check, Check::CONTAINMENT);
        assert_eq!(cs[0].checks_text(), "containment, roundtrip");
        assert_eq!(cs[0].pairs.len(), 2);

        // Apart: something missing or extra, another trigger, another extractor (the
        // escape in a pair the tree lacks, so that it does not fold the other way, as
        // what a tree difference went on to do).
        for other in [
            inside("python-tar", &h, &["changed file mode", "extra file"]),
            inside("python-tar", &["special-mode"], &["changed file mode"]),
            inside("gnu-tar", &h, &["changed file mode"]),
        ] {
            let cs = causes(&report(vec![
                out("bsdtar"),
                out("busybox-tar"),
                other.clone(),
            ]));
            assert_eq!(cs.len(), 2, "{other:?}: {cs:#?}");
        }

        // Seed 2's baseline holds the escape alone; seed 6 found both.
        let baseline = super::super::Baseline::from_report(&report(vec![out("busybox-tar")]), None);
        let mut seed6 = both.clone();
        baseline.apply(&mut seed6);
        assert!(
            seed6.findings.iter().all(|f| f.known),
            "{:#?}",
            seed6.findings
        );
        let mut alone = report(vec![inside("python-tar", &h, &["changed file mode"])]);
        baseline.apply(&mut alone);
        assert!(
            !alone.findings[0].known,
            "without the escape, the write inside is new"
        );
    }
}
