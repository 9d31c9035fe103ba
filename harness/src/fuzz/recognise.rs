//! The attack class of an archive that no class generated (a mutant of a seed archive), told
//! from its shape: which of [`AttackClass`]'s member sequences it holds. Also how a member
//! reached a path outside the root ([`reached_by`]). Both read the archive tolerantly
//! ([`members`]): a damaged archive is read as far as its records go.

use super::attack::AttackClass;
use crate::jail::view_layout::VIEW_ROOT;
use snapconf_tarbytes::raw::RawHeader;
use snapconf_tarbytes::Records;

/// One member as [`members`] reads it: its type flag, its whole name and link target (PAX
/// `path`/`linkpath`, GNU `L`/`K`, ustar `prefix` applied), its mode and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Mem {
    /// The type flag (`0` for V7's NUL).
    pub(super) flag: u8,
    /// The name, whole and verbatim.
    pub(super) name: Vec<u8>,
    /// The link target (hardlinks and symlinks), whole and verbatim.
    pub(super) link: Vec<u8>,
    /// Permission bits with setuid/setgid/sticky (0 when unreadable).
    pub(super) mode: u64,
    /// The header's size field (0 when unreadable).
    pub(super) size: u64,
    /// The payload's first block is itself a tar header with a valid checksum (a member
    /// hidden in the payload).
    pub(super) hides_header: bool,
}

/// The members of `bytes`: each header record with the extension records before it applied;
/// `seen_global` is set for a PAX global header (`g`). Never fails.
pub(super) fn members(bytes: &[u8]) -> (Vec<Mem>, bool) {
    let recs = Records::parse(bytes);
    let mut out = Vec::new();
    let (mut name, mut link): (Option<Vec<u8>>, Option<Vec<u8>>) = (None, None);
    let mut global = false;
    for r in &recs.records {
        let f = r.fields();
        let size = f.size().unwrap_or(0);
        let body = &r.payload[..r.payload.len().min(usize::try_from(size).unwrap_or(0))];
        match r.flag() {
            b'x' => {
                for (k, v) in pax(body) {
                    match k {
                        b"path" => name = Some(v.to_vec()),
                        b"linkpath" => link = Some(v.to_vec()),
                        _ => {}
                    }
                }
            }
            b'g' => global = true,
            b'L' => name = Some(cut_nul(body).to_vec()),
            b'K' => link = Some(cut_nul(body).to_vec()),
            flag => {
                let ustar_name = || {
                    let prefix = f.prefix();
                    if f.magic().starts_with(b"ustar") && !prefix.is_empty() {
                        [prefix, b"/", f.name()].concat()
                    } else {
                        f.name().to_vec()
                    }
                };
                let hides_header = r.payload.len() >= 512 && {
                    let mut block = [0u8; 512];
                    block.copy_from_slice(&r.payload[..512]);
                    block.iter().any(|&b| b != 0) && RawHeader(&block).checksum_matches()
                };
                out.push(Mem {
                    flag: if flag == 0 { b'0' } else { flag },
                    name: name.take().unwrap_or_else(ustar_name),
                    link: link.take().unwrap_or_else(|| f.linkname().to_vec()),
                    mode: f.mode().unwrap_or(0),
                    size,
                    hides_header,
                });
            }
        }
    }
    (out, global)
}

/// `(key, value)` of each PAX record of `body` (`LEN key=value\n`), as far as they read.
fn pax(body: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let rest = &body[at..];
        let Some(sp) = rest.iter().position(|&b| b == b' ') else {
            break;
        };
        let Some(len) = std::str::from_utf8(&rest[..sp])
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
            .filter(|&l| l > sp && l <= rest.len())
        else {
            break;
        };
        let rec = &rest[sp + 1..len];
        let rec = rec.strip_suffix(b"\n").unwrap_or(rec);
        if let Some(eq) = rec.iter().position(|&b| b == b'=') {
            out.push((&rec[..eq], &rec[eq + 1..]));
        }
        at += len;
    }
    out
}

/// `b` up to its first NUL.
fn cut_nul(b: &[u8]) -> &[u8] {
    b.iter().position(|&c| c == 0).map_or(b, |i| &b[..i])
}

