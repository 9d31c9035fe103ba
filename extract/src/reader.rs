//! The tar member reader: 512-byte headers, checksums, GNU `L`/`K` long names, PAX `x`/`g`
//! headers, payload positions. One reader serves both passes, so the validator and the
//! writer can never parse differently (a validator that disagrees with the extractor it
//! guards is a bypass: CVE-2025-4517 and the other Python `tarfile` filter bypasses of 2025
//! came from checks and extraction reading different things).
//!
//! Field decoding (octal and base-256 numbers, ustar `prefix`) is done by the `tar` crate's
//! [`tar::Header`]; the member loop is ours so that limits apply before anything is buffered.

use std::sync::Arc;

use crate::error::{io_err, read_err, refuse};
use crate::input::Input;
use crate::pax::{self, PaxFields, SparseKeys};
use crate::sparse::{self, Budget, Format, PaxSparse, SparseMap};
use crate::{HydrateError, Limits, MemberKind, Reason};

mod fields;

pub(crate) use fields::check_checksum;
use fields::{number_field, old_gnu_fields, pax_size_agrees, MODE_FIELD, SIZE_FIELD};

/// Size of a tar block and header, in bytes (POSIX ustar).
pub(crate) const BLOCK: u64 = 512;

/// One logical member: its header with every extension header folded in.
#[derive(Debug)]
pub(crate) struct RawMember {
    /// Name bytes as stored (PAX `path` > GNU `L` > ustar `prefix/name`).
    pub(crate) name: Vec<u8>,
    /// The name a PAX `GNU.sparse.name` displaced (the member's `path`, else its header
    /// name): readers without PAX sparse support restore the member there, so it must be a
    /// safe member name too, never below a symlink member (see `plan::Validator::member`).
    pub(crate) alias: Option<Vec<u8>>,
    /// Link target for type `1` and `2` (PAX `linkpath` > GNU `K` > header `linkname`).
    pub(crate) link: Option<Vec<u8>>,
    /// The kind the flag (and, for V7 `\0`, a trailing `/`) denotes.
    pub(crate) kind: MemberKind,
    /// Payload size in bytes (PAX `size` wins); of a sparse member, the bytes of its data
    /// regions (after a PAX 1.0 map).
    pub(crate) size: u64,
    /// Permission bits, `0o7777` mask.
    pub(crate) mode: u32,
    /// Modification time, seconds since the epoch (0 if the field is unreadable).
    pub(crate) mtime: u64,
    /// Offset of the payload from the start of the input, in bytes (of a sparse member,
    /// of its first data region).
    pub(crate) data_offset: u64,
    /// The checked map of a GNU sparse member (see [`crate::sparse`]); the member is then
    /// a regular file of `real_size` bytes whose data is `size` bytes at `data_offset`.
    pub(crate) sparse: Option<Arc<SparseMap>>,
}

impl RawMember {
    /// The size of the file the member restores: its payload, or a sparse file's size.
    pub(crate) fn file_size(&self) -> u64 {
        self.sparse.as_ref().map_or(self.size, |m| m.real_size)
    }
}

/// Reads members one by one from an [`Input`].
pub(crate) struct Reader<'a, I> {
    input: &'a mut I,
    /// Offset of the next unread byte, counted from the start of the input.
    pos: u64,
    limits: Limits,
    done: bool,
    /// The payload of the member returned last, skipped at the next call: the caller
    /// judges a member (its size against the limits) before its payload is read, so a
    /// stream is never consumed past a limit. The caller may read the payload first
    /// ([`Reader::payload_chunk`]); the rest is skipped.
    unskipped: Option<Unread>,
    /// PAX global (`g`) headers read so far (see [`MAX_GLOBAL_HEADERS`]).
    globals: usize,
    /// Sparse map entries the rest of the archive may hold.
    sparse_budget: Budget,
}

/// Most PAX global (`g`) headers an archive may hold (real ones hold one, say `git
/// archive`'s comment). They are not members, so without this bound an endless stream of
/// them would be read forever, never reaching [`Limits::members`] (a hostile review).
pub(crate) const MAX_GLOBAL_HEADERS: usize = 1024;

/// The unread payload of the member returned last.
#[derive(Debug)]
struct Unread {
    /// The member's name, for messages.
    name: Vec<u8>,
    /// Payload bytes.
    size: u64,
    /// Payload bytes plus padding to the next block.
    total: u64,
    /// Bytes of `total` already read.
    done: u64,
}

