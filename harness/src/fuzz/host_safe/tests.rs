//! Explicit cases of [`host_safe`]: each way a name can hide from a member walk, each
//! reading of a value, compressed inputs, and harmless archives that must stay runnable.
//! The attack generator's own archives are judged in `fuzz/attack/host_safe_tests.rs`.

use super::{host_safe, judge};
use snapconf_tarbytes::raw::{checksum_sum, header, pax_records, RawHeader, RawTar, CHKSUM};
use snapconf_tarbytes::Records;
use std::io::Write;

/// The smuggled name of the incident.
const PASSWD: &[u8] = b"../../../../../../../etc/passwd";

/// One file member named `name`, as bytes (header and padded payload), no end marker.
fn member(name: &[u8]) -> Vec<u8> {
    let mut t = RawTar::new();
    t.push(b'0', name, b"", b"pwned\n", 0o644);
    t.bytes
}

/// A harmless archive: files, a directory, a PAX- and a GNU-named file, one link.
fn benign() -> Vec<u8> {
    let mut t = RawTar::new();
    t.file("README.md", b"hello\n")
        .dir("src/")
        .file("src/lib.rs", b"pub fn f() {}\n")
        .symlink("latest", "src/lib.rs")
        .pax(&[("path", b"docs/a-long-name.md"), ("mtime", b"1700000000.5")])
        .file("docs/a-long-name.md", b"doc\n")
        .long_name(b"assets/very/long/name.bin")
        .file("assets/very/long/name.bin", b"bin\n");
    t.finish()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).expect("gzip to memory");
    e.finish().expect("gzip to memory")
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).expect("zstd to memory")
}

fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
    e.write_all(bytes).expect("xz to memory");
    e.finish().expect("xz to memory")
}

/// A file, then a member of type `flag` whose payload is a complete member named `hidden`,
/// then the end marker: the `size-smuggle` shape.
fn smuggle(flag: u8, hidden: &[u8]) -> Vec<u8> {
    let mut t = RawTar::new();
    t.file("target", b"t\n");
    let link: &[u8] = if matches!(flag, b'1' | b'2') {
        b"target"
    } else {
        b""
    };
    let mut h = RawHeader(header(flag, b"dd", link, 0, 0o755));
    let payload = member(hidden);
    h.set_size(payload.len() as u64);
    if matches!(flag, b'3' | b'4') {
        h.set_device(1, 3);
    }
    h.set_checksum();
    t.block(&h.0).data(&payload);
    t.finish()
}

#[test]
fn one_dotdot_stays_inside_and_a_second_does_not() {
    let mut t = RawTar::new();
    t.symlink("up", "..").file("up/out/x", b"x");
    assert!(host_safe(&t.finish()), "one `..` stays inside the jail");
    let mut t = RawTar::new();
    t.symlink("up", "..").symlink("up/up", "..");
    assert!(!host_safe(&t.finish()), "two `..` could leave the jail");
    let mut t = RawTar::new();
    t.symlink("up", "..")
        .hardlink("up/z", "up")
        .file("up/z/x", b"x");
    assert!(
        !host_safe(&t.finish()),
        "a hardlink re-plants `..` one level up"
    );
    let mut t = RawTar::new();
    t.file("a", b"a").hardlink("h", "a");
    assert!(host_safe(&t.finish()), "a hardlink with no `..` runs");
    let mut t = RawTar::new();
    t.push(
        b'g',
        b"pax_global_header",
        b"",
        &pax_records(&[("linkpath", b"..")]),
        0o644,
    )
    .symlink("up", "x")
    .symlink("up/z", "x");
    assert!(
        !host_safe(&t.finish()),
        "a global `..` applies to every link"
    );
    let mut t = RawTar::new();
    t.symlink("l", "/etc");
    assert!(!host_safe(&t.finish()), "an absolute link target");
    let mut t = RawTar::new();
    t.pax(&[("path", b"/etc/x")]).file("x", b"x");
    assert!(!host_safe(&t.finish()), "an absolute PAX path");
}

