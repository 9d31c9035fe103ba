//! Hostile archives built in code, one per case kind of docs/cases.md (H9–H14, the
//! hydration-side H cases) and per reference reason code. `corpora/adversarial/` holds each
//! as `<name>.tar` with a `<name>.toml` expectation; `cargo test` checks that the committed
//! bytes equal these builders' and that the reference still gives the recorded verdict.
//!
//! `<out>` in docs/cases.md is `../out` here: the jail's decoy directory beside the root.

use snapconf_extract::{
    AbsoluteSymlinks, Duplicates, EscapingSymlinks, Hardlinks, Limits, Modes, Policy, SpecialFiles,
};
use snapconf_tarbytes::raw::{header, RawHeader, RawTar, CHKSUM};

/// One adversarial archive.
#[derive(Clone, Debug)]
pub struct AdversarialCase {
    /// File stem in `corpora/adversarial/`, e.g. `h09-dir-then-symlink`.
    pub name: &'static str,
    /// The attack or edge, one line.
    pub attack: &'static str,
    /// Policy name, see [`named_policy`].
    pub policy: &'static str,
    /// The archive.
    pub bytes: Vec<u8>,
}

/// The reference policies the expectations name: `default` (`Policy::default()`, which
/// copies hardlinks), `reject-hardlinks` (hardlinks `Reject`, as the matrix's reference runs
/// under the default profile), `copy` (hardlinks `Copy`), `link` (hardlinks `Link`), `strict` (absolute and escaping symlinks
/// and special files `Reject`), `last-wins` (duplicates `LastWins`, hardlinks `Copy`),
/// `exact` (modes `Exact`). `None` for another name.
pub fn named_policy(name: &str) -> Option<Policy> {
    let d = Policy::default();
    Some(match name {
        "default" => d,
        "reject-hardlinks" => Policy {
            hardlinks: Hardlinks::Reject,
            ..d
        },
        "small-decompression" => Policy {
            limits: Limits {
                decompressed_bytes: 4096,
                ..Limits::default()
            },
            ..d
        },
        "copy" => Policy {
            hardlinks: Hardlinks::Copy,
            ..d
        },
        "link" => Policy {
            hardlinks: Hardlinks::Link,
            ..d
        },
        "strict" => Policy {
            absolute_symlinks: AbsoluteSymlinks::Reject,
            escaping_symlinks: EscapingSymlinks::Reject,
            special_files: SpecialFiles::Reject,
            ..d
        },
        "last-wins" => Policy {
            duplicates: Duplicates::LastWins,
            hardlinks: Hardlinks::Copy,
            ..d
        },
        "exact" => Policy {
            modes: Modes::Exact,
            ..d
        },
        _ => return None,
    })
}

/// `data` as a gzip file (RFC 1952) of stored deflate blocks (RFC 1951 section 3.2.4):
/// compressed by no one, so the bytes are the same whatever library is installed.
fn gzip_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    let chunks: Vec<&[u8]> = data.chunks(0xffff).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        out.push(u8::from(i + 1 == chunks.len()));
        let len = chunk.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

/// CRC-32 (IEEE 802.3, reflected polynomial `0xedb88320`), as gzip's trailer holds it.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The cases [`case`] makes of one archive `t`, one per `(name, attack, policy)`, in order:
/// the same bytes judged under several policies.
fn cases<'a>(
    t: &'a RawTar,
    variants: &'a [(&'static str, &'static str, &'static str)],
) -> impl Iterator<Item = AdversarialCase> + 'a {
    variants
        .iter()
        .map(move |&(name, attack, policy)| case(name, attack, policy, t))
}

/// The case `name`: archive `t`'s bytes, the `attack` they carry, judged under the named
/// `policy` ([`named_policy`]).
fn case(
    name: &'static str,
    attack: &'static str,
    policy: &'static str,
    t: &RawTar,
) -> AdversarialCase {
    AdversarialCase {
        name,
        attack,
        policy,
        bytes: t.finish(),
    }
}

