//! [`host_safe`]: may an archive run through an extractor that is *not* inside a disposable
//! filesystem view? Only if no parser, however it reads the bytes, can find a name or link
//! target in it that reaches past the jail.
//!
//! Parsers disagree about where members are (the `size-smuggle` class: a size other readers
//! ignore hides headers in a payload; CVE-2025-62518 in `tokio-tar`/`astral-tokio-tar` was
//! that class), about where a name ends (a NUL that node's `path.join` drops, a `\` that
//! Windows-minded normalisers split on), and about whether the bytes are compressed. So the
//! judgement does not walk members the way one parser does; it reads every place any of
//! them could take for a header, and every reading of every name found there. A false
//! "unsafe" only skips a mutant; a false "safe" once let Python's unfiltered `extractall()`
//! overwrite the host's `/etc/passwd`.

use snapconf_extract::compression::{detect, tar_stream, Compression};
use snapconf_extract::Limits;
use snapconf_tarbytes::raw::{
    parse_numeric, parse_octal, RawHeader, GNU_REALSIZE, LINKNAME, NAME, PREFIX, SIZE,
};
use std::collections::BTreeSet;
use std::io::Read;

/// Most bytes a compressed input may decode to, in bytes (64 MiB); past it the input is
/// not judged, so it is unsafe.
pub const MAX_DECODED: u64 = 64 << 20;

/// Most compression layers unwrapped (libarchive stacks filters, so a gzip inside a zstd
/// is read by bsdtar); a deeper input is unsafe.
const MAX_LAYERS: usize = 4;

/// Most extension-body bytes (PAX, GNU long names) judged per input, in bytes: every block
/// may claim a body up to the end of the input, so without a bound the scan is quadratic.
/// Past it the input is unsafe.
const BODY_BUDGET: usize = 64 << 20;

/// Bytes of the input matched against compression magic numbers (the longest is 6).
const MAGIC_LEN: usize = 16;

/// A tar block, in bytes.
const BLOCK: usize = 512;

