//! `archive_plan`: a structured archive that libFuzzer mutates as a member list (the
//! `Arbitrary` derive reads it from the raw input), serialised to tar bytes with long-name
//! headers and damaged fields.

use arbitrary::Arbitrary;
use snapconf_tarbytes::raw::{
    header, pax_records, RawHeader, RawTar, CHKSUM, MODE, NAME, PREFIX, SIZE,
};

/// Most members serialised; extra plan members are ignored.
pub const MAX_MEMBERS: usize = 16;
/// Most tokens in one name or link target.
pub const MAX_TOKENS: usize = 8;

/// A piece of a name or link target.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token {
    /// `.`
    Dot,
    /// `..`
    DotDot,
    /// `/`
    Slash,
    /// A short word from a fixed vocabulary (`a`, `b`, `d`, `x`, `l`, `out`, `target`, ...),
    /// including the prior workspace's names so members collide with it.
    Word(u8),
    /// `n` × `L` with `n` in 90..=345: crosses the 100-byte name field, the 155-byte prefix
    /// and the 255-byte component limit.
    Long(u8),
    /// A NUL byte.
    Nul,
    /// `\xff\xfe` (not UTF-8).
    NonUtf8,
    /// The name of earlier member `i % count` (empty for the first member).
    Earlier(u8),
    /// `../out/target`: the decoy outside the root.
    Outside,
}

/// How the member's name and link target are stored.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Header {
    /// In the ustar fields (cut at 100 bytes).
    Ustar,
    /// Split into the ustar `prefix` (155 bytes) and `name` fields at a `/`.
    Prefix,
    /// A GNU `L` (and `K` for a link) header first.
    GnuLong,
    /// A PAX `x` header with `path` and `linkpath`.
    Pax,
}

/// What the member is (its type flag).
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanKind {
    /// `0`
    File,
    /// `5`
    Dir,
    /// `2`
    Symlink,
    /// `1`
    Hardlink,
    /// `6`
    Fifo,
    /// `3`
    CharDevice,
    /// `4`
    BlockDevice,
    /// `7` (contiguous, read as a regular file)
    Contiguous,
    /// `\0` (V7)
    V7,
    /// Any byte.
    Other(u8),
}

/// One way to break a header after it is built.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    /// A wrong checksum.
    Checksum,
    /// The size field says `n` blocks more (checksum fixed up).
    SizeGrows(u8),
    /// Non-octal garbage in the size field (checksum fixed up).
    SizeGarbage,
    /// The size in base-256 (GNU binary encoding; valid but rare).
    SizeBase256,
    /// Garbage in the mode field.
    ModeGarbage,
    /// GNU magic `ustar  \0` instead of POSIX.
    GnuMagic,
    /// A PAX header with a record whose length is wrong, before the member.
    PaxBadLength,
    /// A PAX header that sets `size` to `n`.
    PaxSize(u8),
    /// A PAX global (`g`) header setting `path`.
    PaxGlobalPath,
    /// The archive ends `n * 7` bytes into this member's header.
    Truncate(u8),
}

/// One planned member.
#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
pub struct MemberPlan {
    /// The type flag.
    pub kind: PlanKind,
    /// Name tokens.
    pub name: Vec<Token>,
    /// Link target tokens (used for symlinks and hardlinks; stored for others too).
    pub link: Vec<Token>,
    /// Payload length in bytes for regular members.
    pub size: u8,
    /// Permission bits (`& 0o7777`).
    pub mode: u16,
    /// How names are stored.
    pub header: Header,
    /// An optional way to break it.
    pub damage: Option<Damage>,
}

/// A planned archive.
#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
pub struct ArchivePlan {
    /// Members in order (at most `MAX_MEMBERS` (16) are used).
    pub members: Vec<MemberPlan>,
    /// Zero blocks at the end (`% 3`: none, one, two).
    pub end_blocks: u8,
}

const WORDS: [&[u8]; 10] = [
    b"a", b"b", b"d", b"x", b"l", b"f", b"out", b"target", b"up", b"d/f",
];

fn render(tokens: &[Token], earlier: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for t in tokens.iter().take(MAX_TOKENS) {
        match *t {
            Token::Dot => out.push(b'.'),
            Token::DotDot => out.extend_from_slice(b".."),
            Token::Slash => out.push(b'/'),
            Token::Word(i) => out.extend_from_slice(WORDS[usize::from(i) % WORDS.len()]),
            Token::Long(n) => out.extend(std::iter::repeat_n(b'L', 90 + usize::from(n))),
            Token::Nul => out.push(0),
            Token::NonUtf8 => out.extend_from_slice(b"\xff\xfe"),
            Token::Earlier(i) => {
                if !earlier.is_empty() {
                    out.extend_from_slice(&earlier[usize::from(i) % earlier.len()]);
                }
            }
            Token::Outside => out.extend_from_slice(b"../out/target"),
        }
    }
    out
}

fn flag(kind: PlanKind) -> u8 {
    match kind {
        PlanKind::File => b'0',
        PlanKind::Dir => b'5',
        PlanKind::Symlink => b'2',
        PlanKind::Hardlink => b'1',
        PlanKind::Fifo => b'6',
        PlanKind::CharDevice => b'3',
        PlanKind::BlockDevice => b'4',
        PlanKind::Contiguous => b'7',
        PlanKind::V7 => 0,
        PlanKind::Other(b) => b,
    }
}

