//! Tests of drawing and shrinking cases.

use super::*;
use crate::gen::draw_case;
use crate::model::bytes::RelPath;
use crate::model::spec::{Entry, EntryKind, WorkspaceSpec};
use proptest::collection::vec;
use proptest::strategy::Strategy;
use proptest::strategy::ValueTree;
use std::convert::Infallible;

fn strategy() -> impl Strategy<Value = Case> {
    vec(0u8..20, 0..12).prop_map(|names| Case {
        spec: WorkspaceSpec {
            entries: names
                .iter()
                .enumerate()
                .filter_map(|(i, n)| {
                    Some(Entry {
                        path: RelPath::new(format!("f{i}-{n}")).ok()?,
                        kind: EntryKind::File {
                            content: "x".into(),
                        },
                        mode: None,
                    })
                })
                .collect(),
            exclusions: vec![],
        },
        prior: WorkspaceSpec::default(),
    })
}

/// The value tree of the first case drawn (seed 1) with at least 8 entries.
fn big_tree() -> impl ValueTree<Value = Case> {
    let s = strategy();
    (0..100)
        .map(|i| draw_case(&s, 1, i).expect("draw"))
        .find(|t| t.current().spec.entries.len() >= 8)
        .expect("some drawn case has 8 entries")
}

#[test]
fn minimise_removes_entries_that_do_not_matter() {
    let file = |p: &str| Entry {
        path: RelPath::new(p).expect("valid"),
        kind: EntryKind::File {
            content: "data".into(),
        },
        mode: Some(0o755),
    };
    let case = Case {
        spec: WorkspaceSpec {
            entries: vec![file("a"), file("b"), file("needle"), file("c")],
            exclusions: vec![RelPath::new("a").expect("valid")],
        },
        prior: WorkspaceSpec {
            entries: vec![file("p")],
            exclusions: vec![],
        },
    };
    // Property: "a case fails while it has an entry named needle".
    let fails = |c: &Case| {
        Ok::<_, Infallible>(
            c.spec
                .entries
                .iter()
                .any(|e| e.path.as_bytes() == b"needle"),
        )
    };
    let Shrunk { case: min, end, .. } =
        minimise(case, fails, ShrinkBudget::default(), Names::Shorten).expect("infallible");
    assert_eq!(end, ShrinkEnd::Minimal);
    assert_eq!(
        min.spec.entries.len(),
        1,
        "only the needle is left: {min:?}"
    );
    assert!(min.spec.exclusions.is_empty() && min.prior.entries.is_empty());
    assert_eq!(
        min.spec.entries[0].mode, None,
        "modes are reset when that still fails"
    );
    assert_eq!(
        min.spec.entries[0].kind,
        EntryKind::File { content: "".into() }
    );
}

#[test]
fn draws_are_reproducible_per_index() {
    let s = strategy();
    let a = draw_case(&s, 7, 3).expect("draw").current();
    let b = draw_case(&s, 7, 3).expect("draw").current();
    assert_eq!(a, b, "the same (seed, index) must give the same case");
    let differ = (0..20).any(|i| draw_case(&s, 7, i).expect("draw").current() != a);
    assert!(differ, "different indices must give different cases");
}

/// A shrink that a budget stops says which budget, and one that finishes says minimal.
#[test]
fn a_shrink_says_which_budget_stopped_it() {
    let big = big_tree;
    let fails = |c: &Case| Ok::<_, Infallible>(c.spec.entries.len() >= 3);
    let steps = ShrinkBudget {
        steps: 2,
        ..ShrinkBudget::default()
    };
    let out = minimise_tree(big().current(), fails, steps, Names::Shorten).expect("infallible");
    assert_eq!((out.end, out.tried), (ShrinkEnd::Steps, 2));
    let time = ShrinkBudget {
        time: Duration::ZERO,
        ..ShrinkBudget::default()
    };
    assert_eq!(
        minimise_tree(big().current(), fails, time, Names::Shorten)
            .expect("infallible")
            .end,
        ShrinkEnd::Time
    );
    let full = minimise_tree(
        big().current(),
        fails,
        ShrinkBudget::default(),
        Names::Shorten,
    )
    .expect("infallible");
    assert_eq!(full.end, ShrinkEnd::Minimal);
    let polished = minimise(big().current(), fails, steps, Names::Shorten).expect("infallible");
    assert_eq!((polished.end, polished.tried), (ShrinkEnd::Steps, 2));
    let polished = minimise(
        big().current(),
        fails,
        ShrinkBudget::default(),
        Names::Shorten,
    )
    .expect("infallible");
    assert_eq!(polished.end, ShrinkEnd::Minimal);
    assert_eq!(polished.case.spec.entries.len(), 3);
}

