//! Tests of the generators: validity of every value and shrink step, shape coverage at a
//! fixed seed, disabled weights, the config's env/TOML forms, and the H1–H8 edge specs.

use super::*;
use crate::model::spec::{Case, EntryKind, WorkspaceSpec};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::collections::{BTreeMap, BTreeSet};

fn runner(seed: u8) -> TestRunner {
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]),
    )
}

/// How many of `n` cases from `cfg` (fixed seed) show each coverage shape.
fn frequencies(cfg: &GenConfig, n: usize, seed: u8) -> BTreeMap<&'static str, usize> {
    let strategy = case_strategy(cfg);
    let mut runner = runner(seed);
    let mut freq = BTreeMap::new();
    for _ in 0..n {
        let case = strategy
            .new_tree(&mut runner)
            .expect("case strategy never rejects")
            .current();
        if !cfg.newline_exclusions {
            assert!(
                !case
                    .spec
                    .exclusions
                    .iter()
                    .any(|x| x.as_bytes().contains(&b'\n')),
                "without newline-exclusions no exclusion holds a newline: {case:?}"
            );
        }
        for f in case_shapes(&case) {
            *freq.entry(f).or_insert(0) += 1;
        }
    }
    freq
}

fn expected_shapes(cfg: &GenConfig) -> BTreeSet<&'static str> {
    SPEC_SHAPES
        .iter()
        .chain(PRIOR_SHAPES)
        .copied()
        .filter(|f| cfg.allow_char_devices || *f != "chardev")
        .collect()
}

/// Property: over 400 cases at a fixed seed, with the default config, every coverage shape
/// (W1 and prior) appears at least once.
#[test]
fn every_shape_appears_at_a_fixed_seed() {
    let cfg = GenConfig::default();
    let freq = frequencies(&cfg, 400, 1);
    let missing: Vec<_> = expected_shapes(&cfg)
        .into_iter()
        .filter(|f| !freq.contains_key(f))
        .collect();
    assert!(
        missing.is_empty(),
        "every shape appears in 400 default cases; missing {missing:?}, seen {freq:?}"
    );
}

/// Shape frequencies over 500 default cases, for the report (`--ignored --nocapture`).
#[test]
#[ignore]
fn print_shape_frequencies() {
    for (f, n) in frequencies(&GenConfig::default(), 500, 2) {
        println!("{f:32} {n:4} / 500");
    }
}

fn assert_valid(case: &Case, step: &str) {
    assert_eq!(
        case.spec.check(),
        Ok(()),
        "every W1 ({step}) passes check: {case:?}"
    );
    assert_eq!(
        case.prior.check(),
        Ok(()),
        "every W0 ({step}) passes check: {case:?}"
    );
    assert!(
        case.prior.exclusions.is_empty(),
        "a prior has no exclusions"
    );
}

/// Drive `simplify`/`complicate` as a shrinking runner would (a candidate is "kept" on two
/// steps out of three) and check every value seen; returns the number of steps.
fn walk_shrinks(strategy: &impl Strategy<Value = Case>, cases: usize, seed: u8) -> usize {
    let mut runner = runner(seed);
    let mut steps = 0;
    for i in 0..cases {
        let mut tree = strategy.new_tree(&mut runner).expect("never rejects");
        assert_valid(&tree.current(), "generated");
        for step in 0..300usize {
            if (step + i) % 3 == 2 {
                if tree.complicate() {
                    assert_valid(&tree.current(), "complicate step");
                }
                continue;
            }
            let before = tree.current();
            if !tree.simplify() {
                break;
            }
            steps += 1;
            let after = tree.current();
            assert_valid(&after, "simplify step");
            assert!(
                case_size(&after) <= case_size(&before),
                "a simplify step never makes the case larger: {} -> {}\n{before:?}\n{after:?}",
                case_size(&before),
                case_size(&after)
            );
        }
    }
    steps
}