/// True if `bytes` is safe to hand to an extractor that may follow anything, with its root
/// one directory below the jail (`<jail>/root`, `<jail>/h-<n>`): nothing it holds, as any
/// parser may read it, names an absolute path, and at most one `..` component appears in
/// the whole input, so no chain of links and names can climb past the jail. One `..`
/// reaches the jail itself; a symlink's target is read from where the link is, so every
/// further level needs a `..` text of its own, planted one level higher. Two things plant
/// one text many times, so with them no `..` at all is allowed: a hardlink (`link(2)` on a
/// symlink `up -> ..` makes a second `..` link wherever the hardlink's name lands, say
/// `up/z`, one level up: a block typed `1` anywhere forbids every `..`) and a PAX global
/// header (its `linkpath` applies to every later member).
///
/// The rule is conservative, not a model of one parser:
///
/// - **Where headers are.** Every 512-byte block of the input at a multiple of 512 is read
///   as a header (payloads of every member type, PAX and GNU extension bodies, after the
///   end-of-archive marker, a cut block at the end), whether or not its checksum holds:
///   GNU tar, libarchive and node-tar skip a bad block and resynchronise on the next, and
///   their checksum readings differ. Every tar parser (GNU tar, libarchive, Python
///   `tarfile`, BusyBox, Go, tar-rs, node-tar, tar-stream) rounds each size up to 512 from
///   the stream's start, so whichever size a parser believes (octal, base-256, PAX `size`,
///   GNU `realsize`, or 0 for a link or directory) it lands on one of these blocks. As a
///   second line, for every block the offsets that a parser which did not round would
///   reach (block + 512 + each size reading; for a PAX header, the next header's data end
///   by each PAX `size`, `GNU.sparse.size` or `GNU.sparse.realsize`) are read as headers
///   too, one step deep.
/// - **What a header names.** Its `name`, `linkname` and `prefix` fields, whole (all 100
///   or 155 bytes, NULs included). Judging the prefix and the name apart covers
///   `prefix/name` and the name alone: absoluteness is decided by the first reading's
///   start, and `..` counts add up. A block whose type flag is PAX `x`, `g` or Solaris `X`
///   has its body (the largest size reading rounded up to whole blocks, as Python's
///   `tarfile` reads it, cut at the input's end) read as
///   PAX records, both by their length prefixes and line by line; the value of every key
///   ending in `path` or `name` (`path`, `linkpath`, `GNU.sparse.name`, ...) is judged. A
///   block of type GNU `L` or `K` has its body judged as one value.
/// - **How a value is judged.** NUL does not end a value: the value with NULs removed and
///   each NUL-separated piece are read, with `\` as a separator beside `/`, and Unicode
///   lookalikes read as those: the value's NFKC form (every compatibility lookalike, `‥`,
///   `︰`, `﹒`, `…`, `．`, `／`, `＼`, `﹨`) and the division and fraction slashes `∕`, `⁄`. A reading is absolute if it starts with a separator once leading `./` and a
///   drive prefix (`c:`, which node-tar strips) are stripped; its `..` count is its
///   components that some extractor reads as `..`: `..`, `c:..` (node-tar's drive-relative
///   names), and only dots and spaces with two dots or more (`.. `, `...`: Windows strips
///   trailing dots and spaces). A value counts the larger of its NUL-removed count and
///   the sum over its pieces; distinct values of one PAX body count once each, and every
///   block and body counts apart (the same name in a PAX record and its ustar header counts
///   twice: stricter than needed, never looser).
/// - **Compression.** Input that starts with gzip, zstd or xz magic is decoded with the
///   reference's own decoder ([`tar_stream`]: concatenated gzip members, zstd frames, xz
///   streams) up to [`MAX_DECODED`] bytes and up to 4 layers (`MAX_LAYERS`), and the decoded
///   bytes are judged; its raw bytes are also judged, every block, for a reader that
///   ignores the magic. Input with no known magic is also tried as LZMA_Alone (legacy
///   `.lzma`, which has none; Python's tarfile reads it) and judged by what that decodes
///   to. Other known
///   magic (bzip2, lz4, lzip, `compress`, lzop, zip, 7z: bsdtar reads them all) and any
///   decoding error or limit make the input unsafe: what cannot be judged whole is unsafe.
///   An LZMA_Alone header that libarchive takes and liblzma's automatic decoder refuses (a
///   dictionary size that is a multiple of 1 MiB) is decoded leniently and judged likewise.
///   What follows an LZMA_Alone stream is decoded as further streams and judged with it,
///   as Python's `LZMAFile` appends them.
/// - **Only tar.** An input (at any layer) that another archive format's or filter's
///   reader would take by its magic number (cpio and afio, ar, RAR, xar, CAB, RPM, 7-Zip,
///   zip, WARC, mtree, LHA, ISO 9660; lz4's legacy frame, lrzip, grzip; an executable,
///   searched for a self-extracting archive), that holds a line starting `begin ` or
///   `begin-base64` (uuencoded data, which libarchive decodes wherever it starts), a zip
///   end record in its last 64 KiB (read from the end, whatever the start holds), or whose
///   first line that is not blank or a comment ends with a newline and holds no NUL
///   (mtree text without its signature, whose `\056` escapes decode to `.`), is unsafe.
///
/// Binary payloads can make a harmless archive unsafe (a block of data that reads as an
/// absolute name); that costs a skipped mutant, nothing more.
pub fn host_safe(bytes: &[u8]) -> bool {
    safe_in_layer(bytes, 0)
}

/// [`host_safe`] for `bytes` found `layer` compression layers deep.
fn safe_in_layer(bytes: &[u8], layer: usize) -> bool {
    match detect(&bytes[..bytes.len().min(MAGIC_LEN)]) {
        Err(_) => false,
        Ok(Compression::None) => {
            plainly_tar(bytes)
                && Scan::new(bytes).safe()
                && match lzma_alone(bytes) {
                    LzmaAlone::Not => true,
                    LzmaAlone::Decoded(_) if layer >= MAX_LAYERS => false,
                    LzmaAlone::Decoded(d) => safe_in_layer(&d, layer + 1),
                    LzmaAlone::Unjudged => false,
                }
        }
        Ok(_) if layer >= MAX_LAYERS => false,
        Ok(_) => {
            // Every raw block counts, checksum or not: a reader that skips the magic (a
            // zstd skippable frame is one) may parse a checksum field more leniently than
            // any model of it (hostile review: `\x1c` before the digits, which Python's
            // `strip()` drops).
            Scan::new(bytes).safe() && decoded(bytes).is_some_and(|d| safe_in_layer(&d, layer + 1))
        }
    }
}

