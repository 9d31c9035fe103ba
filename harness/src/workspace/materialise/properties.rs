//! Property tests of [`super`]: a materialised spec observes as its expected tree (under the
//! strict profile of the unit tests).

use super::tests::strict;
use super::*;
use crate::model::diff::diff_trees;
use crate::model::expected::{arb, expected};
use crate::model::tree::NodeKind;
use crate::workspace::observe::observe;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// For every valid spec, observe(materialise(spec)) equals expected(spec) under a
    /// profile that keeps and compares everything (exact modes, preserved inodes,
    /// specials and links kept), except sockets, which `expected` always drops: those
    /// are compared with the spec's sockets directly. `remove_tree` then leaves nothing.
    #[test]
    fn materialise_observe_round_trip(mut spec in arb::spec()) {
        spec.exclusions.clear();
        let jail = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let root = jail.path().join("root");
        let ph = Placeholders {
            root: root.as_os_str().as_bytes().to_vec(),
            out: jail.path().join("out").as_os_str().as_bytes().to_vec(),
        };
        let made = materialise(&spec, &root, &ph)
            .map_err(|e| TestCaseError::fail(format!("materialise: {e}")))?;
        let mut observed = observe(&root).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let sockets: Vec<RelPath> = observed
            .nodes
            .iter()
            .filter(|(_, n)| matches!(n.kind, NodeKind::Socket))
            .map(|(p, _)| p.clone())
            .collect();
        let want_sockets: Vec<RelPath> = {
            let mut v: Vec<RelPath> = spec
                .entries
                .iter()
                .filter(|e| matches!(e.kind, EntryKind::Socket))
                .map(|e| e.path.clone())
                .collect();
            v.sort();
            v
        };
        prop_assert_eq!(&sockets, &want_sockets, "sockets on disk");
        for s in &sockets {
            observed.nodes.remove(s);
        }
        let mut want = expected(&spec, &strict(), &ph).tree;
        for (path, _) in &made.skipped {
            want.nodes.remove(path);
        }
        let diff = diff_trees(&want, &observed);
        prop_assert!(diff.is_empty(), "round trip differs:\n{}", diff);
        remove_tree(jail.path()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(!jail.path().exists(), "remove_tree left the jail");
    }
}