#[test]
fn harmless_archives_stay_runnable() {
    assert!(
        host_safe(&benign()),
        "files, a directory, PAX, GNU, one link"
    );
    assert!(host_safe(&gzip(&benign())), "gzip of it");
    assert!(host_safe(&zstd(&benign())), "zstd of it");
    assert!(host_safe(&xz(&benign())), "xz of it");
    assert!(host_safe(b""), "empty input");
    assert!(host_safe(&[0u8; 1024]), "only the end marker");
}

#[test]
fn a_member_smuggled_in_any_payload_is_seen() {
    for flag in [b'5', b'3', b'4', b'6', b'2', b'1', b'0', b'7', b'\0'] {
        let bytes = smuggle(flag, PASSWD);
        assert_eq!(
            Records::parse(&bytes).records.len(),
            2,
            "type {}: a walk by size never meets the hidden member",
            char::from(flag)
        );
        assert!(!host_safe(&bytes), "`..` smuggled in type {}", flag);
        let abs = smuggle(flag, b"/etc/passwd");
        assert!(!host_safe(&abs), "absolute smuggled in type {}", flag);
        // One `..` hidden plus one in the open make two.
        let mut t = RawTar::new();
        t.symlink("up", "..");
        let mut bytes = t.bytes;
        bytes.extend(smuggle(flag, b"../x"));
        assert!(!host_safe(&bytes), "hidden `..` counts, type {}", flag);
    }
}

#[test]
fn nul_does_not_end_a_value() {
    let mut t = RawTar::new();
    t.pax(&[("path", b"x\0/../..//..//..//..//decoy")])
        .file("x", b"x");
    assert!(
        !host_safe(&t.finish()),
        "PAX path with NUL (node path.join)"
    );
    let mut t = RawTar::new();
    t.long_name(b"x\0/../../../../etc/passwd").file("x", b"x");
    assert!(!host_safe(&t.finish()), "GNU long name with NUL");
    let mut t = RawTar::new();
    t.push(b'0', b"x\0/etc/passwd", b"", b"x", 0o644);
    assert!(!host_safe(&t.finish()), "ustar name with NUL");
    let mut t = RawTar::new();
    t.pax(&[("GNU.sparse.name", b"../../etc/passwd")])
        .file("x", b"x");
    assert!(!host_safe(&t.finish()), "GNU.sparse.name");
    assert_eq!(judge(b"x\0/../..//.."), (true, 3));
    assert_eq!(judge(b"..\0.."), (false, 2), "pieces add up");
    assert_eq!(judge(b".//./etc"), (true, 0), "`./` stripped");
    assert_eq!(judge(b"a/..b/c.."), (false, 0));
}

#[test]
fn backslash_is_a_separator() {
    let mut t = RawTar::new();
    t.file("..\\..\\x", b"x");
    assert!(!host_safe(&t.finish()), "`..\\..\\x`");
    let mut t = RawTar::new();
    t.file("\\etc\\passwd", b"x");
    assert!(!host_safe(&t.finish()), "`\\etc\\passwd`");
    let mut t = RawTar::new();
    t.file("d\\f", b"x");
    assert!(host_safe(&t.finish()), "`d\\f` stays inside");
}

