//! Parser differential: the same bytes listed by two parsers must give the same members
//! (DESIGN.md `parser-disagreement`). A validator that reads an archive differently from the
//! extractor it guards is a bypass.

use super::expect::normalise_member_name;
use crate::model::bytes::escape;
use snapconf_extract::{
    validate, AbsoluteSymlinks, Duplicates, EscapingSymlinks, Hardlinks, Limits, MemberKind, Modes,
    Policy, SpecialFiles,
};

/// One member as a parser reads it, normalised for comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedMember {
    /// Name with empty and `.` components dropped (see [`normalise_member_name`]).
    pub name: Vec<u8>,
    /// `file`, `dir`, `symlink`, `hardlink`, `fifo`, `char`, `block` or `other`.
    pub kind: &'static str,
    /// Symlink target verbatim; hardlink target normalised like a name; `None` otherwise.
    pub link_target: Option<Vec<u8>>,
    /// Payload size in bytes for regular files; `None` for other kinds (parsers differ on
    /// the header size of non-regular members, and no extractor writes it).
    pub size: Option<u64>,
}

/// What one parser made of the bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParserListing {
    /// Read to the end, these members in archive order.
    Members(Vec<ParsedMember>),
    /// The parser stopped with this message (refusal, error).
    Failed(String),
}

/// Build a [`ParsedMember`] from raw parts; `kind` from a ustar type flag (`\0` and `7`
/// are regular files; `\0` with a name ending in `/` is a directory, the V7 convention that
/// the reference follows and the `tar` crate does not; see [`reference_vs_tar_crate`]).
pub fn parsed(name: &[u8], flag: u8, link: Option<&[u8]>, size: u64) -> ParsedMember {
    let kind = match MemberKind::from_flag(flag) {
        MemberKind::File if flag == 0 && name.ends_with(b"/") => "dir",
        MemberKind::File => "file",
        MemberKind::Dir => "dir",
        MemberKind::Symlink => "symlink",
        MemberKind::Hardlink => "hardlink",
        MemberKind::Fifo => "fifo",
        MemberKind::CharDevice => "char",
        MemberKind::BlockDevice => "block",
        MemberKind::Other(_) => "other",
    };
    let link_target = match kind {
        "symlink" => Some(link.unwrap_or_default().to_vec()),
        "hardlink" => Some(normalise_member_name(link.unwrap_or_default())),
        _ => None,
    };
    ParsedMember {
        name: normalise_member_name(name),
        kind,
        link_target,
        size: (kind == "file").then_some(size),
    }
}

/// The ustar type flag of a reference [`MemberKind`] (`5` for a directory, whatever the
/// stored flag was).
pub fn kind_flag(kind: &MemberKind) -> u8 {
    match kind {
        MemberKind::File => b'0',
        MemberKind::Dir => b'5',
        MemberKind::Symlink => b'2',
        MemberKind::Hardlink => b'1',
        MemberKind::Fifo => b'6',
        MemberKind::CharDevice => b'3',
        MemberKind::BlockDevice => b'4',
        MemberKind::Other(b) => *b,
    }
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
    }
}

/// The reference parser's listing (`validate` under [`permissive_policy`]).
pub fn reference_listing(bytes: &[u8]) -> ParserListing {
    match validate(bytes, &permissive_policy()) {
        Ok(l) => ParserListing::Members(
            l.members
                .iter()
                .map(|m| {
                    parsed(
                        &m.name,
                        kind_flag(&m.kind),
                        m.link_target.as_deref(),
                        m.size,
                    )
                })
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
pub fn tar_crate_listing(bytes: &[u8]) -> ParserListing {
    let mut ar = tar::Archive::new(bytes);
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
        let flag = entry.header().as_bytes()[156];
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

/// Compare two listings that both read to the end; `None` when either failed or they agree,
/// else the first difference (member count, then per member name, kind, link target, size).
pub fn compare_listings(
    a_name: &str,
    a: &ParserListing,
    b_name: &str,
    b: &ParserListing,
) -> Option<String> {
    let (ParserListing::Members(a), ParserListing::Members(b)) = (a, b) else {
        return None;
    };
    for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
        let what = if x.name != y.name {
            format!("name `{}` vs `{}`", escape(&x.name), escape(&y.name))
        } else if x.kind != y.kind {
            format!("kind {} vs {}", x.kind, y.kind)
        } else if x.link_target != y.link_target {
            format!(
                "link target `{}` vs `{}`",
                escape(x.link_target.as_deref().unwrap_or_default()),
                escape(y.link_target.as_deref().unwrap_or_default())
            )
        } else if x.size != y.size {
            format!("size {:?} vs {:?}", x.size, y.size)
        } else {
            continue;
        };
        return Some(format!(
            "member {} (`{}`): {a_name} and {b_name} disagree: {what}",
            i + 1,
            escape(&x.name)
        ));
    }
    (a.len() != b.len())
        .then(|| format!("{a_name} lists {} member(s), {b_name} {}", a.len(), b.len()))
}

/// The differential of the `archive_plan` target: the reference's listing against the `tar`
/// crate's, when both read the archive to the end.
///
/// # Errors
/// The first disagreement, as [`super::OracleFailure::ParserDisagreement`].
pub fn reference_vs_tar_crate(bytes: &[u8]) -> Result<(), super::OracleFailure> {
    let r = reference_listing(bytes);
    let t = tar_crate_listing(bytes);
    match compare_listings("reference", &r, "tar crate", &t) {
        Some(d) => Err(super::OracleFailure::ParserDisagreement(d)),
        None => Ok(()),
    }
}
