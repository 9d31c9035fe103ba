//! Typed refusals with stable reason codes.

use std::fmt;

use crate::compression::StreamRefusal;

/// A stable reason code for a refusal; [`Reason::as_str`] is what the CLI and JSON print.
///
/// Codes are part of the interface (CI baselines match on them): they are never renamed,
/// only added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// `absolute-path`: a member name starts with `/` (GNU tar strips it with a warning; older
    /// extractors wrote to the absolute path).
    AbsolutePath,
    /// `parent-traversal`: a member name has a `..` component (CVE-2001-1267,
    /// CVE-2007-4131).
    ParentTraversal,
    /// `hardlink-not-allowed`: a hardlink member under [`crate::Hardlinks::Reject`].
    HardlinkNotAllowed,
    /// `dangling-hardlink`: a hardlink whose target is not an earlier regular (or symlink)
    /// member of the same archive: absent (H2: its first name was excluded at capture), later,
    /// a directory, dropped, absolute or outside the root.
    DanglingHardlink,
    /// `symlink-escape`: a symlink target refused by [`crate::AbsoluteSymlinks::Reject`] or
    /// [`crate::EscapingSymlinks::Reject`].
    SymlinkEscape,
    /// `through-symlink`: a member below a symlink member of the archive (H9, H11), whatever
    /// the policy (a dropped symlink counts too).
    ThroughSymlink,
    /// `special-file`: a FIFO, character or block device under
    /// [`crate::SpecialFiles::Reject`].
    SpecialFile,
    /// `duplicate`: a second member with the same normalised name under
    /// [`crate::Duplicates::Reject`], or (any policy) one that would replace a directory that
    /// already has members below it.
    Duplicate,
    /// `truncated`: the archive ends inside a header or a payload (H13), or a compressed
    /// stream ends early.
    Truncated,
    /// `limit-exceeded`: a [`crate::Limits`] bound, a name component over 255 bytes, or a
    /// symlink target (as written, after rebasing) of `PATH_MAX` (4,096) bytes or more, which
    /// `symlink(2)` would refuse.
    LimitExceeded,
    /// `malformed`: a damaged compressed stream (gzip, zstd or xz; a wrong checksum
    /// included), bad header checksum, unparsable numeric field or PAX record, empty name,
    /// NUL in a name or target, an extension header with no member after it, a non-directory
    /// named like a directory (`a/`) or naming the root (`.`), a sparse map that is out of
    /// order, overlapping, past the file's size, not adding up to the stored data, or that
    /// parsers read differently (see `docs/design.md`, "Sparse members"); a PAX `size`
    /// disagreeing with the ustar size field (but over 8 GiB with the field 0), and under the
    /// old GNU magic a non-sparse member with a `realsize` or with bytes where POSIX keeps
    /// the `prefix`, which parsers read differently (see `docs/design.md`, "Header fields").
    Malformed,
    /// `unsupported`: a compression or archive format the reference does not read (bzip2,
    /// lz4, lzip, compress, lzop, zip, 7z; named in the detail), an unknown type flag (kept
    /// in [`crate::MemberKind::Other`]), a sparse member in a form the reference does not
    /// read (type `S` under the POSIX magic, a `GNU.sparse.*` keyword or format version it
    /// does not know), or a PAX global header that sets `path`, `linkpath`, `size` or
    /// `GNU.sparse.*`.
    Unsupported,
    /// `not-a-directory`: a member below a member that is not a directory (a file, a dropped
    /// special file). Added to the original set of codes.
    NotADirectory,
    /// `empty-archive`: the archive holds no member at all (only end-of-archive blocks, or
    /// nothing), unless [`crate::Policy::allow_empty`]: hydrating it would empty the root, and
    /// a cut-off or zero-filled upload looks exactly like that. Added to the original set.
    EmptyArchive,
    /// `decompression-limit`: a compressed archive decompresses to more than
    /// [`crate::Limits::decompressed_bytes`], or at a higher ratio than
    /// [`crate::Limits::compression_ratio`] (a decompression bomb). Added to the original set.
    DecompressionLimit,
}