/// Rounds a payload size up to whole blocks.
fn padded(size: u64) -> Option<u64> {
    size.checked_add(BLOCK - 1).map(|s| s & !(BLOCK - 1))
}

impl<'a, I: Input> Reader<'a, I> {
    /// A reader positioned at `start` (the offset of the input's first byte).
    pub(crate) fn new(input: &'a mut I, start: u64, limits: Limits) -> Self {
        Reader {
            input,
            pos: start,
            limits,
            done: false,
            unskipped: None,
            globals: 0,
            sparse_budget: Budget::new(&limits),
        }
    }

    /// The next member, `None` at the end-of-archive marker (a zero block). End of input
    /// without one is `truncated`. The payload of a returned member is read (skipped) at the
    /// next call, not before this one returns.
    pub(crate) fn next_member(&mut self) -> Result<Option<RawMember>, HydrateError> {
        if let Some(u) = self.unskipped.take() {
            self.skip_rest(&u)?;
        }
        if self.done {
            return Ok(None);
        }
        let mut long_name: Option<Vec<u8>> = None;
        let mut long_link: Option<Vec<u8>> = None;
        let mut pax: Option<PaxFields> = None;
        loop {
            let mut block = [0u8; BLOCK as usize];
            let got = self
                .input
                .read_full(&mut block)
                .map_err(|e| io_err("reading a tar header", e))?;
            let pending = long_name.is_some() || long_link.is_some() || pax.is_some();
            // An input that simply stops (no zero block) is refused: it is what a cut-off
            // upload, an empty file or a closed stdin looks like, and accepting it would
            // replace the workspace with part of it (docs/cases.md, H13). GNU tar and Python accept
            // it; the reference is stricter on purpose (POSIX ustar ends an archive with two
            // zero blocks; one is taken as the end, as tar implementations do).
            if got == 0 {
                self.done = true;
                return Err(refuse(
                    Reason::Truncated,
                    long_name.as_deref().unwrap_or_default(),
                    "archive ends without the end-of-archive marker (zero blocks)",
                ));
            }
            if got == block.len() && block.iter().all(|&b| b == 0) {
                self.done = true;
                if pending {
                    return Err(refuse(
                        Reason::Malformed,
                        long_name.as_deref().unwrap_or_default(),
                        "extension header with no member after it",
                    ));
                }
                return Ok(None);
            }
            if got < block.len() {
                return Err(refuse(
                    Reason::Truncated,
                    b"",
                    "archive ends inside a header",
                ));
            }
            self.pos += BLOCK;
            let header = tar::Header::from_byte_slice(&block);
            let header_name = header.path_bytes().into_owned();
            check_checksum(&block).map_err(|d| refuse(Reason::Malformed, &header_name, d))?;
            let flag = block[156];
            let ext = matches!(flag, b'L' | b'K' | b'x' | b'g');
            let mut size = number_field(&block, SIZE_FIELD, || header.entry_size())
                .map_err(|e| refuse(Reason::Malformed, &header_name, format!("size field: {e}")))?;
            let mut size_from = "its `size` field";
            if !ext {
                if let Some(s) = pax.as_ref().and_then(|p| p.size) {
                    pax_size_agrees(s, size).map_err(|d| {
                        refuse(
                            Reason::Malformed,
                            pax.as_ref()
                                .and_then(|p| p.path.as_deref())
                                .unwrap_or(&header_name),
                            d,
                        )
                    })?;
                    size = s;
                    size_from = "its PAX `size`";
                }
                if block[257..265] == *sparse::OLD_GNU_MAGIC && flag != b'S' {
                    old_gnu_fields(&block).map_err(|d| {
                        refuse(
                            Reason::Malformed,
                            long_name.as_deref().unwrap_or(&header_name),
                            d,
                        )
                    })?;
                }
            }
            let data_offset = self.pos;
            if ext {
                let cap = match flag {
                    b'L' | b'K' => self.limits.name_len as u64 + 1,
                    _ => self.limits.pax_record,
                };
                if size > cap {
                    return Err(refuse(
                        Reason::LimitExceeded,
                        &header_name,
                        format!("extension header of {size} bytes (limit {cap})"),
                    ));
                }
                let data = self.read_payload(size, &header_name)?;
                match flag {
                    b'L' | b'K' => {
                        let slot = if flag == b'L' {
                            &mut long_name
                        } else {
                            &mut long_link
                        };
                        if slot.is_some() {
                            return Err(refuse(
                                Reason::Malformed,
                                &header_name,
                                "two GNU long-name headers for one member",
                            ));
                        }
                        // GNU tar stores the name with a terminating NUL.
                        let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
                        if data[end..].iter().any(|&b| b != 0) {
                            return Err(refuse(
                                Reason::Malformed,
                                &data[..end],
                                "NUL byte inside a GNU long name",
                            ));
                        }
                        *slot = Some(data[..end].to_vec());
                    }
                    b'x' => {
                        if pax.is_some() {
                            return Err(refuse(
                                Reason::Malformed,
                                &header_name,
                                "two PAX headers for one member",
                            ));
                        }
                        let fields = pax::parse(&data)
                            .map_err(|d| refuse(Reason::Malformed, &header_name, d))?;
                        pax = Some(fields);
                    }
                    _ => {
                        self.globals += 1;
                        if self.globals > MAX_GLOBAL_HEADERS {
                            return Err(refuse(
                                Reason::LimitExceeded,
                                &header_name,
                                format!("more than {MAX_GLOBAL_HEADERS} PAX global headers"),
                            ));
                        }
                        // A global header applies to every later member in GNU tar and
                        // libarchive, but not in tar-rs; refuse the keywords that would make
                        // parsers disagree about names or sizes.
                        let fields = pax::parse(&data)
                            .map_err(|d| refuse(Reason::Malformed, &header_name, d))?;
                        if fields.path.is_some()
                            || fields.linkpath.is_some()
                            || fields.size.is_some()
                            || fields.sparse.is_some()
                        {
                            return Err(refuse(
                                Reason::Unsupported,
                                &header_name,
                                "PAX global header sets path, linkpath, size or sparse keywords",
                            ));
                        }
                    }
                }
                continue;
            }
            let pax = pax.unwrap_or_default();
            // Parsers disagree on which of two name sources applies (GNU tar and
            // libarchive take the PAX record, the `tar` crate the GNU long name), so an
            // archive naming one member both ways reads as two different archives.
            for (what, both) in [
                ("path", pax.path.is_some() && long_name.is_some()),
                ("linkpath", pax.linkpath.is_some() && long_link.is_some()),
            ] {
                if both {
                    return Err(refuse(
                        Reason::Malformed,
                        pax.path.as_deref().unwrap_or(&header_name),
                        format!(
                            "both a PAX `{what}` and a GNU long-name header for one member                              (parsers disagree on which applies)"
                        ),
                    ));
                }
            }
            // `GNU.sparse.name` is the real name of a PAX 0.1 or 1.0 sparse member (GNU tar
            // writes the placeholder `.../GNUSparseFile.N/...` as `path` or in the header,
            // and restores the file under `GNU.sparse.name` whatever the order).
            let sparse_name = pax.sparse.as_ref().and_then(|k| k.name.clone());
            if sparse_name.is_some() && long_name.is_some() {
                return Err(refuse(
                    Reason::Malformed,
                    sparse_name.as_deref().unwrap_or_default(),
                    "both a PAX `GNU.sparse.name` and a GNU long-name header for one member \
                     (parsers disagree on which applies)",
                ));
            }
            // The name `GNU.sparse.name` displaces (the placeholder GNU tar writes as `path`
            // or in the header) is what every reader without PAX sparse support restores
            // (BusyBox, the `tar` crate), and Python when `path` follows `GNU.sparse.name`
            // (its last keyword wins): judged as a member name too (see [`RawMember::alias`]).
            let (name, alias) = match sparse_name {
                Some(sparse_name) => (sparse_name, Some(pax.path.unwrap_or(header_name))),
                None => (pax.path.or(long_name).unwrap_or(header_name), None),
            };
            // A V7 member (flag `\0`) is a directory when its name ends with `/`. Python's
            // `tarfile` decides that by the name field of the header, before a PAX `path`, a
            // GNU long name or `GNU.sparse.name` replaces it, and then reads a directory's
            // payload as further members; every other reader decides by the final name. A
            // header name with the `/` over a final name without one is a file here and a
            // directory to Python: a complete member can hide in its payload (a hostile
            // review: `x/` in the header, `path=ok`, a `../../x` header as the payload). The
            // other way round (a long directory name cut in the header) Python lists a file
            // with no payload to misread, and a directory with one is refused below.
            if flag == 0 {
                let field = &block[..100];
                let field = &field[..field.iter().position(|&b| b == 0).unwrap_or(100)];
                if field.ends_with(b"/") && !name.ends_with(b"/") {
                    return Err(refuse(
                        Reason::Malformed,
                        &name,
                        "a V7 member (type `\\0`) whose header name ends with `/` and whose \
                         final name does not (Python reads a directory by the header's name \
                         and its payload as further members, other tools a file)",
                    ));
                }
            }
            let mut kind = MemberKind::from_header(flag, &name);
            let link = match kind {
                MemberKind::Symlink | MemberKind::Hardlink => Some(
                    pax.linkpath
                        .or(long_link)
                        .or_else(|| header.link_name_bytes().map(|l| l.into_owned()))
                        .unwrap_or_default(),
                ),
                _ => None,
            };
            let (sparse, consumed) =
                self.sparse_member(&block, kind, pax.sparse.as_ref(), size, size_from, &name)?;
            let data_offset = if sparse.is_some() {
                kind = MemberKind::File;
                self.pos
            } else {
                data_offset
            };
            // A directory, link, FIFO or device header with a payload: GNU tar (for
            // directories and hardlinks), bsdtar, BusyBox and Python ignore the size of such a
            // member and read its "payload" as the next headers, so a complete member can hide
            // there (a `../../etc/x` that this reader would skip). A validator that guards
            // another extractor must not pass it, whatever the policy.
            if size > 0 && !matches!(kind, MemberKind::File | MemberKind::Other(_)) {
                return Err(refuse(
                    Reason::Malformed,
                    &name,
                    format!(
                        "a {kind} member with a {size}-byte payload (other tools read it as \
                         further members)"
                    ),
                ));
            }
            let mode = number_field(&block, MODE_FIELD, || header.mode().map(u64::from))
                .map_err(|e| refuse(Reason::Malformed, &name, format!("mode field: {e}")))?
                & 0o7777;
            let mode = mode as u32;
            let mtime = header.mtime().unwrap_or(0);
            let total = padded(size)
                .filter(|&total| self.pos.checked_add(total).is_some())
                .ok_or_else(|| refuse(Reason::Malformed, &name, "size overflows"))?
                - consumed;
            let size = size - consumed;
            self.unskipped = Some(Unread {
                name: name.clone(),
                size,
                total,
                done: 0,
            });
            return Ok(Some(RawMember {
                name,
                alias,
                link,
                kind,
                size,
                mode,
                mtime,
                data_offset,
                sparse,
            }));
        }
    }

