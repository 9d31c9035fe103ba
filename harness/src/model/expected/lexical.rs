//! Symlink targets read as strings, without the tree: does a target climb above the root,
//! and an absolute target rebased relative to its link.

use crate::model::bytes::RelPath;
use crate::model::links;

/// Components of the link's directory (empty at top level).
pub(super) fn parent_components(link: &RelPath) -> Vec<&[u8]> {
    let mut comps: Vec<&[u8]> = link.components().collect();
    comps.pop();
    comps
}

/// True if `target`, read from the directory `dir` without following links, climbs above
/// the root at some point (`..` past the top; see [`links::lexical`]).
pub(super) fn escapes(dir: &[&[u8]], target: &[u8]) -> bool {
    matches!(
        links::lexical(dir, target, links::AboveRoot::Leaves),
        links::End::Leaves(_)
    )
}

/// `target` (absolute, already resolved) rewritten relative to the link's directory if it
/// lies under `root`; verbatim otherwise (see [`expected`]).
pub(super) fn rebase(link: &RelPath, target: &[u8], root: &[u8]) -> Vec<u8> {
    if root.is_empty() {
        return target.to_vec();
    }
    let mut trimmed = root;
    while let Some(t) = trimmed.strip_suffix(b"/") {
        trimmed = t;
    }
    let rest = if !trimmed.is_empty() && target == trimmed {
        &b""[..]
    } else {
        match target.strip_prefix(trimmed) {
            Some(r) if r.starts_with(b"/") => r,
            _ => return target.to_vec(),
        }
    };
    let mut rest = rest;
    while let Some(r) = rest.strip_prefix(b"/") {
        rest = r;
    }
    if escapes(&[], rest) {
        return target.to_vec();
    }
    let ups = link.depth().saturating_sub(1);
    let mut out: Vec<u8> = Vec::new();
    for i in 0..ups {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(b"..");
    }
    if !rest.is_empty() {
        if !out.is_empty() {
            out.push(b'/');
        }
        out.extend_from_slice(rest);
    }
    if out.is_empty() {
        out.push(b'.');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;

    /// `rebase` edge cases: trailing slashes on the root, `//` after it, the root `/`, an
    /// empty root (no rebasing), and a target that climbs back out.
    #[test]
    fn rebase_edges() {
        let link = p("a/l");
        let r = |target: &str, root: &str| {
            escape_bytes(&rebase(&link, target.as_bytes(), root.as_bytes()))
        };
        assert_eq!(r("/j/root/x", "/j/root/"), "../x");
        assert_eq!(r("/j/root//x/", "/j/root"), "../x/");
        assert_eq!(r("/j/root", "/j/root//"), "..");
        assert_eq!(r("/etc/x", "/"), "../etc/x");
        assert_eq!(r("/j/root/x", ""), "/j/root/x");
        assert_eq!(r("/j/root/x/../../y", "/j/root"), "/j/root/x/../../y");
        assert_eq!(r("/j/root/x/../y", "/j/root"), "../x/../y");
    }

    /// `escapes` reads `..` lexically from the link's directory.
    #[test]
    fn escapes_is_lexical() {
        let at = |dir: &[&str], t: &str| {
            let comps: Vec<&[u8]> = dir.iter().map(|c| c.as_bytes()).collect();
            escapes(&comps, t.as_bytes())
        };
        assert!(at(&[], ".."));
        assert!(!at(&["a"], ".."));
        assert!(at(&["a"], "../.."));
        assert!(
            at(&["a"], "x/../../../a"),
            "leaves and comes back: still escaping"
        );
        assert!(!at(&[], "./a//b/."));
    }
}
