//! [`normalise`]: the profile's mode and inode-sharing rules applied to a tree, so that an
//! expected and an observed tree compare only what the profile promises.

use crate::model::profile::{HardlinkRule, ModeRule, Profile};
use crate::model::tree::{Node, NodeKind, Tree};

/// The permission bits `rule` compares for a node of `kind` (the others are cleared by
/// [`normalise`] and shown as `?` by [`crate::model::diff::ModeShown`]): every bit under
/// `exact`, the owner-execute bit of files under `exec-bit`, `0o755` under `data-filter`,
/// none under `ignore`, and none of a symlink's.
pub fn compared_mode_bits(kind: &NodeKind, rule: ModeRule) -> u32 {
    match (kind, rule) {
        (NodeKind::Symlink { .. }, _) => 0,
        (_, ModeRule::Exact) => 0o7777,
        (NodeKind::File { .. }, ModeRule::ExecBit) => 0o100,
        (_, ModeRule::ExecBit) => 0,
        (_, ModeRule::DataFilter) => 0o7777 & !0o7022,
        (_, ModeRule::Ignore) => 0,
    }
}

/// Apply the profile's mode rule to every node and keep `shared_inodes` only under
/// `hardlinks = preserve`:
/// - `exact`: modes as they are;
/// - `exec-bit`: files keep only the owner-execute bit `0o100`; every other node gets 0;
/// - `data-filter`: `mode & !0o7022` (no setuid/setgid/sticky, no group/other write);
/// - `ignore`: 0 for every node.
///
/// Symlinks always have mode 0.
pub fn normalise(tree: &Tree, profile: &Profile) -> Tree {
    let nodes = tree
        .nodes
        .iter()
        .map(|(path, node)| {
            let mode = node.mode & compared_mode_bits(&node.kind, profile.modes);
            let node = Node {
                kind: node.kind.clone(),
                mode,
            };
            (path.clone(), node)
        })
        .collect();
    let shared_inodes = if profile.hardlinks == HardlinkRule::Preserve {
        tree.shared_inodes.clone()
    } else {
        Vec::new()
    };
    Tree {
        nodes,
        shared_inodes,
    }
}

#[cfg(test)]
mod tests {
    use super::super::expected;
    use super::super::fixtures::*;
    use super::*;

    /// `normalise` drops inode groups unless `preserve`, and is idempotent.
    #[test]
    fn normalise_drops_groups_unless_preserve_and_is_idempotent() {
        let e = expected(&h1(), &exact(), &ph());
        assert_eq!(e.tree.shared_inodes.len(), 1);
        for rule in [
            HardlinkRule::Copy,
            HardlinkRule::RefuseAtCapture,
            HardlinkRule::RefuseExcludedAlias,
        ] {
            let profile = Profile {
                hardlinks: rule,
                modes: ModeRule::ExecBit,
                ..exact()
            };
            let n = normalise(&e.tree, &profile);
            assert!(n.shared_inodes.is_empty(), "{rule:?}");
            assert_eq!(normalise(&n, &profile), n, "normalise must be idempotent");
        }
    }
}
