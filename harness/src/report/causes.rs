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
//!   `fingerprint` ([`fingerprint`]).
//!
//! The pairs are not part of the signature, nor the seed, nor how far shrinking got, so a
//! cause found again from another seed or with other `--producers` keeps its key; the
//! baseline ([`super::Baseline`]) is keyed by it.
//!
//! Causes are ranked by the severity of their check in the registry
//! ([`crate::checks::CheckDef::severity`]), then new before known, then by how many cases
//! they failed.

use super::{FindingRecord, RunReport};
use crate::checks::Check;
use crate::report::ShrinkEnd;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
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
    /// [`fingerprint`] of the check and the message.
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

/// The fingerprint of a fuzz finding (16 lower-case hex digits): a digest of the check and
/// its cause signature as it is. The signature already has names abstracted (type flags
/// and path shapes such as `1:d1->/d2`), so unlike [`fingerprint`] no [`shape`] is applied:
/// its digits are what tells causes apart.
pub fn cause_fingerprint(check: Check, cause: &str) -> String {
    let mut h = Sha256::new();
    h.update(check.id().as_bytes());
    h.update(b"\0cause\0");
    h.update(cause.as_bytes());
    hex::encode(&h.finalize()[..8])
}

/// The stable fingerprint of a finding (16 lower-case hex digits): a digest of the check and
/// of [`shape`] of the message. It keeps what went wrong (`hardlink-not-allowed`, `differs
/// from the expected tree: + c?????????`) and drops what varies with the seed or with how
/// far shrinking got (names, paths, sizes, counts).
pub fn fingerprint(check: Check, message: &str) -> String {
    let mut h = Sha256::new();
    h.update(check.id().as_bytes());
    h.update(b"\0");
    h.update(shape(message).as_bytes());
    hex::encode(&h.finalize()[..8])
}

/// The message with names abstracted, the one place that decides what is a name:
/// - a backticked span (a member name, a path, a command) becomes `` `…` ``;
/// - a single-quoted span that starts after a space, a bracket or punctuation and ends
///   before one (`'./a/b'`, not the `'` of `can't`) becomes `'…'`;
/// - a whitespace-separated word holding a `/` becomes `<path>`; `sha256:` plus hex becomes
///   `<hash>`;
/// - in an `ls -l`-style tree line (`- drwxr-xr-x  name/`, `+ c?????????  1,3  name`) the
///   name becomes `<name>` (its trailing `/` kept) and a link target `<target>`;
/// - the names of a `hardlinks: a = b` line become `<names>`, and the word after a tar
///   tool's own name (`tar: a-1: Cannot open: ...`) `<name>:`;
/// - every run of digits becomes `N`;
/// - runs of whitespace become one space.
pub fn shape(message: &str) -> String {
    let spans = abstract_spans(message);
    let mut words: Vec<String> = Vec::new();
    let mut rest = spans.as_str();
    // A tree line's name is everything after its fields, up to ` -> ` or the end: find the
    // first mode-string word and abstract what follows it field by field.
    let mut tail: Option<String> = None;
    let mut pos = 0;
    for w in spans.split_whitespace() {
        let at = rest.find(w).map(|i| i + pos).unwrap_or(pos);
        pos = at + w.len();
        rest = &spans[pos..];
        if is_mode_string(w) {
            words.push(w.to_string());
            tail = Some(tree_line_tail(rest));
            break;
        }
        if w == "hardlinks:" {
            words.push("hardlinks: <names>".into());
            break;
        }
        // `tar: NAME: Cannot open: File exists`, `bsdtar: NAME: Can't create '…'`.
        let after_tool = words
            .last()
            .is_some_and(|p| TOOL_PREFIXES.contains(&p.as_str()));
        if after_tool && w.len() > 1 && w.ends_with(':') {
            words.push("<name>:".into());
            continue;
        }
        words.push(abstract_word(w));
    }
    if let Some(t) = tail {
        if !t.is_empty() {
            words.push(t);
        }
    }
    digits_to_n(&words.join(" "))
}

/// Tools whose messages name the member right after their own name (`tar: a/b: ...`).
const TOOL_PREFIXES: [&str; 4] = ["tar:", "bsdtar:", "gtar:", "busybox:"];

