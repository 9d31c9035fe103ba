//! docs/cases.md H9–H11 and H13 against every built-in extractor, over a prior workspace, with
//! the verdict of each extractor written down (measured on Debian 12 tools: GNU tar 1.34,
//! BusyBox 1.35.0, bsdtar 3.6.2, Python 3.11.7 `tarfile`, the `tar` crate 0.4.46). A third-party
//! tool's unsafe behaviour is recorded here as a result, not hidden: the test fails when a
//! tool's behaviour *changes*, in either direction.
//!
//! A verdict is `<outcome> <prior> <outside>`: outcome `accepted`, `refused` or `hang`;
//! prior (after a failure) `intact` or `damaged` (`-` after an acceptance); outside
//! `contained`, or `escaped` when anything in the jail outside the root changed (the decoys
//! `out/x` and `out/target` at the links' targets, the canary, the jail itself).

use crate::support;

use snapconf_harness::jail::{default_jail_base, Jail};
use snapconf_harness::model::diff::diff_trees;
use snapconf_harness::model::spec::WorkspaceSpec;
use snapconf_harness::workspace::materialise::materialise;
use snapconf_harness::workspace::observe::observe;
use snapconf_producers::{Extractor, HydrateRequest, Outcome};
use std::time::Duration;
use support::{available_extractors, raw_archive, RawMember};

/// Builds the hostile archive; gets the jail's absolute `out/` path (`<out>`).
type Build = fn(&[u8]) -> Vec<u8>;

fn member<'a>(flag: u8, name: &'a [u8], link: &'a [u8], data: &'a [u8]) -> RawMember<'a> {
    RawMember {
        flag,
        name,
        link,
        data,
    }
}

/// H9: `DIR foo/`, `SYM foo -> <out>`, `REG foo/x (1)`. An extractor that caches "directories
/// already created" writes `foo/x` through the link, onto the decoy `<out>/x`.
fn h9(out: &[u8]) -> Vec<u8> {
    raw_archive(&[
        member(b'5', b"foo/", b"", b""),
        member(b'2', b"foo", out, b""),
        member(b'0', b"foo/x", b"", b"X"),
    ])
}

/// H10: `SYM link -> <out>/target`, `REG link (5)`. Writing the file through the link
/// overwrites the decoy `<out>/target`.
fn h10(out: &[u8]) -> Vec<u8> {
    let mut target = out.to_vec();
    target.extend_from_slice(b"/target");
    let target: &'static [u8] = Box::leak(target.into_boxed_slice());
    raw_archive(&[
        member(b'2', b"link", target, b""),
        member(b'0', b"link", b"", b"owned"),
    ])
}

/// H11: `SYM up -> ..`, `REG up/exploit/foo/bar (3)`: traversal through a link; some
/// extractors create `exploit/foo` beside the root before failing.
fn h11(_out: &[u8]) -> Vec<u8> {
    raw_archive(&[
        member(b'2', b"up", b"..", b""),
        member(b'0', b"up/exploit/foo/bar", b"", b"bar"),
    ])
}

/// H13: a truncated snapshot: four members, the archive cut in the middle of the third
/// member's payload (no end blocks).
fn h13(_out: &[u8]) -> Vec<u8> {
    let big = vec![b'c'; 2000];
    let whole = raw_archive(&[
        member(b'0', b"a", b"", b"new a"),
        member(b'0', b"b", b"", b"new b"),
        member(b'0', b"c", b"", &big),
        member(b'0', b"d", b"", b"new d"),
    ]);
    // a: 0..1024, b: 1024..2048, c: header 2048, payload 2560..4560.
    whole[..2560 + 1000].to_vec()
}