/// What the legacy `.lzma` format (LZMA_Alone, no magic: a properties byte, a dictionary
/// size and a length) makes of an input.
enum LzmaAlone {
    /// Not such a stream: its header is refused, or it decodes to nothing.
    Not,
    /// Such a stream, decoded whole (at most [`MAX_DECODED`] bytes).
    Decoded(Vec<u8>),
    /// Such a stream that cannot be judged whole: damaged after some output, over a limit.
    Unjudged,
}

/// Decode `bytes` as LZMA_Alone. Python's `tarfile.open` (mode `r:*`, `r:xz`) reads it
/// through liblzma's automatic decoder, which takes any input whose first 13 bytes read as
/// such a header: an archive judged only as plain tar could hide its members there
/// (hostile review). After a stream's end Python's `LZMAFile` decodes what follows as
/// another stream (xz or LZMA_Alone) and appends its output, until the input ends or
/// what follows is no stream (re-review: a second stream's `/tmp/...` member was
/// extracted by `extractall`); so are the streams here.
fn lzma_alone(bytes: &[u8]) -> LzmaAlone {
    let mut out = Vec::new();
    let mut rest = bytes;
    loop {
        let (stream, used) = lzma_stream(rest);
        match stream {
            LzmaAlone::Decoded(more) => {
                out.extend_from_slice(&more);
                if out.len() as u64 > MAX_DECODED {
                    return LzmaAlone::Unjudged;
                }
            }
            // No further stream: Python stops there (its trailing-data rule).
            LzmaAlone::Not if rest.len() < bytes.len() => return LzmaAlone::Decoded(out),
            other => return other,
        }
        match rest.get(used.max(1)..) {
            Some(next) if !next.is_empty() => rest = next,
            _ => return LzmaAlone::Decoded(out),
        }
    }
}

/// One stream of [`lzma_alone`] at the start of `bytes`, and the bytes it used.
fn lzma_stream(bytes: &[u8]) -> (LzmaAlone, usize) {
    use liblzma::stream::{Error, Stream};
    // The automatic decoder, as Python uses it: strict about the header (a dictionary size
    // of 2^n or 2^n + 2^(n-1)), so that a plain tar rarely reads as such a stream.
    let Ok(stream) = Stream::new_auto_decoder(256 << 20, 0) else {
        return (LzmaAlone::Unjudged, 0);
    };
    let judged = match drain(stream, bytes) {
        Drained::Whole(out, used) => return (LzmaAlone::Decoded(out), used),
        // The input ended inside the stream before any output: no such stream.
        Drained::Stopped {
            empty: true,
            error: None,
        } => LzmaAlone::Not,
        Drained::Stopped {
            empty: true,
            error: Some(Error::Format | Error::Options | Error::Data),
        } => not_lzma(bytes),
        Drained::Stopped { .. } | Drained::Over => LzmaAlone::Unjudged,
    };
    (judged, bytes.len())
}

/// How a liblzma stream run over a whole input ended.
enum Drained {
    /// At the stream's end: its whole output (at most [`MAX_DECODED`] bytes) and the
    /// input bytes it used.
    Whole(Vec<u8>, usize),
    /// Before it: with no output yet (`empty`) or some, by an error or (`None`) because
    /// the input ended.
    Stopped {
        empty: bool,
        error: Option<liblzma::stream::Error>,
    },
    /// Past [`MAX_DECODED`] bytes of output.
    Over,
}

/// Run `stream` over all of `bytes`.
fn drain(mut stream: liblzma::stream::Stream, bytes: &[u8]) -> Drained {
    use liblzma::stream::{Action, Status};
    let mut out: Vec<u8> = Vec::with_capacity(64 << 10);
    loop {
        if out.len() == out.capacity() {
            if out.len() as u64 > MAX_DECODED {
                return Drained::Over;
            }
            out.reserve(out.len().max(64 << 10));
        }
        let consumed = usize::try_from(stream.total_in()).unwrap_or(usize::MAX);
        let input = bytes.get(consumed..).unwrap_or_default();
        let before = (stream.total_in(), out.len());
        match stream.process_vec(input, &mut out, Action::Finish) {
            Ok(Status::StreamEnd) => {
                let used = usize::try_from(stream.total_in()).unwrap_or(usize::MAX);
                return Drained::Whole(out, used);
            }
            Ok(_) if (stream.total_in(), out.len()) == before => {
                return Drained::Stopped {
                    empty: out.is_empty(),
                    error: None,
                }
            }
            Ok(_) => {}
            Err(e) => {
                return Drained::Stopped {
                    empty: out.is_empty(),
                    error: Some(e),
                }
            }
        }
    }
}

