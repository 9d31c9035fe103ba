//! Drawing an attack: a class, its members (with benign ones around them sometimes), their
//! encodings, the tar bytes and a one-line description.

use super::class::AttackClass;
use super::encode::{encode, Enc};
use super::member::{distinct, one_in, AttackKind, AttackMember, Seq};
use super::{chain, hardlink, names, pairs, prior, smuggle, special, swap};
use super::{climb, fold};
use crate::model::bytes::escape;
use snapconf_tarbytes::Records;
use snapconf_tarbytes::Rng;

/// Draw one attack archive: `(tar bytes, class, a short human description of the members)`.
/// The class is drawn by [`AttackClass::weight`]; the same RNG state gives the same bytes.
pub fn attack(rng: &mut Rng) -> (Vec<u8>, AttackClass, String) {
    attack_lowered(rng, |_| 0)
}

/// [`attack`] with each class's weight halved `halvings(class)` times
/// (`AttackClass::draw_by`): what a session draws once it has kept causes.
pub fn attack_lowered(
    rng: &mut Rng,
    halvings: impl Fn(AttackClass) -> u32,
) -> (Vec<u8>, AttackClass, String) {
    let class = AttackClass::draw_by(rng, halvings);
    let (bytes, description) = attack_of(class, rng);
    (bytes, class, description)
}

/// Draw one attack archive of `class`: `(tar bytes, a short human description)`.
///
/// The bytes are a valid tar stream ending with two zero blocks, one header record per
/// member plus one per extension header, so `Records::parse` reads it back member by member
/// and a record-dropping shrinker can shrink it.
pub fn attack_of(class: AttackClass, rng: &mut Rng) -> (Vec<u8>, String) {
    let built = build(class, rng);
    (built.bytes, built.description)
}

/// An attack, with what went into it for the tests.
pub(super) struct Built {
    pub(super) bytes: Vec<u8>,
    pub(super) description: String,
    /// Every member, benign ones included, in archive order.
    #[cfg(test)]
    pub(super) members: Vec<AttackMember>,
    /// The encoding of each member.
    #[cfg(test)]
    pub(super) encs: Vec<Enc>,
    /// Header records written.
    #[cfg(test)]
    pub(super) records: usize,
}

/// The members of one draw of `class`, before benign filler.
pub(super) fn members_of(class: AttackClass, rng: &mut Rng) -> Seq {
    let mut seq = Seq::default();
    let f: fn(&mut Rng, &mut Seq) = match class {
        AttackClass::DirToSymlink => swap::dir_to_symlink,
        AttackClass::SpellingCollision => swap::spelling_collision,
        AttackClass::LinkRepoint => swap::link_repoint,
        AttackClass::LateDirMetadata => swap::late_dir_metadata,
        AttackClass::LinkChain => chain::link_chain,
        AttackClass::PathMaxChain => chain::path_max_chain,
        AttackClass::HardlinkOutside => hardlink::outside,
        AttackClass::HardlinkThroughLink => hardlink::through_link,
        AttackClass::HardlinkToSymlink => hardlink::to_symlink,
        AttackClass::HardlinkForward => hardlink::forward,
        AttackClass::AbsoluteName => names::absolute_name,
        AttackClass::DotdotName => names::dotdot_name,
        AttackClass::NameForms => names::name_forms,
        AttackClass::PaxGlobal => names::pax_global,
        AttackClass::TypePairs => pairs::type_pairs,
        AttackClass::SpecialOutside => special::special_outside,
        AttackClass::SpecialInside => special::special_inside,
        AttackClass::PrivilegedModes => special::privileged_modes,
        AttackClass::PriorNames => prior::prior_names,
        AttackClass::SizeSmuggle => smuggle::size_smuggle,
        AttackClass::LinkDotdot => climb::link_dotdot,
        AttackClass::RootPrefix => climb::root_prefix,
        AttackClass::BackslashName => fold::backslash_name,
        AttackClass::UnicodeName => fold::unicode_name,
        AttackClass::CaseCollision => fold::case_collision,
        AttackClass::TrailingDotSpace => fold::trailing_dot_space,
        AttackClass::DriveRelative => fold::drive_relative,
        AttackClass::OverlongComponent => fold::overlong_component,
    };
    f(rng, &mut seq);
    seq
}

