//! Tests of the strata: every stratum reached within the bound with the default config,
//! draws that are pure functions of `(seed, index)`, turned-off shapes skipped, and the
//! one-entry rule of a pair.

use super::*;
use crate::gen::builder::Builder;
use crate::gen::case_strategy;
use crate::model::bytes::RelPath;
use crate::model::spec::{Entry, EntryKind, WorkspaceSpec};
use std::collections::BTreeSet;
use std::time::Instant;

fn every_shape(cfg: &GenConfig) -> Vec<&'static str> {
    SPEC_SHAPES
        .iter()
        .chain(PRIOR_SHAPES)
        .copied()
        .filter(|s| cfg.allow_char_devices || *s != "chardev")
        .collect()
}

/// Property: with the default config every stratum is drawn within [`MAX_ATTEMPTS`] (no
/// fallback) at three seeds, the case has the stratum's shapes, and the strata hold every
/// coverage shape; the draws a stratum took and the time are printed
/// (`--nocapture`).
#[test]
fn strata_are_reachable_within_the_bound() {
    let cfg = GenConfig::default();
    let strata = Strata::new(&cfg);
    let strategy = case_strategy(&cfg);
    let mut worst: Vec<(u32, String)> = Vec::new();
    let mut total = 0u64;
    let start = Instant::now();
    for seed in [2, 3, 4] {
        for i in 0..strata.len() as u64 {
            let shapes = strata.stratum(i).expect("stratified").to_vec();
            let (tree, tries) = strata.draw_counted(&strategy, seed, i).expect("draws");
            let tries = tries.unwrap_or_else(|| {
                panic!("seed {seed}: stratum {i} {shapes:?} not reached in {MAX_ATTEMPTS} draws")
            });
            assert!(has_shapes(&tree.current(), &shapes), "{shapes:?}");
            total += u64::from(tries);
            worst.push((tries, format!("seed {seed} {shapes:?}")));
        }
    }
    worst.sort();
    eprintln!(
        "{} strata x 3 seeds: {total} draws in {:?}; most: {:?}",
        strata.len(),
        start.elapsed(),
        &worst[worst.len().saturating_sub(5)..]
    );
    let held: BTreeSet<&str> = strata.strata.iter().flatten().copied().collect();
    let missing: Vec<_> = every_shape(&cfg)
        .into_iter()
        .filter(|s| !held.contains(s))
        .collect();
    assert!(missing.is_empty(), "shapes no stratum holds: {missing:?}");
}

/// The list is every shape once, the strata are well under the default 100 cases, and the
/// pairs come first.
#[test]
fn strata_are_every_shape_once_pairs_first() {
    let mut singles = SINGLES.to_vec();
    singles.sort_unstable();
    let mut all: Vec<&str> = SPEC_SHAPES.iter().chain(PRIOR_SHAPES).copied().collect();
    all.sort_unstable();
    assert_eq!(singles, all, "SINGLES lists every coverage shape once");
    let cfg = GenConfig {
        allow_char_devices: true,
        ..GenConfig::default()
    };
    let strata = Strata::new(&cfg);
    assert_eq!(strata.len(), 54, "{strata:?}");
    let pairs = strata.strata.iter().take_while(|s| s.len() >= 2).count();
    assert_eq!(pairs, 18);
    assert!(strata.strata[pairs..].iter().all(|s| s.len() == 1));
}

/// Case `i` is a pure function of `(seed, i)`: drawn twice it is the same; another seed
/// draws another case; past the strata it is the plain draw.
#[test]
fn stratified_draws_are_pure() {
    let cfg = GenConfig::default();
    let strata = Strata::new(&cfg);
    let strategy = case_strategy(&cfg);
    let draw = |seed, i| strata.draw(&strategy, seed, i).expect("draws").current();
    for i in [0, 5, 20] {
        assert_eq!(draw(9, i), draw(9, i), "case {i}");
    }
    assert!((0..10).any(|i| draw(9, i) != draw(10, i)));
    let past = strata.len() as u64 + 3;
    assert_eq!(
        draw(9, past),
        draw_case(&strategy, 9, past).expect("draws").current()
    );
}

/// A shape the config turns off is not a stratum (the strata move up); with every weight
/// zero, a stratified case that cannot be reached falls back to the plain draw after at
/// most [`MAX_ATTEMPTS`] draws.
#[test]
fn turned_off_shapes_are_skipped() {
    let full = Strata::new(&GenConfig::default());
    let cfg = GenConfig {
        symlink_abs_out_weight: 0,
        fifo_weight: 0,
        ..GenConfig::default()
    };
    let strata = Strata::new(&cfg);
    let held = |s: &Strata, shape| s.strata.iter().any(|x| x.contains(&shape));
    assert!(held(&full, "symlink-abs-out") && held(&full, "fifo"));
    assert!(!held(&strata, "symlink-abs-out") && !held(&strata, "fifo"));
    // The pair goes, and `fifo`; `symlink-abs-out` alone was never a stratum (the pair
    // held it).
    assert_eq!(strata.len(), full.len() - 2, "{strata:?}");

    let zero = GenConfig {
        max_entries: 0,
        max_prior_entries: 0,
        realistic_weight: 0,
        ..GenConfig::default()
    };
    let strata = Strata::new(&zero);
    let names: Vec<_> = strata.strata.iter().flatten().collect();
    assert_eq!(names, [&"empty-workspace", &"prior-empty", &"file"]);
    let strategy = case_strategy(&zero);
    for i in 0..strata.len() as u64 {
        let (tree, tries) = strata.draw_counted(&strategy, 1, i).expect("draws");
        let case = tree.current();
        match tries {
            Some(_) => assert!(has_shapes(&case, strata.stratum(i).expect("some"))),
            None => assert_eq!(case, draw_case(&strategy, 1, i).expect("draws").current()),
        }
    }
}