    /// The sparse map of a member with header `block` (kind `kind` as its flag reads,
    /// PAX sparse keywords `keys`, `stored` payload bytes as `stored_from` says), if it is
    /// sparse: an old GNU type `S` (its extension blocks are read here) or a PAX 0.0, 0.1
    /// or 1.0 member (a 1.0 map is read here from the payload). Returns the checked map
    /// and the payload bytes the map took.
    fn sparse_member(
        &mut self,
        block: &[u8; BLOCK as usize],
        kind: MemberKind,
        keys: Option<&SparseKeys>,
        stored: u64,
        stored_from: &str,
        name: &[u8],
    ) -> Result<(Option<Arc<SparseMap>>, u64), HydrateError> {
        let old_gnu = block[156] == b'S';
        if !old_gnu && keys.is_none() {
            return Ok((None, 0));
        }
        let fail = |(reason, detail): sparse::Refusal| refuse(reason, name, detail);
        let (input, pos, budget) = (&mut *self.input, &mut self.pos, &mut self.sparse_budget);
        let mut next_block = || -> Result<[u8; BLOCK as usize], HydrateError> {
            let mut b = [0u8; BLOCK as usize];
            let got = input
                .read_full(&mut b)
                .map_err(|e| read_err("reading a sparse map", name, e))?;
            *pos += got as u64;
            if got < b.len() {
                return Err(refuse(
                    Reason::Truncated,
                    name,
                    "archive ends inside a sparse map",
                ));
            }
            Ok(b)
        };
        let (format, map, consumed) = match keys {
            Some(_) if old_gnu => {
                return Err(refuse(
                    Reason::Malformed,
                    name,
                    "PAX sparse keywords on an old GNU sparse member (type `S`): two maps",
                ))
            }
            None if block[257..265] != *sparse::OLD_GNU_MAGIC => {
                return Err(refuse(
                    Reason::Unsupported,
                    name,
                    "GNU sparse member (type `S`) in a POSIX ustar header: GNU tar reads the \
                     old GNU map only under the old GNU magic `ustar  \\0` (here its bytes are \
                     the name's `prefix`)",
                ))
            }
            None => {
                let map =
                    sparse::old_gnu(block, &self.limits, budget, &mut next_block)?.map_err(fail)?;
                (Format::OldGnu, map, 0)
            }
            Some(_) if kind != MemberKind::File => {
                return Err(refuse(
                    Reason::Malformed,
                    name,
                    format!("PAX sparse keywords on a {kind} member"),
                ))
            }
            Some(keys) => match sparse::from_pax(keys, &self.limits, budget).map_err(fail)? {
                PaxSparse::Map(format, map) => (format, map, 0),
                PaxSparse::InData { real_size } => {
                    let (map, used) =
                        sparse::pax10_map(real_size, stored, budget, &mut next_block)?
                            .map_err(fail)?;
                    (Format::Pax10, map, used)
                }
            },
        };
        sparse::check(&map, stored - consumed, stored_from, format).map_err(fail)?;
        Ok((Some(Arc::new(map)), consumed))
    }

