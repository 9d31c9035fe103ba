//! Compressed archives: which compression an archive uses (by its magic number, never by its
//! file name) and a streaming decoder with limits. Every entry point ([`crate::validate`],
//! [`crate::hydrate`], [`crate::hydrate_file`], [`crate::list`]) goes through
//! [`detect`] and [`tar_stream`], so that they cannot disagree about what is inside.
//!
//! Read: gzip (RFC 1952; several members one after another, as `gzip -d` reads them), zstd
//! (RFC 8878; several frames and skippable frames), xz (the `.xz` file format of XZ Utils,
//! several streams and padding). One layer only: a tar inside a gzip inside a gzip is not
//! unwrapped twice (its first block is then refused as `malformed`).
//!
//! Named and refused (`unsupported`): bzip2, lz4, lzip, Unix `compress` (`.Z`), lzop, and the
//! zip and 7z archive formats.
//!
//! Memory stays flat: gzip and xz decoders keep a fixed window (32 KiB; at most
//! [`XZ_MEMLIMIT`] for xz), zstd refuses a frame whose window is over 128 MiB (the library's
//! default `ZSTD_WINDOWLOG_LIMIT_DEFAULT`, 2^27).

use std::cell::Cell;
use std::fmt;
use std::io::{self, Read};
use std::rc::Rc;

use crate::error::refuse;
use crate::reader::{check_checksum, BLOCK};
use crate::{HydrateError, Limits, Reason};

/// The most memory the xz decoder may use, in bytes (`xz -9` archives need 65 MiB).
pub const XZ_MEMLIMIT: u64 = 256 << 20;

/// Decompressed bytes after which [`Limits::compression_ratio`] applies, in bytes: a small
/// archive (a few headers and end-of-archive blocks) compresses far better than any
/// workspace.
pub const RATIO_FLOOR: u64 = 1 << 20;

/// How an archive is compressed, as told by its first bytes ([`detect`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// A plain tar stream.
    None,
    /// gzip (RFC 1952), magic `1f 8b`.
    Gzip,
    /// zstd (RFC 8878), magic `28 b5 2f fd` (or a skippable frame, `5? 2a 4d 18`).
    Zstd,
    /// xz (XZ Utils' `.xz` format), magic `fd 37 7a 58 5a 00`.
    Xz,
}

impl Compression {
    /// A lower-case name for messages: `none`, `gzip`, `zstd`, `xz`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
        }
    }
}

/// Formats recognised by magic number but not read: (name, magic).
const UNSUPPORTED: &[(&str, &[u8])] = &[
    ("bzip2", b"BZh"),
    ("lz4", &[0x04, 0x22, 0x4d, 0x18]),
    ("lzip", b"LZIP"),
    ("compress (.Z)", &[0x1f, 0x9d]),
    ("lzop", &[0x89, b'L', b'Z', b'O', 0x00]),
    ("zip archive", b"PK\x03\x04"),
    ("7z archive", &[b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c]),
];

/// The compression of an archive whose first bytes are `head` (up to one 512-byte tar block; fewer
/// when the archive is shorter).
///
/// A `head` of a whole block that is a valid tar header (its checksum matches) is a plain
/// tar, whatever its first bytes: a member may be named `BZh9` or start with `1f 8b`. A
/// shorter or invalid head is matched against the magic numbers; one that matches none is
/// taken as plain tar, for the tar reader to judge (`malformed`, `truncated`).
///
/// # Errors
/// [`HydrateError::Refused`] with [`Reason::Unsupported`] for a known compression or archive
/// format that is not read, named in the detail (`bzip2-compressed archive`).
pub fn detect(head: &[u8]) -> Result<Compression, HydrateError> {
    if let Ok(block) = <&[u8; BLOCK as usize]>::try_from(head) {
        if check_checksum(block).is_ok() {
            return Ok(Compression::None);
        }
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Ok(Compression::Gzip);
    }
    if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
        || (head.len() >= 4 && head[0] & 0xf0 == 0x50 && head[1..4] == [0x2a, 0x4d, 0x18])
    {
        return Ok(Compression::Zstd);
    }
    if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        return Ok(Compression::Xz);
    }
    for (name, magic) in UNSUPPORTED {
        let bzip2_level =
            *name != "bzip2" || head.get(3).is_some_and(|b| (b'1'..=b'9').contains(b));
        if head.starts_with(magic) && bzip2_level {
            return Err(refuse(
                Reason::Unsupported,
                b"",
                format!(
                    "{name}{} (by its magic number); the reference reads plain tar and \
                     gzip-, zstd- or xz-compressed tar",
                    if name.ends_with("archive") {
                        ", not a tar archive"
                    } else {
                        "-compressed archive"
                    }
                ),
            ));
        }
    }
    Ok(Compression::None)
}