/// Names some extractor reads as `..` or absolute though they are not so as POSIX bytes:
/// a drive-relative `c:..` (node-tar strips the drive), `.. ` and `...` (Windows strips
/// trailing dots and spaces), `c:/etc`, and Unicode lookalikes of `.` and `/` (NFKC); the
/// harmless `c:d`, `d.` and `caf\u{e9}` stay runnable.
#[test]
fn drive_trailing_and_lookalike_forms_count() {
    for (v, want) in [
        (&b"c:../x"[..], (false, 1)),
        (b"C:..\\..\\x", (false, 2)),
        (b"d/.. /x", (false, 1)),
        (b"d/.../x", (false, 1)),
        (b"c:/etc/passwd", (true, 0)),
        ("\u{2025}/x".as_bytes(), (false, 1)),
        (
            "\u{ff0e}\u{ff0e}\u{ff0f}\u{ff0e}\u{ff0e}".as_bytes(),
            (false, 2),
        ),
        ("\u{ff0f}etc".as_bytes(), (true, 0)),
        (b"c:d/f", (false, 0)),
        (b"d./f", (false, 0)),
        ("caf\u{e9}/f".as_bytes(), (false, 0)),
    ] {
        assert_eq!(judge(v), want, "`{}`", String::from_utf8_lossy(v));
    }
    let mut t = RawTar::new();
    t.file("c:../c:../x", b"x");
    assert!(!host_safe(&t.finish()), "two drive-relative climbs");
}

#[test]
fn headers_past_the_end_and_in_the_tail_count() {
    let mut after = RawTar::new();
    after.file("a", b"a");
    let mut bytes = after.finish();
    bytes.extend(member(PASSWD));
    assert!(!host_safe(&bytes), "a member after the end marker");
    let mut cut = after.finish();
    cut.extend_from_slice(&member(b"/etc/passwd")[..40]);
    assert!(!host_safe(&cut), "a cut header at the end");
    let mut prefixed = RawHeader(header(b'0', b"passwd", b"", 0, 0o644));
    prefixed.set_prefix(b"/etc").set_checksum();
    let mut t = RawTar::new();
    t.block(&prefixed.0);
    assert!(!host_safe(&t.finish()), "an absolute ustar prefix");
}

#[test]
fn members_inside_extension_bodies_count() {
    // A PAX body whose second block is a whole header.
    let mut body = pax_records(&[("comment", &[b'c'; 480][..])]);
    body.resize(512, b'\n');
    body.extend(member(PASSWD));
    let mut t = RawTar::new();
    t.push(b'x', b"PaxHeaders/x", b"", &body, 0o644)
        .file("x", b"x");
    assert!(!host_safe(&t.finish()), "a header inside a PAX body");
    let mut t = RawTar::new();
    let mut long = b"ok".to_vec();
    long.resize(512, 0);
    long.extend(member(b"/etc/passwd"));
    t.push(b'L', b"././@LongLink", b"", &long, 0o644)
        .file("ok", b"x");
    assert!(!host_safe(&t.finish()), "a header inside a GNU long name");
}

#[test]
fn a_parser_that_does_not_round_is_followed_one_step() {
    // A file of 10 bytes; a header right after them, at offset 522.
    let mut bytes = header(b'0', b"f", b"", 10, 0o644).to_vec();
    bytes.extend_from_slice(b"0123456789");
    bytes.extend(member(b"/etc/passwd"));
    bytes.resize(bytes.len().div_ceil(512) * 512 + 1024, 0);
    assert!(!host_safe(&bytes), "unrounded octal size");
    // A PAX `size` of 10 for a member whose ustar size says 0.
    let mut t = RawTar::new();
    t.pax(&[("size", b"10")])
        .block(&header(b'0', b"f", b"", 0, 0o644));
    let mut bytes = t.bytes;
    bytes.extend_from_slice(b"0123456789");
    bytes.extend(member(b"/etc/passwd"));
    bytes.resize(bytes.len().div_ceil(512) * 512 + 1024, 0);
    assert!(!host_safe(&bytes), "unrounded PAX size");
}