/// What to make of `bytes` that liblzma's automatic decoder does not take for LZMA_Alone:
/// libarchive's `lzma` filter (bsdtar) is more lenient about the header's dictionary size
/// (any multiple of 1 MiB: hostile review, 5 MiB), so a header that it would take is
/// decoded with liblzma's LZMA_Alone decoder, which takes any dictionary size, and judged
/// by what that decodes to; such a header it cannot decode whole is unjudged.
fn not_lzma(bytes: &[u8]) -> LzmaAlone {
    let [props, d0, d1, d2, d3, ..] = *bytes else {
        return LzmaAlone::Not;
    };
    let dict = u32::from_le_bytes([d0, d1, d2, d3]);
    if props >= 225 || dict == 0 || dict % (1 << 20) != 0 {
        return LzmaAlone::Not;
    }
    let Ok(stream) = liblzma::stream::Stream::new_lzma_decoder(256 << 20) else {
        return LzmaAlone::Unjudged;
    };
    // libarchive stops at the stream's end, whatever follows.
    match drain(stream, bytes) {
        Drained::Whole(out, _) => LzmaAlone::Decoded(out),
        Drained::Stopped { .. } | Drained::Over => LzmaAlone::Unjudged,
    }
}

/// Magic numbers of archive formats other than tar that a libarchive reader (`bsdtar`)
/// picks by their first bytes, each with its offset: cpio (newc, crc, odc, afio's large
/// format; binary in both byte orders), `ar`, RAR, xar, Microsoft CAB, RPM, 7-Zip, zip,
/// WARC, mtree, LHA (`-lh` and `-lz` methods), and ISO 9660's volume descriptor; filters `detect` does not know
/// (lz4's legacy frame, lrzip, grzip, lzma-utils' old `\xffLZMA`); and executables (`MZ`,
/// ELF), inside which libarchive searches for a self-extracting 7-Zip, RAR, CAB or LHA
/// archive. Such an input is read as that format, whose names this rule does not know
/// (hostile review: a cpio `newc` member named `/tmp/x`; re-review: afio and lz4 legacy
/// inputs that bsdtar extracted to `/tmp`).
const OTHER_FORMATS: [(usize, &[u8]); 24] = [
    (0, b"070701"),
    (0, b"070702"),
    (0, b"070707"),
    (0, b"070727"),
    (0, b"\xc7\x71"),
    (0, b"\x71\xc7"),
    (0, b"!<arch>"),
    (0, b"Rar!"),
    (0, b"xar!"),
    (0, b"MSCF"),
    (0, b"\xed\xab\xee\xdb"),
    (0, b"7z\xbc\xaf"),
    (0, b"PK"),
    (0, b"WARC/"),
    (0, b"#mtree"),
    (2, b"-lh"),
    (2, b"-lz"),
    (32769, b"CD001"),
    (0, b"\x02\x21\x4c\x18"),
    (0, b"LRZI"),
    (0, b"GRZipII"),
    (0, b"\xffLZMA"),
    (0, b"MZ"),
    (0, b"\x7fELF"),
];

/// How far from its end libarchive's seekable zip reader looks for the end-of-central-
/// directory record (`PK\x05\x06`): its 22 bytes and a comment of up to 64 KiB.
const ZIP_TAIL: usize = 22 + 0xffff;

/// True if `bytes` (no compression layer left) can only be read as tar: no other format's
/// magic number at its start ([`OTHER_FORMATS`]); no line anywhere that starts with
/// `begin ` or `begin-base64` (libarchive's `uu` filter looks for one past the start and
/// decodes what follows: hostile review, a uuencoded tar); no zip end record near its end
/// (libarchive reads a zip from there, whatever precedes it: re-review, a zip after 739
/// bytes of padding); and no start that reads as mtree text ([`mtree_text`]).
fn plainly_tar(bytes: &[u8]) -> bool {
    let other = OTHER_FORMATS
        .iter()
        .any(|(at, magic)| bytes.get(*at..).is_some_and(|b| b.starts_with(magic)));
    let uu = bytes
        .split(|&b| b == b'\n')
        .any(|line| line.starts_with(b"begin ") || line.starts_with(b"begin-base64"));
    let tail = &bytes[bytes.len().saturating_sub(ZIP_TAIL)..];
    let zip = tail.windows(4).any(|w| w == b"PK\x05\x06");
    !other && !uu && !zip && !mtree_text(bytes)
}

