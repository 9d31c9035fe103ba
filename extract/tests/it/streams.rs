//! Streams (`hydrate` of a `Read`, as `snapconf hydrate -` does): the archive is parsed while
//! it is spooled, so an endless or hostile stream is refused after little of it was read,
//! with a typed reason, the root untouched and nothing left beside it (the jail's outside
//! snapshot); `validate` of the same bytes gives the same verdict.

use crate::common;

use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::{header, jailed, Jail, Raw};
use snapconf_extract::{hydrate, validate, Limits, Policy, Reason};
use snapconf_tarbytes::Rng;

/// The most bytes either entry point may read of an endless stream before it stops, in
/// bytes: read buffers (256 KiB), the bytes dropped after the end-of-archive marker (1 MiB)
/// and the limit under test (1 MiB below) with room to spare. The streams are endless, so a
/// reader that did not stop would never return.
const READ_BOUND: u64 = 4 << 20;

/// `prefix`, then `tail` forever; counts the bytes handed out.
struct Endless<F> {
    prefix: io::Cursor<Vec<u8>>,
    tail: F,
    read: Arc<AtomicU64>,
}

impl<F: FnMut(&mut [u8])> Read for Endless<F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = self.prefix.read(buf)?;
        if n == 0 {
            (self.tail)(buf);
            n = buf.len();
        }
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A stream kind: its name, the archive prefix, and what follows it forever.
type Kind = (&'static str, Vec<u8>, fn(&mut Rng, &mut [u8]));

fn zeros(_: &mut Rng, buf: &mut [u8]) {
    buf.fill(0);
}

fn random(rng: &mut Rng, buf: &mut [u8]) {
    for b in buf {
        *b = rng.next_u64() as u8;
    }
}

fn endless(prefix: &[u8], tail: fn(&mut Rng, &mut [u8]), seed: u64) -> (impl Read, Arc<AtomicU64>) {
    let read = Arc::new(AtomicU64::new(0));
    let mut rng = Rng::new(seed);
    let r = Endless {
        prefix: io::Cursor::new(prefix.to_vec()),
        tail: move |buf: &mut [u8]| tail(&mut rng, buf),
        read: Arc::clone(&read),
    };
    (r, read)
}

/// A policy whose payload limit is 1 MiB, so that "stops at the limit" is observable.
fn small_payloads() -> Policy {
    Policy {
        limits: Limits {
            total_bytes: 1 << 20,
            ..Limits::default()
        },
        ..Policy::default()
    }
}

/// Every kind of endless stream that holds no complete archive, with the reason it must be
/// refused for.
fn refused_kinds() -> Vec<(Kind, Reason)> {
    let member = Raw::new().file("a", b"x").bytes.clone();
    // A file claiming 100 GiB (a PAX size: the octal field stops at 8 GiB): over the
    // default payload limit (64 GiB).
    let huge = Raw::new()
        .pax(&[("size", (100u64 << 30).to_string().as_bytes())])
        .push(b'0', b"big", b"", b"", 0o644)
        .bytes
        .clone();
    // A file header claiming 8 MiB, over the 1 MiB limit of `small_payloads`.
    let big = header(b'0', b"big", b"", 8 << 20, 0o644).to_vec();
    vec![
        (("zeros", vec![], zeros), Reason::EmptyArchive),
        (("random", vec![], random), Reason::Malformed),
        (
            ("a member, then random", member.clone(), random),
            Reason::Malformed,
        ),
        (
            ("a 100 GiB member, then zeros", huge, zeros),
            Reason::LimitExceeded,
        ),
        (
            ("an 8 MiB member, then zeros", big, zeros),
            Reason::LimitExceeded,
        ),
    ]
}

/// `hydrate` and `validate` of an endless stream that holds no valid archive refuse it
/// with the same typed reason, each after reading at most [`READ_BOUND`] bytes; the root
/// and everything beside it stay as they were.
#[test]
fn endless_streams_are_refused_after_little_was_read() {
    for ((what, prefix, tail), want) in refused_kinds() {
        let policy = if what.starts_with("an 8 MiB") {
            small_payloads()
        } else {
            Policy::default()
        };
        let jail = Jail::new();
        jail.prior(&[("prior", "prior content")]);
        let (stream, read) = endless(&prefix, tail, 7);
        let h = jailed(&jail, || hydrate(stream, &jail.root(), &policy));
        let got = h.as_ref().err().and_then(|e| e.reason());
        assert_eq!(got, Some(want), "{what}: hydrate gave {h:?}");
        let n = read.load(Ordering::Relaxed);
        assert!(n <= READ_BOUND, "{what}: hydrate read {n} bytes");

        let (stream, read) = endless(&prefix, tail, 7);
        let v = validate(stream, &policy);
        assert_eq!(
            v.as_ref().err().and_then(|e| e.reason()),
            Some(want),
            "{what}: validate gave {v:?}, hydrate {h:?}"
        );
        let n = read.load(Ordering::Relaxed);
        assert!(n <= READ_BOUND, "{what}: validate read {n} bytes");
    }
}

/// A complete archive followed by endless zeros or random bytes is hydrated: reading stops
/// at the end-of-archive marker (plus a bounded trailer), never at the end of the stream.
#[test]
fn a_complete_archive_before_endless_bytes_is_hydrated() {
    let ar = Raw::new().dir("d/").file("d/f", b"content").finish();
    for (what, tail) in [
        ("zeros", zeros as fn(&mut Rng, &mut [u8])),
        ("random", random),
    ] {
        let jail = Jail::new();
        let (stream, read) = endless(&ar, tail, 3);
        jailed(&jail, || hydrate(stream, &jail.root(), &Policy::default()))
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            std::fs::read(jail.root().join("d/f")).expect("hydrated file"),
            b"content"
        );
        let n = read.load(Ordering::Relaxed);
        assert!(n <= READ_BOUND, "{what}: read {n} bytes");
        let (stream, _) = endless(&ar, tail, 3);
        let listing = validate(stream, &Policy::default()).expect("validate agrees");
        assert_eq!(listing.members.len(), 2, "{what}");
    }
}