#[test]
fn compressed_inputs_are_judged_inside() {
    let plain = smuggle(b'5', PASSWD);
    assert!(!host_safe(&gzip(&plain)), "gzip'd smuggle");
    assert!(!host_safe(&zstd(&plain)), "zstd'd smuggle");
    assert!(!host_safe(&xz(&plain)), "xz'd smuggle");
    assert!(!host_safe(&gzip(&gzip(&plain))), "two gzip layers");
    // Concatenated members: the smuggle in the second.
    let mut two = gzip(&benign()[..512]);
    two.extend(gzip(&plain));
    assert!(!host_safe(&two), "second gzip member");
    let mut frames = zstd(&benign()[..512]);
    frames.extend(zstd(&plain));
    assert!(!host_safe(&frames), "second zstd frame");
    let mut garbage = gzip(&benign());
    garbage.extend_from_slice(b"trailing garbage");
    assert!(!host_safe(&garbage), "bytes after the last member");
    let cut = gzip(&benign());
    assert!(!host_safe(&cut[..cut.len() - 8]), "a cut gzip stream");
    assert!(
        host_safe(&gzip(&gzip(&benign()))),
        "two layers of a harmless archive"
    );
    let mut deep = benign();
    for _ in 0..5 {
        deep = gzip(&deep);
    }
    assert!(!host_safe(&deep), "more layers than are unwrapped");
    let big = vec![0u8; usize::try_from(super::MAX_DECODED).expect("fits") + 512];
    assert!(!host_safe(&zstd(&big)), "over the decoded limit");
    assert!(!host_safe(b"BZh91AY&SY\0\0\0\0"), "bzip2 cannot be judged");
    assert!(!host_safe(b"PK\x03\x04rest"), "zip cannot be judged");
}

/// The seed corpus, as GNU tar, bsdtar, BusyBox, Python and tar-rs wrote it, stays
/// runnable once its absolute link (`.venv/bin/python -> /usr/local/bin/python`, where a
/// writer kept it) is retargeted, as mutations do: real tool output (old-GNU and PAX
/// headers, a hardlink, a 120-byte name) does not read as an escape.
#[test]
fn the_seed_corpus_runs_once_its_absolute_link_is_retargeted() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/seeds");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("corpora/seeds") {
        let path = entry.expect("entry").path();
        let bytes = std::fs::read(&path).expect("seed");
        let mut recs = Records::parse(&bytes);
        let mut absolute = false;
        for r in &mut recs.records {
            if r.link().starts_with(b"/") {
                absolute = true;
                r.set_link(b"python");
            }
        }
        assert_eq!(host_safe(&bytes), !absolute, "{}", path.display());
        assert!(host_safe(&recs.to_bytes()), "{}", path.display());
        seen += 1;
    }
    assert!(seen > 0, "no seed in {}", dir.display());
}

/// Hostile review: an input with no magic that liblzma's automatic decoder (Python's
/// `tarfile.open`) reads as legacy `.lzma` (LZMA_Alone) is judged by what it decodes to.
#[test]
fn legacy_lzma_is_judged_inside() {
    use liblzma::stream::{Action, LzmaOptions, Stream};
    let alone = |bytes: &[u8]| {
        let opts = LzmaOptions::new_preset(6).expect("preset");
        let mut s = Stream::new_lzma_encoder(&opts).expect("encoder");
        let mut out = Vec::with_capacity(bytes.len() + 4096);
        s.process_vec(bytes, &mut out, Action::Finish)
            .expect("lzma");
        out
    };
    let mut t = RawTar::new();
    t.file("/etc/decoy", b"pwned\n").file("/decoy", b"pwned\n");
    let hostile = alone(&t.finish());
    assert!(!host_safe(&hostile), "absolute names inside LZMA_Alone");
    assert!(
        host_safe(&alone(&benign())),
        "a benign LZMA_Alone archive runs"
    );
    assert!(
        host_safe(&benign()),
        "a plain archive is no LZMA_Alone stream"
    );
}

