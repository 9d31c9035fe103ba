//! Members to tar bytes through the project's raw header writer, each in an encoding drawn
//! from those that can carry its name and target, so the hostile forms of every name are
//! reachable: ustar fields, ustar `prefix` + `name`, GNU `L`/`K`, PAX `path`/`linkpath`,
//! and PAX overriding ustar fields that name something else.

use super::member::{choose, one_in, AttackKind, AttackMember};
use snapconf_tarbytes::raw::{header, pax_records, RawHeader, RawTar};
use snapconf_tarbytes::Rng;

/// How one member's name and link target travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Enc {
    /// The ustar `name` and `linkname` fields, up to 100 bytes each (a 100-byte name fills
    /// the field with no NUL).
    Ustar,
    /// ustar `prefix` (up to 155 bytes) + `/` + `name`, split at one of the name's `/`.
    Prefix,
    /// GNU `L` (and `K` for a target) records before an old-GNU header (`ustar  \0`) that
    /// holds the first 100 bytes, as GNU tar writes them.
    Gnu,
    /// A PAX `x` header with `path` (and `linkpath`); the ustar fields hold the first 100
    /// bytes.
    Pax,
    /// A PAX `x` header whose `path` and `linkpath` override ustar fields naming something
    /// else (`pax-shadow-<n>`): a reader that ignores PAX sees a harmless member.
    PaxOverride,
}

impl Enc {
    /// The word a description uses.
    pub(super) fn tag(self) -> &'static str {
        match self {
            Enc::Ustar => "ustar",
            Enc::Prefix => "prefix",
            Enc::Gnu => "gnu",
            Enc::Pax => "pax",
            Enc::PaxOverride => "pax-override",
        }
    }

    /// True if this encoding can carry `m` so that the reference reads back its bytes.
    /// GNU long names end at their first NUL, and an empty PAX value deletes the keyword,
    /// so those forms take no NUL and no empty name.
    fn fits(self, m: &AttackMember) -> bool {
        match self {
            Enc::Ustar => m.name.len() <= 100 && m.link.len() <= 100,
            Enc::Prefix => m.link.len() <= 100 && !prefix_splits(&m.name).is_empty(),
            Enc::Gnu => !m.name.is_empty() && !m.name.contains(&0) && !m.link.contains(&0),
            Enc::Pax | Enc::PaxOverride => !m.name.is_empty(),
        }
    }
}

/// Encodings with their weights in a draw.
const WEIGHTS: [(Enc, usize); 5] = [
    (Enc::Ustar, 5),
    (Enc::Prefix, 2),
    (Enc::Gnu, 2),
    (Enc::Pax, 2),
    (Enc::PaxOverride, 1),
];

/// The positions of `/` at which `name` splits into a ustar prefix of 1–155 bytes and a
/// name field of 1–100 bytes (names with NUL are left to the name field).
fn prefix_splits(name: &[u8]) -> Vec<usize> {
    if name.contains(&0) {
        return Vec::new();
    }
    (1..name.len().min(156))
        .filter(|&i| name[i] == b'/' && (1..=100).contains(&(name.len() - i - 1)))
        .collect()
}

/// An archive and what was written.
pub(super) struct Encoded {
    /// The tar bytes, ending with two zero blocks.
    pub(super) bytes: Vec<u8>,
    /// Header records written (extension headers are records of their own).
    pub(super) records: usize,
    /// The encoding of each member.
    pub(super) encs: Vec<Enc>,
}

/// Encode `members` in order; each gets its requested encoding if that fits, else one drawn
/// from those that fit (PAX, which carries any non-empty name, as the last resort).
pub(super) fn encode(members: &[AttackMember], rng: &mut Rng) -> Encoded {
    let mut t = RawTar::new();
    let mut records = 0;
    let mut encs = Vec::with_capacity(members.len());
    for (i, m) in members.iter().enumerate() {
        let enc = match m.enc {
            Some(e) if e.fits(m) => e,
            _ => draw_enc(rng, m),
        };
        records += emit(&mut t, m, enc, i, rng);
        encs.push(enc);
    }
    Encoded {
        bytes: t.finish(),
        records,
        encs,
    }
}