/// The components of `name` other than empty ones and `.`.
fn comps(name: &[u8]) -> Vec<&[u8]> {
    name.split(|&b| b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .collect()
}

/// `name` in normal form (components joined by `/`; absolute names keep no mark).
fn norm(name: &[u8]) -> Vec<u8> {
    comps(name).join(&b'/')
}

fn absolute(name: &[u8]) -> bool {
    name.starts_with(b"/")
}

fn climbs(name: &[u8]) -> bool {
    comps(name).contains(&&b".."[..])
}

fn special(flag: u8) -> bool {
    matches!(flag, b'3' | b'4' | b'6')
}

/// The class of an archive by the name or target trick it plays, when it plays one of the
/// lexical-versus-kernel and name-normalisation tricks: a target through an earlier link
/// then `..` (`x -> y/..`), a name or target at the root's prefix sibling (`root-x`,
/// `rootx`), a backslash, a drive prefix (`c:`), a component ending in a dot or space,
/// a component over 255 bytes, two names one case fold makes one, or a non-ASCII UTF-8
/// name (a Unicode form or lookalike). `symlink_before(name, i)`: a symlink of that name
/// comes before member `i`.
fn name_trick(ms: &[Mem], symlink_before: &dyn Fn(&[u8], usize) -> bool) -> Option<AttackClass> {
    use AttackClass as C;
    let through_link_then_up = ms.iter().enumerate().any(|(i, m)| {
        let c = comps(&m.link);
        m.flag == b'2' && c.len() > 1 && c.contains(&&b".."[..]) && symlink_before(c[0], i)
    });
    if through_link_then_up {
        return Some(C::LinkDotdot);
    }
    let base = VIEW_ROOT.rsplit('/').next().unwrap_or("root").as_bytes();
    let prefixed = |n: &[u8]| {
        comps(n)
            .iter()
            .any(|c| c.len() > base.len() && c.starts_with(base) && !c.contains(&b'\\'))
    };
    if ms.iter().any(|m| prefixed(&m.name) || prefixed(&m.link)) {
        return Some(C::RootPrefix);
    }
    let names = || ms.iter().flat_map(|m| [&m.name, &m.link]);
    if names().any(|n| n.contains(&b'\\')) {
        return Some(C::BackslashName);
    }
    let drive = |c: &&[u8]| c.len() >= 2 && c[0].is_ascii_alphabetic() && c[1] == b':';
    if names().any(|n| comps(n).iter().any(drive)) {
        return Some(C::DriveRelative);
    }
    let trailing = |c: &&[u8]| *c != b".." && (c.ends_with(b".") || c.ends_with(b" "));
    if names().any(|n| comps(n).iter().any(trailing)) {
        return Some(C::TrailingDotSpace);
    }
    if names().any(|n| comps(n).iter().any(|c| c.len() > 255)) {
        return Some(C::OverlongComponent);
    }
    let folded = ms.iter().enumerate().any(|(i, m)| {
        let n = norm(&m.name);
        ms[..i].iter().any(|e| {
            let o = norm(&e.name);
            o != n && o.eq_ignore_ascii_case(&n)
        })
    });
    if folded {
        return Some(C::CaseCollision);
    }
    if names().any(|n| !n.is_ascii() && std::str::from_utf8(n).is_ok()) {
        return Some(C::UnicodeName);
    }
    None
}

/// Names longer than this are a PATH_MAX chain's deep directories, not a name form
/// (whose longest names are 257 bytes).
const LONG_NAME: usize = 1024;

/// The class whose member sequence `bytes` holds, most specific first; `None` for an
/// archive that holds none of them (a benign seed's mutant that still found something).
pub(super) fn recognise(bytes: &[u8]) -> Option<AttackClass> {
    use AttackClass as C;
    let (ms, global) = members(bytes);
    if global {
        return Some(C::PaxGlobal);
    }
    if ms
        .iter()
        .any(|m| m.flag != b'0' && m.size > 0 && m.hides_header)
    {
        return Some(C::SizeSmuggle);
    }
    let symlinks: Vec<(usize, Vec<u8>)> = ms
        .iter()
        .enumerate()
        .filter(|(_, m)| m.flag == b'2')
        .map(|(i, m)| (i, norm(&m.name)))
        .collect();
    let long = ms
        .iter()
        .any(|m| m.name.len() > LONG_NAME || m.link.len() > LONG_NAME);
    if long && !symlinks.is_empty() {
        return Some(C::PathMaxChain);
    }
    let symlink_before = |name: &[u8], i: usize| symlinks.iter().any(|(j, s)| *j < i && s == name);
    if let Some(class) = name_trick(&ms, &symlink_before) {
        return Some(class);
    }
    for (i, m) in ms.iter().enumerate().filter(|(_, m)| m.flag == b'1') {
        let t = norm(&m.link);
        let tc = comps(&m.link);
        if symlink_before(&t, i) {
            return Some(C::HardlinkToSymlink);
        }
        let through = (1..tc.len()).any(|k| {
            let head = tc[..k].join(&b'/');
            symlink_before(&head, i) || head == b"l"
        });
        if through {
            return Some(C::HardlinkThroughLink);
        }
        if absolute(&m.link) || climbs(&m.link) {
            return Some(C::HardlinkOutside);
        }
        let earlier = ms[..i].iter().any(|e| norm(&e.name) == t);
        if !earlier {
            return Some(C::HardlinkForward);
        }
    }
    for (i, s) in &symlinks {
        let earlier: Vec<&Mem> = ms[..*i].iter().filter(|e| norm(&e.name) == *s).collect();
        let odd = |n: &[u8]| n.strip_suffix(b"/").unwrap_or(n) != norm(n).as_slice();
        let spelled = ms.iter().any(|m| {
            let n = norm(&m.name);
            (n == *s || n.starts_with(&[s.as_slice(), b"/"].concat())) && odd(&m.name)
        });
        if spelled {
            return Some(C::SpellingCollision);
        }
        if earlier.iter().any(|e| e.flag == b'2') {
            return Some(C::LinkRepoint);
        }
        if earlier
            .iter()
            .any(|e| e.flag == b'5' && (e.mode & 0o7022) != 0)
        {
            return Some(C::LateDirMetadata);
        }
        if earlier.iter().any(|e| e.flag == b'5') {
            return Some(C::DirToSymlink);
        }
    }
    let names_a_later_link = symlinks.iter().any(|(i, _)| {
        let first = comps(&ms[*i].link).first().map(|c| c.to_vec());
        symlinks
            .iter()
            .any(|(j, s)| j > i && first.as_deref() == Some(s.as_slice()))
    });
    if names_a_later_link {
        return Some(C::LinkChain);
    }
    let outside = |m: &Mem| absolute(&m.name) || climbs(&m.name);
    if ms.iter().any(|m| special(m.flag) && outside(m)) {
        return Some(C::SpecialOutside);
    }
    if ms.iter().any(|m| absolute(&m.name)) {
        return Some(C::AbsoluteName);
    }
    if ms.iter().any(|m| climbs(&m.name)) {
        return Some(C::DotdotName);
    }
    if ms
        .iter()
        .any(|m| matches!(comps(&m.name).first(), Some(&b"l") | Some(&b"d")) && m.flag != b'5')
    {
        return Some(C::PriorNames);
    }
    if ms.iter().any(|m| m.mode & 0o7000 != 0) {
        return Some(C::PrivilegedModes);
    }
    if ms.iter().any(|m| special(m.flag)) {
        return Some(C::SpecialInside);
    }
    let twice = ms.iter().enumerate().any(|(i, m)| {
        ms[..i]
            .iter()
            .any(|e| norm(&e.name) == norm(&m.name) && e.flag != m.flag)
    });
    if twice {
        return Some(C::TypePairs);
    }
    let odd = |n: &[u8]| {
        n.is_empty() || comps(n).is_empty() || n.contains(&0) || n.contains(&b'\\') || n.len() >= 99
    };
    if ms.iter().any(|m| odd(&m.name)) {
        return Some(C::NameForms);
    }
    None
}

/// How an archive reached `path` (jail-relative, as a `containment` change names it): by a
/// member whose name (or hardlink target) is `path` written absolutely, by one whose `..`
/// climb from the root lands on it, else through a link (the archive's or the prior's).
pub(super) fn reached_by(bytes: &[u8], path: &[u8]) -> Via {
    let (ms, _) = members(bytes);
    let want = norm(path);
    let root = comps(VIEW_ROOT.as_bytes());
    let lands = |name: &[u8]| -> Option<Via> {
        let mut at: Vec<&[u8]> = if absolute(name) {
            Vec::new()
        } else {
            root.clone()
        };
        for c in comps(name) {
            if c == b".." {
                at.pop();
            } else {
                at.push(c);
            }
        }
        let at = at.join(&b'/');
        let hit = at == want || want.starts_with(&[at.as_slice(), b"/"].concat());
        match (hit, absolute(name), climbs(name)) {
            (true, true, _) => Some(Via::Absolute),
            (true, false, true) => Some(Via::Dotdot),
            _ => None,
        }
    };
    let mut best = Via::Link;
    for m in &ms {
        let mut candidates = vec![m.name.as_slice()];
        if m.flag == b'1' {
            candidates.push(m.link.as_slice());
        }
        for c in candidates {
            match lands(c) {
                Some(Via::Absolute) => return Via::Absolute,
                Some(v) => best = v,
                None => {}
            }
        }
    }
    best
}

/// How a write reached outside the root ([`reached_by`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Via {
    /// A member named the path absolutely.
    Absolute,
    /// A member's `..` climbed from the root to it.
    Dotdot,
    /// Neither: it went through a symlink (the archive's or the prior's `l`) or a hardlink.
    Link,
}

