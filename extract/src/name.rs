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

/// A normalised member name: components joined by `/`; empty for the root itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct MemberPath(pub(crate) Vec<u8>);

impl MemberPath {
    /// True for the root itself (`.`, `./`).
    pub(crate) fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The components, shallowest first.
    pub(crate) fn components(&self) -> impl Iterator<Item = &[u8]> {
        self.0.split(|&b| b == b'/').filter(|c| !c.is_empty())
    }

    /// Number of components (0 for the root).
    pub(crate) fn depth(&self) -> usize {
        self.components().count()
    }

    /// The parent path (root for a single component) and the last component.
    pub(crate) fn split_last(&self) -> (&[u8], &[u8]) {
        match self.0.iter().rposition(|&b| b == b'/') {
            Some(i) => (&self.0[..i], &self.0[i + 1..]),
            None => (&[], &self.0[..]),
        }
    }

    /// Every proper ancestor except the root, shallowest first (`a`, `a/b` for `a/b/c`).
    pub(crate) fn ancestors(&self) -> impl Iterator<Item = &[u8]> {
        self.0
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'/')
            .map(|(i, _)| &self.0[..i])
    }
}

/// Normalises a member name or a hardlink target; `Err` gives the reason and a detail.
pub(crate) fn normalize(raw: &[u8], limits: &Limits) -> Result<MemberPath, (Reason, String)> {
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
    let mut out = Vec::with_capacity(raw.len());
    let mut depth = 0usize;
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
        depth += 1;
        if depth > limits.link_depth {
            return Err((
                Reason::LimitExceeded,
                format!("more than {} components", limits.link_depth),
            ));
        }
        if !out.is_empty() {
            out.push(b'/');
        }
        out.extend_from_slice(comp);
    }
    Ok(MemberPath(out))
}