/// Property: every generated case and every value reached by simplify/complicate passes
/// `WorkspaceSpec::check` (W1 and W0), and no simplify step makes the case larger.
#[test]
fn generated_cases_and_shrink_steps_pass_check() {
    let steps = walk_shrinks(&case_strategy(&GenConfig::default()), 200, 3);
    assert!(steps > 1000, "shrinking takes steps ({steps})");
}

/// Property: simplifying without ever complicating (every step "still fails") goes through
/// valid values and ends at (nearly) the empty case. Not always exactly empty: `NoLarger`
/// skips a larger candidate by telling the inner tree it did not reproduce, and the inner
/// tree then keeps what that step would have removed.
#[test]
fn full_simplification_reaches_a_tiny_case() {
    let strategy = case_strategy(&GenConfig::default());
    let mut runner = runner(4);
    let mut ends = Vec::new();
    for _ in 0..200 {
        let mut tree = strategy.new_tree(&mut runner).expect("never rejects");
        let mut guard = 0;
        while tree.simplify() && guard < 100_000 {
            guard += 1;
            assert_valid(&tree.current(), "simplify");
        }
        ends.push(case_size(&tree.current()));
    }
    let empty = ends.iter().filter(|n| **n == 0).count();
    let largest = ends.iter().max().copied().unwrap_or(0);
    println!("full simplification: {empty}/200 end empty, largest end size {largest}");
    assert!(
        empty >= 190 && largest <= 3,
        "full simplification ends empty in at least 190 of 200 cases and never above 3 \
         entries: {empty} empty, largest {largest}"
    );
}

proptest! {
    /// Property: specs and priors from the public strategies pass `check`.
    #[test]
    fn spec_and_prior_strategies_pass_check(
        (w1, w0) in spec_strategy(&GenConfig::default())
            .prop_flat_map(|w1| (Just(w1.clone()), prior_strategy(&GenConfig::default(), &w1)))
    ) {
        prop_assert_eq!(w1.check(), Ok(()), "every generated W1 passes check");
        prop_assert_eq!(w0.check(), Ok(()), "every generated W0 passes check");
        prop_assert!(w0.exclusions.is_empty(), "a generated W0 has no exclusions");
    }
}

/// Property: a weight of 0 (or `allow_char_devices = false`) removes its shape from
/// generated cases and from every shrink step.
#[test]
fn disabled_weights_remove_shapes() {
    let cfg = GenConfig {
        fifo_weight: 0,
        prior_fifo_at_file_weight: 0,
        allow_char_devices: false,
        name_non_utf8_weight: 0,
        realistic_weight: 0,
        shared_inode_weight: 0,
        hardlink_weight: 0,
        ..GenConfig::default()
    };
    let banned = [
        "fifo",
        "chardev",
        "name-non-utf8",
        "realistic-venv",
        "shared-inode-3plus",
    ];
    let strategy = case_strategy(&cfg);
    let mut runner = runner(5);
    for _ in 0..200 {
        let mut tree = strategy.new_tree(&mut runner).expect("never rejects");
        for step in 0..60 {
            let case = tree.current();
            let seen: BTreeSet<_> = spec_shapes(&case.spec)
                .into_iter()
                .chain(spec_shapes(&case.prior))
                .collect();
            for f in banned {
                assert!(
                    !seen.contains(f),
                    "disabled shape `{f}` never appears (step {step}): {case:?}"
                );
            }
            if !tree.simplify() {
                break;
            }
        }
    }
}

/// A config with every weight set to 0 still generates valid (plain) cases.
#[test]
fn all_weights_zero_falls_back_to_plain_files() {
    let mut map = match serde_json::to_value(GenConfig::default()) {
        Ok(serde_json::Value::Object(map)) => map,
        other => panic!("config serialises to a map: {other:?}"),
    };
    for (key, value) in map.iter_mut() {
        if key.ends_with("-weight") {
            *value = serde_json::Value::from(0);
        }
    }
    let cfg: GenConfig =
        serde_json::from_value(serde_json::Value::Object(map)).expect("zero weights are valid");
    let strategy = case_strategy(&cfg);
    let mut runner = runner(6);
    for _ in 0..50 {
        let case = strategy
            .new_tree(&mut runner)
            .expect("never rejects")
            .current();
        assert_valid(&case, "all weights zero");
        assert!(
            case.spec
                .entries
                .iter()
                .all(|e| matches!(e.kind, EntryKind::File { .. })),
            "with every weight 0 only plain files are generated: {case:?}"
        );
    }
}