/// True if libarchive could take `bytes` for an mtree specification without its `#mtree`
/// signature (re-review: bsdtar read one, decoded `\056\056` to `..` and wrote `/tmp`).
/// Its reader skips leading blank lines and lines starting `#` (after spaces or tabs),
/// then wants newline-ended lines of entries or `/set`, `/unset`, none of which holds a
/// NUL. So an input is taken for mtree text when its first other line ends with a newline
/// and holds no NUL; a tar header always holds one before its first newline (the fields
/// after the name are NUL-terminated).
fn mtree_text(bytes: &[u8]) -> bool {
    let first = bytes.split_inclusive(|&b| b == b'\n').find(|line| {
        let text = line.trim_ascii_start();
        !(text.is_empty() || text.starts_with(b"#"))
    });
    first.is_some_and(|line| line.ends_with(b"\n") && !line.contains(&0))
}

/// The stream inside the compressed `bytes`, all of it, or `None` if it is damaged, cut
/// or over [`MAX_DECODED`].
fn decoded(bytes: &[u8]) -> Option<Vec<u8>> {
    let limits = Limits {
        decompressed_bytes: MAX_DECODED,
        compression_ratio: u64::MAX,
        ..Limits::default()
    };
    let (_, reader) = tar_stream(bytes, &limits).ok()?;
    let mut out = Vec::new();
    reader.take(MAX_DECODED + 1).read_to_end(&mut out).ok()?;
    (out.len() as u64 <= MAX_DECODED).then_some(out)
}

/// One pass over an input: the `..` components seen so far and the body bytes left to
/// judge.
struct Scan<'a> {
    bytes: &'a [u8],
    dotdots: usize,
    /// Some block is typed as a hardlink (`1`).
    hardlink: bool,
    budget: usize,
}

impl<'a> Scan<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Scan {
            bytes,
            dotdots: 0,
            hardlink: false,
            budget: BODY_BUDGET,
        }
    }

    /// Judge every aligned block (and the unrounded offsets they lead to).
    fn safe(mut self) -> bool {
        let mut at = 0;
        while at < self.bytes.len() {
            if !self.header(at, true) {
                return false;
            }
            at += BLOCK;
        }
        self.dotdots <= 1 && !(self.hardlink && self.dotdots > 0)
    }

    /// Judge the block at byte `at` (any offset) as a header; with `hop`, also the blocks
    /// at the unrounded ends of its payload. False if something in it is unsafe.
    fn header(&mut self, at: usize, hop: bool) -> bool {
        let block = &self.bytes[at..self.bytes.len().min(at + BLOCK)];
        let h = RawHeader(block);
        if !(self.value(h.field_cut(NAME)) && self.value(h.field_cut(LINKNAME))) {
            return false;
        }
        if !self.value(h.field_cut(PREFIX)) {
            return false;
        }
        let sizes = size_readings(&h);
        let body_start = at + BLOCK;
        let longest = sizes.iter().copied().max().unwrap_or(0);
        // Whole blocks: Python's tarfile reads an extension body as `size` rounded up to
        // 512 and parses PAX records, or takes a GNU long name up to its first NUL, past
        // `size` into the padding (hostile review: a record or name hidden there).
        let body_end = body_start
            .saturating_add(
                usize::try_from(longest.div_ceil(BLOCK as u64).saturating_mul(BLOCK as u64))
                    .unwrap_or(usize::MAX),
            )
            .min(self.bytes.len());
        let body = self.bytes.get(body_start..body_end).unwrap_or_default();
        let extension = matches!(h.typeflag(), b'x' | b'g' | b'X' | b'L' | b'K');
        if extension {
            let Some(left) = self.budget.checked_sub(body.len()) else {
                return false;
            };
            self.budget = left;
        }
        self.hardlink |= h.typeflag() == b'1';
        let mut next_sizes = Vec::new();
        match h.typeflag() {
            b'x' | b'g' | b'X' => {
                let (values, pax_sizes) = pax_values(body);
                let before = self.dotdots;
                if !values.iter().all(|v| self.value(v)) {
                    return false;
                }
                // A global record applies to every later member: its `..` is many.
                if h.typeflag() == b'g' && self.dotdots > before {
                    return false;
                }
                next_sizes = pax_sizes;
            }
            b'L' | b'K' if !self.value(body) => return false,
            _ => {}
        }
        if !hop {
            return true;
        }
        let mut hops = Vec::new();
        for &s in &sizes {
            hops.push(offset(body_start, s));
            // The member an extension header applies to, and its data by the extension's
            // sizes.
            let next = offset(body_start, s.div_ceil(512).saturating_mul(512));
            for &p in &next_sizes {
                hops.push(next.and_then(|n| offset(n.checked_add(BLOCK)?, p)));
            }
        }
        hops.into_iter()
            .flatten()
            .filter(|&p| p % BLOCK != 0 && p < self.bytes.len())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .all(|p| self.header(p, false))
    }

    /// Judge one value ([`judge`]): false if absolute, else its `..` count is added.
    fn value(&mut self, v: &[u8]) -> bool {
        let (absolute, dotdots) = judge(v);
        self.dotdots += dotdots;
        !absolute
    }
}

