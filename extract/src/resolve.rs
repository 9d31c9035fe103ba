//! Resolving a symlink target through the archive's *own* symlinks, in memory.
//!
//! The lexical check in [`crate::symlink_target`] sees `x -> d/up/..` as contained, yet if
//! `d/up -> ..` is another member the kernel resolves `x` to the root's parent. Under
//! [`crate::EscapingSymlinks::Reject`] every kept relative link is therefore also resolved
//! here, against the planned tree (never the disk), following the archive's relative links
//! the way the kernel would: `..` after a symlink component applies to the link's
//! resolution, not to the name.
//!
//! Limits: after [`MAX_HOPS`] link expansions the walk stops and the link is treated as
//! contained (the kernel would answer `ELOOP`, which cannot escape either). A component that
//! meets a link with an absolute target stops the walk too: absolute targets are
//! [`crate::AbsoluteSymlinks`]' business and were already accepted by it.

/// Link expansions per resolution, as Linux's `MAXSYMLINKS`.
pub(crate) const MAX_HOPS: usize = 40;

/// True if resolving `target` from the directory `dir` (root-relative components) climbs
/// above the root; `link_of` gives the target of a planned symlink by root-relative path.
pub(crate) fn escapes<'a>(
    dir: &[&'a [u8]],
    target: &'a [u8],
    link_of: &dyn Fn(&[u8]) -> Option<&'a [u8]>,
) -> bool {
    let mut stack: Vec<&'a [u8]> = dir.to_vec();
    // Pending components, in reverse order (last to process at the front of the vec end).
    let mut pending: Vec<&'a [u8]> = target.split(|&b| b == b'/').rev().collect();
    let mut hops = 0;
    let mut path_buf: Vec<u8> = Vec::new();
    while let Some(comp) = pending.pop() {
        match comp {
            b"" | b"." => continue,
            b".." => {
                if stack.pop().is_none() {
                    return true;
                }
                continue;
            }
            _ => {}
        }
        stack.push(comp);
        path_buf.clear();
        for (i, c) in stack.iter().enumerate() {
            if i > 0 {
                path_buf.push(b'/');
            }
            path_buf.extend_from_slice(c);
        }
        if let Some(next) = link_of(&path_buf) {
            hops += 1;
            if hops > MAX_HOPS || next.first() == Some(&b'/') {
                return false;
            }
            stack.pop();
            pending.extend(next.split(|&b| b == b'/').rev());
        }
    }
    false
}
