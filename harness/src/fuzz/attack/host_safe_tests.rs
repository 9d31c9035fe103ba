//! [`host_safe`] over the attack generator's own archives: every draw of every class that
//! holds an absolute name, more than one `..` (smuggled members included) is unsafe; the
//! classes that stay inside the root still give the fuzzer archives to run; and whatever
//! is judged safe, read naively block by block, holds nothing absolute and at most one `..`.

use super::class::AttackClass;
use super::draw::{build, Built};
use super::member::AttackMember;
use crate::fuzz::host_safe;
use crate::fuzz::mutate::mutate;
use proptest::prelude::*;
use snapconf_tarbytes::raw::{parse_numeric, RawHeader, LINKNAME, NAME, PREFIX, SIZE};
use snapconf_tarbytes::Records;
use snapconf_tarbytes::Rng;
use std::collections::BTreeMap;
use std::io::Write;

/// Seeds per class in the exhaustive test.
const SEEDS: u64 = 300;

fn built(class: AttackClass, seed: u64) -> Built {
    build(class, &mut Rng::new(seed))
}

/// `(absolute, ..-count)` of one value as the generator meant it: absolute if it, or what
/// follows a NUL in it, starts with `/`; `..` components between `/`, `\` and NUL, a
/// drive-relative `c:..` among them (`..` once node-tar strips the drive).
fn meant(v: &[u8]) -> (bool, usize) {
    let absolute = v.starts_with(b"/") || v.split(|&b| b == 0).any(|p| p.starts_with(b"/"));
    let dotdots = v
        .split(|&b| b == 0 || b == b'/' || b == b'\\')
        .filter(|c| *c == b".." || c.eq_ignore_ascii_case(b"c:.."))
        .count();
    (absolute, dotdots)
}

/// [`meant`] over every member, hidden ones (smuggled in payloads) and PAX global records
/// included.
fn members_reach(members: &[AttackMember]) -> (bool, usize) {
    let (mut absolute, mut dotdots) = (false, 0);
    for m in members {
        let mut values = vec![m.name.as_slice(), m.link.as_slice()];
        values.extend(m.global.iter().map(|(_, v)| v.as_slice()));
        for v in values {
            let (a, d) = meant(v);
            absolute |= a;
            dotdots += d;
        }
        let (a, d) = members_reach(&m.hidden);
        absolute |= a;
        dotdots += d;
    }
    (absolute, dotdots)
}

/// Every archive the generator draws that holds an absolute name or more than one `..`
/// (in the open or smuggled) is unsafe, plain and gzip'd; and the classes that stay inside
/// the root leave something to run.
#[test]
fn host_safe_refuses_every_generated_escape() {
    let mut safe: BTreeMap<&str, u64> = BTreeMap::new();
    for class in AttackClass::ALL {
        for seed in 0..SEEDS {
            let b = built(class, seed);
            let (absolute, dotdots) = members_reach(&b.members);
            let judged = host_safe(&b.bytes);
            if absolute || dotdots > 1 {
                assert!(
                    !judged,
                    "`{class}` seed {seed}: absolute {absolute}, {dotdots} `..`, judged safe: {}",
                    b.description
                );
            }
            if judged {
                *safe.entry(class.id()).or_default() += 1;
            }
            if seed % 10 == 0 {
                let mut e =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(&b.bytes).expect("gzip to memory");
                let gz = e.finish().expect("gzip to memory");
                assert!(
                    !host_safe(&gz) || judged,
                    "`{class}` seed {seed}: gzip'd judged safe, plain not"
                );
            }
        }
    }
    eprintln!("safe draws per class (of {SEEDS}): {safe:?}");
    for class in [
        AttackClass::NameForms,
        AttackClass::TypePairs,
        AttackClass::SpecialInside,
        AttackClass::PrivilegedModes,
    ] {
        assert!(
            safe.get(class.id()).copied().unwrap_or(0) > SEEDS / 10,
            "`{class}` stays inside the root, yet almost nothing of it may run: {safe:?}"
        );
    }
}

/// Every size-smuggle draw hides a member; each one whose hidden member is absolute or
/// whose archive has two `..` is unsafe though [`Records::parse`] never meets it.
#[test]
fn host_safe_sees_every_smuggled_member() {
    for seed in 0..SEEDS * 3 {
        let b = built(AttackClass::SizeSmuggle, seed);
        let carrier = b.members.iter().find(|m| !m.hidden.is_empty());
        let Some(carrier) = carrier else {
            panic!("seed {seed}: no member hides another: {}", b.description);
        };
        let names: Vec<Vec<u8>> = Records::parse(&b.bytes)
            .records
            .iter()
            .map(|r| r.name())
            .collect();
        assert!(
            carrier.hidden.iter().all(|h| !names.contains(&h.name)),
            "seed {seed}: the walk by size meets no hidden member"
        );
        let (absolute, dotdots) = members_reach(&b.members);
        if absolute || dotdots > 1 {
            assert!(!host_safe(&b.bytes), "seed {seed}: {}", b.description);
        }
    }
}

/// Read naively: every aligned block's name, link name and prefix field, each NUL piece;
/// every PAX `path`/`linkpath` line and GNU long name of a block typed so.
fn naive_reach(bytes: &[u8]) -> (bool, usize) {
    let (mut absolute, mut dotdots) = (false, 0);
    let mut take = |v: &[u8]| {
        for piece in v.split(|&b| b == 0) {
            absolute |= piece.starts_with(b"/");
            dotdots += piece.split(|&b| b == b'/').filter(|c| *c == b"..").count();
        }
    };
    for at in (0..bytes.len()).step_by(512) {
        let h = RawHeader(&bytes[at..bytes.len().min(at + 512)]);
        for f in [NAME, LINKNAME, PREFIX] {
            take(h.field_cut(f));
        }
        let size = parse_numeric(h.field(SIZE)).unwrap_or(0);
        let end = usize::try_from(size)
            .unwrap_or(usize::MAX)
            .saturating_add(at + 512)
            .min(bytes.len());
        let body = bytes.get(at + 512..end).unwrap_or_default();
        match h.typeflag() {
            b'x' | b'g' => {
                for line in body.split(|&b| b == b'\n') {
                    for key in [&b" path="[..], b" linkpath="] {
                        if let Some(i) = line.windows(key.len()).position(|w| w == key) {
                            take(&line[i + key.len()..]);
                        }
                    }
                }
            }
            b'L' | b'K' => take(body),
            _ => {}
        }
    }
    (absolute, dotdots)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// Property: an archive of the generator, mutated or not, that [`host_safe`] lets run
    /// holds, in every 512-aligned block's name, link name and prefix and in every PAX
    /// record, no absolute value and at most one `..` in all.
    #[test]
    fn host_safe_archives_hold_no_escape(
        class in 0..AttackClass::ALL.len(),
        seed in any::<u64>(),
        mutations in 0..4usize,
    ) {
        let class = AttackClass::ALL[class];
        let mut rng = Rng::new(seed);
        let b = build(class, &mut rng);
        let bytes = if mutations == 0 {
            b.bytes
        } else {
            mutate(&Records::parse(&b.bytes), &mut rng, mutations).0
        };
        if host_safe(&bytes) {
            let (absolute, dotdots) = naive_reach(&bytes);
            prop_assert!(
                !absolute && dotdots <= 1,
                "`{}` seed {}: judged safe with absolute {}, {} `..` ({})",
                class, seed, absolute, dotdots, b.description
            );
        }
    }
}
