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

/// List every member of a tar archive with the reference parser (`snapconf_extract::list`):
/// PAX records are split by their length prefix, so a `path` or `linkpath` holding a newline
/// is read whole. (The `tar` crate 0.4.46 splits PAX records at newlines and then falls back
/// to the ustar `linkname`, `././@LongHardLink`: a false `dangling-link` on bsdtar archives of
/// names with a newline. The parser differential keeps that crate's view for comparison.)
/// `Err` carries the parser's message when the archive cannot be read to the end.
pub fn list_members(archive: impl Read) -> Result<Vec<Member>, String> {
    use snapconf_extract::MemberKind as K;
    let listing =
        snapconf_extract::list(archive).map_err(|e| format!("cannot read archive: {e}"))?;
    Ok(listing
        .members
        .into_iter()
        .map(|m| {
            let type_flag = match m.kind {
                K::File => b'0',
                K::Hardlink => b'1',
                K::Symlink => b'2',
                K::CharDevice => b'3',
                K::BlockDevice => b'4',
                K::Dir => b'5',
                K::Fifo => b'6',
                K::Other(f) => f,
            };
            let link_target = match m.kind {
                K::Hardlink => m.link_target.map(|l| normalise_name(&l)),
                _ => m.link_target,
            };
            Member {
                name: normalise_name(&m.name),
                type_flag,
                link_target,
                size: m.size,
            }
        })
        .collect())
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

    /// A PAX `linkpath` whose value holds a newline (bsdtar writes one for a hardlink to
    /// `dir/new\nline`) is read whole: no false `dangling-link`.
    #[test]
    fn pax_values_with_a_newline_are_read_whole() {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_ustar();
        h.set_mode(0o644);
        h.set_size(1);
        h.set_entry_type(tar::EntryType::Regular);
        h.set_cksum();
        b.append_data(&mut h, "d/new\nline", &b"x"[..])
            .expect("file");
        let link = b"d/new\nline";
        let rec_len = format!(" linkpath={}\n", String::from_utf8_lossy(link)).len();
        let mut n = rec_len + 1;
        while format!("{n}").len() + rec_len != n {
            n += 1;
        }
        let record = format!("{n} linkpath={}\n", String::from_utf8_lossy(link));
        let mut x = tar::Header::new_ustar();
        x.set_mode(0o644);
        x.set_size(record.len() as u64);
        x.set_entry_type(tar::EntryType::XHeader);
        x.set_cksum();
        b.append_data(&mut x, "PaxHeader/l", record.as_bytes())
            .expect("pax");
        let mut l = tar::Header::new_ustar();
        l.set_mode(0o644);
        l.set_size(0);
        l.set_entry_type(tar::EntryType::Link);
        l.set_link_name("././@LongHardLink").expect("link");
        l.set_cksum();
        b.append_data(&mut l, "l", &b""[..]).expect("lnk");
        let bytes = b.into_inner().expect("finish");
        let ms = list_members(&bytes[..]).expect("lists");
        assert_eq!(ms[1].link_target.as_deref(), Some(&b"d/new\nline"[..]));
        assert!(dangling_hardlinks(&ms).is_empty(), "{ms:?}");
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