/// Backticked and single-quoted spans replaced by placeholders.
fn abstract_spans(message: &str) -> String {
    let chars: Vec<char> = message.chars().collect();
    let mut out = String::with_capacity(message.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            match chars[i + 1..].iter().position(|&d| d == '`') {
                Some(len) => {
                    out.push_str("`…`");
                    i += len + 2;
                }
                None => {
                    out.push_str("`…");
                    i = chars.len();
                }
            }
            continue;
        }
        let opens = c == '\''
            && (i == 0 || chars[i - 1].is_whitespace() || "([{:=,\"".contains(chars[i - 1]));
        if opens {
            let close = chars[i + 1..].iter().enumerate().position(|(j, &d)| {
                let k = i + 1 + j;
                d == '\''
                    && chars
                        .get(k + 1)
                        .is_none_or(|n| n.is_whitespace() || ")]}:;,.\"".contains(*n))
            });
            if let Some(len) = close {
                out.push_str("'…'");
                i += len + 2;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

fn abstract_word(w: &str) -> String {
    if let Some(hex) = w.strip_prefix("sha256:") {
        if !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return "<hash>".into();
        }
    }
    if w.contains('/') && !w.contains('`') && !w.contains('\'') {
        // Keep punctuation around the path (`(./a/b)` → `(<path>)`).
        let start = w.find(|c: char| !"([{\"".contains(c)).unwrap_or(0);
        let end = w
            .char_indices()
            .rfind(|&(_, c)| !")]}:;,.\"".contains(c))
            .map_or(w.len(), |(i, c)| i + c.len_utf8());
        if start < end {
            return format!("{}<path>{}", &w[..start], &w[end..]);
        }
    }
    w.to_string()
}

/// `drwxr-xr-x`, `c?????????`, `-rw-r--r--`: a type letter and nine permission characters.
fn is_mode_string(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() == 10 && b"-dlpscb".contains(&b[0]) && b[1..].iter().all(|c| b"-rwxsStT?".contains(c))
}

/// What follows the mode of a tree line: `12  sha256:ab  a/b` → `N <hash> <name>`,
/// `name/` → `<name>/`, `l -> t` → `<name> -> <target>`, `1,3  dev` → `N,N <name>`.
fn tree_line_tail(rest: &str) -> String {
    let rest = rest.trim();
    let mut fields: Vec<&str> = rest.split("  ").map(str::trim).collect();
    fields.retain(|f| !f.is_empty());
    let Some(name) = fields.pop() else {
        return String::new();
    };
    let mut out: Vec<String> = fields.iter().map(|f| abstract_word(f)).collect();
    let name = if name.contains(" -> ") {
        "<name> -> <target>".to_string()
    } else if name.ends_with('/') {
        "<name>/".to_string()
    } else {
        "<name>".to_string()
    };
    out.push(name);
    out.join(" ")
}

fn digits_to_n(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_digits = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('N');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(c);
        }
    }
    out
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
    /// The cause's key with check and side (see [`fingerprint`]).
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

    /// Whatever a tool prints (any Unicode, GNU tar's `‘…’` quotes around a path), a
    /// shape is made without a panic.
    #[test]
    fn any_message_has_a_shape() {
        for m in [
            "tar: ‘./.venv/lib/a’: Cannot hard link",
            "‘./a/b’:",
            "/ä/ö’",
            "(/a/ü)",
            "`",
            "'",
            "sha256:",
        ] {
            let _ = shape(m);
        }
        let mut rng = snapconf_tarbytes::Rng::new(7);
        let alphabet: Vec<char> = "a/.'`’‘ü:() \n-1".chars().collect();
        for _ in 0..20_000 {
            let n = rng.below(24);
            let m: String = (0..n)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            let _ = shape(&m);
        }
    }

    #[test]
    fn shapes_abstract_names_paths_and_numbers_but_keep_the_reason() {
        assert_eq!(
            shape("hydration into an empty root was refused: hardlink-not-allowed: member `./venv/a` (hardlink members are refused by policy)"),
            "hydration into an empty root was refused: hardlink-not-allowed: member `…` (hardlink members are refused by policy)"
        );
        assert_eq!(
            shape("`busybox tar -xf /x/archive.tar -C /x/h-2` exited with status 1: tar: can't create hardlink './.venv/pyvenv.cfg' to './.hidden'"),
            "`…` exited with status N: tar: can't create hardlink '…' to '…'"
        );
        assert_eq!(
            shape("Traceback ... KeyError: \"linkname './.hidden' not found\""),
            "Traceback ... KeyError: \"linkname '…' not found\""
        );
        assert_eq!(
            shape("hydration into an empty root differs from the expected tree: + c---------  1,3  a-1"),
            "hydration into an empty root differs from the expected tree: + c--------- N,N <name>"
        );
        assert_eq!(
            shape("refused hydration changed the prior workspace: - drwxr-xr-x  .hidden/"),
            "refused hydration changed the prior workspace: - drwxr-xr-x <name>/"
        );
        assert_eq!(
            shape("differs: + -rw-r--r--  12  sha256:ab12cd34  dir with space/f"),
            "differs: + -rw-r--r-- N <hash> <name>"
        );
        assert_eq!(
            shape("differs: - lrwxrwxrwx  l -> ../../etc"),
            "differs: - lrwxrwxrwx <name> -> <target>"
        );
        assert_eq!(
            shape("tar: a-1: Cannot open: File exists"),
            shape("tar: long99_nnn: Cannot open: File exists")
        );
        assert_eq!(
            shape("tar: a-1: Cannot open: File exists"),
            "tar: <name>: Cannot open: File exists"
        );
        assert_eq!(
            shape("differs: + hardlinks: a = b-2"),
            "differs: + hardlinks: <names>"
        );
        assert_eq!(
            shape("cannot open /tmp/x/y: (14 such member(s))"),
            "cannot open <path>: (N such member(s))"
        );
    }

    #[test]
    fn fingerprints_ignore_names_and_numbers_but_not_the_reason() {
        let a = "hydration into an empty root was refused: hardlink-not-allowed: member `./venv/a`";
        let b = "hydration into an empty root was refused: hardlink-not-allowed: member `./x/y/z`";
        let c = "hydration into an empty root was refused: dangling-hardlink: member `./venv/a`";
        let fp = fingerprint;
        assert_eq!(fp(Check::LATE_FAILURE, a), fp(Check::LATE_FAILURE, b));
        assert_ne!(fp(Check::LATE_FAILURE, a), fp(Check::LATE_FAILURE, c));
        assert_ne!(fp(Check::LATE_FAILURE, a), fp(Check::ROUNDTRIP, a));
        assert_eq!(
            fp(Check::DANGLING_LINK, "(1 such member(s))"),
            fp(Check::DANGLING_LINK, "(14 such member(s))")
        );
        let d = "tar: can't create hardlink './.venv/pyvenv.cfg' to './.hidden'";
        let e = "tar: can't create hardlink './b' to './a-2'";
        assert_eq!(fp(Check::LATE_FAILURE, d), fp(Check::LATE_FAILURE, e));
    }

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