    /// Reads a whole (already size-limited) extension payload and its padding.
    fn read_payload(&mut self, size: u64, name: &[u8]) -> Result<Vec<u8>, HydrateError> {
        let len = usize::try_from(size)
            .map_err(|_| refuse(Reason::LimitExceeded, name, "extension header too large"))?;
        let mut data = vec![0u8; len];
        let got = self
            .input
            .read_full(&mut data)
            .map_err(|e| read_err("reading an extension header", name, e))?;
        self.pos += got as u64;
        if got < len {
            return Err(refuse(
                Reason::Truncated,
                name,
                "archive ends inside a header",
            ));
        }
        let pad = padded(size).unwrap_or(size) - size;
        self.skip_exact(pad, name)?;
        Ok(data)
    }

    /// Reads up to `buf.len()` bytes of the payload of the member returned last; 0 once
    /// the payload is read whole (or if there is no such member). The rest of the payload,
    /// and its padding, is skipped by the next [`Reader::next_member`]. Ends of input and
    /// read errors are reported as skipping would report them.
    pub(crate) fn payload_chunk(&mut self, buf: &mut [u8]) -> Result<usize, HydrateError> {
        let Some(u) = self.unskipped.as_mut() else {
            return Ok(0);
        };
        let left = u.size.saturating_sub(u.done);
        let want = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
        if want == 0 {
            return Ok(0);
        }
        let got = loop {
            match self.input.read_some(&mut buf[..want]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                other => break other,
            }
        }
        .map_err(|e| read_err("reading a member payload", &u.name, e))?;
        if got == 0 {
            return Err(refuse(
                Reason::Truncated,
                &u.name,
                format!(
                    "archive ends {} bytes into a {}-byte payload",
                    u.done, u.total
                ),
            ));
        }
        u.done += got as u64;
        self.pos += got as u64;
        Ok(got)
    }

    /// Skips what is left of a member's payload and padding; short means truncated.
    fn skip_rest(&mut self, u: &Unread) -> Result<(), HydrateError> {
        let n = u.total - u.done;
        let got = self
            .input
            .skip(n)
            .map_err(|e| read_err("reading a member payload", &u.name, e))?;
        self.pos += got;
        if got < n {
            return Err(refuse(
                Reason::Truncated,
                &u.name,
                format!(
                    "archive ends {} bytes into a {}-byte payload",
                    u.done + got,
                    u.total
                ),
            ));
        }
        Ok(())
    }

    fn skip_exact(&mut self, n: u64, name: &[u8]) -> Result<(), HydrateError> {
        let got = self
            .input
            .skip(n)
            .map_err(|e| read_err("reading a member payload", name, e))?;
        self.pos += got;
        if got < n {
            return Err(refuse(
                Reason::Truncated,
                name,
                format!("archive ends {} bytes into a {n}-byte payload", got),
            ));
        }
        Ok(())
    }
}
