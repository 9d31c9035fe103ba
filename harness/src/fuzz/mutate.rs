//! Structural mutations of an archive's records: swap member types, retarget links, splice
//! names, reorder, duplicate, insert hostile members, set privileged modes, damage fields,
//! truncate.

use snapconf_tarbytes::raw::{header, RawHeader, CHKSUM};
use snapconf_tarbytes::Rng;
use snapconf_tarbytes::{Record, Records};

/// One applied mutation, recorded in `finding.json` so a reader sees what was done.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "op")]
pub enum Mutation {
    /// Record `at` got type flag `flag` (a character).
    SwapType {
        /// Index of the record (0-based, extension headers counted).
        at: usize,
        /// The new type flag.
        flag: char,
    },
    /// Record `at` now links to `target` (escaped).
    Retarget {
        /// Index of the record (0-based).
        at: usize,
        /// The new link target, escaped (`\\xNN` for bytes not printable ASCII).
        target: String,
    },
    /// Record `at` was renamed to `name` (escaped).
    SpliceName {
        /// Index of the record (0-based).
        at: usize,
        /// The new name, escaped.
        name: String,
    },
    /// Records `a` and `b` swapped places.
    Reorder {
        /// Index of the first record (0-based).
        a: usize,
        /// Index of the second record (0-based).
        b: usize,
    },
    /// Record `from` was copied to position `to`.
    Duplicate {
        /// Index of the record copied (0-based).
        from: usize,
        /// Index the copy was inserted at (0-based).
        to: usize,
    },
    /// A member was inserted at `at`: `kind` (`symlink`, `chardev`, `fifo`) named `name`.
    Insert {
        /// Index the member was inserted at (0-based).
        at: usize,
        /// Its kind: `symlink`, `chardev` or `fifo`.
        kind: String,
        /// Its name, escaped.
        name: String,
    },
    /// Record `at` got mode `mode` (octal).
    Mode {
        /// Index of the record (0-based).
        at: usize,
        /// The new mode, in octal digits.
        mode: String,
    },
    /// Header byte `offset` of record `at` was set to `value` (checksum fixed unless the
    /// byte is in the checksum field).
    Damage {
        /// Index of the record (0-based).
        at: usize,
        /// Offset of the byte in the 512-byte header.
        offset: usize,
        /// The byte's new value.
        value: u8,
    },
    /// The archive was cut to `len` bytes.
    Truncate {
        /// The archive's new length in bytes.
        len: usize,
    },
}

/// Link targets a mutation may use: inside the root, the decoy in the root's parent
/// (`../decoy`, `../out/target` where a jail keeps its decoys), and, for sessions that run
/// in a filesystem view ([`crate::jail::view`]), targets that reach past the jail on a
/// host: absolute decoys (also with repeated slashes, which some extractors strip only
/// once) and `..` runs deep enough to reach the view's `/` from any depth. A session
/// without a view skips the mutants that use those ([`super::host_safe`]).
const TARGETS: [&[u8]; 13] = [
    b"../out/target",
    b"../out",
    b"..",
    b".",
    b"d",
    b"../decoy",
    b"/etc/passwd",
    b"/tmp",
    b"/",
    b"////etc/decoy",
    b"../../decoy",
    b"../../../../../../../../etc/passwd",
    b"d/../../../../../tmp",
];
/// Names inserted members get; the last ones climb out of the root (run only in a view).
const NAMES: [&[u8]; 9] = [
    b"up",
    b"link",
    b"dev",
    b"pipe",
    b"d",
    b"l",
    b"../escape",
    b"/etc/evil",
    b"../../../../../../tmp/evil",
];