fn entry(path: &str, kind: EntryKind) -> Entry {
    Entry {
        path: RelPath::new(path).expect("valid path"),
        kind,
        mode: None,
    }
}

fn hardlink(target: &str) -> EntryKind {
    EntryKind::Hardlink {
        target: RelPath::new(target).expect("valid path"),
    }
}

/// Two shapes of a pair must meet in one entry (a hardlink with what it names): a
/// hardlink in another directory to an absolute symlink has the pair (beside it, not); a hardlink to a relative symlink beside
/// an unrelated absolute one has both shapes, not the pair.
#[test]
fn a_pair_meets_in_one_entry() {
    let pair = ["hardlink-to-symlink", "symlink-abs-out"];
    let case = |entries| Case {
        spec: WorkspaceSpec {
            entries,
            exclusions: vec![],
        },
        prior: WorkspaceSpec::default(),
    };
    let linked = case(vec![
        entry("s", Builder::symlink(b"{out}/decoy/file".to_vec())),
        entry("d/h", hardlink("s")),
    ]);
    assert!(has_shapes(&linked, &pair));
    // In the symlink's own directory the second name is not the pair.
    let beside = case(vec![
        entry("s", Builder::symlink(b"{out}/decoy/file".to_vec())),
        entry("h", hardlink("s")),
    ]);
    assert!(has_shapes(&beside, &pair[..1]) && has_shapes(&beside, &pair[1..]));
    assert!(!has_shapes(&beside, &pair));
    let apart = case(vec![
        entry("f", Builder::file(b"x".to_vec())),
        entry("s", Builder::symlink(b"f".to_vec())),
        entry("d/h", hardlink("s")),
        entry("o", Builder::symlink(b"{out}/target".to_vec())),
    ]);
    assert!(has_shapes(&apart, &pair[..1]) && has_shapes(&apart, &pair[1..]));
    assert!(!has_shapes(&apart, &pair));
    assert!(has_shapes(
        &apart,
        &["hardlink-to-symlink", "symlink-relative-ok"]
    ));
    // A hardlink carries what its symlink's target is, not where a file it names lies.
    let deep = "d".repeat(120);
    let named = case(vec![
        entry(&format!("{deep}/f"), Builder::file(b"x".to_vec())),
        entry("new\nline", hardlink(&format!("{deep}/f"))),
    ]);
    assert!(has_shapes(&named, &["name-newline"]) && has_shapes(&named, &["path-over-100"]));
    assert!(!has_shapes(&named, &["name-newline", "path-over-100"]));
}

/// An odd name meets a long path in one entry only as a directory of that entry's path
/// (what `tar-rs` refuses to unpack, seeds 3, 4 and 12 of the default job): a long path
/// ending in a newline name is not the pair, one passing through such a directory is,
/// for a newline and for bytes that are not UTF-8.
#[test]
fn an_odd_name_meets_a_long_path_as_a_directory() {
    let case = |path: Vec<u8>| Case {
        spec: WorkspaceSpec {
            entries: vec![Entry {
                path: RelPath::new(path).expect("a path"),
                ..entry("x", Builder::file(b"x".to_vec()))
            }],
            exclusions: vec![],
        },
        prior: WorkspaceSpec::default(),
    };
    let deep = "d".repeat(120).into_bytes();
    for (odd, shape) in [
        (&b"new\nline"[..], "name-newline"),
        (b"bad\xff", "name-non-utf8"),
    ] {
        let pair = [shape, "path-over-100"];
        let leaf = case([&deep[..], b"/", odd].concat());
        assert!(has_shapes(&leaf, &[shape]) && has_shapes(&leaf, &pair[1..]));
        assert!(!has_shapes(&leaf, &pair), "{shape} as the last component");
        let under = case([odd, b"/", &deep[..], b"/f"].concat());
        assert!(has_shapes(&under, &pair), "{shape} as a directory");
    }
}

/// A relative target that leaves the root from one name of a hardlinked symlink and not
/// from the other is the pair `hardlink-to-symlink` × `symlink-escaping-at-one-name`,
/// whichever name is the deeper; a target that leaves from both, or an absolute one, is not.
#[test]
fn a_target_escaping_from_one_name_only_is_its_own_pair() {
    let pair = ["hardlink-to-symlink", ESCAPING_AT_ONE_NAME];
    let case = |link: &str, to: &[u8], second: &str| Case {
        spec: WorkspaceSpec {
            entries: vec![
                entry(link, Builder::symlink(to.to_vec())),
                entry(second, hardlink(link)),
            ],
            exclusions: vec![],
        },
        prior: WorkspaceSpec::default(),
    };
    assert!(has_shapes(&case("a/b/s", b"../../x", "a/h"), &pair));
    assert!(has_shapes(&case("a/s", b"../../x", "a/b/c/h"), &pair));
    assert!(!has_shapes(&case("s", b"../../x", "d/h"), &pair));
    assert!(!has_shapes(&case("a/s", b"/etc", "h"), &pair));
    assert!(!has_shapes(&case("a/s", b"x", "b/h"), &pair));
}
