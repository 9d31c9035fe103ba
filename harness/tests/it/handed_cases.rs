//! Handed cases H1–H8 (`docs/cases.md`, capture side) through the real pipeline:
//! every available producer × the reference extractor (and the external extractors where the
//! case is about them), with the outcome each pair must have written down per case.
//! A pair whose tool is missing is skipped with `support::skip` (a failure with
//! `SNAPCONF_REQUIRE_TOOLS=1`).

use crate::support;

use snapconf_harness::checks::Check;
use snapconf_harness::engine::case::{run_case, Capture, CaseOutcome, Env};
use snapconf_harness::gen::edge_specs;
use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::model::profile::Profile;
use snapconf_harness::model::spec::{Case, WorkspaceSpec};
use snapconf_producers::{Availability, Extractor, Producer};
use std::time::Duration;

fn env() -> Env {
    Env {
        profile: Profile::default_profile(),
        timeout: Duration::from_secs(20),
        faults: Default::default(),
        jails: Default::default(),
        checks: snapconf_harness::checks::Check::ALL.to_vec(),
        jail_base: snapconf_harness::jail::default_jail_base(),
    }
}

fn case(name: &str) -> Case {
    let spec = edge_specs()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("edge spec {name} exists"));
    Case {
        spec,
        prior: WorkspaceSpec::default(),
    }
}

fn producer(name: &str) -> Option<Box<dyn Producer>> {
    let p = snapconf_producers::producer(name).unwrap_or_else(|e| panic!("{e}"));
    match p.availability() {
        Availability::Available { .. } => Some(p),
        Availability::Unavailable {
            reason,
            install_hint,
        } => {
            support::skip::skip(
                &format!("producer `{name}` is unavailable: {reason}"),
                &install_hint,
            );
            None
        }
    }
}

fn extractor(name: &str) -> Option<Box<dyn Extractor>> {
    let policy = reference_policy(&Profile::default_profile(), None);
    let e = snapconf_producers::extractor(name, policy).unwrap_or_else(|e| panic!("{e}"));
    match e.availability() {
        Availability::Available { .. } => Some(e),
        Availability::Unavailable {
            reason,
            install_hint,
        } => {
            support::skip::skip(
                &format!("extractor `{name}` is unavailable: {reason}"),
                &install_hint,
            );
            None
        }
    }
}

/// Run `h` through `p` × `e`; `None` when a tool is missing.
fn outcome(h: &str, p: &str, e: &str) -> Option<CaseOutcome> {
    let p = producer(p)?;
    let e = extractor(e)?;
    Some(run_case(&case(h), p.as_ref(), &[e.as_ref()], &env(), None).expect("pipeline runs"))
}

fn checks(o: &CaseOutcome) -> Vec<Check> {
    let mut v: Vec<Check> = o.findings.iter().map(|f| f.check).collect();
    v.sort();
    v
}

fn assert_clean(h: &str, p: &str, e: &str) {
    if let Some(o) = outcome(h, p, e) {
        assert!(
            matches!(o.capture, Capture::Archived { .. }),
            "{h}: {p} captured: {:?}",
            o.capture
        );
        assert!(
            o.findings.is_empty(),
            "{h}: {p} x {e} must conform, found {:#?}",
            o.findings
        );
    }
}

const CONFORMING_PRODUCERS: [&str; 2] = ["tar-rs", "gnu-tar"];

/// H1 shared inode: a producer that writes an LNK member makes the strict reference refuse
/// at hydration (`late-failure`); producers that write both names as regular members
/// round-trip.
#[test]
fn h1_shared_inode() {
    if let Some(o) = outcome("H1", "python-tarfile", "reference") {
        assert_eq!(checks(&o), vec![Check::LATE_FAILURE], "{:#?}", o.findings);
        assert!(
            o.findings[0].message.contains("hardlink-not-allowed"),
            "{}",
            o.findings[0].message
        );
    }
    for p in CONFORMING_PRODUCERS {
        assert_clean("H1", p, "reference");
    }
}

/// H2 excluded first name: Python's filter runs after the inode was recorded, so the
/// second name becomes an LNK member whose target is not in the archive.
#[test]
fn h2_excluded_first_name() {
    if let Some(o) = outcome("H2", "python-tarfile", "reference") {
        assert!(o.has(Check::DANGLING_LINK, None), "{:#?}", o.findings);
        assert!(
            o.has(Check::LATE_FAILURE, Some("reference")),
            "{:#?}",
            o.findings
        );
    }
    for p in CONFORMING_PRODUCERS {
        assert_clean("H2", p, "reference");
    }
}

/// H3 virtualenv links: under `absolute-symlinks = "keep"` whatever capture accepts,
/// hydration restores verbatim.
#[test]
fn h3_virtualenv_links() {
    for p in ["tar-rs", "gnu-tar", "python-tarfile"] {
        assert_clean("H3", p, "reference");
    }
    // Python's `data` filter refuses absolute links at hydration: accepted at capture,
    // refused at hydration, the H3 failure mode.
    if let Some(o) = outcome("H3", "gnu-tar", "python-data") {
        assert!(
            o.has(Check::LATE_FAILURE, Some("python-data")),
            "{:#?}",
            o.findings
        );
    }
}

/// H4 FIFO: capture must not block; the FIFO is dropped under `special-files = "drop"`.
#[test]
fn h4_fifo_never_hangs() {
    for p in ["tar-rs", "gnu-tar", "python-tarfile"] {
        if let Some(o) = outcome("H4", p, "reference") {
            assert!(
                !o.has(Check::HANG, None),
                "{p} hung on a FIFO: {:#?}",
                o.findings
            );
            assert!(o.findings.is_empty(), "{p}: {:#?}", o.findings);
        }
    }
}

/// H5 loop link: producers that do not follow links finish.
#[test]
fn h5_loop_link() {
    for p in ["tar-rs", "gnu-tar", "python-tarfile"] {
        assert_clean("H5", p, "reference");
    }
}

/// H6 names: 120-byte path, 255-byte component, `\xff\xfe`, newline: byte-exact.
#[test]
fn h6_names_byte_exact() {
    for p in ["tar-rs", "gnu-tar", "python-tarfile"] {
        assert_clean("H6", p, "reference");
    }
}

/// H7 read-only directory with a child: children first, then the directory mode.
#[test]
fn h7_read_only_directory() {
    for p in ["tar-rs", "gnu-tar", "python-tarfile"] {
        assert_clean("H7", p, "reference");
    }
    assert_clean("H7", "gnu-tar", "gnu-tar");
}

/// H8 hardlink to a symlink: both names come back as symlinks to `foo`.
#[test]
fn h8_hardlink_to_symlink() {
    for p in CONFORMING_PRODUCERS {
        assert_clean("H8", p, "reference");
    }
}
