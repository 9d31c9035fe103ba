//! [`Check`]: the one id type of a check, stable in CLI output, JSON, JUnit and baselines.

use super::{Evidence, Violation};
use crate::error::HarnessError;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// What one check is: its id, what a finding means, where it sorts, and its judgement.
///
/// Each check's file declares one `const DEF: CheckDef`; adding a check is that file plus
/// one line in [`Check::ALL`]. A test may build its own `CheckDef` (a toy check) and hand
/// it to a driver's check list without touching the driver.
#[derive(Debug)]
pub struct CheckDef {
    /// The stable id, kebab-case (`containment`).
    pub id: &'static str,
    /// One line saying what a finding of this check means to a user.
    pub explain: &'static str,
    /// Report column position (smaller first); ties sort by id. A check at
    /// [`CheckDef::ONLY_WHEN_FOUND`] or beyond gets a column only in a report that has a
    /// finding of it: the checks a `run` or `audit` cannot find (`parser-disagreement`
    /// needs the fuzzer's parser listings, the reference's self-checks), and
    /// `escaping-link`, which only extractors that promise to refuse such links can fail.
    pub column: u8,
    /// 0 is most severe: how findings are ranked when there are more than can be shrunk.
    pub severity: u8,
    /// The judgement: every violation of the property in one step's evidence (empty when
    /// the property holds or the evidence does not bear on it). `Err` only for a fault of
    /// snapconf's own machinery while looking at the evidence.
    pub judge: fn(&Evidence<'_>) -> Result<Vec<Violation>, HarnessError>,
}

impl CheckDef {
    /// The first [`CheckDef::column`] that is shown only when found.
    pub const ONLY_WHEN_FOUND: u8 = 100;
}

/// One property of the conformance contract (docs/design.md, "The checks"): a handle on a
/// [`CheckDef`], compared, hashed and serialised by its id.
#[derive(Clone, Copy)]
pub struct Check(&'static CheckDef);

impl Check {
    /// `late-failure`: capture succeeded but the paired extractor refused the archive.
    pub const LATE_FAILURE: Check = Check(&super::late_failure::DEF);
    /// `roundtrip`: the hydrated tree differs from `expected(spec, profile)`.
    pub const ROUNDTRIP: Check = Check(&super::roundtrip::DEF);
    /// `atomic-hydration`: a failed hydration changed the prior workspace.
    pub const ATOMIC_HYDRATION: Check = Check(&super::atomic_hydration::DEF);
    /// `containment`: capture or hydration changed something outside its root.
    pub const CONTAINMENT: Check = Check(&super::containment::DEF);
    /// `dangling-link`: a hardlink member names a path that is not an earlier member.
    pub const DANGLING_LINK: Check = Check(&super::dangling_link::DEF);
    /// `exclusion-leak`: a member is named under an excluded path.
    pub const EXCLUSION_LEAK: Check = Check(&super::exclusion_leak::DEF);
    /// `hang`: a step did not end within the timeout, died of a signal, or left a process.
    pub const HANG: Check = Check(&super::hang::DEF);
    /// `unsafe-accept`: an extractor accepted an archive the reference refuses as unsafe
    /// and something landed outside policy.
    pub const UNSAFE_ACCEPT: Check = Check(&super::unsafe_accept::DEF);
    /// `parser-disagreement`: two parsers read the same bytes as different member lists.
    pub const PARSER_DISAGREEMENT: Check = Check(&super::parser_disagreement::DEF);
    /// `verdict-disagreement`: the reference's `validate` and `hydrate` disagree on one
    /// archive (the verdict or the reason code).
    pub const VERDICT_DISAGREEMENT: Check = Check(&super::verdict_disagreement::DEF);
    /// `listing-mismatch`: an accepted reference hydration left a tree that does not match
    /// `validate`'s listing.
    pub const LISTING_MISMATCH: Check = Check(&super::listing_mismatch::DEF);

    /// `escaping-link`: an extractor left a link leaving the root that it promised to
    /// refuse.
    pub const ESCAPING_LINK: Check = Check(&super::escaping_link::DEF);

    /// `checkpoint-restore`: a restore of a session's accepted checkpoint (cold, warm over
    /// the diverged workspace, or after a refused capture) differs from that turn's
    /// expected tree.
    pub const CHECKPOINT_RESTORE: Check = Check(&super::checkpoint_restore::DEF);
    /// `stuck-session`: after a refused capture and the removal of what the profile lets a
    /// capture refuse, the session's producer still refuses what a fresh instance captures.
    pub const STUCK_SESSION: Check = Check(&super::stuck_session::DEF);
    /// `traversal`: an accepted archive put a member under a link leaving the root (at
    /// that member's turn in the listing), whether or not anything outside changed.
    pub const TRAVERSAL: Check = Check(&super::traversal::DEF);

    /// The registry: every built-in check, in report column order. Every driver (`run`,
    /// `--faults`, `fuzz`, `audit`, the fuzz oracles) judges its evidence with this list
    /// unless told otherwise.
    pub const ALL: [Check; 15] = [
        Check::LATE_FAILURE,
        Check::ROUNDTRIP,
        Check::ATOMIC_HYDRATION,
        Check::CONTAINMENT,
        Check::DANGLING_LINK,
        Check::EXCLUSION_LEAK,
        Check::HANG,
        Check::UNSAFE_ACCEPT,
        Check::PARSER_DISAGREEMENT,
        Check::VERDICT_DISAGREEMENT,
        Check::LISTING_MISMATCH,
        Check::ESCAPING_LINK,
        Check::CHECKPOINT_RESTORE,
        Check::STUCK_SESSION,
        Check::TRAVERSAL,
    ];

    /// A check of one's own (a test's toy check, say), from a `'static` definition.
    pub const fn custom(def: &'static CheckDef) -> Check {
        Check(def)
    }

    /// The stable id, e.g. `late-failure`.
    pub fn id(self) -> &'static str {
        self.0.id
    }

    /// Parse a stable id of a built-in check.
    pub fn from_id(id: &str) -> Option<Check> {
        Check::ALL.into_iter().find(|c| c.id() == id)
    }

    /// One line explaining what a finding of this check means to a user.
    pub fn explain(self) -> &'static str {
        self.0.explain
    }