#[test]
fn config_reads_kebab_case_toml_and_env_vars() {
    let cfg: GenConfig = toml::from_str("max-entries = 3\nshared-inode-weight = 0\n")
        .expect("kebab-case keys parse");
    assert_eq!((cfg.max_entries, cfg.shared_inode_weight), (3, 0));
    assert_eq!(cfg.file_weight, GenConfig::default().file_weight);
    assert!(toml::from_str::<GenConfig>("no-such-knob = 1").is_err());

    let vars = |var: &str| match var {
        "SNAPCONF_GEN_MAX_ENTRIES" => Some("20".to_string()),
        "SNAPCONF_GEN_ALLOW_CHAR_DEVICES" => Some("false".to_string()),
        "SNAPCONF_GEN_HOSTILE_PRIOR_WEIGHT" => Some(" 9 ".to_string()),
        _ => None,
    };
    let cfg = GenConfig::default()
        .with_vars(vars)
        .expect("valid env values");
    assert_eq!(cfg.max_entries, 20);
    assert!(!cfg.allow_char_devices);
    assert_eq!(cfg.hostile_prior_weight, 9);

    for (var, value) in [
        ("SNAPCONF_GEN_FIFO_WEIGHT", "lots"),
        ("SNAPCONF_GEN_FIFO_WEIGHT", "99999999999"),
        ("SNAPCONF_GEN_ALLOW_CHAR_DEVICES", "maybe"),
    ] {
        let err = GenConfig::default()
            .with_vars(|v| (v == var).then(|| value.to_string()))
            .expect_err("bad values are refused");
        assert!(
            err.to_string().contains(var),
            "the error names the variable: {err}"
        );
    }
}

fn by_name(name: &str) -> WorkspaceSpec {
    edge_specs()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("edge spec {name} exists"))
}

#[test]
fn edge_specs_are_h1_to_h8_and_valid() {
    let specs = edge_specs();
    let names: Vec<_> = specs.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["H1", "H2", "H3", "H4", "H5", "H6", "H7", "H8"]);
    let sizes = [2, 2, 2, 2, 1, 4, 2, 2];
    for ((name, spec), size) in specs.iter().zip(sizes) {
        assert_eq!(spec.check(), Ok(()), "{name} passes check");
        assert_eq!(spec.entries.len(), size, "{name} has every listed entry");
    }
    let h2 = spec_shapes(&by_name("H2"));
    for f in [
        "alias-excluded-by-file",
        "alias-excluded-first-creation",
        "exclusion-file",
    ] {
        assert!(h2.contains(f), "H2 shows `{f}`: {h2:?}");
    }
    let h6 = spec_shapes(&by_name("H6"));
    for f in ["path-over-100", "name-255", "name-non-utf8", "name-newline"] {
        assert!(h6.contains(f), "H6 shows `{f}`: {h6:?}");
    }
    let h6_spec = by_name("H6");
    assert_eq!(
        h6_spec.entries[0].path.as_bytes().len(),
        120,
        "H6 path is 120 bytes"
    );
    assert!(spec_shapes(&by_name("H5")).contains("symlink-loop-self"));
    assert!(spec_shapes(&by_name("H7")).contains("readonly-dir-with-children"));
    assert!(spec_shapes(&by_name("H8")).contains("hardlink-to-symlink"));
    assert!(spec_shapes(&by_name("H3")).contains("symlink-abs-other"));
    assert!(spec_shapes(&by_name("H4")).contains("fifo"));
}