/// Hostile review: a zstd skippable frame over a plain tar whose checksum fields a lenient
/// reader accepts (`\x1c` before the digits): every raw block counts, checksum or not.
#[test]
fn raw_blocks_of_a_compressed_input_count_without_a_checksum() {
    let mut t = RawTar::new();
    t.file("a", b"x\n").file("/etc/decoy", b"pwned\n");
    let mut tar = t.finish();
    let len = u32::try_from(tar.len() - 8).expect("small");
    tar[..4].copy_from_slice(&[0x50, 0x2a, 0x4d, 0x18]);
    tar[4..8].copy_from_slice(&len.to_le_bytes());
    for at in (0..tar.len()).step_by(512) {
        if tar[at..at + 512].iter().all(|&b| b == 0) {
            continue;
        }
        let block = &mut tar[at..at + 512];
        let sum = checksum_sum(block).expect("a whole block");
        RawHeader(block).set_raw(CHKSUM, format!("\x1c{sum:06o}\0").as_bytes());
    }
    tar.extend_from_slice(&zstd(&[0u8; 10240]));
    assert!(
        !host_safe(&tar),
        "a name hidden behind a skippable frame is seen"
    );
}

/// Hostile review: Python's tarfile drops a PAX record's last byte whatever it is, so
/// `15 linkpath=..Z` is `..` there; ten such links make a chain out of any jail.
#[test]
fn a_pax_record_is_read_without_its_last_byte_too() {
    let mut t = RawTar::new();
    let mut name = String::from("a");
    for _ in 0..10 {
        t.block(&{
            let body = b"15 linkpath=..Z";
            let mut h = header(b'x', b"pax", b"", body.len() as u64, 0o644);
            snapconf_tarbytes::raw::set_checksum(&mut h);
            h
        })
        .data(b"15 linkpath=..Z");
        t.push(b'2', name.as_bytes(), b"x", b"", 0o777);
        name.push_str("/b");
    }
    t.file(&format!("{name}/etc/decoy"), b"pwned\n");
    assert!(
        !host_safe(&t.finish()),
        "ten `..` links read without the last byte"
    );
}

/// Hostile review: Python's `tarfile` reads an extension body as whole blocks and parses
/// PAX records past the header's `size`, and takes a GNU long name up to its first NUL, not
/// `size` bytes: a record or a name hidden in the padding after `size` counts, for PAX `x`
/// and `g` and GNU `L` and `K`, whatever `size` says (1, or the length of a decoy record).
#[test]
fn extension_bodies_count_to_the_end_of_their_blocks() {
    let pax_padded = |flag: u8, size: u64| {
        let mut body = b"100 comment=".to_vec();
        body.resize(99, b'a');
        body.push(b'\n');
        body.extend_from_slice(b"41 path=../../../../../../../tmp/PWNED_P\n");
        body.resize(512, 0);
        let mut t = RawTar::new();
        t.block(&header(flag, b"PaxHeaders/x", b"", size, 0o644))
            .data(&body);
        t.push(b'0', b"innocent", b"", b"pwned\n", 0o644);
        t.finish()
    };
    let long_padded = |flag: u8, size: u64| {
        let mut body = vec![b'a'; 99];
        body.push(b'/');
        body.extend_from_slice(b"../../../../../../../../tmp/PWNED_L");
        body.resize(512, 0);
        let mut t = RawTar::new();
        t.block(&header(flag, b"././@LongLink", b"", size, 0o644))
            .data(&body);
        t.push(b'0', b"innocent", b"", b"pwned\n", 0o644);
        t.finish()
    };
    for size in [1, 50, 100] {
        for flag in [b'x', b'g', b'X'] {
            assert!(
                !host_safe(&pax_padded(flag, size)),
                "PAX {flag} size {size}"
            );
        }
        for flag in [b'L', b'K'] {
            assert!(
                !host_safe(&long_padded(flag, size)),
                "GNU {flag} size {size}"
            );
        }
    }
    assert!(host_safe(&benign()), "a benign archive still runs");
}

