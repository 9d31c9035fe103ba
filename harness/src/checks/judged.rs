//! The reference's judgement of one archive ([`Judged`]) and what in an observed tree lies
//! outside every profile's policy ([`privileged_or_special`]): the evidence of
//! `unsafe-accept`.

use crate::archive::listing::Member;
use crate::model::tree::{NodeKind, Tree};

/// The reference's judgement of one archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    /// `Some(reason)` when the reference refuses it for a reason that means unsafe (one of
    /// the fuzzer's `UNSAFE_REASONS`: a write outside the root, through a link, a special file).
    pub unsafe_reason: Option<String>,
    /// True if some member asks for a setuid or setgid bit that the profile's modes rule
    /// strips (anything but `exact`).
    pub privileged_mode: bool,
    /// The reference's verdict in one line (`accept`, `refuse (<reason>)`).
    pub verdict: String,
    /// The archive's members in order as the reference parser reads them, whatever its
    /// verdict (names in normal form; empty when the bytes cannot be listed to the end):
    /// what `traversal` replays against the root.
    pub members: Vec<Member>,
}

/// What in an observed tree lies outside policy: special files (every profile drops or
/// refuses them) and setuid/setgid bits when `strip_privileged`. One line per path.
pub fn privileged_or_special(tree: &Tree, strip_privileged: bool) -> Vec<String> {
    let mut out = Vec::new();
    for (p, n) in &tree.nodes {
        let what = match n.kind {
            NodeKind::Fifo => Some("a FIFO".to_string()),
            NodeKind::Socket => Some("a socket".to_string()),
            NodeKind::CharDevice { major, minor } => {
                Some(format!("a character device {major},{minor}"))
            }
            NodeKind::BlockDevice { major, minor } => {
                Some(format!("a block device {major},{minor}"))
            }
            _ if strip_privileged && n.mode & 0o6000 != 0 => {
                Some(format!("mode {:04o} (setuid/setgid kept)", n.mode))
            }
            _ => None,
        };
        if let Some(w) = what {
            out.push(format!("`{}` is {w}", p.escaped()));
        }
    }
    out
}
