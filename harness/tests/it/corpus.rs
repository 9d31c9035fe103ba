//! The fuzzing oracles on the committed corpus (`corpora/`), so stable `cargo test` checks
//! what the cargo-fuzz targets check: seeds, adversarial cases (with their TOML
//! expectations) and every regression kept under its libFuzzer name.

use arbitrary::{Arbitrary, Unstructured};
use snapconf_harness::fuzz::{
    adversarial_cases, check_roundtrip, named_policy, oracle_policies, reference_expectation,
    reference_vs_tar_crate, ArchivePlan, Expectation, ExtractOracle, FuzzWorkspace,
};
use std::path::{Path, PathBuf};

fn corpora() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora")
}

/// Files directly in `dir` (sorted), those ending in `ext` when given; none if `dir` is absent.
fn files(dir: &Path, ext: Option<&str>) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.is_file() && ext.is_none_or(|x| p.extension().is_some_and(|e| e == x)));
    // Dotfiles (`.keep`) and READMEs are not inputs.
    v.retain(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_none_or(|n| !n.starts_with('.') && n != "README.md")
    });
    v.sort();
    v
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("cannot read `{}`: {e}", p.display()))
}

/// Property: every adversarial archive is the bytes its builder makes today, the reference
/// gives the verdict, reason and listing its TOML records, and the `extract_reference`
/// oracle holds for it under the recorded policy.
#[test]
fn adversarial_cases_match_their_expectations() {
    let dir = corpora().join("adversarial");
    let mut oracle = ExtractOracle::new(None).expect("oracle jail");
    let cases = adversarial_cases();
    assert_eq!(
        files(&dir, Some("tar")).len(),
        cases.len(),
        "corpora/adversarial holds exactly the built cases (regenerate with make-corpora)"
    );
    for c in cases {
        let tar = read(&dir.join(format!("{}.tar", c.name)));
        assert!(
            tar == c.bytes,
            "{}: committed bytes differ from the builder",
            c.name
        );
        let text = String::from_utf8(read(&dir.join(format!("{}.toml", c.name)))).expect("utf-8");
        let want: Expectation = toml::from_str(&text).expect("expectation parses");
        let policy = named_policy(&want.policy).expect("known policy");
        let got = reference_expectation(c.attack, &want.policy, &policy, &tar);
        assert_eq!(got, want, "{}: the reference's verdict changed", c.name);
        if let Err(f) = oracle.check_with(&tar, &policy) {
            panic!("{}: oracle failed: {f}", c.name);
        }
    }
}

/// Property: the `extract_reference` oracle holds for every seed, adversarial archive and
/// raw-bytes regression under each oracle policy.
#[test]
fn extract_oracle_holds_on_the_corpus() {
    let mut oracle = ExtractOracle::new(None).expect("oracle jail");
    let root = corpora();
    let mut inputs = files(&root.join("seeds"), Some("tar"));
    inputs.extend(files(&root.join("adversarial"), Some("tar")));
    inputs.extend(files(&root.join("regressions/extract_reference"), None));
    assert!(!inputs.is_empty(), "the corpus is not empty");
    for p in inputs {
        let bytes = read(&p);
        for policy in oracle_policies() {
            if let Err(f) = oracle.check_with(&bytes, &policy) {
                panic!("`{}`: {f}", p.display());
            }
        }
    }
}

/// Property: the reference and the `tar` crate list every seed identically (both read
/// them to the end).
#[test]
fn seeds_parse_the_same_in_the_reference_and_the_tar_crate() {
    for p in files(&corpora().join("seeds"), Some("tar")) {
        if let Err(f) = reference_vs_tar_crate(&read(&p)) {
            panic!("`{}`: {f}", p.display());
        }
    }
}

/// Property: the `archive_plan` oracle (extract oracle plus parser differential) holds for
/// every kept `archive_plan` input.
#[test]
fn archive_plan_regressions_replay() {
    let mut oracle = ExtractOracle::new(None).expect("oracle jail");
    for p in files(&corpora().join("regressions/archive_plan"), None) {
        let raw = read(&p);
        let Ok(plan) = ArchivePlan::arbitrary_take_rest(Unstructured::new(&raw)) else {
            continue;
        };
        let bytes = plan.to_bytes();
        if let Err(f) = oracle.check(&bytes) {
            panic!("`{}`: {f}", p.display());
        }
        if let Err(f) = reference_vs_tar_crate(&bytes) {
            panic!("`{}`: {f}", p.display());
        }
    }
}

/// Property: every kept `roundtrip_workspace` input round-trips through tar-rs + reference.
#[test]
fn roundtrip_workspace_regressions_replay() {
    for p in files(&corpora().join("regressions/roundtrip_workspace"), None) {
        let raw = read(&p);
        let Ok(ws) = FuzzWorkspace::arbitrary_take_rest(Unstructured::new(&raw)) else {
            continue;
        };
        if let Err(f) = check_roundtrip(&ws, None) {
            panic!("`{}`: {f}", p.display());
        }
    }
}
