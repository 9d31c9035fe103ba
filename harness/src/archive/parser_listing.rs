//! What a parser made of an archive's bytes ([`ParserListing`]): the reference's listing
//! and the `tar` crate's, for the parser differential (docs/design.md,
//! `parser-disagreement`: a validator that reads an archive differently from the extractor
//! it guards is a bypass).

use crate::archive::listing::Member;
use snapconf_extract::{
    validate, AbsoluteSymlinks, Duplicates, EscapingSymlinks, Hardlinks, Limits, MemberKind, Modes,
    Policy, SpecialFiles,
};
use snapconf_tarbytes::raw::RawHeader;

/// What one parser made of the bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParserListing {
    /// Read to the end, these members in archive order.
    Members(Vec<Member>),
    /// The parser stopped with this message (refusal, error).
    Failed(String),
    /// The reference refused what the archive would write (a safety refusal, not one of
    /// parsing: see `snapconf_extract::Reason::is_parsing`), with this message. There is
    /// no listing to compare: it is reported apart from disagreements.
    Refused(String),
}

/// A [`Member`] from a parser's raw fields, its kind from the ustar type flag as
/// [`MemberKind::from_header`] reads it (`\0` and `7` are regular files; `\0` with a name
/// ending in `/` is a directory, the V7 convention that the reference follows and the `tar`
/// crate does not; see [`tar_crate_listing`]).
pub fn parsed(name: &[u8], flag: u8, link: Option<&[u8]>, size: u64) -> Member {
    Member::new(name, MemberKind::from_header(flag, name), link, size)
}

/// The most permissive reference policy: everything the reference can accept is listed.
pub fn permissive_policy() -> Policy {
    Policy {
        hardlinks: Hardlinks::Copy,
        absolute_symlinks: AbsoluteSymlinks::Keep,
        escaping_symlinks: EscapingSymlinks::Keep,
        special_files: SpecialFiles::Drop,
        duplicates: Duplicates::LastWins,
        modes: Modes::Exact,
        limits: Limits::default(),
        original_root: None,
        allow_empty: true,
    }
}

/// The reference parser's listing (`validate` under [`permissive_policy`]).
pub fn reference_listing(bytes: &[u8]) -> ParserListing {
    match validate(bytes, &permissive_policy()) {
        Ok(l) => ParserListing::Members(
            l.members
                .iter()
                .map(|m| Member::new(&m.name, m.kind, m.link_target.as_deref(), m.size))
                .collect(),
        ),
        Err(e) if e.reason().is_some_and(|r| !r.is_parsing()) => {
            ParserListing::Refused(e.to_string())
        }
        Err(e) => ParserListing::Failed(e.to_string()),
    }
}

/// The reference parser's reading of the bytes alone (`snapconf_extract::list_tar`: PAX and
/// GNU long names folded in, no policy): the members, or the structural fault
/// (`truncated`, `malformed`, a limit) where it stops. What `check-archive --all-parsers`
/// compares with the other parsers; the reference's verdict as a validator is another
/// question, asked apart.
pub fn reference_parse_listing(tar: impl std::io::Read) -> ParserListing {
    match snapconf_extract::list_tar(tar) {
        Ok(l) => ParserListing::Members(
            l.members
                .iter()
                .map(|m| Member::new(&m.name, m.kind, m.link_target.as_deref(), m.size))
                .collect(),
        ),
        Err(e) => ParserListing::Failed(e.to_string()),
    }
}

/// Cut `b` at its first NUL byte (a C string's end).
fn c_str(b: &[u8]) -> &[u8] {
    b.split(|&c| c == 0).next().unwrap_or_default()
}

/// The `tar` crate's listing (the parser of the `tar-rs` extractor).
///
/// Two behaviours of the `tar` crate (0.4.46) that the `archive_plan` target found are
/// normalised here, since neither changes what the crate's `unpack` writes:
/// - it yields PAX global (`g`) headers as entries (its `unpack` skips them); they are left
///   out, as every other parser folds them.
/// - it keeps the bytes after an embedded NUL of a GNU long name (`L`/`K` body
///   `a\0b\0`), where GNU tar and the reference end the name at the first NUL; such a
///   name cannot be created by any extractor (the OS refuses NUL), so names and targets
///   are cut at the first NUL.
/// - its `EntryType` calls a V7 member (type `\0`) whose name ends in `/` `Regular`, where
///   GNU tar and the reference read a directory (the V7 convention); the raw type byte is
///   used instead. (Whether its `unpack` then writes a file or a directory was not
///   checked.)
///
/// All three are kept in `corpora/regressions/archive_plan/`.
pub fn tar_crate_listing(tar: impl std::io::Read) -> ParserListing {
    let mut ar = tar::Archive::new(tar);
    let entries = match ar.entries() {
        Ok(e) => e,
        Err(e) => return ParserListing::Failed(e.to_string()),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => return ParserListing::Failed(e.to_string()),
        };
        let flag = RawHeader(entry.header().as_bytes()).typeflag();
        if flag == b'g' {
            continue;
        }
        let link = entry.link_name_bytes().map(|l| c_str(&l).to_vec());
        out.push(parsed(
            c_str(&entry.path_bytes()),
            flag,
            link.as_deref(),
            entry.size(),
        ));
    }
    ParserListing::Members(out)
}
