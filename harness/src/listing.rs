//! Reading an archive's member list with the `tar` crate, for the capture-side checks.

use std::io::Read;

/// One member as listed: name and link target normalised (leading `./` and trailing `/`
/// removed; the root member `.` becomes the empty name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub name: Vec<u8>,
    /// Raw tar type flag (`0` regular, `1` hardlink, `2` symlink, `5` directory, `6` FIFO, ...).
    pub type_flag: u8,
    pub link_target: Option<Vec<u8>>,
    /// Payload size in bytes.
    pub size: u64,
}

impl Member {
    /// True for a hardlink (LNK, type `1`) member.
    pub fn is_hardlink(&self) -> bool {
        self.type_flag == b'1'
    }
}

/// Strip `./` prefixes and trailing `/` from a member name (tar writes `./a`, `a/`, `./`).
pub fn normalise_name(raw: &[u8]) -> Vec<u8> {
    let mut s = raw;
    while let Some(rest) = s.strip_prefix(b"./") {
        s = rest;
    }
    while let Some(rest) = s.strip_suffix(b"/") {
        s = rest;
    }
    if s == b"." {
        s = b"";
    }
    s.to_vec()
}

/// List every member of a tar archive (PAX and GNU long names resolved by the `tar` crate).
/// `Err` carries the parser's message when the archive cannot be read to the end.
pub fn list_members(archive: impl Read) -> Result<Vec<Member>, String> {
    let mut ar = tar::Archive::new(archive);
    let mut out = Vec::new();
    let entries = ar
        .entries()
        .map_err(|e| format!("cannot read archive: {e}"))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read member {}: {e}", out.len() + 1))?;
        let name = normalise_name(&entry.path_bytes());
        let link_raw = entry.link_name_bytes().map(|l| l.into_owned());
        let link_target = if entry.header().entry_type().is_hard_link() {
            link_raw.map(|l| normalise_name(&l))
        } else {
            link_raw
        };
        out.push(Member {
            name,
            type_flag: entry.header().entry_type().as_byte(),
            link_target,
            size: entry.size(),
        });
    }
    Ok(out)
}

/// Hardlink members whose target is not the name of an earlier member (DESIGN.md
/// `dangling-link`; CASES.md H2). Returns `(member, target)` pairs.
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

    fn member(name: &str, flag: u8, link: Option<&str>) -> Member {
        Member {
            name: name.as_bytes().to_vec(),
            type_flag: flag,
            link_target: link.map(|l| l.as_bytes().to_vec()),
            size: 0,
        }
    }

    #[test]
    fn names_are_normalised() {
        assert_eq!(normalise_name(b"./a/b/"), b"a/b");
        assert_eq!(normalise_name(b"./"), b"");
        assert_eq!(normalise_name(b"."), b"");
        assert_eq!(normalise_name(b"a"), b"a");
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

    #[test]
    fn exclusion_matches_whole_components_only() {
        let ms = [
            member("cache", b'5', None),
            member("cache/x", b'0', None),
            member("cachex", b'0', None),
        ];
        let hits = excluded_members(&ms, &[b"cache".to_vec()]);
        let names: Vec<&[u8]> = hits.iter().map(|m| m.name.as_slice()).collect();
        assert_eq!(names, vec![&b"cache"[..], &b"cache/x"[..]]);
    }
}