impl Via {
    /// In words, for a cause: `through an absolute name`, `through \`..\``, `through a link`.
    pub(super) fn words(self) -> &'static str {
        match self {
            Via::Absolute => "through an absolute name",
            Via::Dotdot => "through `..`",
            Via::Link => "through a link",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::attack::attack_of;
    use snapconf_tarbytes::raw::RawTar;
    use snapconf_tarbytes::Rng;

    fn tar(f: impl FnOnce(&mut RawTar)) -> Vec<u8> {
        let mut t = RawTar::new();
        f(&mut t);
        t.finish()
    }

    /// Hand-made archives of a few classes are told apart by their shape.
    #[test]
    fn shapes_are_recognised_as_their_classes() {
        use AttackClass as C;
        let cases = [
            (
                tar(|t| {
                    t.file("/etc/passwd", b"x");
                }),
                Some(C::AbsoluteName),
            ),
            (
                tar(|t| {
                    t.file("../../x", b"x");
                }),
                Some(C::DotdotName),
            ),
            (
                tar(|t| {
                    t.symlink("s", "/etc/passwd").hardlink("h", "s");
                }),
                Some(C::HardlinkToSymlink),
            ),
            (
                tar(|t| {
                    t.symlink("s", "/etc").hardlink("h", "s/passwd");
                }),
                Some(C::HardlinkThroughLink),
            ),
            (
                tar(|t| {
                    t.hardlink("h", "../../../../etc/passwd");
                }),
                Some(C::HardlinkOutside),
            ),
            (
                tar(|t| {
                    t.dir("d/").symlink("d", "/etc").file("d/passwd", b"x");
                }),
                Some(C::DirToSymlink),
            ),
            (
                tar(|t| {
                    t.symlink("a", "b/x").symlink("b", "/tmp");
                }),
                Some(C::LinkChain),
            ),
            (
                tar(|t| {
                    t.file("README.md", b"x");
                }),
                None,
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(recognise(&bytes), want, "{:?}", members(&bytes).0);
        }
    }

    /// Most generated attacks are recognised as the class that generated them: the
    /// recognition is a fair stand-in for a mutant with no class.
    #[test]
    fn most_generated_attacks_are_recognised_as_their_class() {
        let mut rng = Rng::new(9);
        let (mut same, mut all) = (0, 0);
        for class in AttackClass::ALL {
            for _ in 0..20 {
                let (bytes, _) = attack_of(class, &mut rng);
                all += 1;
                if recognise(&bytes) == Some(class) {
                    same += 1;
                }
            }
        }
        assert!(same * 10 >= all * 6, "{same} of {all} recognised");
    }

    /// A write is placed by the name that reached it: absolute, `..` from the root, else a
    /// link.
    #[test]
    fn the_way_out_is_read_from_the_names() {
        let abs = tar(|t| {
            t.file("/etc/passwd", b"x");
        });
        assert_eq!(reached_by(&abs, b"etc/passwd"), Via::Absolute);
        let up = tar(|t| {
            t.file("../../../../etc/passwd", b"x");
        });
        assert_eq!(reached_by(&up, b"etc/passwd"), Via::Dotdot);
        let hard = tar(|t| {
            t.hardlink("h", "../../decoy");
        });
        assert_eq!(reached_by(&hard, b"home/user/decoy"), Via::Dotdot);
        let link = tar(|t| {
            t.symlink("s", "/etc").file("s/passwd", b"x");
        });
        assert_eq!(reached_by(&link, b"etc/passwd"), Via::Link);
    }
}
