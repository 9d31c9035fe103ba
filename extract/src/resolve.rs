//! Resolving a symlink target through the archive's *own* symlinks, in memory.
//!
//! The lexical check in [`crate::symlink_target`] sees `x -> d/up/..` as contained, yet if
//! `d/up -> ..` is another member the kernel resolves `x` to the root's parent. Under
//! [`crate::EscapingSymlinks::Reject`] every kept relative link is therefore also resolved
//! here, against the planned tree (never the disk), following the archive's relative links
//! the way the kernel would: `..` after a symlink component applies to the link's
//! resolution, not to the name.
//!
//! Limits: after [`MAX_HOPS`] expansions in one resolution the walk stops and the link is
//! treated as contained (the kernel would answer `ELOOP`, which cannot escape either). A
//! link with an absolute target stops the walk too: absolute targets are
//! [`crate::AbsoluteSymlinks`]' business and were already accepted by it. All resolutions of
//! one archive share a budget of [`BUDGET`] component steps, so a crafted web of long chains
//! is refused (`limit-exceeded`) instead of burning CPU.

use crate::tree::{NodeId, Tree, ROOT};

/// Link expansions per resolution, as Linux's `MAXSYMLINKS`.
pub(crate) const MAX_HOPS: usize = 40;

/// Component steps allowed for all resolutions of one archive.
pub(crate) const BUDGET: u64 = 50_000_000;

/// The shared budget ran out.
#[derive(Debug)]
pub(crate) struct OverBudget;

/// True if resolving `target` from directory node `dir` climbs above the root; `link_of`
/// gives the target of a planned symlink node.
pub(crate) fn escapes<'a>(
    tree: &Tree,
    dir: NodeId,
    target: &'a [u8],
    link_of: &dyn Fn(NodeId) -> Option<&'a [u8]>,
    budget: &mut u64,
) -> Result<bool, OverBudget> {
    // The resolved position: the chain of nodes from the root; `None` once a component
    // names nothing planned (later components cannot name anything planned either, but
    // `..` still climbs).
    let mut stack: Vec<Option<NodeId>> = tree.ancestry(dir).into_iter().map(Some).collect();
    let mut pending: Vec<&'a [u8]> = target.split(|&b| b == b'/').rev().collect();
    let mut hops = 0;
    while let Some(comp) = pending.pop() {
        *budget = budget.checked_sub(1).ok_or(OverBudget)?;
        match comp {
            b"" | b"." => continue,
            b".." => {
                if stack.pop().is_none() {
                    return Ok(true);
                }
                continue;
            }
            _ => {}
        }
        let here = match stack.last() {
            None => Some(ROOT),
            Some(top) => *top,
        };
        let next = here.and_then(|p| tree.child(p, comp).ok().flatten());
        if let Some(link) = next.and_then(link_of) {
            hops += 1;
            if hops > MAX_HOPS || link.first() == Some(&b'/') {
                return Ok(false);
            }
            pending.extend(link.split(|&b| b == b'/').rev());
            continue;
        }
        stack.push(next);
    }
    Ok(false)
}