/// The tar stream inside `archive`: the archive itself if it is plain tar, else its
/// decompressed content, under the decompression limits of `limits`
/// ([`Limits::decompressed_bytes`], [`Limits::compression_ratio`]).
///
/// Reads the first 512 bytes (one tar block) to [`detect`] the compression, and gives them back at the
/// front of the returned stream. Decompression is streaming: memory does not grow with the
/// archive.
///
/// Errors of the returned reader: an [`io::Error`] whose inner error is a refusal for a
/// damaged or cut-off compressed stream (`malformed`, `truncated`) or a limit
/// (`decompression-limit`); every entry point turns those into [`HydrateError::Refused`]
/// (through the crate's one I/O error mapping), and other read errors into
/// [`HydrateError::Io`].
///
/// # Errors
/// [`detect`]'s refusal for an unsupported format; [`HydrateError::Io`] if reading the first
/// block fails.
pub fn tar_stream<'a>(
    archive: impl Read + 'a,
    limits: &Limits,
) -> Result<(Compression, Box<dyn Read + 'a>), HydrateError> {
    let mut archive = archive;
    let mut head = Vec::with_capacity(BLOCK as usize);
    (&mut archive)
        .take(BLOCK)
        .read_to_end(&mut head)
        .map_err(|e| crate::error::io_err("reading the archive's first block", e))?;
    let kind = detect(&head)?;
    let whole = io::Cursor::new(head).chain(archive);
    Ok((kind, decoder(kind, whole, limits)))
}

/// The decoder for `kind` over `raw` (which starts at the archive's first byte).
pub(crate) fn decoder<'a>(
    kind: Compression,
    raw: impl Read + 'a,
    limits: &Limits,
) -> Box<dyn Read + 'a> {
    if kind == Compression::None {
        return Box::new(raw);
    }
    let consumed = Rc::new(Cell::new(0u64));
    let last_output = Rc::new(Cell::new(0u64));
    let counted = Counted {
        inner: raw,
        consumed: Rc::clone(&consumed),
        last_output: Rc::clone(&last_output),
        pending: None,
    };
    let inner: Result<Box<dyn Read + 'a>, io::Error> = match kind {
        Compression::None | Compression::Gzip => Ok(Box::new(GzMembers::new(counted))),
        Compression::Zstd => {
            zstd::stream::read::Decoder::new(counted).map(|d| Box::new(d) as Box<dyn Read + 'a>)
        }
        Compression::Xz => {
            liblzma::stream::Stream::new_stream_decoder(XZ_MEMLIMIT, liblzma::stream::CONCATENATED)
                .map(|s| {
                    Box::new(liblzma::read::XzDecoder::new_stream(counted, s)) as Box<dyn Read + 'a>
                })
                .map_err(io::Error::other)
        }
    };
    match inner {
        Ok(inner) => Box::new(Limited {
            inner,
            kind,
            consumed,
            last_output,
            produced: 0,
            limits: *limits,
            buf: Vec::new(),
            at: 0,
            len: 0,
            failed: None,
            done: false,
        }),
        // The decoder could not be set up (out of memory): every read reports it.
        Err(e) => Box::new(Failed(Some(e))),
    }
}

/// A refusal carried inside an [`io::Error`] through a decoder's `Read` (see
/// [`crate::error::io_err`], which turns it back into [`HydrateError::Refused`]).
#[derive(Debug)]
pub(crate) struct StreamRefusal {
    pub(crate) reason: Reason,
    pub(crate) detail: String,
}

impl fmt::Display for StreamRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.reason, self.detail)
    }
}

impl std::error::Error for StreamRefusal {}

fn refusal(reason: Reason, detail: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, StreamRefusal { reason, detail })
}

/// An error of the raw source (not of the compressed data), marked so that [`Limited`]
/// passes it on as an I/O error rather than a refusal of the archive.
#[derive(Debug)]
struct SourceError(io::Error);

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for SourceError {}

