//! Member names: from archive bytes to a root-relative path of plain components.
//!
//! The rules, and the attacks they close:
//! - a leading `/` is refused (`absolute-path`): GNU tar strips it with a warning, old tars
//!   wrote through it (CVE-2001-1267 is the `..` cousin of that class);
//! - a `..` component anywhere is refused (`parent-traversal`): CVE-2001-1267 (GNU tar),
//!   CVE-2007-4131 (GNU tar `/../`), and the tar-rs `unpack_in` hardening;
//! - `.` components and repeated `/` are dropped, so `./a//b` is `a/b` and `./` (or `.`) is
//!   the root itself;
//! - empty names and NUL bytes are refused (`malformed`); components longer than 255 bytes
//!   (`NAME_MAX`) and names deeper than the limit are refused (`limit-exceeded`) before any
//!   write, so they cannot fail half-way through the write pass.

use crate::{Limits, Reason};

/// The longest component Linux filesystems accept, in bytes.
pub(crate) const NAME_MAX: usize = 255;

/// The components of a member name or hardlink target as GNU tar places it on disk: empty
/// and `.` components dropped, everything else kept as it is, `..` included.
///
/// So `a//b` is `a`, `b`; `./a` is `a`; `a/` is `a`; `a/./b` is `a`, `b`; `.`, `./` and
/// `/` are no component at all (the root); `/a` is `a`. The sources: GNU tar passes a
/// member name to the system calls as stored, after `safer_name_suffix` (`src/names.c`)
/// has stripped a leading `/` (the "Removing leading `/' from member names" warning), and
/// POSIX.1-2017 XBD 4.13 "Pathname Resolution" reads successive slashes as one, `.` as the
/// directory itself and a trailing slash as naming that directory; GNU tar's own
/// `normalize_filename_x` (`src/misc.c`) drops redundant slashes and `.` components the
/// same way and "leave[s] `..` alone", since with symlinks `a/../b` need not be `b`. Every
/// comparison of member names in snapconf goes through this function (or
/// [`normalise_name`]); [`normalize`] adds the extractor's refusals on top.
pub fn name_components(raw: &[u8]) -> impl Iterator<Item = &[u8]> {
    raw.split(|&b| b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
}

/// A member name or hardlink target in normal form: its [`name_components`] joined by single
/// `/` (`./a//b/` becomes `a/b`); empty for the root itself (`.`, `./`). Never refuses:
/// `..` and NUL bytes stay, for the callers that compare what parsers read.
pub fn normalise_name(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    for comp in name_components(raw) {
        if !out.is_empty() {
            out.push(b'/');
        }
        out.extend_from_slice(comp);
    }
    out
}

/// Normalises a member name or a hardlink target into its components (none for the root),
/// the [`name_components`] of `raw` once it passes the rules above; `Err` gives the reason
/// and a detail.
pub(crate) fn normalize<'a>(
    raw: &'a [u8],
    limits: &Limits,
) -> Result<Vec<&'a [u8]>, (Reason, String)> {
    if raw.is_empty() {
        return Err((Reason::Malformed, "empty member name".into()));
    }
    if raw.contains(&0) {
        return Err((Reason::Malformed, "NUL byte in member name".into()));
    }
    if raw.len() > limits.name_len {
        return Err((
            Reason::LimitExceeded,
            format!("name of {} bytes (limit {})", raw.len(), limits.name_len),
        ));
    }
    if raw[0] == b'/' {
        return Err((Reason::AbsolutePath, "member name starts with `/`".into()));
    }
    let mut out = Vec::new();
    for comp in name_components(raw) {
        if comp == b".." {
            return Err((Reason::ParentTraversal, "`..` component".into()));
        }
        if comp.len() > NAME_MAX {
            return Err((
                Reason::LimitExceeded,
                format!("component of {} bytes (limit {NAME_MAX})", comp.len()),
            ));
        }
        if out.len() >= limits.link_depth {
            return Err((
                Reason::LimitExceeded,
                format!("more than {} components", limits.link_depth),
            ));
        }
        out.push(comp);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shapes that tars write and GNU tar reads as one path: a doubled `/`, a leading
    /// `./`, a trailing `/`, an inner `.` (see [`name_components`] for the sources).
    #[test]
    fn names_normalise_as_gnu_tar_places_them() {
        for (raw, want) in [
            (&b"a//b"[..], &b"a/b"[..]),
            (b"./a", b"a"),
            (b"a/", b"a"),
            (b"a/./b", b"a/b"),
            (b"./a//./b/", b"a/b"),
            (b".", b""),
            (b"./", b""),
            (b"/", b""),
            (b"/a", b"a"),
            (b"a/../b", b"a/../b"),
            (b"\xff/\n", b"\xff/\n"),
        ] {
            assert_eq!(
                normalise_name(raw),
                want,
                "`{}` normalises to `{}`",
                String::from_utf8_lossy(raw),
                String::from_utf8_lossy(want)
            );
        }
    }

    /// The extractor's components are the normal form's: `a//b` and `a/./b` are refused or
    /// accepted as `a/b` is.
    #[test]
    fn the_extractor_reads_the_normal_form() {
        let limits = Limits::default();
        for raw in [&b"a//b"[..], b"./a/b", b"a/b/", b"a/./b"] {
            let comps = normalize(raw, &limits).expect("accepted");
            assert_eq!(comps.join(&b'/'), normalise_name(raw));
        }
    }
}
