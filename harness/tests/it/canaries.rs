//! Capture-side containment: a producer that follows a symlink out of the root and stores
//! the bytes behind it is a `containment` finding (the decoy's unique content is found in
//! the archive); one that stores the link itself is not.

use crate::support;

use snapconf_harness::checks::Check;
use snapconf_harness::engine::case::{run_case, Env};
use snapconf_harness::model::profile::Profile;
use snapconf_harness::model::spec::{Case, WorkspaceSpec};
use snapconf_producers::{Availability, CaptureRequest, Outcome, Producer, ToolError};
use std::time::Duration;

/// A producer that dereferences symlinks (`tar::Builder::follow_symlinks(true)`), like
/// `tar -h`: what a backend gets by archiving with a naive `copy`.
struct FollowingProducer;

impl Producer for FollowingProducer {
    fn name(&self) -> &str {
        "following"
    }

    fn availability(&self) -> Availability {
        Availability::Available {
            version: "test".into(),
        }
    }

    fn capture(&self, req: &CaptureRequest<'_>) -> Result<Outcome, ToolError> {
        let io = |source| ToolError::Io {
            context: "test producer".into(),
            source,
        };
        let file = std::fs::File::create(req.archive).map_err(io)?;
        let mut b = tar::Builder::new(file);
        b.follow_symlinks(true);
        b.append_dir_all(".", req.root).map_err(io)?;
        b.finish().map_err(io)?;
        Ok(Outcome::Success)
    }
}

fn env() -> Env {
    Env {
        profile: Profile::default_profile(),
        timeout: Duration::from_secs(20),
        jail_base: snapconf_harness::jail::default_jail_base(),
        faults: Default::default(),
        jails: Default::default(),
        checks: snapconf_harness::checks::Check::ALL.to_vec(),
    }
}

fn case(target: &str) -> Case {
    let spec = WorkspaceSpec::from_json(&format!(
        r#"{{"entries": [{{"path": "a", "kind": "file", "content": "a"}},
                         {{"path": "link", "kind": "symlink", "target": "{target}"}}]}}"#
    ))
    .expect("spec");
    Case {
        spec,
        prior: WorkspaceSpec::default(),
    }
}

#[test]
fn a_producer_reading_through_a_link_is_a_containment_finding() {
    for target in ["{out}/target", "{out}/fresh/decoy"] {
        let out = run_case(&case(target), &FollowingProducer, &[], &env(), None).expect("run");
        assert!(
            out.has(Check::CONTAINMENT, None),
            "{target}: {:?}",
            out.findings
        );
    }
}

/// A jail is reused by the next case only after a case without a `containment` finding:
/// decoys a tool may have read through (or written) are never handed on.
#[test]
fn a_jail_with_a_containment_finding_is_not_reused() {
    let env = env();
    let tar_rs = snapconf_producers::producer("tar-rs").expect("tar-rs");
    run_case(&case("{out}/target"), tar_rs.as_ref(), &[], &env, None).expect("run");
    let clean = env.jails.spare().expect("a clean case hands its jail back");
    run_case(&case("{out}/target"), tar_rs.as_ref(), &[], &env, None).expect("run");
    assert_eq!(
        env.jails.spare(),
        Some(clean.clone()),
        "the same jail again"
    );
    let out = run_case(&case("{out}/target"), &FollowingProducer, &[], &env, None).expect("run");
    assert!(out.has(Check::CONTAINMENT, None), "{:?}", out.findings);
    assert_eq!(env.jails.spare(), None, "not handed back");
    assert!(!clean.exists(), "and removed");
}

#[test]
fn a_producer_storing_the_link_is_not() {
    let tar_rs = snapconf_producers::producer("tar-rs").expect("tar-rs");
    let out = run_case(&case("{out}/target"), tar_rs.as_ref(), &[], &env(), None).expect("run");
    assert!(!out.has(Check::CONTAINMENT, None), "{:?}", out.findings);
}

/// Property: a prior that hardlinks a jail file outside the root (`{out}/linked`) at a path
/// the snapshot has as a file: hydration (replace or clear-then-extract) never writes
/// through the link; the decoy keeps its content, and removing the name is not a change.
#[test]
fn a_prior_hardlink_to_outside_is_never_written_through() {
    let spec = WorkspaceSpec::from_json(
        r#"{"entries": [{"path": "a", "kind": "file", "content": "new content"}]}"#,
    )
    .expect("spec");
    let prior = WorkspaceSpec::from_json(
        r#"{"entries": [{"path": "a", "kind": "hardlink", "target": "{out}/linked"}]}"#,
    )
    .expect("prior");
    prior.check().expect("an {out}/ hardlink is a valid prior");
    let case = Case { spec, prior };
    let tar_rs = snapconf_producers::producer("tar-rs").expect("tar-rs");
    // A missing tool is reported (`support::skip`), not silently left out.
    let extractors = support::available_extractors();
    let ex: Vec<&dyn snapconf_producers::Extractor> =
        extractors.iter().map(|e| e.as_ref()).collect();
    let out = run_case(&case, tar_rs.as_ref(), &ex, &env(), None).expect("run");
    assert!(
        !out.findings.iter().any(|f| f.check == Check::CONTAINMENT),
        "{:?}",
        out.findings
    );
}
