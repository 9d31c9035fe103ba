//! Compressed snapshots: gzip, zstd and xz archives are read by magic number by every entry
//! point (`validate`, `hydrate`, `hydrate_file`, `list`); a bomb, a damaged or cut stream
//! and an unknown compression are typed refusals, the root untouched; `validate` and
//! `hydrate` agree.

use crate::common;

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{encoders, gzip, jailed, snapshot, xz, zstd, Jail, Node, Raw};
use snapconf_extract::compression::{detect, Compression};
use snapconf_extract::{
    hydrate, hydrate_file, list, validate, Hardlinks, HydrateError, Limits, Policy, Reason,
};

fn copy_links() -> Policy {
    Policy {
        hardlinks: Hardlinks::Copy,
        ..Policy::default()
    }
}

fn reason<T: std::fmt::Debug>(r: &Result<T, HydrateError>) -> Option<Reason> {
    r.as_ref().err().and_then(|e| e.reason())
}

/// A tree with every kind snapconf's cases name: directories (an empty one, a read-only one
/// with a child: H7), an executable file, a second name of a file (H1), relative and
/// absolute symlinks (H3), a name over 100 bytes (H6).
fn make_tree(src: &Path) {
    std::fs::create_dir_all(src.join("d/empty")).expect("mkdir");
    std::fs::write(src.join("d/f"), b"hello\n").expect("write");
    std::fs::write(src.join("run.sh"), b"#!/bin/sh\n").expect("write");
    std::fs::set_permissions(src.join("run.sh"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    std::fs::hard_link(src.join("d/f"), src.join("second")).expect("link");
    std::os::unix::fs::symlink("d/f", src.join("rel")).expect("symlink");
    std::os::unix::fs::symlink("/etc/hostname", src.join("abs")).expect("symlink");
    let long = "n".repeat(140);
    std::fs::create_dir_all(src.join("deep").join(&long)).expect("mkdir");
    std::fs::write(
        src.join("deep").join(&long).join("file"),
        vec![b'z'; 70_000],
    )
    .expect("w");
    std::fs::create_dir(src.join("ro")).expect("mkdir");
    std::fs::write(src.join("ro/inside"), b"x").expect("write");
    std::fs::set_permissions(src.join("ro"), std::fs::Permissions::from_mode(0o555))
        .expect("chmod");
}

/// A snapshot with inode sharing left out (hardlinks come back as copies).
fn unshared(tree: BTreeMap<PathBuf, Node>) -> BTreeMap<PathBuf, Node> {
    tree.into_iter()
        .map(|(p, n)| match n {
            Node::File { mode, data, .. } => (p, Node::File { mode, data, ino: 0 }),
            n => (p, n),
        })
        .collect()
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `.tar.gz`, `.tar.zst` and `.tar.xz` written by GNU tar (`tar -czf`, `tar --zstd -cf`,
/// `tar -cJf`) of a tree with hardlinks, symlinks, a long name and a read-only directory
/// hydrate to that tree (hardlinks copied, as the default profile's `copy` says), from the
/// file and from a stream, and list like the plain tar.
#[test]
fn gnu_tar_compressed_archives_round_trip() {
    if !have("tar") {
        return common::skip::skip("GNU tar", "apt-get install tar");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    make_tree(&src);
    let plain = dir.path().join("ws.tar");
    let ok = Command::new("tar")
        .arg("-cf")
        .arg(&plain)
        .arg("-C")
        .arg(&src)
        .arg(".")
        .status()
        .expect("tar runs");
    assert!(ok.success());
    let plain_listing = list(std::fs::File::open(&plain).expect("open")).expect("lists");
    let want = unshared(snapshot(&src, &[]));
    for (flag, tool, kind) in [
        ("-z", "gzip", Compression::Gzip),
        ("--zstd", "zstd", Compression::Zstd),
        ("-J", "xz", Compression::Xz),
    ] {
        if !have(tool) {
            common::skip::skip(tool, &format!("apt-get install {tool}"));
            continue;
        }
        let ar = dir.path().join(format!("ws.tar.{tool}"));
        let ok = Command::new("tar")
            .arg(flag)
            .arg("-cf")
            .arg(&ar)
            .arg("-C")
            .arg(&src)
            .arg(".")
            .status()
            .expect("tar runs");
        assert!(ok.success(), "tar {flag}");
        let bytes = std::fs::read(&ar).expect("read");
        assert_eq!(detect(&bytes[..512.min(bytes.len())]).ok(), Some(kind));
        assert_eq!(
            list(&bytes[..]).expect("lists").members,
            plain_listing.members,
            "{tool}: the same members as the plain tar"
        );
        for from_file in [true, false] {
            let jail = Jail::new();
            jailed(&jail, || {
                if from_file {
                    let f = std::fs::File::open(&ar).expect("open");
                    hydrate_file(&f, &jail.root(), &copy_links())
                } else {
                    hydrate(&bytes[..], &jail.root(), &copy_links())
                }
            })
            .unwrap_or_else(|e| panic!("{tool} (from file: {from_file}): {e}"));
            assert_eq!(
                unshared(snapshot(&jail.root(), &[])),
                want,
                "{tool} (from file: {from_file})"
            );
            // The read-only directory would stop the jail's clean-up.
            let _ = std::fs::set_permissions(
                jail.root().join("ro"),
                std::fs::Permissions::from_mode(0o755),
            );
        }
        let listing = validate(&bytes[..], &copy_links()).expect("validates");
        assert_eq!(listing.members, plain_listing.members, "{tool}");
    }
    let _ = std::fs::set_permissions(src.join("ro"), std::fs::Permissions::from_mode(0o755));
}

/// Archives compressed by the libraries, including several gzip members and xz streams one
/// after another and a zstd skippable frame first, give the plain tar's members.
#[test]
fn every_framing_lists_like_the_plain_tar() {
    let a = Raw::new().file("a", b"first").finish();
    let b = Raw::new().dir("d/").file("d/b", &[3u8; 9000]).finish();
    let want = list(&b[..]).expect("plain").members;
    let mut skippable = vec![0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4];
    skippable.extend(zstd(&b));
    // Two gzip members: the first holds half the tar, the second the rest.
    let (h1, h2) = b.split_at(1000);
    let two_gzip = [gzip(h1), gzip(h2)].concat();
    let (x1, x2) = b.split_at(4000);
    let two_xz = [xz(x1), xz(x2)].concat();
    for (what, bytes) in [
        ("gzip", gzip(&b)),
        ("two gzip members", two_gzip),
        ("zstd", zstd(&b)),
        ("zstd after a skippable frame", skippable),
        ("xz", xz(&b)),
        ("two xz streams", two_xz),
    ] {
        let got = list(&bytes[..]).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(got.members, want, "{what}");
        let jail = Jail::new();
        jailed(&jail, || {
            hydrate(&bytes[..], &jail.root(), &Policy::default())
        })
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            std::fs::read(jail.root().join("d/b")).expect("file"),
            vec![3u8; 9000]
        );
    }
    // The first archive only once more: a plain tar is not taken for a compressed one.
    assert_eq!(detect(&a[..512]).ok(), Some(Compression::None));
}

/// Issue 14, defect 6: a compressed archive shorter than one tar block is decompressed, not
/// refused as "truncated (archive ends inside a header)"; a compressed archive of zero
/// blocks only is an `empty-archive`, as the plain one is.
#[test]
fn compressed_archives_under_one_block_are_read() {
    let tar = Raw::new().file("a", b"x").finish();
    let empty = vec![0u8; 10240];
    for (name, enc) in encoders() {
        let small = enc(&tar);
        assert!(small.len() < 512, "{name}: {} bytes", small.len());
        let jail = Jail::new();
        jailed(&jail, || {
            hydrate(&small[..], &jail.root(), &Policy::default())
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(std::fs::read(jail.root().join("a")).expect("a"), b"x");
        let zeros = enc(&empty);
        assert!(zeros.len() < 512, "{name}");
        assert_eq!(
            reason(&validate(&zeros[..], &Policy::default())),
            Some(Reason::EmptyArchive),
            "{name}"
        );
    }
}

/// A tar of one zero-filled file of `size` bytes.
fn zero_file_tar(size: usize) -> Vec<u8> {
    Raw::new().file("zeros", &vec![0u8; size]).finish()
}

/// A 1 KiB gzip that inflates to 900 KiB is refused (`decompression-limit`) under a
/// 512 KiB limit on decompressed bytes, from a stream and from a file, the root untouched;
/// `validate` agrees.
#[test]
fn a_small_gzip_that_inflates_past_the_limit_is_refused() {
    let bomb = gzip(&zero_file_tar(900 << 10));
    assert!(bomb.len() <= 1024, "1 KiB at most: {}", bomb.len());
    let policy = Policy {
        limits: Limits {
            decompressed_bytes: 512 << 10,
            ..Limits::default()
        },
        ..Policy::default()
    };
    let jail = Jail::new();
    jail.prior(&[("prior", "prior content")]);
    let h = jailed(&jail, || hydrate(&bomb[..], &jail.root(), &policy));
    assert_eq!(reason(&h), Some(Reason::DecompressionLimit), "{h:?}");
    assert_eq!(
        reason(&validate(&bomb[..], &policy)),
        Some(Reason::DecompressionLimit)
    );
    let file = jail.path().join("bomb.tar.gz");
    std::fs::write(&file, &bomb).expect("write");
    let f = std::fs::File::open(&file).expect("open");
    let hf = hydrate_file(&f, &jail.root(), &policy);
    assert_eq!(reason(&hf), Some(Reason::DecompressionLimit), "{hf:?}");
    std::fs::remove_file(&file).expect("rm");
    assert_eq!(
        std::fs::read(jail.root().join("prior")).expect("kept"),
        b"prior content"
    );
}

/// Under the default limits, zstd and xz streams that decompress at more than 1,000:1 (a
/// tar of 64 MiB of zeros: a few KiB compressed) are refused (`decompression-limit`) once
/// 1 MiB has come out, by `hydrate` and `validate` alike.
#[test]
fn bombs_are_refused_by_ratio_under_the_default_limits() {
    let tar = zero_file_tar(64 << 20);
    for (name, enc) in [("zstd", zstd as common::Encoder), ("xz", xz)] {
        let bomb = enc(&tar);
        assert!(bomb.len() < 64 << 10, "{name}: {} bytes", bomb.len());
        let jail = Jail::new();
        let h = jailed(&jail, || {
            hydrate(&bomb[..], &jail.root(), &Policy::default())
        });
        assert_eq!(
            reason(&h),
            Some(Reason::DecompressionLimit),
            "{name}: {h:?}"
        );
        let message = h.expect_err("refused").to_string();
        assert!(
            message.contains(name) && message.contains("ratio"),
            "{message}"
        );
        assert!(!jail.root().exists(), "{name}: no root was made");
        assert_eq!(
            reason(&validate(&bomb[..], &Policy::default())),
            Some(Reason::DecompressionLimit),
            "{name}"
        );
    }
}

/// Compressions and archive formats that are not read are named in an `unsupported`
/// refusal (with no member); a plain tar whose first member is named like a magic number
/// (`BZh91`, `\x1f\x8b...`) is still a tar.
#[test]
fn unknown_compressions_are_named() {
    let cases: [(&str, &[u8]); 7] = [
        ("bzip2", b"BZh91AY&SY\x00\x00\x00\x00"),
        ("lz4", &[0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7]),
        ("lzip", b"LZIP\x01\x0c\x00"),
        ("compress", &[0x1f, 0x9d, 0x90, 0x2e]),
        ("lzop", &[0x89, b'L', b'Z', b'O', 0x00, 0x0d, 0x0a]),
        ("zip", b"PK\x03\x04\x14\x00\x00\x00"),
        ("7z", &[b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c, 0, 4]),
    ];
    for (name, magic) in cases {
        let mut bytes = magic.to_vec();
        bytes.resize(2048, 0x5a);
        for r in [
            validate(&bytes[..], &Policy::default()).map(|_| ()),
            list(&bytes[..]).map(|_| ()),
        ] {
            match r {
                Err(HydrateError::Refused {
                    reason,
                    member,
                    detail,
                }) => {
                    assert_eq!(reason, Reason::Unsupported, "{name}: {detail}");
                    assert!(member.is_empty(), "{name}");
                    assert!(detail.contains(name), "{name} is named: {detail}");
                }
                other => panic!("{name}: {other:?}"),
            }
        }
        let jail = Jail::new();
        let h = jailed(&jail, || {
            hydrate(&bytes[..], &jail.root(), &Policy::default())
        });
        assert_eq!(reason(&h), Some(Reason::Unsupported), "{name}");
    }
    if have("bzip2") {
        let tar = Raw::new().file("a", b"x").finish();
        let mut child = Command::new("bzip2")
            .arg("-c")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("bzip2");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(&tar)
            .expect("write");
        let out = child.wait_with_output().expect("bzip2 output");
        let v = validate(&out.stdout[..], &Policy::default());
        assert_eq!(reason(&v), Some(Reason::Unsupported), "{v:?}");
    }
    for name in [
        &b"BZh91AY"[..],
        b"\x1f\x8bname",
        b"PK\x03\x04x",
        b"\x28\xb5\x2f\xfdz",
    ] {
        let mut raw = Raw::new();
        raw.push(b'0', name, b"", b"data", 0o644);
        let tar = raw.finish();
        let listing = validate(&tar[..], &Policy::default())
            .unwrap_or_else(|e| panic!("{name:?} is a plain tar: {e}"));
        assert_eq!(listing.members[0].name, name);
    }
}

/// Damaged compressed streams (cut anywhere, a byte flipped anywhere, the gzip CRC-32
/// wrong) are typed refusals, never an I/O error or a panic; `validate` and `hydrate` agree
/// on each, and the prior workspace stays.
#[test]
fn damaged_compressed_streams_are_typed_refusals() {
    let tar = Raw::new()
        .dir("d/")
        .file(
            "d/a",
            &(0..20_000).map(|i| (i * 7 % 251) as u8).collect::<Vec<_>>(),
        )
        .symlink("l", "d/a")
        .finish();
    let jail = Jail::new();
    jail.prior(&[("prior", "prior content")]);
    for (name, enc) in encoders() {
        let good = enc(&tar);
        let mut damaged: Vec<(String, Vec<u8>)> = Vec::new();
        for cut in (1..good.len()).step_by((good.len() / 23).max(1)) {
            damaged.push((format!("cut at {cut}"), good[..cut].to_vec()));
        }
        for at in (6..good.len()).step_by((good.len() / 29).max(1)) {
            let mut b = good.clone();
            b[at] ^= 0x55;
            damaged.push((format!("byte {at} flipped"), b));
        }
        if name == "gzip" {
            let mut b = good.clone();
            let crc = b.len() - 8;
            b[crc] ^= 1;
            damaged.push(("CRC-32 wrong".into(), b));
        }
        for (what, bytes) in damaged {
            let v = validate(&bytes[..], &Policy::default());
            let h = jailed(&jail, || {
                hydrate(&bytes[..], &jail.root(), &Policy::default())
            });
            assert_eq!(reason(&v), reason(&h), "{name} {what}: {v:?} / {h:?}");
            if what.starts_with("cut") || what.starts_with("CRC") {
                assert!(reason(&h).is_some(), "{name} {what}: refused, typed: {h:?}");
            }
            if let Err(HydrateError::Io { .. }) = h {
                panic!("{name} {what}: an I/O error for a damaged archive: {h:?}");
            }
            if h.is_ok() {
                // A flip that still decodes (a bit in an xz padding field, say) restored
                // what the archive says; put the prior back.
                let prior = Raw::new().file("prior", b"prior content").finish();
                hydrate(&prior[..], &jail.root(), &Policy::default()).expect("reset");
            }
        }
    }
}

/// Hands out `bytes` a few at a time (1 to 13 bytes a read), as a slow pipe does.
struct Trickle<'a> {
    bytes: &'a [u8],
    n: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.n = self.n % 13 + 1;
        let k = self.n.min(buf.len()).min(self.bytes.len());
        buf[..k].copy_from_slice(&self.bytes[..k]);
        self.bytes = &self.bytes[k..];
        Ok(k)
    }
}

/// A decoder drops what it decoded in the call that meets damaged data, so the verdict on a
/// damaged stream could depend on read sizes. It does not: `validate` of a slice, `validate`
/// of the same bytes arriving a few at a time, `hydrate` of a stream and `hydrate_file`
/// (which decompresses in a second thread, in large reads) give the same reason, for every
/// flipped byte of a gzip, zstd and xz archive whose tar refuses a late member.
#[test]
fn verdicts_on_damaged_streams_do_not_depend_on_read_sizes() {
    let payload: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let tar = Raw::new()
        .file("big", &payload)
        .symlink("up", "..")
        .file("up/x", b"refused: through-symlink")
        .finish();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("archive");
    for (name, enc) in encoders() {
        let good = enc(&tar);
        for at in (0..good.len()).step_by((good.len() / 40).max(1)) {
            let mut bytes = good.clone();
            bytes[at] ^= 0x20;
            let policy = Policy::default();
            let v = reason(&validate(&bytes[..], &policy));
            let trickled = reason(&validate(
                Trickle {
                    bytes: &bytes,
                    n: 0,
                },
                &policy,
            ));
            assert_eq!(v, trickled, "{name}, byte {at} flipped: slice vs trickle");
            let jail = Jail::new();
            let h = reason(&jailed(&jail, || {
                hydrate(&bytes[..], &jail.root(), &policy)
            }));
            std::fs::write(&file, &bytes).expect("write");
            let f = std::fs::File::open(&file).expect("open");
            let jail = Jail::new();
            let hf = reason(&jailed(&jail, || hydrate_file(&f, &jail.root(), &policy)));
            assert_eq!(
                (v, v),
                (h, hf),
                "{name}, byte {at} flipped: validate vs hydrate"
            );
        }
    }
}

/// Zero padding after the last gzip member (a tape record, or a block device's rounding)
/// is read past, as GNU tar, bsdtar and Python do: `validate`, `hydrate` and a file
/// hydration agree, from one byte to a megabyte of it. Anything else after the last
/// member, or more padding than that, is a damaged stream for all three alike.
#[test]
fn zero_padding_after_the_last_gzip_member_is_read_past() {
    let tar = Raw::new().dir("d/").file("d/f", b"padded").finish();
    let want = list(&tar[..]).expect("plain").members;
    let gz = gzip(&tar);
    for (pad, fill, ok) in [
        (1usize, 0u8, true),
        (1536, 0, true),
        (10240, 0, true),
        (1 << 20, 0, true),
        ((1 << 20) + 4096, 0, false),
        (1, b'x', false),
        (600, 0xff, false),
    ] {
        let mut bytes = gz.clone();
        bytes.extend(std::iter::repeat_n(fill, pad));
        let what = format!("{pad} bytes of {fill:#x}");
        let v = validate(&bytes[..], &Policy::default());
        let jail = Jail::new();
        let h = hydrate(&bytes[..], &jail.root(), &Policy::default());
        let file = jail.path().join("a.tar.gz");
        std::fs::write(&file, &bytes).expect("write");
        let jail2 = Jail::new();
        let opened = std::fs::File::open(&file).expect("open");
        let f = hydrate_file(&opened, &jail2.root(), &Policy::default());
        if ok {
            assert_eq!(v.expect(&what).members, want, "{what}");
            assert!(h.is_ok() && f.is_ok(), "{what}: {h:?} {f:?}");
        } else {
            assert_eq!(reason(&v), Some(Reason::Malformed), "{what}: {v:?}");
            assert_eq!(reason(&h), Some(Reason::Malformed), "{what}");
            assert_eq!(reason(&f), Some(Reason::Malformed), "{what}");
        }
    }
}