/// `members` encoded one after the other with no end-of-archive marker: the payload that
/// hides them in another member.
pub(super) fn payload_of(members: &[AttackMember], rng: &mut Rng) -> Vec<u8> {
    let mut t = RawTar::new();
    for (i, m) in members.iter().enumerate() {
        let enc = draw_enc(rng, m);
        emit(&mut t, m, enc, i, rng);
    }
    t.bytes
}

fn draw_enc(rng: &mut Rng, m: &AttackMember) -> Enc {
    let fitting: Vec<(Enc, usize)> = WEIGHTS.iter().copied().filter(|(e, _)| e.fits(m)).collect();
    let total: usize = fitting.iter().map(|(_, w)| w).sum();
    let mut at = rng.below(total);
    for (e, w) in fitting {
        if at < w {
            return e;
        }
        at -= w;
    }
    Enc::Ustar
}

/// The type flag for `m`: mostly the usual one, sometimes the aliases readers must also
/// take (V7 `\0` and contiguous `7` for a file; V7 `\0` and a trailing `/` for a directory).
fn flag(m: &AttackMember, rng: &mut Rng) -> u8 {
    match m.kind {
        AttackKind::File if !m.name.ends_with(b"/") => match rng.below(12) {
            0 => b'\0',
            1 => b'7',
            _ => b'0',
        },
        AttackKind::File => b'0',
        AttackKind::Dir if m.name.ends_with(b"/") && one_in(rng, 10) => b'\0',
        AttackKind::Dir => b'5',
        AttackKind::Symlink => b'2',
        AttackKind::Hardlink => b'1',
        AttackKind::CharDevice => b'3',
        AttackKind::BlockDevice => b'4',
        AttackKind::Fifo => b'6',
    }
}

/// The first `n` bytes of `b`.
fn cut(b: &[u8], n: usize) -> &[u8] {
    &b[..b.len().min(n)]
}

/// Append member `i` in `enc`; returns the records written.
fn emit(t: &mut RawTar, m: &AttackMember, enc: Enc, i: usize, rng: &mut Rng) -> usize {
    let mut records = 1;
    if !m.global.is_empty() {
        let recs: Vec<(&str, &[u8])> = m.global.iter().map(|(k, v)| (*k, v.as_slice())).collect();
        t.push(b'g', b"pax_global_header", b"", &pax_records(&recs), 0o644);
        records += 1;
    }
    let flag = flag(m, rng);
    let shadow;
    let shadow_link = b"pax-shadow-target".as_slice();
    let (mut name, mut link, mut prefix, mut gnu) =
        (m.name.as_slice(), m.link.as_slice(), None, false);
    match enc {
        Enc::Ustar => {}
        Enc::Prefix => {
            let at = choose(rng, &prefix_splits(&m.name));
            prefix = Some(&m.name[..at]);
            name = &m.name[at + 1..];
        }
        Enc::Gnu => {
            t.long_name(&m.name);
            records += 1;
            if !m.link.is_empty() {
                t.long_link(&m.link);
                records += 1;
            }
            (name, link, gnu) = (cut(&m.name, 100), cut(&m.link, 100), true);
        }
        Enc::Pax | Enc::PaxOverride => {
            let mut recs: Vec<(&str, &[u8])> = vec![("path", m.name.as_slice())];
            if !m.link.is_empty() {
                recs.push(("linkpath", m.link.as_slice()));
            }
            // Real writers add keys the reference ignores; one of them keeps that path
            // (skip unknown keys by their length) exercised.
            if one_in(rng, 4) {
                recs.push(("mtime", b"1700000000.5".as_slice()));
            }
            t.pax(&recs);
            records += 1;
            if enc == Enc::Pax {
                (name, link) = (cut(&m.name, 100), cut(&m.link, 100));
            } else {
                let slash = if m.kind == AttackKind::Dir { "/" } else { "" };
                shadow = format!("pax-shadow-{i}{slash}").into_bytes();
                name = &shadow;
                if !m.link.is_empty() {
                    link = shadow_link;
                }
            }
        }
    }
    let mut h = RawHeader(header(flag, name, link, m.data.len() as u64, m.mode));
    if let Some(p) = prefix {
        h.set_prefix(p);
    }
    if matches!(m.kind, AttackKind::CharDevice | AttackKind::BlockDevice) {
        h.set_device(m.device.0, m.device.1);
    }
    if gnu {
        h.set_magic(b"ustar ").set_version(b" \0");
    }
    h.set_checksum();
    t.block(&h.0).data(&m.data);
    records
}