/// Draw and encode one attack of `class`. About one draw in three of a link class other
/// than `path-max-chain` spells its escaping targets through a PATH_MAX chain
/// ([`chain::through_chain`]): the shape in which those classes beat a `realpath` check.
/// Which draws, and the chain's own draws, come from `rng`'s next value (peeked, not
/// taken) mixed with a digest of the members, so the rest of a seed's sequence is what it
/// was without the chain.
pub(super) fn build(class: AttackClass, rng: &mut Rng) -> Built {
    let mut attack = members_of(class, rng).members;
    let digest = attack.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, m| {
        m.name
            .iter()
            .chain(&m.link)
            .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
    });
    let mut side = Rng::new(rng.clone().next_u64() ^ digest);
    if class.escapes() && class != AttackClass::PathMaxChain && one_in(&mut side, 3) {
        attack = chain::through_chain(&mut side, attack);
    }
    let members = surround(attack, rng);
    let encoded = encode(&members, rng);
    // The record-dropping shrinker needs one record per header written.
    debug_assert_eq!(
        Records::parse(&encoded.bytes).records.len(),
        encoded.records
    );
    Built {
        description: describe(&members, &encoded.encs),
        bytes: encoded.bytes,
        #[cfg(test)]
        members,
        #[cfg(test)]
        encs: encoded.encs,
        #[cfg(test)]
        records: encoded.records,
    }
}

/// Names of benign filler, none of which an attack uses.
const BENIGN: [&str; 7] = [
    "README.md",
    "src/lib.rs",
    "Cargo.toml",
    "notes.txt",
    ".gitignore",
    "docs/index.md",
    "assets/",
];

/// Benign members before and after the attack, one time in three: an archive that is only
/// an attack is easy to refuse on shape alone.
fn surround(attack: Vec<AttackMember>, rng: &mut Rng) -> Vec<AttackMember> {
    if !one_in(rng, 3) {
        return attack;
    }
    let (before, after) = (rng.below(3), rng.below(3));
    let names = distinct(rng, &BENIGN, (before + after).max(1));
    let mut filler = Seq::default();
    for name in &names {
        let m = if name.ends_with('/') {
            filler.dir(name)
        } else {
            filler.file(name).data(b"benign\n")
        };
        m.benign = true;
    }
    let mut filler = filler.members;
    let tail = filler.split_off(before.min(filler.len()));
    let mut out = filler;
    out.extend(attack);
    out.extend(tail);
    out
}

/// Bytes for a description: escaped, long ones cut with their length.
fn short(b: &[u8]) -> String {
    let e = escape(b);
    if e.chars().count() > 60 {
        let head: String = e.chars().take(40).collect();
        format!("{head}…({} bytes)", b.len())
    } else {
        e
    }
}

/// One line: each attack member's kind, name, target, mode and encoding.
fn describe(members: &[AttackMember], encs: &[Enc]) -> String {
    let mut parts = Vec::new();
    let mut benign = 0;
    for (m, enc) in members.iter().zip(encs) {
        if m.benign {
            benign += 1;
        } else {
            parts.push(describe_member(m, Some(*enc)));
        }
    }
    let mut out = parts.join("; ");
    if benign > 0 {
        out.push_str(&format!(" (+{benign} benign)"));
    }
    out
}

/// One member: kind, name, target, mode, encoding (when known), hidden members.
fn describe_member(m: &AttackMember, enc: Option<Enc>) -> String {
    let mut s = String::new();
    for (k, v) in &m.global {
        s.push_str(&format!("global {k}=`{}`, then ", short(v)));
    }
    s.push_str(&format!("{} `{}`", m.kind.word(), short(&m.name)));
    if matches!(m.kind, AttackKind::Symlink | AttackKind::Hardlink) {
        s.push_str(&format!(" -> `{}`", short(&m.link)));
    }
    if matches!(m.kind, AttackKind::CharDevice | AttackKind::BlockDevice) {
        s.push_str(&format!(" {}/{}", m.device.0, m.device.1));
    }
    let usual = match m.kind {
        AttackKind::Dir => 0o755,
        AttackKind::Symlink => 0o777,
        _ => 0o644,
    };
    if m.mode != usual {
        s.push_str(&format!(" mode {:o}", m.mode));
    }
    if let Some(enc) = enc.filter(|e| *e != Enc::Ustar) {
        s.push_str(&format!(" [{}]", enc.tag()));
    }
    if !m.hidden.is_empty() {
        let hidden: Vec<String> = m.hidden.iter().map(|h| describe_member(h, None)).collect();
        s.push_str(&format!(
            " hiding {} bytes: {}",
            m.data.len(),
            hidden.join(", ")
        ));
    } else if m.kind == AttackKind::Hardlink && !m.data.is_empty() {
        s.push_str(" with data");
    }
    s
}