/// Hostile review: an input another archive reader takes by its magic number (cpio
/// `newc`, read by libarchive) or that holds uuencoded data (libarchive's `uu` filter,
/// wherever the `begin` line is) is not judged as tar, so it is unsafe; every format of
/// [`super::OTHER_FORMATS`] is.
#[test]
fn inputs_another_format_reads_are_unsafe() {
    // A cpio `newc` header naming `/tmp/x`: 110 bytes of ASCII hex fields, then the name.
    let mut cpio = b"070701".to_vec();
    for field in [1u32, 0o100644, 0, 0, 1, 0, 6, 0, 0, 0, 0, 7, 0] {
        cpio.extend_from_slice(format!("{field:08x}").as_bytes());
    }
    cpio.extend_from_slice(b"/tmp/x\0\0\0\0pwned\n");
    assert!(!host_safe(&cpio), "cpio newc");
    for (at, magic) in super::OTHER_FORMATS {
        let mut bytes = benign();
        if bytes.len() < at + magic.len() {
            bytes.resize(at + magic.len() + 512, 0);
        }
        bytes[at..at + magic.len()].copy_from_slice(magic);
        assert!(!host_safe(&bytes), "magic {magic:?} at {at}");
    }
    // A harmless tar holding, as a file's data, a uuencoded block after a first line.
    let mut t = RawTar::new();
    t.file("notes.txt", b"hello\nbegin 644 x.tar\nM86)C\n`\nend\n");
    assert!(!host_safe(&t.finish()), "a uuencoded block anywhere");
    let mut t = RawTar::new();
    t.file("notes.txt", b"hello\nbegin-base64 644 x.tar\n====\n");
    assert!(!host_safe(&t.finish()), "a base64 block anywhere");
    assert!(host_safe(&gzip(&benign())), "benign gzip still runs");
}

/// Hostile review: an LZMA_Alone header with a dictionary size that liblzma's automatic
/// decoder refuses and libarchive accepts (5 MiB, a multiple of 1 MiB) is decoded and
/// judged, or unsafe.
#[test]
fn legacy_lzma_with_any_whole_mebibyte_dictionary_is_judged_inside() {
    use liblzma::stream::{Action, LzmaOptions, Stream};
    let alone = |bytes: &[u8], dict: u32| {
        let mut opts = LzmaOptions::new_preset(6).expect("preset");
        opts.dict_size(1 << 22);
        let mut s = Stream::new_lzma_encoder(&opts).expect("encoder");
        let mut out = Vec::with_capacity(bytes.len() + 4096);
        s.process_vec(bytes, &mut out, Action::Finish)
            .expect("lzma");
        out[1..5].copy_from_slice(&dict.to_le_bytes());
        out
    };
    let mut t = RawTar::new();
    t.file("/tmp/PWNED_Z", b"pwned\n");
    let hostile = t.finish();
    for mib in [3u32, 5, 7, 40] {
        assert!(
            !host_safe(&alone(&hostile, mib << 20)),
            "{mib} MiB dictionary"
        );
    }
    assert!(
        host_safe(&alone(&benign(), 5 << 20)),
        "a benign archive with a 5 MiB dictionary runs"
    );
}

/// Hostile review: every compatibility lookalike NFKC folds into `.`, `..`, `...`, `/` or
/// `\` counts, not only a listed few (U+FE30, U+FE52, U+2026, U+FE19, U+FE68 among them).
#[test]
fn every_nfkc_lookalike_counts() {
    for (up, sep) in [
        ("\u{fe30}", "/"),
        ("\u{2026}", "/"),
        ("\u{fe19}", "/"),
        ("..", "\u{fe68}"),
        ("\u{fe52}\u{fe52}", "/"),
        ("\u{ff0e}\u{ff0e}", "\u{ff0f}"),
    ] {
        let v = format!("{up}{sep}{up}{sep}{up}{sep}etc{sep}passwd");
        let (_, dotdots) = judge(v.as_bytes());
        assert!(dotdots >= 3, "{v:?} counts {dotdots}");
    }
    let (absolute, _) = judge("\u{ff0f}etc/passwd".as_bytes());
    assert!(absolute, "a fullwidth solidus starts an absolute name");
    assert_eq!(judge("caf\u{e9}/na\u{ef}ve".as_bytes()), (false, 0));
}

