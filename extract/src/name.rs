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

/// Normalises a member name or a hardlink target into its components (none for the root);
/// `Err` gives the reason and a detail.
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
    for comp in raw.split(|&b| b == b'/') {
        match comp {
            b"" | b"." => continue,
            b".." => return Err((Reason::ParentTraversal, "`..` component".into())),
            _ => {}
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
