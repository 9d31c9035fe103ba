//! Properties of [`expected`] over generated specs and every profile.

use super::{arb, expected, features, normalise};
use crate::model::bytes::RelPath;
use crate::model::diff::{diff_trees, listing};
use crate::model::profile::{
    AbsoluteRule, EscapingRule, HardlinkRule, ModeRule, Profile, SpecialRule,
};
use crate::model::spec::Placeholders;
use crate::model::tree::NodeKind;
use proptest::prelude::*;
use std::collections::BTreeSet;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// For every spec and profile, the expected tree is well formed: nothing at or
    /// under an exclusion, no socket, no FIFO or device under `drop`, every parent a
    /// directory in the tree, modes already normalised, groups of two or more present
    /// names (none unless `preserve`), refusable paths are kept spec paths, and the
    /// listing has one line per node and group.
    #[test]
    fn expected_tree_is_well_formed(spec in arb::spec(), profile in arb::profile()) {
        let ph = Placeholders { root: b"/j/root".to_vec(), out: b"/j/out".to_vec() };
        let e = expected(&spec, &profile, &ph);
        for (path, node) in &e.tree.nodes {
            prop_assert!(!spec.is_excluded(path), "excluded `{}` is expected", path);
            prop_assert!(!matches!(node.kind, NodeKind::Socket), "socket `{}` expected", path);
            if profile.special_files == SpecialRule::Drop {
                prop_assert!(
                    !matches!(node.kind, NodeKind::Fifo | NodeKind::CharDevice { .. }),
                    "special `{}` expected under drop", path
                );
            }
            if let Some(parent) = path.parent() {
                let kind = e.tree.nodes.get(&parent).map(|n| &n.kind);
                prop_assert_eq!(kind, Some(&NodeKind::Dir), "parent of `{}` is not a dir", path);
            }
        }
        prop_assert_eq!(&normalise(&e.tree, &profile), &e.tree, "normalise is not idempotent");
        if profile.hardlinks != HardlinkRule::Preserve {
            prop_assert!(e.tree.shared_inodes.is_empty(), "groups outside preserve");
        }
        for group in &e.tree.shared_inodes {
            prop_assert!(group.len() >= 2, "group of one: {:?}", group);
            prop_assert!(group.windows(2).all(|w| w[0] < w[1]), "unsorted group {:?}", group);
            prop_assert!(group.iter().all(|p| e.tree.nodes.contains_key(p)), "absent name in {:?}", group);
        }
        let known: BTreeSet<RelPath> = spec.with_parents().into_iter().map(|e| e.path).collect();
        for (path, feature) in &e.refusable {
            prop_assert!(known.contains(path) && !spec.is_excluded(path), "refusable `{}` ({})", path, feature);
        }
        let lines = listing(&e.tree).lines().count();
        prop_assert_eq!(lines, e.tree.nodes.len() + e.tree.shared_inodes.len(), "one listing line each");
        let same = diff_trees(&e.tree, &e.tree);
        prop_assert!(same.is_empty() && same.to_string().is_empty(), "a tree differs from itself");
    }

    /// `features` agrees with `expected`: a spec whose expected tree under the strictest
    /// refusing profile lists a refusal for a feature also reports that feature.
    #[test]
    fn refusals_imply_features(spec in arb::spec()) {
        let profile = Profile {
            name: "refuse-all".into(),
            hardlinks: HardlinkRule::RefuseAtCapture,
            special_files: SpecialRule::RefuseAtCapture,
            absolute_symlinks: AbsoluteRule::RefuseAtCapture,
            escaping_symlinks: EscapingRule::RefuseAtCapture,
            modes: ModeRule::Exact,
            mtimes: crate::model::profile::MtimeRule::Ignore,
        };
        let found = features(&spec);
        for (path, feature) in expected(&spec, &profile, &Placeholders::default()).refusable {
            prop_assert!(found.contains(&feature), "`{}` refusable for {} but features {:?}", path, feature, found);
        }
    }
}
