//! The TOML expectation of an adversarial corpus case (`corpora/adversarial/<name>.toml`),
//! one format for every case (rust-lang/regex `testdata/*.toml` style).
//!
//! ```toml
//! attack = "H10: a file member written through an earlier symlink of the same name"
//! policy = "default"        # see fuzz::named_policy
//! verdict = "refuse"        # accept | refuse
//! reason = "duplicate"      # the reference's reason code, refusals only
//! refused_member = "link"   # escaped (\xNN) member name, refusals only
//! [[members]]               # the reference's listing, acceptances only
//! name = "link"             # escaped raw name as stored
//! kind = "symlink"          # file dir symlink hardlink fifo char block other
//! link = "../out/target"    # symlinks and hardlinks
//! size = 0                  # regular files only
//! ```

use crate::archive::parser_listing::ParserListing;
use crate::model::bytes::escape;
use serde::{Deserialize, Serialize};
use snapconf_extract::{validate, MemberKind, Policy};

/// One listed member of an expectation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedMember {
    /// The member name as stored, `\xNN`-escaped where not printable UTF-8.
    pub name: String,
    /// [`MemberKind::name`]: `file`, `dir`, `symlink`, `hardlink`, `fifo`, `char`, `block`
    /// or `other`.
    pub kind: String,
    /// Link target (escaped) for symlinks and hardlinks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// Payload size in bytes, regular files only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// An expectation file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expectation {
    /// What the case attacks.
    pub attack: String,
    /// The reference policy name ([`super::named_policy`]).
    pub policy: String,
    /// `accept` or `refuse`.
    pub verdict: String,
    /// Reason code of a refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Escaped name of the refused member (empty when none is known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_member: Option<String>,
    /// The listing of an accepted archive.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<ExpectedMember>,
}

/// What the reference says about `bytes` under `policy`, in expectation form (`attack` and
/// `policy` filled from the arguments).
pub fn reference_expectation(
    attack: &str,
    policy_name: &str,
    policy: &Policy,
    bytes: &[u8],
) -> Expectation {
    let mut e = Expectation {
        attack: attack.to_string(),
        policy: policy_name.to_string(),
        verdict: String::new(),
        reason: None,
        refused_member: None,
        members: Vec::new(),
    };
    match validate(bytes, policy) {
        Ok(listing) => {
            e.verdict = "accept".into();
            e.members = listing
                .members
                .iter()
                .map(|m| ExpectedMember {
                    name: escape(&m.name),
                    kind: m.kind.name().to_string(),
                    link: m.link_target.as_deref().map(escape),
                    size: (m.kind == MemberKind::File).then_some(m.size),
                })
                .collect();
        }
        Err(err) => {
            e.verdict = "refuse".into();
            e.reason = Some(err.reason().map(|r| r.as_str()).unwrap_or("io").to_string());
            if let snapconf_extract::HydrateError::Refused { member, .. } = &err {
                e.refused_member = Some(escape(member));
            }
        }
    }
    e
}

/// Members of a [`ParserListing`] as expectation members (names normalised), for
/// comparing parsers in reports.
pub fn listing_members(l: &ParserListing) -> Vec<ExpectedMember> {
    match l {
        ParserListing::Members(ms) => ms
            .iter()
            .map(|m| ExpectedMember {
                name: escape(&m.name),
                kind: m.kind.name().to_string(),
                link: m.link_target.as_deref().map(escape),
                size: m.size,
            })
            .collect(),
        ParserListing::Failed(_) | ParserListing::Refused(_) => Vec::new(),
    }
}
