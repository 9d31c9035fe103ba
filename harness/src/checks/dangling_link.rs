//! `dangling-link`: every hardlink (LNK) member names an earlier member.
//!
//! Property: a hardlink member's target is the name of a member that comes before it in
//! the archive. An extractor links the second name to the first; when the first is not in
//! the archive (Python's `tarfile` when the first name of an inode is excluded,
//! docs/cases.md), a strict extractor refuses the whole snapshot and a lax one drops the
//! file. Evidence: [`Archived::members`](super::Archived).

use super::{on_members, Check, CheckDef, Evidence, Violation};
use crate::archive::listing::Member;
use crate::error::HarnessError;
use crate::model::bytes::escape;

/// The definition registered as [`Check::DANGLING_LINK`].
pub const DEF: CheckDef = CheckDef {
    id: "dangling-link",
    explain: "a hardlink member names a path that is not an earlier member",
    column: 4,
    severity: 6,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    Ok(on_members(Check::DANGLING_LINK, ev, |_, members| {
        let dangling = dangling_hardlinks(members);
        let (name, target) = dangling.first()?;
        Some(Violation::new(
            Check::DANGLING_LINK,
            format!(
                "hardlink member `{}` names `{}`, which is not an earlier member ({} such \
                 member(s))",
                escape(name),
                escape(target),
                dangling.len()
            ),
        ))
    }))
}

/// Hardlink members whose target is not the name of an earlier member, as `(member,
/// target)` pairs in archive order.
pub fn dangling_hardlinks(members: &[Member]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for m in members {
        if m.is_hardlink() {
            let target = m.link_target.clone().unwrap_or_default();
            if !seen.contains(&target) {
                out.push((m.name.clone(), target));
            }
        }
        seen.insert(m.name.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(name: &str, flag: u8, link: Option<&str>) -> Member {
        Member {
            name: name.as_bytes().to_vec(),
            kind: snapconf_extract::MemberKind::from_flag(flag),
            link_target: link.map(|l| l.as_bytes().to_vec()),
            size: None,
        }
    }

    #[test]
    fn a_hardlink_to_a_later_or_absent_member_dangles() {
        let ok = [member("a", b'0', None), member("b", b'1', Some("a"))];
        assert!(dangling_hardlinks(&ok).is_empty());
        let absent = [member("b", b'1', Some("a"))];
        assert_eq!(
            dangling_hardlinks(&absent),
            vec![(b"b".to_vec(), b"a".to_vec())]
        );
        let later = [member("b", b'1', Some("a")), member("a", b'0', None)];
        assert_eq!(dangling_hardlinks(&later).len(), 1);
    }
}