/// Diagnostic (`--ignored --nocapture`): a few generated cases as JSON.
#[test]
#[ignore]
fn print_samples() {
    let strategy = case_strategy(&GenConfig::default());
    let mut runner = runner(9);
    for _ in 0..4 {
        let case = strategy
            .new_tree(&mut runner)
            .expect("never rejects")
            .current();
        println!(
            "W1 {}\nW0 {}\n----",
            case.spec.to_json(),
            case.prior.to_json()
        );
    }
}

/// Diagnostic (`--ignored --nocapture`): simplify steps of the unfiltered strategy that make
/// a case larger, i.e. what `NoLarger` filters out.
#[test]
#[ignore]
fn print_larger_simplify_steps() {
    let strategy = super::strategy::unfiltered_case_strategy(&GenConfig::default());
    let mut runner = runner(4);
    let mut shown = 0;
    for _ in 0..200 {
        let mut tree = strategy.new_tree(&mut runner).expect("never rejects");
        loop {
            let before = tree.current();
            if !tree.simplify() {
                break;
            }
            let after = tree.current();
            if case_size(&after) > case_size(&before) && shown < 6 {
                shown += 1;
                println!(
                    "size {} -> {}\nBEFORE {before:?}\nAFTER  {after:?}\n",
                    case_size(&before),
                    case_size(&after)
                );
            }
        }
    }
}

/// Property: exclusions naming a path with a newline appear only with `newline_exclusions`
/// (the `{exclude_file}` of the adapter contract is one path per line).
#[test]
fn newline_exclusions_only_when_enabled() {
    let count = |newline_exclusions: bool| {
        let cfg = GenConfig {
            newline_exclusions,
            name_newline_weight: 6,
            ..GenConfig::default()
        };
        let strategy = case_strategy(&cfg);
        let mut runner = runner(11);
        (0..300)
            .map(|_| {
                strategy
                    .new_tree(&mut runner)
                    .expect("never rejects")
                    .current()
            })
            .filter(|c| {
                c.spec
                    .exclusions
                    .iter()
                    .any(|x| x.as_bytes().contains(&b'\n'))
            })
            .count()
    };
    assert_eq!(count(false), 0, "no newline exclusions by default");
    assert!(count(true) > 0, "newline exclusions appear when enabled");
}

/// Property: with many entry plans and long names favoured, paths and symlink targets stay
/// within `MAX_PATH_BYTES` (materialisable under a jail root), and cases stay valid.
#[test]
fn paths_stay_bounded_with_many_long_names() {
    let cfg = GenConfig {
        max_entries: 60,
        name_long_weight: 40,
        dir_weight: 20,
        long_path_weight: 5,
        ..GenConfig::default()
    };
    let strategy = case_strategy(&cfg);
    let mut runner = runner(12);
    let mut longest = 0;
    for _ in 0..60 {
        let case = strategy
            .new_tree(&mut runner)
            .expect("never rejects")
            .current();
        assert_valid(&case, "many long names");
        for e in case.spec.entries.iter().chain(&case.prior.entries) {
            longest = longest.max(e.path.as_bytes().len());
            if let EntryKind::Symlink { target } = &e.kind {
                assert!(
                    target.0.len() <= 2048,
                    "a symlink target is at most 2048 bytes"
                );
            }
        }
    }
    assert!(
        (256..=2048).contains(&longest),
        "long paths are generated and capped at 2048 bytes (longest {longest})"
    );
}

/// The public strategies can be shared with worker threads (a runner may generate in one
/// thread and shrink in another).
#[test]
fn strategies_are_send_and_sync() {
    fn send_sync<T: Send + Sync + Clone>(_: &T) {}
    let cfg = GenConfig::default();
    send_sync(&case_strategy(&cfg));
    send_sync(&spec_strategy(&cfg));
    send_sync(&prior_strategy(&cfg, &WorkspaceSpec::default()));
}