#[test]
fn reports_state_the_size_and_how_the_shrink_ended() {
    assert_eq!(ShrinkEnd::Minimal.describe(1), "shrunk to 1 entry");
    assert_eq!(ShrinkEnd::Minimal.describe(2), "shrunk to 2 entries");
    assert_eq!(
        ShrinkEnd::Time.describe(5),
        "shrunk to 5 entries, time budget ran out"
    );
    assert_eq!(
        ShrinkEnd::TotalSpent.describe(34),
        "34 entries, not shrunk: the run's --shrink-total was spent"
    );
}

#[test]
fn shrinking_reaches_a_minimal_failing_case() {
    // Property: "no case has 3 or more entries" fails; the minimal counterexample has 3.
    let tree = big_tree();
    let Shrunk {
        case: min, tried, ..
    } = minimise_tree(
        tree.current(),
        |c| Ok::<_, Infallible>(c.spec.entries.len() >= 3),
        ShrinkBudget::default(),
        Names::Shorten,
    )
    .expect("infallible");
    assert_eq!(
        min.spec.entries.len(),
        3,
        "shrunk to the smallest failing size after {tried} steps"
    );
}

/// An error of the predicate (a candidate that could not be run) stops both passes and
/// comes back as the error, instead of counting as "does not reproduce" and shrinking on.
#[test]
fn a_predicate_error_stops_the_shrink_with_that_error() {
    let tree = big_tree();
    let case = tree.current();
    let mut calls = 0;
    let mut broken = |c: &Case| {
        calls += 1;
        if calls == 3 {
            Err(format!(
                "cannot run candidate of {} entries",
                c.spec.entries.len()
            ))
        } else {
            Ok(c.spec.entries.len() >= 3)
        }
    };
    let err = minimise_tree(
        case.clone(),
        &mut broken,
        ShrinkBudget::default(),
        Names::Shorten,
    )
    .expect_err("stops");
    assert!(err.starts_with("cannot run candidate"), "{err}");
    assert_eq!(calls, 3, "no candidate is tried after the error");
    let mut polish_calls = 0;
    let err = minimise(
        case,
        |_: &Case| {
            polish_calls += 1;
            Err::<bool, _>("broken jail")
        },
        ShrinkBudget::default(),
        Names::Shorten,
    )
    .expect_err("stops");
    assert_eq!((err, polish_calls), ("broken jail", 1));
}

fn file(path: &str) -> Entry {
    Entry {
        path: RelPath::new(path).expect("path"),
        kind: EntryKind::File {
            content: "x".into(),
        },
        mode: None,
    }
}