/// The raw (compressed) source, counting the bytes the decoder took. Every read fills the
/// decoder's buffer as far as the source allows (a pipe's short reads are joined), so the
/// decoder sees the same input chunks whatever way the bytes arrive.
struct Counted<R> {
    inner: R,
    consumed: Rc<Cell<u64>>,
    /// `consumed` when the decoder last gave output ([`Limited`] sets it): more than
    /// [`IDLE_INPUT`] bytes past it is refused.
    last_output: Rc<Cell<u64>>,
    /// A source error met after some bytes, given at the next read.
    pending: Option<io::Error>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(e) = self.pending.take() {
            return Err(io::Error::new(e.kind(), SourceError(e)));
        }
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if got > 0 => {
                    // Given with the next read, after these bytes.
                    self.pending = Some(e);
                    break;
                }
                Err(e) => return Err(io::Error::new(e.kind(), SourceError(e))),
            }
        }
        self.consumed.set(self.consumed.get() + got as u64);
        if self.consumed.get() - self.last_output.get() > IDLE_INPUT {
            return Err(refusal(
                Reason::DecompressionLimit,
                format!(
                    "more than {} compressed bytes in a row decompress to nothing",
                    IDLE_INPUT
                ),
            ));
        }
        Ok(got)
    }
}

/// Most compressed bytes read in a row with no decompressed byte out (16 MiB). A stream of
/// empty gzip members or of zstd skippable frames decompresses to nothing, so no output
/// limit is ever reached; without this it would be read forever (a hostile review), or a
/// sparse file of such frames to its end.
const IDLE_INPUT: u64 = 16 << 20;

/// Bytes the decoder is asked for at a time ([`Limited`]'s buffer).
const DECODED_CHUNK: usize = 64 * 1024;

/// A decoder's output with the limits applied and its errors typed.
///
/// The decoder is always asked to fill a buffer of [`DECODED_CHUNK`] bytes, however much
/// the caller reads: a decoder that meets damaged data drops what it decoded in that same
/// call, so asking in the caller's sizes would make the bytes seen before the error, and
/// so the verdict, depend on how the caller reads (`validate` in header-sized reads, a
/// hydration's decoding thread in large ones). Every entry point sees the same bytes, then
/// the same error.
struct Limited<'a> {
    inner: Box<dyn Read + 'a>,
    kind: Compression,
    consumed: Rc<Cell<u64>>,
    /// Shared with [`Counted`]: `consumed` when output last came out.
    last_output: Rc<Cell<u64>>,
    produced: u64,
    limits: Limits,
    buf: Vec<u8>,
    at: usize,
    len: usize,
    /// The decoder's error or a limit, given once the bytes before it are read.
    failed: Option<io::Error>,
    done: bool,
}

impl Read for Limited<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.len {
            if let Some(e) = self.failed.take() {
                self.done = true;
                return Err(e);
            }
            if self.done || out.is_empty() {
                return Ok(0);
            }
            self.fill();
            if self.len == 0 {
                return match self.failed.take() {
                    Some(e) => {
                        self.done = true;
                        Err(e)
                    }
                    None => Ok(0),
                };
            }
        }
        let n = out.len().min(self.len - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

impl Limited<'_> {
    /// Refills the buffer from the decoder, to [`DECODED_CHUNK`] bytes or the end of the
    /// stream, stopping at the first error or limit (kept in `failed`).
    fn fill(&mut self) {
        if self.buf.is_empty() {
            self.buf = vec![0; DECODED_CHUNK];
        }
        self.at = 0;
        self.len = 0;
        while self.len < self.buf.len() {
            let n = match self.inner.read(&mut self.buf[self.len..]) {
                Ok(0) => {
                    self.done = true;
                    return;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.failed = Some(self.typed(e));
                    return;
                }
            };
            self.produced += n as u64;
            self.last_output.set(self.consumed.get());
            if let Some(e) = self.over_limit() {
                // The bytes past a limit are not given.
                self.failed = Some(e);
                return;
            }
            self.len += n;
        }
    }

    /// The limit the output so far breaks, if any.
    fn over_limit(&self) -> Option<io::Error> {
        let name = self.kind.name();
        if self.produced > self.limits.decompressed_bytes {
            return Some(refusal(
                Reason::DecompressionLimit,
                format!(
                    "{name} stream decompresses to more than {} bytes",
                    self.limits.decompressed_bytes
                ),
            ));
        }
        let consumed = self.consumed.get().max(1);
        if self.produced > RATIO_FLOOR && self.produced / consumed >= self.limits.compression_ratio
        {
            return Some(refusal(
                Reason::DecompressionLimit,
                format!(
                    "{name} stream decompresses {consumed} bytes to {} bytes (ratio limit {})",
                    self.produced, self.limits.compression_ratio
                ),
            ));
        }
        None
    }

    /// A source error back as itself; a decoder error as a refusal of the archive.
    fn typed(&self, e: io::Error) -> io::Error {
        let kind = e.kind();
        let inner = e.into_inner();
        match inner.map(|b| b.downcast::<SourceError>()) {
            Some(Ok(source)) => source.0,
            // A refusal of the raw source's own ([`IDLE_INPUT`]), passed through the decoder.
            Some(Err(other)) => match other.downcast::<StreamRefusal>() {
                Ok(r) => refusal(r.reason, r.detail),
                Err(other) => decode_refusal(self.kind, kind, &other.to_string()),
            },
            None => decode_refusal(self.kind, kind, ""),
        }
    }
}