/// A plain tar holding one file named `name`, as an lz4 legacy frame (magic `02 21 4c 18`)
/// of one block of literals: the names are in the raw bytes, shifted off every block's
/// name field by the frame and block headers.
fn lz4_legacy(tar: &[u8]) -> Vec<u8> {
    let mut block = vec![0xf0];
    let mut rest = tar.len() - 15;
    while rest >= 255 {
        block.push(255);
        rest -= 255;
    }
    block.push(u8::try_from(rest).expect("under 255"));
    block.extend_from_slice(tar);
    let mut out = vec![0x02, 0x21, 0x4c, 0x18];
    out.extend_from_slice(&u32::try_from(block.len()).expect("small").to_le_bytes());
    out.extend_from_slice(&block);
    out
}

/// Hostile re-review: bsdtar reads an lz4 legacy frame (no magic `detect` knows) and wrote
/// `/tmp/...` from it; its raw bytes hide the name from every block's fields.
#[test]
fn an_lz4_legacy_frame_is_unsafe() {
    let hostile = lz4_legacy(&member(b"/tmp/snapconf-poc-lz4"));
    assert!(!host_safe(&hostile), "lz4 legacy frame");
}

/// An afio "large" cpio header (magic `070727`, 116 bytes of hex fields) naming `name`.
fn afio(name: &[u8], data: &[u8]) -> Vec<u8> {
    let mut h = b"070727".to_vec();
    h.extend_from_slice(
        format!(
            "{:08x}{:016x}m100644{:08x}{:08x}{:08x}{:08x}{:016x}n",
            0, 1, 0, 0, 1, 0, 0
        )
        .as_bytes(),
    );
    h.extend_from_slice(format!("{:04x}00000000s{:016x}:", name.len() + 1, data.len()).as_bytes());
    assert_eq!(h.len(), 116);
    h.extend_from_slice(name);
    h.push(0);
    h.extend_from_slice(data);
    h
}

/// Hostile re-review: libarchive's cpio reader takes afio's large format (`070727`), whose
/// name sits at byte 116, in no field a header is judged by; bsdtar wrote `/tmp/...`.
#[test]
fn an_afio_archive_is_unsafe() {
    let mut bytes = afio(b"/tmp/snapconf-poc-afio", b"pwned\n");
    bytes.extend_from_slice(&afio(b"TRAILER!!!", b""));
    assert!(!host_safe(&bytes), "afio large");
}

/// Hostile re-review: libarchive reads text as an mtree specification without its
/// `#mtree` signature when its first lines parse as entries, and decodes `\ooo` escapes in
/// names after that (`\056\056` is `..`); bsdtar wrote `/tmp/...` from one.
#[test]
fn an_mtree_without_its_signature_is_unsafe() {
    let mut text = b"./a type=dir\n./b type=dir\n./".to_vec();
    text.extend_from_slice(&b"\\056\\056/".repeat(8));
    text.extend_from_slice(b"tmp/snapconf-poc-mtree type=dir\n");
    assert!(!host_safe(&text), "mtree entries");
    let mut commented = b"#\0 a comment with a NUL\n\t\n".to_vec();
    commented.extend_from_slice(&text);
    assert!(!host_safe(&commented), "mtree after comment lines");
    assert!(host_safe(&benign()), "a tar's first line holds a NUL");
}

