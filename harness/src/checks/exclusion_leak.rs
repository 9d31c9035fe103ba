//! `exclusion-leak`: no member is named at or under an excluded path.
//!
//! Property: a capture told to exclude `REL` writes no member named `REL` or `REL/...`
//! (whole components: excluding `cache` does not exclude `cachex`). Evidence:
//! [`Archived::members`](super::Archived) and [`Archived::exclusions`](super::Archived).

use super::{on_members, Check, CheckDef, Evidence, Violation};
use crate::archive::listing::Member;
use crate::error::HarnessError;
use crate::model::bytes::escape;

/// The definition registered as [`Check::EXCLUSION_LEAK`].
pub const DEF: CheckDef = CheckDef {
    id: "exclusion-leak",
    explain: "a member is named under an excluded path",
    column: 5,
    severity: 7,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    Ok(on_members(Check::EXCLUSION_LEAK, ev, |a, members| {
        let leaked = excluded_members(members, a.exclusions);
        let m = leaked.first()?;
        Some(Violation::new(
            Check::EXCLUSION_LEAK,
            format!(
                "member `{}` lies under an excluded path ({} such member(s))",
                escape(&m.name),
                leaked.len()
            ),
        ))
    }))
}

/// Members named at or under one of `exclusions` (root-relative byte paths).
pub fn excluded_members<'a>(members: &'a [Member], exclusions: &[Vec<u8>]) -> Vec<&'a Member> {
    members
        .iter()
        .filter(|m| {
            exclusions.iter().any(|x| {
                m.name == *x
                    || (m.name.len() > x.len() && m.name.starts_with(x) && m.name[x.len()] == b'/')
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(name: &str, flag: u8) -> Member {
        Member {
            name: name.as_bytes().to_vec(),
            kind: snapconf_extract::MemberKind::from_flag(flag),
            link_target: None,
            size: None,
        }
    }

    #[test]
    fn exclusion_matches_whole_components_only() {
        let ms = [
            member("cache", b'5'),
            member("cache/x", b'0'),
            member("cachex", b'0'),
        ];
        let hits = excluded_members(&ms, &[b"cache".to_vec()]);
        let names: Vec<&[u8]> = hits.iter().map(|m| m.name.as_slice()).collect();
        assert_eq!(names, vec![&b"cache"[..], &b"cache/x"[..]]);
    }
}