/// A real tree of 1,000 entries with one culprit, a hardlink whose inode's first name
/// it needs: the culprit and that name are all that is left, in few runs, and names
/// that do not matter are shortened.
#[test]
fn a_real_tree_shrinks_to_its_culprit_and_what_the_culprit_needs() {
    let mut entries: Vec<Entry> = (0..1000)
        .map(|i| file(&format!("d{}/f{i}", i % 7)))
        .collect();
    entries.insert(
        600,
        Entry {
            path: RelPath::new("culprit").expect("path"),
            kind: EntryKind::Hardlink {
                target: RelPath::new("d3/f10").expect("path"),
            },
            mode: None,
        },
    );
    let case = Case {
        spec: WorkspaceSpec {
            entries,
            exclusions: vec![],
        },
        prior: WorkspaceSpec::default(),
    };
    assert!(case.spec.check().is_ok());
    let mut runs = 0;
    let fails = |c: &Case| -> Result<bool, Infallible> {
        runs += 1;
        Ok(c.spec.entries.iter().any(|e| {
            e.path.as_bytes() == b"culprit" && matches!(e.kind, EntryKind::Hardlink { .. })
        }))
    };
    let budget = ShrinkBudget {
        steps: 400,
        time: Duration::from_secs(60),
    };
    let shrunk = minimise_tree(case, fails, budget, Names::Shorten).expect("infallible");
    let names: Vec<String> = shrunk
        .case
        .spec
        .entries
        .iter()
        .map(|e| String::from_utf8_lossy(e.path.as_bytes()).into_owned())
        .collect();
    // The first name is kept, shortened, and the hardlink still names it.
    assert_eq!(names, ["d3/a", "culprit"]);
    assert_eq!(
        shrunk.case.spec.entries[1].kind,
        EntryKind::Hardlink {
            target: RelPath::new("d3/a").expect("path")
        }
    );
    assert_eq!(shrunk.end, ShrinkEnd::Minimal);
    assert!(runs < 80, "{runs} runs");
}

/// A stratified case stripped to its stratum ([`simplest_with`]): for every stratum of the
/// default config at three seeds, the case keeps the stratum's shapes, holds a few
/// entries (the culprit entry and what it names, a parent made implicit), and is the
/// same when drawn twice; the case past the strata is left as drawn.
#[test]
fn a_stratified_case_is_stripped_to_its_stratum() {
    let cfg = crate::gen::GenConfig::default();
    let strata = crate::gen::Strata::new(&cfg);
    let strategy = crate::gen::case_strategy(&cfg);
    let mut biggest = 0;
    for seed in [2, 3, 4] {
        for i in 0..strata.len() as u64 {
            let shapes = strata.stratum(i).expect("stratified");
            let drawn = strata.draw(&strategy, seed, i).expect("draws").current();
            let simple = simplest_with(drawn.clone(), shapes);
            assert!(crate::gen::has_shapes(&simple, shapes), "{shapes:?}");
            assert_eq!(simple, simplest_with(drawn.clone(), shapes));
            let size = simple.spec.entries.len() + simple.prior.entries.len();
            assert!(size <= drawn.spec.entries.len() + drawn.prior.entries.len());
            assert!(size <= 4, "seed {seed} {shapes:?}: {simple:#?}");
            biggest = biggest.max(size);
        }
    }
    eprintln!("largest stratified case: {biggest} entries");
    let past = strata.len() as u64;
    let drawn = crate::gen::draw_case(&strategy, 2, past)
        .expect("draws")
        .current();
    assert_eq!(simplest_with(drawn.clone(), &["no-such-shape"]), drawn);
}

/// A hardlink the finding does not need as one becomes a plain file (so an excluded alias
/// that any excluded file stands for leaves the shrunk case, and with it the
/// `excluded-alias` trigger); one the finding needs stays.
#[test]
fn a_hardlink_not_needed_as_one_becomes_a_file() {
    let case = Case {
        spec: WorkspaceSpec {
            entries: vec![
                file("a"),
                Entry {
                    path: RelPath::new("d/b").expect("path"),
                    kind: EntryKind::Hardlink {
                        target: RelPath::new("a").expect("path"),
                    },
                    mode: None,
                },
            ],
            exclusions: vec![RelPath::new("d/b").expect("path")],
        },
        prior: WorkspaceSpec::default(),
    };
    let link = |c: &Case| {
        c.spec
            .entries
            .iter()
            .any(|e| matches!(e.kind, EntryKind::Hardlink { .. }))
    };
    let excludes = |c: &Case| Ok::<_, Infallible>(!c.spec.exclusions.is_empty());
    let shrunk = minimise_tree(case.clone(), excludes, ShrinkBudget::default(), Names::Keep)
        .expect("infallible");
    assert!(!link(&shrunk.case), "{:?}", shrunk.case);
    assert_eq!(shrunk.case.spec.exclusions.len(), 1);
    let needs_link = |c: &Case| Ok::<_, Infallible>(link(c));
    let kept =
        minimise_tree(case, needs_link, ShrinkBudget::default(), Names::Keep).expect("infallible");
    assert!(link(&kept.case));
}
