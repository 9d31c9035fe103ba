//! Fuzz causes are behaviours (attack class plus kind of effect), and a session keeps looking
//! after it finds one: an extractor with no protection at all (Python's `extractall` with
//! the `fully_trusted` filter, in the view) falls to many classes, each kept once, its
//! repeat hits counted and not shrunk.

use crate::fuzz_view::{options, Unprotected};
use snapconf_harness::checks::Check;
use snapconf_harness::fuzz::fuzz;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The `.tar` files of `corpora/seeds`, as base archives.
fn seeds() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/seeds");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpora/seeds")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "tar"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).expect("seed")))
        .collect()
}

/// Property: a 20 s session reports escape causes (`containment`, `escaping-link`) of at
/// least two attack classes, one finding per cause; repeat hits of a cause are counted
/// (some cause has more than one) and only new causes are shrunk (the shrink runs fit in
/// the shrinks made, fewer than the hits); each cause says when it was first seen, and the
/// report counts its hits and notes it.
#[test]
fn a_session_reports_several_classes_and_counts_repeats() {
    let report = tempfile::tempdir().expect("report dir");
    let Some(mut opts) = options(seeds(), report.path(), 20) else {
        return;
    };
    opts.seed = 2;
    let summary = fuzz(&Unprotected, &opts, &mut |_| {}).expect("fuzz");
    let escapes: Vec<_> = summary
        .findings
        .iter()
        .filter(|f| f.check == Check::CONTAINMENT || f.check == Check::ESCAPING_LINK)
        .collect();
    let listed: Vec<String> = escapes
        .iter()
        .map(|f| format!("{} {} ×{}", f.check, f.cause, f.hits))
        .collect();
    eprintln!(
        "{} executions, {} shrinks, hits {:?}: {listed:#?}",
        summary.executions, summary.shrinks, summary.hits
    );
    let classes: BTreeSet<&str> = escapes.iter().map(|f| f.class.as_str()).collect();
    assert!(classes.len() >= 2, "classes {classes:?}: {listed:#?}");
    let causes: BTreeSet<(Check, &str)> = summary
        .findings
        .iter()
        .map(|f| (f.check, f.cause.as_str()))
        .collect();
    assert_eq!(
        causes.len(),
        summary.findings.len(),
        "one finding per cause"
    );
    for f in &escapes {
        assert!(
            f.cause.starts_with(&format!("{}: ", f.class)),
            "a cause names its class: {f:?}"
        );
        assert!(
            (1..=summary.executions).contains(&f.first_seen.execution),
            "{f:?}"
        );
        assert!(f.first_seen.secs <= 20.0 + 5.0, "{f:?}");
        assert!(f.hits >= 1 && !f.classes.is_empty(), "{f:?}");
    }
    assert!(
        escapes.iter().any(|f| f.hits > 1),
        "repeats are counted: {listed:#?}"
    );
    let hits: u64 = summary.hits.values().sum();
    assert!(
        summary.shrinks < hits,
        "{} shrinks for {hits} hits ({:?}): repeats are not shrunk; {listed:#?}",
        summary.shrinks,
        summary.hits
    );
    let shrink_runs = summary.extractor_runs - summary.executions;
    assert!(
        shrink_runs <= summary.shrinks * (u64::from(opts.shrink_runs) + 1),
        "{shrink_runs} shrink runs for {} shrinks",
        summary.shrinks
    );
    let run = snapconf_harness::fuzz::fuzz_report(&summary, "python-unprotected", "default", 2);
    for f in &escapes {
        let rec = run
            .findings
            .iter()
            .find(|r| r.cause.as_deref() == Some(f.cause.as_str()))
            .expect("the cause is in the report");
        assert_eq!(rec.count, f.hits, "the report counts the cause's hits");
        assert!(
            run.notes.iter().any(|n| n.contains(&f.cause)
                && n.contains(&format!("execution {}", f.first_seen.execution))
                && n.contains(&format!("{} hit(s)", f.hits))),
            "a note per cause: {:#?}",
            run.notes
        );
    }
}
