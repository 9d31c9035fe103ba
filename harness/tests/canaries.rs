//! Capture-side containment: a producer that follows a symlink out of the root and stores
//! the bytes behind it is a `containment` finding (the decoy's unique content is found in
//! the archive); one that stores the link itself is not.

use snapconf_harness::check::Check;
use snapconf_harness::pipeline::{run_case, Env};
use snapconf_harness::profile::Profile;
use snapconf_harness::spec::{Case, WorkspaceSpec};
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
            out.has(Check::Containment, None),
            "{target}: {:?}",
            out.findings
        );
    }
}

#[test]
fn a_producer_storing_the_link_is_not() {
    let tar_rs = snapconf_producers::producer("tar-rs").expect("tar-rs");
    let out = run_case(&case("{out}/target"), tar_rs.as_ref(), &[], &env(), None).expect("run");
    assert!(!out.has(Check::Containment, None), "{:?}", out.findings);
}