impl ArchivePlan {
    /// Serialise the plan to tar bytes. Deterministic; never panics.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut tar = RawTar::new();
        let mut names: Vec<Vec<u8>> = Vec::new();
        for m in self.members.iter().take(MAX_MEMBERS) {
            let name = render(&m.name, &names);
            let link = render(&m.link, &names);
            let f = flag(m.kind);
            let payload: Vec<u8> =
                if matches!(m.kind, PlanKind::File | PlanKind::Contiguous | PlanKind::V7) {
                    (0..m.size).collect()
                } else {
                    Vec::new()
                };
            let start = tar.bytes.len();
            match m.damage {
                Some(Damage::PaxBadLength) => {
                    tar.push(b'x', b"PaxHeaders/x", b"", b"99 path=short\n", 0o644);
                }
                Some(Damage::PaxSize(n)) => {
                    let v = n.to_string();
                    tar.pax(&[("size", v.as_bytes())]);
                }
                Some(Damage::PaxGlobalPath) => {
                    let body = pax_records(&[("path", b"global")]);
                    tar.push(b'g', b"PaxHeaders/g", b"", &body, 0o644);
                }
                _ => {}
            }
            let (ustar_name, ustar_link, prefix) = match m.header {
                Header::Ustar => (name.clone(), link.clone(), Vec::new()),
                Header::Prefix => {
                    let (n, p) = split_prefix(&name);
                    (n, link.clone(), p)
                }
                Header::GnuLong => {
                    tar.long_name(&name);
                    if !link.is_empty() {
                        tar.long_link(&link);
                    }
                    (name.clone(), link.clone(), Vec::new())
                }
                Header::Pax => {
                    tar.pax(&[("path", &name), ("linkpath", &link)]);
                    (name.clone(), link.clone(), Vec::new())
                }
            };
            let mut h = RawHeader(header(
                f,
                &ustar_name,
                &ustar_link,
                payload.len() as u64,
                u32::from(m.mode),
            ));
            if !prefix.is_empty() {
                h.set_prefix(&prefix).set_checksum();
            }
            let mut truncate = None;
            match m.damage {
                // The third checksum digit, off by one bit.
                Some(Damage::Checksum) => h.field_mut(CHKSUM)[2] ^= 0x01,
                Some(Damage::SizeGrows(n)) => {
                    h.set_size(payload.len() as u64 + 512 * u64::from(n))
                        .set_checksum();
                }
                Some(Damage::SizeGarbage) => {
                    h.set_raw(SIZE, b"9z9z9z9z9z9\0").set_checksum();
                }
                Some(Damage::SizeBase256) => {
                    // GNU base-256: the high bit of the first byte, the value big-endian.
                    let mut v = [0u8; SIZE.len];
                    v[0] = 0x80;
                    v[SIZE.len - 1] = payload.len() as u8;
                    h.set_raw(SIZE, &v).set_checksum();
                }
                Some(Damage::ModeGarbage) => {
                    h.set_raw(MODE, b"rwxr-x\0\0").set_checksum();
                }
                Some(Damage::GnuMagic) => {
                    // Old GNU: `magic` + `version` read `"ustar  \0"`.
                    h.set_magic(b"ustar ").set_version(b" \0").set_checksum();
                }
                Some(Damage::Truncate(n)) => truncate = Some(usize::from(n) * 7),
                _ => {}
            }
            tar.block(&h.0);
            tar.data(&payload);
            if let Some(cut) = truncate {
                let at = (start + cut).min(tar.bytes.len());
                tar.bytes.truncate(at);
                return tar.bytes;
            }
            names.push(name);
        }
        let mut out = tar.bytes;
        out.extend(std::iter::repeat_n(
            0u8,
            512 * usize::from(self.end_blocks % 3),
        ));
        out
    }
}

/// Split `name` at the last `/` that leaves at most 100 bytes in `name` and 155 in
/// `prefix`; a name that cannot be split is stored cut at 100 bytes.
fn split_prefix(name: &[u8]) -> (Vec<u8>, Vec<u8>) {
    if name.len() > NAME.len {
        for (i, &b) in name.iter().enumerate().rev() {
            if b == b'/' && name.len() - i - 1 <= NAME.len && i <= PREFIX.len {
                return (name[i + 1..].to_vec(), name[..i].to_vec());
            }
        }
    }
    (name.to_vec(), Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbitrary::Unstructured;

    #[test]
    fn any_bytes_give_a_plan_and_tar_bytes() {
        for seed in 0u32..200 {
            let raw: Vec<u8> = (0..400u32)
                .map(|i| (i.wrapping_mul(seed).wrapping_add(seed * 7) % 251) as u8)
                .collect();
            let mut u = Unstructured::new(&raw);
            if let Ok(plan) = ArchivePlan::arbitrary(&mut u) {
                let bytes = plan.to_bytes();
                assert!(
                    bytes.len() <= 64 * 1024,
                    "a plan serialises to at most 64 KiB, got {}",
                    bytes.len()
                );
            }
        }
    }
}