impl Reason {
    /// Whether this is a refusal to *read* the bytes as tar (`malformed`, `truncated`,
    /// `unsupported`, `decompression-limit`), where another parser may well read on and a
    /// validator and the extractor behind it then see different archives. Every other
    /// reason is a judgement on what a readable archive would write (a name, a link, a
    /// limit, an empty archive), made under a policy.
    pub fn is_parsing(self) -> bool {
        matches!(
            self,
            Reason::Malformed
                | Reason::Truncated
                | Reason::Unsupported
                | Reason::DecompressionLimit
        )
    }

    /// The stable kebab-case code, e.g. `hardlink-not-allowed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::AbsolutePath => "absolute-path",
            Reason::ParentTraversal => "parent-traversal",
            Reason::HardlinkNotAllowed => "hardlink-not-allowed",
            Reason::DanglingHardlink => "dangling-hardlink",
            Reason::SymlinkEscape => "symlink-escape",
            Reason::ThroughSymlink => "through-symlink",
            Reason::SpecialFile => "special-file",
            Reason::Duplicate => "duplicate",
            Reason::Truncated => "truncated",
            Reason::LimitExceeded => "limit-exceeded",
            Reason::Malformed => "malformed",
            Reason::Unsupported => "unsupported",
            Reason::NotADirectory => "not-a-directory",
            Reason::EmptyArchive => "empty-archive",
            Reason::DecompressionLimit => "decompression-limit",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a hydration or validation did not happen. On any error `root` is unchanged.
#[derive(Debug, thiserror::Error)]
pub enum HydrateError {
    /// The archive was refused before anything was written.
    #[error("refused{}: {reason}{}", if .member.is_empty() { String::new() } else { format!(" member `{}`", printable(.member)) }, if .detail.is_empty() { String::new() } else { format!(" ({})", printable(.detail.as_bytes())) })]
    Refused {
        /// The stable reason code.
        reason: Reason,
        /// The offending member's name as raw bytes, as stored in the archive (after PAX /
        /// GNU long-name resolution); empty when no member name is known yet (a truncated
        /// header).
        member: Vec<u8>,
        /// A human-readable detail (lower-case, no trailing period); not stable.
        detail: String,
    },
    /// An I/O error of our own or of the target filesystem (not a property of the archive):
    /// reading the archive, a bad root (a symlink, not a directory, missing parent),
    /// `ENOSPC`, `EFBIG`, `EACCES`.
    #[error("{context}: {source}")]
    Io {
        /// What we were doing, with the path in backticks.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl HydrateError {
    /// The reason code of a refusal, `None` for I/O errors.
    pub fn reason(&self) -> Option<Reason> {
        match self {
            HydrateError::Refused { reason, .. } => Some(*reason),
            HydrateError::Io { .. } => None,
        }
    }
}

/// A refusal of `member` (raw name bytes) for `reason`.
pub(crate) fn refuse(reason: Reason, member: &[u8], detail: impl Into<String>) -> HydrateError {
    HydrateError::Refused {
        reason,
        member: member.to_vec(),
        detail: detail.into(),
    }
}

/// An I/O error with what we were doing; an error of a decoder that carries a refusal of
/// the archive (see [`crate::compression::tar_stream`]) becomes that refusal instead.
pub(crate) fn io_err(context: impl Into<String>, e: impl Into<std::io::Error>) -> HydrateError {
    read_err(context, b"", e.into())
}

/// [`io_err`] for reading `member` (raw name bytes; empty between members): a refusal
/// carried by the error names that member.
pub(crate) fn read_err(
    context: impl Into<String>,
    member: &[u8],
    e: std::io::Error,
) -> HydrateError {
    if e.get_ref().is_some_and(|inner| inner.is::<StreamRefusal>()) {
        if let Some(Ok(r)) = e
            .into_inner()
            .map(|inner| inner.downcast::<StreamRefusal>())
        {
            return refuse(r.reason, member, r.detail);
        }
        // Unreachable: the inner error was just seen to be a refusal.
        return refuse(Reason::Malformed, member, "damaged compressed stream");
    }
    HydrateError::Io {
        context: context.into(),
        source: e,
    }
}

/// Member names as text for messages: UTF-8 where valid, control characters and invalid
/// bytes as `\xNN`, so a name holding terminal escape sequences cannot reach a terminal raw.
pub(crate) fn printable(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() {
                out.push_str(&format!("\\x{:02x}", c as u32));
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}