/// `base + size` as an offset, if it fits.
fn offset(base: usize, size: u64) -> Option<usize> {
    base.checked_add(usize::try_from(size).ok()?)
}

/// Every size a parser may read in a header: octal only, octal or base-256, and the old-GNU
/// `realsize` ([`GNU_REALSIZE`]). Empty if none reads (each then skips nothing, or fails).
fn size_readings<B: AsRef<[u8]>>(h: &RawHeader<B>) -> Vec<u64> {
    let mut v: Vec<u64> = [
        parse_octal(h.field(SIZE)),
        parse_numeric(h.field(SIZE)),
        parse_numeric(h.field(GNU_REALSIZE)),
    ]
    .into_iter()
    .flatten()
    .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The values of a PAX body that name a path (every key ending in `path` or `name`, case
/// ignored), read by the records' length prefixes and again line by line, without
/// duplicates; and the sizes it gives the next member (`size`, `GNU.sparse.size`,
/// `GNU.sparse.realsize`, decimal).
fn pax_values(body: &[u8]) -> (BTreeSet<Vec<u8>>, Vec<u64>) {
    let mut pairs: Vec<(&[u8], &[u8])> = Vec::new();
    // POSIX `pax`, "pax Extended Header": `"%d %s=%s\n", <length>, <keyword>, <value>`, the
    // length counting the whole record; a value may hold `\n` and NUL.
    let mut rest = body;
    while let Some(space) = rest.iter().position(|&b| b == b' ') {
        let Some(len) = std::str::from_utf8(&rest[..space])
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .filter(|&l| l > space && l <= rest.len())
        else {
            break;
        };
        let record = &rest[space + 1..len];
        // Whatever its last byte: Python's tarfile takes the value as the record less its
        // last byte, newline or not (hostile review: `15 linkpath=..Z` is `..` there);
        // another reader may keep it.
        for record in [record, &record[..record.len().saturating_sub(1)]] {
            if let Some(eq) = record.iter().position(|&b| b == b'=') {
                pairs.push((&record[..eq], &record[eq + 1..]));
            }
        }
        rest = &rest[len..];
    }
    // Line by line, for a reader that trusts newlines over lengths.
    for line in body.split(|&b| b == b'\n') {
        if let Some(eq) = line.iter().position(|&b| b == b'=') {
            let key = &line[..eq];
            let key = key
                .iter()
                .position(|&b| b == b' ')
                .map_or(key, |s| &key[s + 1..]);
            pairs.push((key, &line[eq + 1..]));
        }
    }
    let mut values = BTreeSet::new();
    let mut sizes = Vec::new();
    for (key, value) in pairs {
        let key = key.trim_ascii().to_ascii_lowercase();
        if key.ends_with(b"path") || key.ends_with(b"name") {
            values.insert(value.to_vec());
        }
        if matches!(
            key.as_slice(),
            b"size" | b"gnu.sparse.size" | b"gnu.sparse.realsize"
        ) {
            if let Some(n) = std::str::from_utf8(value)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
            {
                sizes.push(n);
            }
        }
    }
    (values, sizes)
}

/// `/` and `\` (which Windows-minded normalisers, node-tar among them, split on).
fn separator(b: u8) -> bool {
    b == b'/' || b == b'\\'
}

/// Lookalikes that a Unicode normaliser (NFKC) folds into `.` or a separator, as UTF-8,
/// with their ASCII: the two-dot leader, the one-dot leader, the fullwidth full stop,
/// solidus and reverse solidus, the division slash and the fraction slash.
const LOOKALIKES: [(&[u8], &[u8]); 7] = [
    ("\u{2025}".as_bytes(), b".."),
    ("\u{2024}".as_bytes(), b"."),
    ("\u{ff0e}".as_bytes(), b"."),
    ("\u{ff0f}".as_bytes(), b"/"),
    ("\u{ff3c}".as_bytes(), b"\\"),
    ("\u{2215}".as_bytes(), b"/"),
    ("\u{2044}".as_bytes(), b"/"),
];

/// `v` with every [`LOOKALIKES`] sequence replaced by its ASCII: it only adds dots and
/// separators, so every `..` and absolute start of `v` is still one.
fn fold_lookalikes(v: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if !v.iter().any(|&b| b == 0xe2 || b == 0xef) {
        return std::borrow::Cow::Borrowed(v);
    }
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    'next: while i < v.len() {
        for (from, to) in LOOKALIKES {
            if v[i..].starts_with(from) {
                out.extend_from_slice(to);
                i += from.len();
                continue 'next;
            }
        }
        out.push(v[i]);
        i += 1;
    }
    std::borrow::Cow::Owned(out)
}

/// `reading` without a leading drive prefix (`c:`), which node-tar strips (CVE-2021-37713).
fn strip_drive(reading: &[u8]) -> &[u8] {
    match reading {
        [d, b':', rest @ ..] if d.is_ascii_alphabetic() => rest,
        _ => reading,
    }
}

/// True if `reading` starts with a separator once every leading `./` (or `.\`) and a
/// drive prefix (`c:/etc`) are stripped.
fn absolute(mut reading: &[u8]) -> bool {
    while reading.len() >= 2 && reading[0] == b'.' && separator(reading[1]) {
        reading = &reading[2..];
    }
    reading.first().copied().is_some_and(separator)
        || strip_drive(reading).first().copied().is_some_and(separator)
}

/// True if some extractor reads the component `c` as `..`: `..` itself, or, once a drive
/// prefix is stripped (`c:..`), only dots and spaces with at least two dots (`.. `, `...`:
/// Windows strips trailing dots and spaces).
pub(crate) fn dotdot_component(c: &[u8]) -> bool {
    let c = strip_drive(c);
    c.iter().all(|&b| b == b'.' || b == b' ') && c.iter().filter(|&&b| b == b'.').count() >= 2
}

/// Components of `reading` read as `..` ([`dotdot_component`]).
fn dotdots(reading: &[u8]) -> usize {
    reading
        .split(|&b| separator(b))
        .filter(|c| dotdot_component(c))
        .count()
}

/// One value judged whole: `(absolute, ..-count)`. Readings: the value with NULs removed,
/// and each NUL-separated piece (a C reader's name, and what node's `path.join` keeps of
/// `x\0/../..`), after Unicode lookalikes of `.`, `/` and `\` are folded to them. Absolute
/// if any reading is; the count is the larger of the NUL-removed reading's and the pieces'
/// sum.
pub(super) fn judge(v: &[u8]) -> (bool, usize) {
    let (mut is_absolute, mut count) = judge_folded(&fold_lookalikes(v));
    // And as a Unicode normaliser reads it: NFKC (Unicode Standard Annex #15) folds every
    // compatibility lookalike of `.`, `/` and `\` (`︰`, `﹒`, `…`, `﹨`, fullwidth forms),
    // not only those in [`LOOKALIKES`] (hostile review). Invalid UTF-8 becomes U+FFFD,
    // which hides no dot or separator.
    if !v.is_ascii() {
        use unicode_normalization::UnicodeNormalization;
        let nfkc: String = String::from_utf8_lossy(v).nfkc().collect();
        let (a, c) = judge_folded(&fold_lookalikes(nfkc.as_bytes()));
        is_absolute |= a;
        count = count.max(c);
    }
    (is_absolute, count)
}

/// [`judge`] of one reading with its lookalikes folded.
fn judge_folded(v: &[u8]) -> (bool, usize) {
    let joined: Vec<u8> = v.iter().copied().filter(|&b| b != 0).collect();
    let mut is_absolute = absolute(&joined);
    let mut pieces = 0;
    for piece in v.split(|&b| b == 0) {
        is_absolute |= absolute(piece);
        pieces += dotdots(piece);
    }
    (is_absolute, dotdots(&joined).max(pieces))
}

#[cfg(test)]
mod tests;