fn decode_refusal(kind: Compression, error_kind: io::ErrorKind, what: &str) -> io::Error {
    let name = kind.name();
    let what = if what.is_empty() {
        error_kind.to_string()
    } else {
        what.to_owned()
    };
    if error_kind == io::ErrorKind::UnexpectedEof {
        refusal(
            Reason::Truncated,
            format!("{name} stream ends early ({what})"),
        )
    } else {
        refusal(Reason::Malformed, format!("damaged {name} stream ({what})"))
    }
}

/// Most zero bytes read as padding after the last gzip member (1 MiB, well past any tape
/// record); more is a damaged stream, so an endless stream of zeros ends.
const ZERO_PADDING: u64 = 1 << 20;

/// gzip members one after another (RFC 1952 §2.2), as `gzip -d` reads them, and then
/// nothing but zero bytes: tape-style padding after the last member (`gzip -d` warns
/// "trailing zero bytes ignored"; GNU tar, bsdtar and Python's `tarfile` read on) ends the
/// stream. Anything else after a member is a damaged stream.
struct GzMembers<R: Read> {
    /// The member being read, or the reader between members (`None` only while switching).
    state: Option<Member<io::BufReader<R>>>,
}

enum Member<B> {
    In(flate2::bufread::GzDecoder<B>),
    Between(B),
    Done,
}

impl<R: Read> GzMembers<R> {
    fn new(raw: R) -> Self {
        GzMembers {
            state: Some(Member::Between(io::BufReader::new(raw))),
        }
    }
}

impl<R: Read> Read for GzMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use std::io::BufRead;
        loop {
            match self.state.take() {
                None | Some(Member::Done) => {
                    self.state = Some(Member::Done);
                    return Ok(0);
                }
                Some(Member::In(mut d)) => match d.read(buf) {
                    Ok(0) if !buf.is_empty() => self.state = Some(Member::Between(d.into_inner())),
                    other => {
                        self.state = Some(Member::In(d));
                        return other;
                    }
                },
                Some(Member::Between(mut b)) => {
                    let head = b.fill_buf()?;
                    if head.is_empty() {
                        self.state = Some(Member::Done);
                        return Ok(0);
                    }
                    if head.starts_with(&[0x1f]) {
                        self.state = Some(Member::In(flate2::bufread::GzDecoder::new(b)));
                        continue;
                    }
                    // Zero padding to the end (at most ZERO_PADDING bytes), or garbage.
                    let mut padding = 0u64;
                    loop {
                        let head = b.fill_buf()?;
                        if head.is_empty() {
                            self.state = Some(Member::Done);
                            return Ok(0);
                        }
                        if head.iter().any(|&x| x != 0) {
                            self.state = Some(Member::Done);
                            return Err(io::Error::new(
                                io::ErrorKind::InvalidData,
                                "bytes after the last gzip member that are neither a member nor zero padding",
                            ));
                        }
                        let n = head.len();
                        padding += n as u64;
                        if padding > ZERO_PADDING {
                            self.state = Some(Member::Done);
                            return Err(io::Error::new(
                                io::ErrorKind::InvalidData,
                                format!("more than {ZERO_PADDING} zero bytes after the last gzip member"),
                            ));
                        }
                        b.consume(n);
                    }
                }
            }
        }
    }
}

/// A decoder that could not be created; its error is given once, then end of input.
struct Failed(Option<io::Error>);

impl Read for Failed {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(0),
        }
    }
}