/// A stored zip of one file `name` after `prefix` bytes of `y` (a self-extracting
/// archive's shape: libarchive's seekable zip reader finds it from its end).
fn zip_after(prefix: usize, name: &[u8], data: &[u8]) -> Vec<u8> {
    let mut crc = flate2::Crc::new();
    crc.update(data);
    let le16 = |v: usize| u16::try_from(v).expect("small").to_le_bytes();
    let le32 = |v: usize| u32::try_from(v).expect("small").to_le_bytes();
    let mut out = vec![b'y'; prefix];
    let local = out.len();
    out.extend_from_slice(b"PK\x03\x04\x14\x00\x00\x00\x00\x00\x00\x00\x21\x00");
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&le32(data.len()));
    out.extend_from_slice(&le32(data.len()));
    out.extend_from_slice(&le16(name.len()));
    out.extend_from_slice(&le16(0));
    out.extend_from_slice(name);
    out.extend_from_slice(data);
    let cd = out.len();
    out.extend_from_slice(b"PK\x01\x02\x14\x03\x14\x00\x00\x00\x00\x00\x00\x00\x21\x00");
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&le32(data.len()));
    out.extend_from_slice(&le32(data.len()));
    out.extend_from_slice(&le16(name.len()));
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&le32(0o100644 << 16));
    out.extend_from_slice(&le32(local));
    out.extend_from_slice(name);
    let cd_len = out.len() - cd;
    out.extend_from_slice(b"PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00");
    out.extend_from_slice(&le32(cd_len));
    out.extend_from_slice(&le32(cd));
    out.extend_from_slice(&le16(0));
    out
}

/// Hostile re-review: a zip after other bytes is read from its end (the end-of-central-
/// directory record) by libarchive's seekable zip reader, whatever the start holds; bsdtar
/// wrote `/tmp/...` from one whose names sit in no judged field. An executable's magic
/// (`MZ`, ELF) makes libarchive search for 7-Zip, RAR, CAB and LHA archives inside.
#[test]
fn an_archive_found_from_the_end_or_inside_an_executable_is_unsafe() {
    let bytes = zip_after(739, b"/tmp/snapconf-poc-zip", b"pwn\n");
    assert!(!host_safe(&bytes), "a zip read from its end");
    let mut t = RawTar::new();
    t.file("notes.txt", b"ends with PK\x05\x06 and more");
    assert!(
        !host_safe(&t.finish()),
        "an end-of-central-directory record near the end"
    );
    for magic in [&b"MZ"[..], b"\x7fELF"] {
        let mut bytes = benign();
        bytes[..magic.len()].copy_from_slice(magic);
        assert!(!host_safe(&bytes), "{magic:?}");
    }
}

/// Hostile re-review: Python's `LZMAFile` decodes the input after an LZMA_Alone stream's
/// end as further streams (LZMA_Alone or xz) and appends them; a second stream's
/// `/tmp/...` member was extracted by `extractall`. Input past the first stream is
/// unsafe, and an xz stream followed by an LZMA_Alone one stays unsafe.
#[test]
fn input_after_a_legacy_lzma_stream_is_unsafe() {
    use liblzma::stream::{Action, LzmaOptions, Stream};
    let alone = |bytes: &[u8]| {
        let opts = LzmaOptions::new_preset(6).expect("preset");
        let mut s = Stream::new_lzma_encoder(&opts).expect("encoder");
        let mut out = Vec::with_capacity(bytes.len() + 4096);
        s.process_vec(bytes, &mut out, Action::Finish)
            .expect("lzma");
        out
    };
    let mut first = RawTar::new();
    first.file("ok.txt", b"ok\n");
    let first = first.bytes;
    let mut second = RawTar::new();
    second.file("/tmp/snapconf-poc-lzma2", b"pwned\n");
    let second = second.finish();
    let mut bytes = alone(&first);
    assert!(host_safe(&bytes), "one benign stream runs");
    bytes.extend_from_slice(&alone(&second));
    assert!(!host_safe(&bytes), "a second LZMA_Alone stream");
    let mut bytes = xz(&first);
    bytes.extend_from_slice(&alone(&second));
    assert!(!host_safe(&bytes), "an xz stream, then an LZMA_Alone one");
}

/// Hostile re-review: libarchive's LHA reader also takes the `-lz` methods (`-lzs-`,
/// `-lz4-`, `-lz5-`) at byte 2, besides `-lh`.
#[test]
fn lha_lz_methods_are_unsafe() {
    for method in [&b"-lzs-"[..], b"-lz4-", b"-lz5-"] {
        let mut bytes = benign();
        bytes[2..7].copy_from_slice(method);
        assert!(!host_safe(&bytes), "{method:?}");
    }
}
