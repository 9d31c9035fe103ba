//! The checks and their stable ids (used in CLI output, JSON and JUnit).

use serde::{Deserialize, Serialize};
use std::fmt;

/// One property of the conformance contract (DESIGN.md, "The checks").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// Capture succeeded but the paired extractor refused the archive.
    LateFailure,
    /// The hydrated tree differs from `expected(spec, profile)`.
    Roundtrip,
    /// A failed hydration changed the prior workspace.
    AtomicHydration,
    /// Capture or hydration changed something outside its root.
    Containment,
    /// A hardlink member names a path that is not an earlier member.
    DanglingLink,
    /// A member is named under an excluded path.
    ExclusionLeak,
    /// Capture or hydration did not end within the timeout, or died of a signal.
    Hang,
    /// An extractor accepted an archive the reference refuses as unsafe and something landed
    /// outside policy (escape, special file, setuid/setgid bit, write through a link).
    UnsafeAccept,
    /// Two parsers read the same bytes as different member lists.
    ParserDisagreement,
}

impl Check {
    /// Every check, in report column order.
    pub const ALL: [Check; 9] = [
        Check::LateFailure,
        Check::Roundtrip,
        Check::AtomicHydration,
        Check::Containment,
        Check::DanglingLink,
        Check::ExclusionLeak,
        Check::Hang,
        Check::UnsafeAccept,
        Check::ParserDisagreement,
    ];

    /// The stable id, e.g. `late-failure`.
    pub fn id(self) -> &'static str {
        match self {
            Check::LateFailure => "late-failure",
            Check::Roundtrip => "roundtrip",
            Check::AtomicHydration => "atomic-hydration",
            Check::Containment => "containment",
            Check::DanglingLink => "dangling-link",
            Check::ExclusionLeak => "exclusion-leak",
            Check::Hang => "hang",
            Check::UnsafeAccept => "unsafe-accept",
            Check::ParserDisagreement => "parser-disagreement",
        }
    }

    /// Parse a stable id.
    pub fn from_id(id: &str) -> Option<Check> {
        Check::ALL.into_iter().find(|c| c.id() == id)
    }

    /// One line explaining what a finding of this check means to a user.
    pub fn explain(self) -> &'static str {
        match self {
            Check::LateFailure => {
                "capture succeeded but hydration refused the archive: persisted but unrestorable"
            }
            Check::Roundtrip => "the hydrated tree differs from what the profile promises",
            Check::AtomicHydration => "a failed hydration changed the prior workspace",
            Check::Containment => "something outside the root changed",
            Check::DanglingLink => "a hardlink member names a path that is not an earlier member",
            Check::ExclusionLeak => "a member is named under an excluded path",
            Check::Hang => {
                "a tool did not finish within the timeout, died of a signal, or left a process \
                 running"
            }
            Check::UnsafeAccept => {
                "an extractor accepted an archive the reference refuses as unsafe, and something \
                 landed outside policy"
            }
            Check::ParserDisagreement => {
                "two parsers read the same archive as different member lists"
            }
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
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
        }
        assert_eq!(Check::from_id("nope"), None);
    }
}