/// Streams that end (cut at every block boundary and inside blocks) get the same verdict
/// from `hydrate` and `validate`, and a refusal leaves the prior workspace.
#[test]
fn cut_streams_agree_with_validate() {
    let ar = Raw::new()
        .dir("d/")
        .file("d/f", &[7u8; 1500])
        .symlink("l", "d/f")
        .finish();
    let jail = Jail::new();
    jail.prior(&[("prior", "prior content")]);
    // Cut before the end of the first zero block: one zero block ends an archive.
    for cut in (0..ar.len() - 512)
        .step_by(97)
        .chain([512, 1024, 2560, ar.len() - 513])
    {
        let bytes = &ar[..cut];
        let v = validate(bytes, &Policy::default());
        let h = jailed(&jail, || hydrate(bytes, &jail.root(), &Policy::default()));
        let (vr, hr) = (
            v.as_ref().err().and_then(|e| e.reason()),
            h.as_ref().err().and_then(|e| e.reason()),
        );
        assert!(hr.is_some(), "cut at {cut}: hydrate gave {h:?}");
        assert_eq!(vr, hr, "cut at {cut}: validate {v:?}, hydrate {h:?}");
    }
}

/// `pattern` repeated forever; counts the bytes handed out.
struct Cycle {
    pattern: Vec<u8>,
    at: usize,
    read: Arc<AtomicU64>,
}

impl Read for Cycle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        for b in buf.iter_mut() {
            *b = self.pattern[self.at];
            self.at = (self.at + 1) % self.pattern.len();
        }
        self.read.fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(buf.len())
    }
}

/// Endless streams of what is neither a member nor output, refused (a hostile review
/// found each read forever): PAX global headers, which are not members, so the member
/// limit never came; empty gzip members and zstd skippable frames, which decompress to
/// nothing, so no output limit came. `hydrate` and `validate` agree, each within a bounded
/// read (the 16 MiB of compressed input allowed without output, plus buffers).
#[test]
fn endless_streams_of_nothing_are_refused() {
    let global = Raw::new()
        .push(
            b'g',
            b"pax_global_header",
            b"",
            b"17 comment=hello\n",
            0o644,
        )
        .bytes
        .clone();
    let mut empty_gzip = Vec::new();
    {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(&mut empty_gzip, flate2::Compression::fast());
        e.write_all(b"").expect("gzip");
        e.finish().expect("gzip");
    }
    let mut skippable = vec![0x50, 0x2a, 0x4d, 0x18];
    skippable.extend_from_slice(&(1u32 << 20).to_le_bytes());
    skippable.resize(8 + (1 << 20), 0xab);
    for (what, pattern, want, bound) in [
        (
            "PAX global headers",
            global,
            Reason::LimitExceeded,
            READ_BOUND,
        ),
        (
            "empty gzip members",
            empty_gzip,
            Reason::DecompressionLimit,
            20 << 20,
        ),
        (
            "zstd skippable frames",
            skippable,
            Reason::DecompressionLimit,
            20 << 20,
        ),
    ] {
        let cycle = |read: &Arc<AtomicU64>| Cycle {
            pattern: pattern.clone(),
            at: 0,
            read: Arc::clone(read),
        };
        let jail = Jail::new();
        jail.prior(&[("prior", "prior content")]);
        let read = Arc::new(AtomicU64::new(0));
        let stream = cycle(&read);
        let h = jailed(&jail, || hydrate(stream, &jail.root(), &Policy::default()));
        assert_eq!(
            h.as_ref().err().and_then(|e| e.reason()),
            Some(want),
            "{what}: {h:?}"
        );
        let n = read.load(Ordering::Relaxed);
        assert!(n <= bound, "{what}: hydrate read {n} bytes");
        let read = Arc::new(AtomicU64::new(0));
        let v = validate(cycle(&read), &Policy::default());
        assert_eq!(
            v.as_ref().err().and_then(|e| e.reason()),
            Some(want),
            "{what}: {v:?}"
        );
        let n = read.load(Ordering::Relaxed);
        assert!(n <= bound, "{what}: validate read {n} bytes");
    }
}