    /// Report column position (see [`CheckDef::column`]).
    pub fn column(self) -> u8 {
        self.0.column
    }

    /// 0 is most severe (see [`CheckDef::severity`]).
    pub fn severity(self) -> u8 {
        self.0.severity
    }

    /// Judge one step's evidence: every violation of this check's property.
    ///
    /// # Errors
    /// A fault of snapconf's own machinery while looking at the evidence.
    pub fn violations(self, ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
        (self.0.judge)(ev)
    }
}

impl PartialEq for Check {
    fn eq(&self, other: &Check) -> bool {
        self.id() == other.id()
    }
}

impl Eq for Check {}

impl Hash for Check {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id().hash(state);
    }
}

impl PartialOrd for Check {
    fn partial_cmp(&self, other: &Check) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Check {
    fn cmp(&self, other: &Check) -> Ordering {
        (self.0.column, self.id()).cmp(&(other.0.column, other.id()))
    }
}

impl fmt::Debug for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Check({})", self.id())
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for Check {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

impl<'de> Deserialize<'de> for Check {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Check, D::Error> {
        let id = String::deserialize(d)?;
        Check::from_id(&id).ok_or_else(|| {
            let known: Vec<&str> = Check::ALL.iter().map(|c| c.id()).collect();
            serde::de::Error::custom(format!(
                "unknown check `{id}` (known: {})",
                known.join(", ")
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_match_serde() {
        for c in Check::ALL {
            assert_eq!(Check::from_id(c.id()), Some(c));
            let json = serde_json::to_string(&c).expect("serialise");
            assert_eq!(json, format!("\"{}\"", c.id()));
            let back: Check = serde_json::from_str(&json).expect("deserialise");
            assert_eq!(back, c);
        }
        assert_eq!(Check::from_id("nope"), None);
        assert!(serde_json::from_str::<Check>("\"nope\"").is_err());
    }

    #[test]
    fn ids_are_unique_and_columns_follow_the_registry() {
        for (i, a) in Check::ALL.iter().enumerate() {
            for b in &Check::ALL[i + 1..] {
                assert_ne!(a.id(), b.id());
                assert!(a < b, "{a} sorts before {b} in the registry");
            }
        }
    }
}
