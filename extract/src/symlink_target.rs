//! Symlink targets: absolute targets per [`AbsoluteSymlinks`], relative targets that leave
//! the root per [`EscapingSymlinks`].
//!
//! The extractor never follows a link it creates (all writes go through handles opened with
//! `RESOLVE_NO_SYMLINKS`, and links are created last), so a kept escaping link cannot make the
//! *hydration* write outside the root. The policy exists for whoever uses the tree afterwards.
//!
//! Escape is decided lexically from the link's directory, as Python's `tarfile` `data` filter
//! does. Candidly: a lexical check does not see through other symlinks of the same archive
//! (`d/up -> ..` is contained, `x -> d/up/..` is contained lexically, yet the kernel resolves
//! `x` to the root's parent). The validator therefore also resolves every kept link through
//! the archive's own links before accepting it under `EscapingSymlinks::Reject`
//! (`crate::resolve`).

use crate::{AbsoluteSymlinks, EscapingSymlinks, Policy, Reason};

/// What to do with a symlink member.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Create the link with this target string.
    Keep(Vec<u8>),
    /// Leave the member out.
    Drop,
    /// Refuse the archive.
    Refuse(Reason, String),
}

/// Linux's `PATH_MAX`, in bytes, terminating NUL included: `symlink(2)` fails with
/// `ENAMETOOLONG` for a target of this many bytes or more.
pub(crate) const PATH_MAX: usize = 4096;

/// Decides a symlink member at `dir_depth` components below the root with target `target`.
///
/// The target that would be written (after [`AbsoluteSymlinks::Rebase`], which can lengthen
/// it) must be shorter than [`PATH_MAX`], else `limit-exceeded`: validation refuses what
/// the write pass could not create, so that `validate` and `hydrate` agree.
pub(crate) fn decide(dir_depth: usize, target: &[u8], policy: &Policy) -> Verdict {
    match decide_target(dir_depth, target, policy) {
        Verdict::Keep(t) if t.len() >= PATH_MAX => {
            Verdict::Refuse(
                Reason::LimitExceeded,
                format!(
                "symlink target of {} bytes{}: a target must be shorter than PATH_MAX ({PATH_MAX})",
                t.len(),
                if t.len() == target.len() { "" } else { " once rebased" },
            ),
            )
        }
        verdict => verdict,
    }
}

fn decide_target(dir_depth: usize, target: &[u8], policy: &Policy) -> Verdict {
    if target.is_empty() {
        return Verdict::Refuse(Reason::Malformed, "empty symlink target".into());
    }
    if target.contains(&0) {
        return Verdict::Refuse(Reason::Malformed, "NUL byte in symlink target".into());
    }
    if target.len() > policy.limits.name_len {
        return Verdict::Refuse(
            Reason::LimitExceeded,
            format!("symlink target of {} bytes", target.len()),
        );
    }
    if target[0] != b'/' {
        return relative(dir_depth, target.to_vec(), policy);
    }
    match policy.absolute_symlinks {
        AbsoluteSymlinks::Reject => {
            Verdict::Refuse(Reason::SymlinkEscape, "absolute symlink target".into())
        }
        AbsoluteSymlinks::Keep => Verdict::Keep(target.to_vec()),
        AbsoluteSymlinks::Drop => Verdict::Drop,
        AbsoluteSymlinks::Rebase => {
            match rebase(dir_depth, target, policy.original_root.as_deref()) {
                // The rebased target may still climb out (`/orig/../etc`): check it as relative.
                Some(rel) => relative(dir_depth, rel, policy),
                // Not under the original root: it points outside the workspace, so it is an
                // escaping link and the escaping policy decides.
                None => match policy.escaping_symlinks {
                    EscapingSymlinks::Keep => Verdict::Keep(target.to_vec()),
                    EscapingSymlinks::Reject => Verdict::Refuse(
                        Reason::SymlinkEscape,
                        "absolute symlink target outside the original root".into(),
                    ),
                },
            }
        }
    }
}

fn relative(dir_depth: usize, target: Vec<u8>, policy: &Policy) -> Verdict {
    if escapes(dir_depth, &target) && policy.escaping_symlinks == EscapingSymlinks::Reject {
        return Verdict::Refuse(
            Reason::SymlinkEscape,
            "relative symlink target leaves the root".into(),
        );
    }
    Verdict::Keep(target)
}

/// True if `target`, resolved lexically from a directory `dir_depth` components below the
/// root, climbs above the root at any point.
pub(crate) fn escapes(dir_depth: usize, target: &[u8]) -> bool {
    let mut depth = dir_depth as i64;
    for comp in target.split(|&b| b == b'/') {
        match comp {
            b"" | b"." => {}
            b".." => {
                depth -= 1;
                if depth < 0 {
                    return true;
                }
            }
            _ => depth += 1,
        }
    }
    false
}

/// Rewrites an absolute `target` under `original_root` as a path relative to a directory
/// `dir_depth` components below the root; `None` if it is not under `original_root`.
fn rebase(dir_depth: usize, target: &[u8], original_root: Option<&[u8]>) -> Option<Vec<u8>> {
    let root = original_root?;
    let root_trimmed = trim_trailing_slashes(root);
    let rest = target.strip_prefix(root_trimmed)?;
    if !(rest.is_empty() || rest[0] == b'/' || root_trimmed.is_empty()) {
        return None; // `/work/rootx` is not under `/work/root`
    }
    let rest: Vec<&[u8]> = rest
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .collect();
    let mut parts: Vec<&[u8]> = vec![b".."; dir_depth];
    parts.extend(rest);
    if parts.is_empty() {
        return Some(b".".to_vec());
    }
    Some(parts.join(&b'/'))
}

fn trim_trailing_slashes(p: &[u8]) -> &[u8] {
    let mut end = p.len();
    while end > 0 && p[end - 1] == b'/' {
        end -= 1;
    }
    &p[..end]
}