/// The prior workspace: one file for H9–H11, ten for H13.
fn prior(files: usize) -> WorkspaceSpec {
    let entries: Vec<String> = (0..files)
        .map(|i| format!(r#"{{"path": "f{i}", "kind": "file", "content": "prior {i}\n"}}"#))
        .collect();
    WorkspaceSpec::from_json(&format!(r#"{{"entries": [{}]}}"#, entries.join(",")))
        .expect("prior spec")
}

/// Hydrate the archive `build` makes over `prior` with `ex` in a fresh jail; the verdict.
fn verdict(ex: &dyn Extractor, build: Build, prior_files: usize) -> String {
    let mut jail = Jail::new(default_jail_base().as_deref()).expect("jail");
    let root = jail.fresh_dir("h").expect("root");
    let ph = jail.placeholders(&root);
    materialise(&prior(prior_files), &root, &ph).expect("prior");
    let w0 = observe(&root).expect("observe prior");
    let scratch = jail.fresh_dir("scratch-t").expect("scratch");
    let archive = scratch.join("h.tar");
    std::fs::write(&archive, build(&ph.out)).expect("archive");
    let before = jail.snapshot().expect("snapshot");
    let req = HydrateRequest {
        archive: &archive,
        root: &root,
        scratch: &scratch,
        timeout: Duration::from_secs(20),
        limits: None,
    };
    let outcome = ex.hydrate(&req).expect("hydrate infrastructure");
    ex.recover(&req).expect("recover infrastructure");
    let after = jail.snapshot().expect("snapshot");
    let outside = before.changes(&after, &[&jail.rel(&root)]);
    let (what, prior_state) = match outcome {
        Outcome::Success => ("accepted", "-"),
        Outcome::Refused { .. } | Outcome::Hang { .. } => {
            let now = observe(&root).ok();
            let intact = now.is_some_and(|t| diff_trees(&w0, &t).is_empty());
            let what = if matches!(outcome, Outcome::Hang { .. }) {
                "hang"
            } else {
                "refused"
            };
            (what, if intact { "intact" } else { "damaged" })
        }
    };
    let contained = if outside.is_empty() {
        "contained".to_string()
    } else {
        eprintln!("{}: changed outside the root: {outside:?}", ex.name());
        "escaped".to_string()
    };
    format!("{what} {prior_state} {contained}")
}

/// Expected verdicts: (extractor, case, verdict), as measured.
///
/// - `reference` refuses all four before the first write; the prior stays byte-identical.
/// - Every external adapter clears the root first (the common `rm -rf; tar -xf` resume
///   path), so any refusal leaves a damaged prior: that is the `atomic-hydration` failure,
///   not a containment one. None of them wrote outside the root on these inputs.
/// - H10 is *accepted* by GNU tar, bsdtar and the `tar` crate, with the decoy untouched;
///   the `data`/`tar` filters and BusyBox refuse it.
/// - H9 is accepted by `python-tar` alone, with nothing outside changed; the others refuse.
const EXPECTED: &[(&str, &str, &str)] = &[
    ("reference", "H9", "refused intact contained"),
    ("reference", "H10", "refused intact contained"),
    ("reference", "H11", "refused intact contained"),
    ("reference", "H13", "refused intact contained"),
    ("gnu-tar", "H9", "refused damaged contained"),
    ("gnu-tar", "H10", "accepted - contained"),
    ("gnu-tar", "H11", "refused damaged contained"),
    ("gnu-tar", "H13", "refused damaged contained"),
    ("python-data", "H9", "refused damaged contained"),
    ("python-data", "H10", "refused damaged contained"),
    ("python-data", "H11", "refused damaged contained"),
    ("python-data", "H13", "refused damaged contained"),
    ("python-tar", "H9", "accepted - contained"),
    ("python-tar", "H10", "refused damaged contained"),
    ("python-tar", "H11", "refused damaged contained"),
    ("python-tar", "H13", "refused damaged contained"),
    ("busybox-tar", "H9", "refused damaged contained"),
    ("busybox-tar", "H10", "refused damaged contained"),
    ("busybox-tar", "H11", "refused damaged contained"),
    ("busybox-tar", "H13", "refused damaged contained"),
    ("bsdtar", "H9", "refused damaged contained"),
    ("bsdtar", "H10", "accepted - contained"),
    ("bsdtar", "H11", "refused damaged contained"),
    ("bsdtar", "H13", "refused damaged contained"),
    ("tar-rs", "H9", "refused damaged contained"),
    ("tar-rs", "H10", "accepted - contained"),
    ("tar-rs", "H11", "refused damaged contained"),
    ("tar-rs", "H13", "refused damaged contained"),
];

#[test]
fn hostile_archives_against_every_extractor() {
    let cases: [(&str, Build, usize); 4] = [
        ("H9", h9, 1),
        ("H10", h10, 1),
        ("H11", h11, 1),
        ("H13", h13, 10),
    ];
    let mut seen = Vec::new();
    for ex in available_extractors() {
        for (id, build, files) in cases {
            seen.push((
                ex.name().to_string(),
                id,
                verdict(ex.as_ref(), build, files),
            ));
        }
    }
    let table: String = seen
        .iter()
        .map(|(e, c, v)| format!("    (\"{e}\", \"{c}\", \"{v}\"),\n"))
        .collect();
    let mut wrong = Vec::new();
    for (e, c, v) in &seen {
        let want = EXPECTED
            .iter()
            .find(|(x, y, _)| x == e && y == c)
            .map(|(_, _, w)| *w);
        if want != Some(v.as_str()) {
            wrong.push(format!("{e} {c}: expected {want:?}, got {v}"));
        }
    }
    assert!(wrong.is_empty(), "{}\nmeasured:\n{table}", wrong.join("\n"));
}