/// Every adversarial case, in a stable order.
pub fn adversarial_cases() -> Vec<AdversarialCase> {
    let mut v = Vec::new();
    let mut t = RawTar::new();
    t.dir("foo/").symlink("foo", "../out").file("foo/x", b"1");
    v.extend(cases(
        &t,
        &[
            ("h09-dir-then-symlink", "H9: a cache of created directories lets foo/x go through the later symlink foo", "default"),
            ("h09-dir-then-symlink-last-wins", "H9 under last-wins: the symlink replaces the empty dir, foo/x must still not follow it", "last-wins"),
        ],
    ));
    let mut t = RawTar::new();
    t.symlink("link", "../out/target").file("link", b"owned");
    v.extend(cases(
        &t,
        &[
            (
                "h10-symlink-then-file",
                "H10: a file member written through an earlier symlink of the same name",
                "default",
            ),
            (
                "h10-symlink-then-file-last-wins",
                "H10 under last-wins: the file must replace the link, not write through it",
                "last-wins",
            ),
        ],
    ));
    let mut t = RawTar::new();
    t.symlink("up", "..").file("up/exploit/foo/bar", b"bar");
    v.push(case(
        "h11-traversal-through-link",
        "H11: directories created outside through `up -> ..` before failing",
        "default",
        &t,
    ));
    let mut t = RawTar::new();
    t.file("x", b"abc").hardlink("x", "x");
    v.push(case(
        "h12-self-hardlink",
        "H12: LNK x -> x must not truncate x",
        "copy",
        &t,
    ));
    let mut t = RawTar::new();
    for i in 0..10 {
        let name = format!("f{i}");
        let data = vec![b'a' + i as u8; 1000];
        if i == 2 {
            t.bytes
                .extend_from_slice(&header(b'0', name.as_bytes(), b"", 1000, 0o644));
            t.bytes.extend_from_slice(&data[..500]);
            break;
        }
        t.file(&name, &data);
    }
    v.push(AdversarialCase {
        name: "h13-truncated-payload",
        attack: "H13: the third member's payload is cut in half; the prior must survive",
        policy: "default",
        bytes: t.bytes.clone(),
    });
    let mut t = RawTar::new();
    t.file("a", b"new").hardlink("b", "a");
    v.push(case(
        "h14-replace-hardlinked-pair",
        "H14: a hardlinked pair replaces a prior a/b/stale; no mix, stale gone",
        "link",
        &t,
    ));
    let mut t = RawTar::new();
    t.file("cache/mod.py", b"VALUE = 1\n")
        .hardlink("venv/mod.py", "cache/mod.py");
    v.push(case(
        "h01-lnk-member-default",
        "H1: an LNK member under the default profile, which copies hardlinks (the matrix's reference refuses LNK members there)",
        "reject-hardlinks",
        &t,
    ));
    let mut t = RawTar::new();
    t.hardlink("venv/mod.py", "cache/mod.py");
    v.push(case(
        "h02-dangling-hardlink",
        "H2: an LNK member whose first name was excluded at capture",
        "copy",
        &t,
    ));
    let mut t = RawTar::new();
    t.dir(".venv/bin/")
        .symlink(".venv/bin/python", "/usr/local/bin/python")
        .symlink(".venv/bin/python3", "python");
    v.extend(cases(
        &t,
        &[
            (
                "h03-absolute-symlink-keep",
                "H3: virtualenv links kept verbatim",
                "default",
            ),
            (
                "h03-absolute-symlink-strict",
                "H3 under a policy refusing absolute links",
                "strict",
            ),
        ],
    ));
    let mut t = RawTar::new();
    t.push(b'6', b"pipe", b"", b"", 0o644).file("a", b"x");
    v.extend(cases(
        &t,
        &[
            (
                "h04-fifo-dropped",
                "H4: a FIFO member is dropped, never created",
                "default",
            ),
            ("h04-fifo-strict", "H4 under special-files reject", "strict"),
        ],
    ));
    let mut t = RawTar::new();
    let long = "l".repeat(120);
    t.long_name(long.as_bytes()).file(&long, b"gnu long name");
    t.pax(&[("path", b"p\xff\xfe")])
        .file("ignored", b"pax non-utf8");
    t.file("nl\nname", b"newline");
    v.push(case(
        "h06-long-and-raw-names",
        "H6: GNU long name, PAX non-UTF-8 name, a newline in a name",
        "default",
        &t,
    ));
    let mut t = RawTar::new();
    t.push(b'5', b"ro/", b"", b"", 0o555).file("ro/foo", b"x");
    v.push(case(
        "h07-read-only-dir",
        "H7: a 0555 directory with a child",
        "default",
        &t,
    ));
    let mut t = RawTar::new();
    t.symlink("s", "foo").hardlink("s2", "s");
    v.push(case(
        "h08-hardlink-to-symlink",
        "H8: a hardlink naming a symlink member",
        "copy",
        &t,
    ));
    let mut t = RawTar::new();
    t.file("/etc/snapconf-owned", b"x");
    v.push(case(
        "reason-absolute-path",
        "an absolute member name",
        "default",
        &t,
    ));
    let mut t = RawTar::new();
    t.file("a/../../out/target", b"x");
    v.push(case(
        "reason-parent-traversal",
        "a `..` component (CVE-2001-1267)",
        "default",
        &t,
    ));
    let mut t = RawTar::new();
    t.dir("d/").symlink("d/up", "../../out");
    v.push(case(
        "reason-symlink-escape",
        "a relative symlink leaving the root",
        "strict",
        &t,
    ));
    let mut t = RawTar::new();
    t.symlink("d", "sub").dir("sub/").file("d/x", b"x");
    v.push(case(
        "reason-through-symlink-inside",
        "a member below a symlink member, even one pointing inside",
        "default",
        &t,
    ));
    let mut t = RawTar::new();
    t.push(b'3', b"null", b"", b"", 0o666);
    v.extend(cases(
        &t,
        &[
            (
                "reason-special-file-chardev",
                "a character device member",
                "strict",
            ),
            (
                "chardev-dropped",
                "a character device member is dropped by default",
                "default",
            ),
        ],
    ));
    let mut t = RawTar::new();
    t.file("a", b"1").file("a", b"2");
    v.push(case(
        "reason-duplicate",
        "two members of one name",
        "default",
        &t,
    ));
    let mut t = RawTar::new();
    t.dir("d/")
        .file("d/x", b"1")
        .file("d", b"replaces a non-empty dir");
    v.push(case(
        "reason-duplicate-nonempty-dir",
        "last-wins never replaces a directory with members",
        "last-wins",
        &t,
    ));
    let mut t = RawTar::new();
    t.file("a", b"x");
    let mut b = t.bytes.clone();
    b.truncate(300);
    // A gzip archive (stored deflate blocks: the bytes do not depend on a compressor's
    // version) whose 10 KiB tar is over the policy's 4 KiB of decompressed bytes.
    let mut t = RawTar::new();
    t.file("a", &[b'a'; 8000]);
    v.push(AdversarialCase {
        name: "reason-decompression-limit",
        attack: "a gzip archive that decompresses past the limit on decompressed bytes",
        policy: "small-decompression",
        bytes: gzip_stored(&t.finish()),
    });
    let mut bz = b"BZh91AY&SY".to_vec();
    bz.resize(600, 0x5a);
    v.push(AdversarialCase {
        name: "reason-unsupported-compression",
        attack: "a bzip2-compressed archive (not read), named in the refusal",
        policy: "default",
        bytes: bz,
    });
    v.push(AdversarialCase {
        name: "reason-truncated-header",
        attack: "the archive ends inside the first header",
        policy: "default",
        bytes: b,
    });
    let mut t = RawTar::new();
    let comp = "c".repeat(256);
    t.long_name(comp.as_bytes()).file("c", b"x");
    v.push(case(
        "reason-limit-component",
        "a name component over 255 bytes",
        "default",
        &t,
    ));
    let mut t = RawTar::new();
    let mut h = RawHeader(header(b'0', b"a", b"", 0, 0o644));
    h.field_mut(CHKSUM)[0] = b'7';
    t.block(&h.0);
    v.push(case(
        "reason-malformed-checksum",
        "a bad header checksum",
        "default",
        &t,
    ));
    let mut t = RawTar::new();
    t.push(b'Z', b"z", b"", b"", 0o644);
    v.push(case(
        "reason-unsupported-flag",
        "an unknown type flag",
        "default",
        &t,
    ));
    let mut t = RawTar::new();
    t.push(b'S', b"sparse", b"", b"", 0o644);
    v.push(case(
        "reason-unsupported-sparse",
        "a GNU sparse member",
        "default",
        &t,
    ));
    let mut t = RawTar::new();
    t.file("a", b"x").file("a/b", b"y");
    v.push(case(
        "reason-not-a-directory",
        "a member below a regular file",
        "default",
        &t,
    ));
    let mut t = RawTar::new();
    t.pax(&[("path", b"../out/target")])
        .file("innocent", b"pwned");
    v.push(case(
        "pax-path-smuggle",
        "a PAX path overriding a harmless ustar name with `..`",
        "default",
        &t,
    ));
    let mut t = RawTar::new();
    t.pax(&[("linkpath", b"/etc/passwd")])
        .symlink("l", "harmless");
    v.push(case(
        "pax-linkpath-smuggle",
        "a PAX linkpath overriding a harmless symlink target",
        "strict",
        &t,
    ));
    let mut t = RawTar::new();
    t.file_mode("suid", b"#!/bin/sh\n", 0o4755)
        .file_mode("gw", b"x", 0o666);
    v.extend(cases(
        &t,
        &[
            (
                "setuid-data-filter",
                "setuid and group/other-write bits are stripped by the data filter",
                "default",
            ),
            ("setuid-exact", "setuid kept under modes exact", "exact"),
        ],
    ));
    v
}