/// Apply `n` (at least 1) random mutations to `recs`; returns the mutated bytes and what
/// was done.
pub fn mutate(recs: &Records, rng: &mut Rng, n: usize) -> (Vec<u8>, Vec<Mutation>) {
    let mut r = recs.clone();
    let mut done = Vec::new();
    let mut cut = None;
    for _ in 0..n.max(1) {
        let len = r.records.len();
        let at = rng.below(len.max(1));
        let earlier: Vec<Vec<u8>> = r.records.iter().take(at).map(Record::name).collect();
        match rng.below(10) {
            0 if len > 0 => {
                let flag = *rng.pick(b"0123456").unwrap_or(&b'0');
                let rec = &mut r.records[at];
                if matches!(flag, b'3' | b'4') {
                    rec.fields_mut().set_device(1, 3);
                }
                rec.set_flag(flag);
                done.push(Mutation::SwapType {
                    at,
                    flag: char::from(flag),
                });
            }
            1 if len > 0 => {
                let target = match rng.below(TARGETS.len() + 1) {
                    i if i < TARGETS.len() => TARGETS[i].to_vec(),
                    _ => rng.pick(&earlier).cloned().unwrap_or_default(),
                };
                r.records[at].set_link(&target);
                done.push(Mutation::Retarget {
                    at,
                    target: crate::model::bytes::escape(&target),
                });
            }
            2 if len > 0 => {
                let own = r.records[at].name();
                let last = own
                    .rsplit(|&b| b == b'/')
                    .find(|c| !c.is_empty())
                    .unwrap_or(b"x")
                    .to_vec();
                let name = match (rng.below(3), rng.pick(&earlier)) {
                    (0, Some(e)) => e.clone(),
                    (1, Some(e)) => {
                        let mut v = e.trim_ascii_end().to_vec();
                        while v.last() == Some(&b'/') {
                            v.pop();
                        }
                        v.push(b'/');
                        v.extend_from_slice(&last);
                        v
                    }
                    _ => {
                        let mut v = rng.pick(&NAMES).map(|n| n.to_vec()).unwrap_or_default();
                        v.push(b'/');
                        v.extend_from_slice(&last);
                        v
                    }
                };
                r.records[at].set_name(&name);
                done.push(Mutation::SpliceName {
                    at,
                    name: crate::model::bytes::escape(&name),
                });
            }
            3 if len > 1 => {
                let b = rng.below(len);
                r.records.swap(at, b);
                done.push(Mutation::Reorder { a: at, b });
            }
            4 if len > 0 => {
                let to = rng.below(len + 1);
                let rec = r.records[at].clone();
                r.records.insert(to, rec);
                done.push(Mutation::Duplicate { from: at, to });
            }
            5 | 6 => {
                let name = rng.pick(&NAMES).copied().unwrap_or(b"x");
                let (kind, rec) = match rng.below(3) {
                    0 => {
                        let t = rng.pick(&TARGETS).copied().unwrap_or(b"..");
                        ("symlink", header(b'2', name, t, 0, 0o777))
                    }
                    1 => {
                        let mut h = RawHeader(header(b'3', name, b"", 0, 0o666));
                        h.set_device(1, 3).set_checksum();
                        ("chardev", h.0)
                    }
                    _ => ("fifo", header(b'6', name, b"", 0, 0o644)),
                };
                let at = rng.below(len + 1);
                r.records.insert(
                    at,
                    Record {
                        header: rec,
                        payload: Vec::new(),
                    },
                );
                done.push(Mutation::Insert {
                    at,
                    kind: kind.into(),
                    name: crate::model::bytes::escape(name),
                });
            }
            7 if len > 0 => {
                let mode = *rng
                    .pick(&[0o4755u32, 0o6755, 0o2775, 0o1777, 0o777])
                    .unwrap_or(&0o4755);
                r.records[at]
                    .fields_mut()
                    .set_mode(u64::from(mode))
                    .set_checksum();
                done.push(Mutation::Mode {
                    at,
                    mode: format!("{mode:04o}"),
                });
            }
            8 if len > 0 => {
                let offset = rng.below(512);
                let value = (rng.next_u64() & 0xff) as u8;
                let rec = &mut r.records[at];
                rec.header[offset] = value;
                if !CHKSUM.range().contains(&offset) {
                    rec.fields_mut().set_checksum();
                }
                done.push(Mutation::Damage { at, offset, value });
            }
            9 => cut = Some(rng.next_u64()),
            _ => {}
        }
    }
    let mut bytes = r.to_bytes();
    if let Some(c) = cut {
        let len = (c % (bytes.len() as u64 + 1)) as usize;
        bytes.truncate(len);
        done.push(Mutation::Truncate { len });
    }
    (bytes, done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use snapconf_tarbytes::raw::RawTar;

    /// Every target and inserted name that reaches past the jail (absolute, or two `..`)
    /// is judged unsafe wherever it goes; the ones with one `..` or none may run.
    #[test]
    fn hostile_targets_and_names_are_not_host_safe() {
        let reaches = |v: &[u8]| {
            v.starts_with(b"/") || v.split(|&b| b == b'/').filter(|c| *c == b"..").count() > 1
        };
        for t in TARGETS {
            let mut a = RawTar::new();
            a.symlink("l", std::str::from_utf8(t).expect("ASCII"));
            let mut recs = Records::parse(&RawTar::new().file("a", b"x").finish());
            recs.records[0].set_link(t);
            for bytes in [a.finish(), recs.to_bytes()] {
                assert_eq!(
                    crate::fuzz::host_safe(&bytes),
                    !reaches(t),
                    "target `{}`",
                    String::from_utf8_lossy(t)
                );
            }
        }
        for n in NAMES {
            let mut name = n.to_vec();
            name.extend_from_slice(b"/x");
            let mut recs = Records::parse(&RawTar::new().file("a", b"x").finish());
            recs.records[0].set_name(&name);
            assert_eq!(
                crate::fuzz::host_safe(&recs.to_bytes()),
                !reaches(n),
                "name `{}`",
                String::from_utf8_lossy(&name)
            );
        }
    }

    #[test]
    fn mutation_is_deterministic_per_seed() {
        let mut t = RawTar::new();
        t.file("a", b"x").dir("d/").symlink("l", "a");
        let recs = Records::parse(&t.finish());
        for seed in 0..50 {
            let a = mutate(&recs, &mut Rng::new(seed), 3);
            let b = mutate(&recs, &mut Rng::new(seed), 3);
            assert_eq!(a, b, "the same seed gives the same mutant");
            assert!(
                !a.1.is_empty() || a.0 == recs.to_bytes(),
                "mutations are recorded"
            );
        }
    }
}
