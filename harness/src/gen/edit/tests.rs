//! Tests of the workspace edits.

use super::*;
use crate::gen::spec_strategy;
use proptest::strategy::{Strategy, ValueTree};

/// Every edit of every drawn workspace gives a valid workspace (or leaves it as it
/// was), and a long chain of them stays valid: the property shrinking relies on.
#[test]
fn edits_keep_workspaces_valid() {
    let cfg = GenConfig::default();
    let strategy = spec_strategy(&cfg);
    let mut changed = 0;
    for i in 0..60u64 {
        let mut runner = crate::gen::case_runner(7, i);
        let mut spec = strategy
            .new_tree(&mut runner)
            .expect("draw a workspace")
            .current();
        let mut rng = Rng::new(i);
        for _ in 0..20 {
            let edit = draw_edit(&mut rng);
            let next = apply_edit(&spec, &edit);
            assert_eq!(next.check(), Ok(()), "{edit:?} on {spec:?}");
            if next != spec {
                changed += 1;
            }
            spec = next;
        }
    }
    assert!(
        changed > 600,
        "most edits change the workspace: {changed} of 1200"
    );
}

/// Related priors: under the default weights some priors are W1 moved on (most of
/// W1's paths, and something W1 does not have or has differently), and none with the
/// weight at 0.
#[test]
fn some_priors_are_w1_moved_on() {
    let related = |cfg: &GenConfig| {
        let strategy = crate::gen::case_strategy(cfg);
        (0..300u64)
            .filter(|i| {
                let mut runner = crate::gen::case_runner(11, *i);
                let case = strategy.new_tree(&mut runner).expect("draw").current();
                let w1 = case.spec.with_parents();
                let w0 = case.prior.with_parents();
                let shared = w1.iter().filter(|e| w0.contains(e)).count();
                w1.len() >= 4 && shared * 4 >= w1.len() * 3 && w0 != w1
            })
            .count()
    };
    let on = related(&GenConfig::default());
    let off = related(&GenConfig {
        prior_edited_weight: 0,
        ..GenConfig::default()
    });
    assert!(on >= 10, "edited priors are drawn: {on} of 300");
    assert!(
        off * 4 < on,
        "and rarely otherwise: {off} of 300 without them"
    );
}

fn file(p: &str, c: &str) -> Entry {
    Entry {
        path: RelPath::new(p).expect("path"),
        kind: EntryKind::File { content: c.into() },
        mode: None,
    }
}

#[test]
fn delete_keeps_the_content_in_another_name_and_rename_moves_links() {
    let spec = WorkspaceSpec {
        entries: vec![
            file("d/f", "x"),
            Entry {
                path: RelPath::new("g").expect("path"),
                kind: EntryKind::Hardlink {
                    target: RelPath::new("d/f").expect("path"),
                },
                mode: None,
            },
            Entry {
                path: RelPath::new("e").expect("path"),
                kind: EntryKind::Dir,
                mode: None,
            },
        ],
        exclusions: vec![],
    };
    // Entry 0 is the implicit `d`.
    let gone = apply_edit(&spec, &Edit::Delete { entry: 0 });
    let names: Vec<String> = gone.entries.iter().map(|e| e.path.escaped()).collect();
    assert_eq!(names, ["g", "e"]);
    assert_eq!(
        gone.entries[0].kind,
        EntryKind::File {
            content: "x".into()
        }
    );
    // `d` into `e` (the only directory that is neither `d` nor its parent, the root).
    let moved = apply_edit(&spec, &Edit::Rename { entry: 0, dir: 0 });
    let names: Vec<String> = moved.entries.iter().map(|e| e.path.escaped()).collect();
    assert_eq!(names, ["e", "e/d", "e/d/f", "g"]);
    assert_eq!(
        moved.entries[3].kind,
        EntryKind::Hardlink {
            target: RelPath::new("e/d/f").expect("path")
        }
    );
}
