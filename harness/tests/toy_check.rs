//! A check added outside the drivers reaches every driver: a toy check defined here, handed
//! to `run`'s pipeline, to `--faults` and to `fuzz` through their check lists, finds what
//! it looks for in each, with no driver code knowing of it.

use snapconf_harness::checks::{Check, CheckDef, Evidence, Step, Violation};
use snapconf_harness::error::HarnessError;
use snapconf_harness::faults::{FaultKind, FaultOptions};
use snapconf_harness::fuzz::{fuzz, FuzzOptions};
use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::model::profile::Profile;
use snapconf_harness::model::spec::{Case, WorkspaceSpec};
use snapconf_harness::run::case::{run_case, Env};
use snapconf_producers::{
    Availability, CaptureRequest, Outcome, Producer, ReferenceExtractor, TarRsProducer, ToolError,
};
use std::time::Duration;

/// The toy property: "a hydration over a prior workspace does not fail". (Not a property
/// of the contract: a refusal that leaves the prior intact is fine. It only shows where the
/// evidence reaches.)
const TOY_DEF: CheckDef = CheckDef {
    id: "toy-failed-over-prior",
    explain: "a hydration over a prior workspace failed (a test's toy check)",
    column: 50,
    severity: 9,
    judge: toy,
};
const TOY: Check = Check::custom(&TOY_DEF);

fn toy(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let failed = ev.step == Step::Hydrate && ev.prior.is_some() && ev.failure_message().is_some();
    Ok(if failed {
        vec![Violation::new(TOY, format!("toy: {} failed", ev.what))]
    } else {
        Vec::new()
    })
}

fn checks() -> Vec<Check> {
    let mut all = Check::ALL.to_vec();
    all.push(TOY);
    all
}

fn env(faults: Vec<FaultKind>) -> Env {
    Env {
        profile: Profile::default_profile(),
        timeout: Duration::from_secs(20),
        jail_base: snapconf_harness::jail::default_jail_base(),
        faults: FaultOptions {
            kinds: faults,
            bin: None,
        },
        jails: Default::default(),
        checks: checks(),
    }
}

fn case() -> Case {
    let spec = WorkspaceSpec::from_json(
        r#"{"entries": [{"path": "a", "kind": "file", "content": "new a, long enough to cut"},
                        {"path": "d", "kind": "dir"},
                        {"path": "d/f", "kind": "file", "content": "new d/f"}]}"#,
    )
    .expect("spec");
    let prior = WorkspaceSpec::from_json(
        r#"{"entries": [{"path": "old", "kind": "file", "content": "old"}]}"#,
    )
    .expect("prior");
    Case { spec, prior }
}

/// A producer whose archive ends inside its first header: every extractor refuses it.
struct CutProducer;

impl Producer for CutProducer {
    fn name(&self) -> &str {
        "cut"
    }

    fn availability(&self) -> Availability {
        Availability::Available {
            version: "test".into(),
        }
    }

    fn capture(&self, req: &CaptureRequest<'_>) -> Result<Outcome, ToolError> {
        let mut h = tar::Header::new_ustar();
        h.set_path("a").expect("name");
        h.set_size(4);
        h.set_cksum();
        std::fs::write(req.archive, &h.as_bytes()[..300]).map_err(|source| ToolError::Io {
            context: "test producer".into(),
            source,
        })?;
        Ok(Outcome::Success)
    }
}

fn reference() -> ReferenceExtractor {
    ReferenceExtractor::new(reference_policy(&Profile::default_profile(), None))
}

#[test]
fn a_toy_check_reaches_run() {
    let x = reference();
    let out = run_case(&case(), &CutProducer, &[&x], &env(vec![]), None).expect("run");
    let toy: Vec<_> = out.findings.iter().filter(|f| f.check == TOY).collect();
    assert_eq!(toy.len(), 1, "{:?}", out.findings);
    assert_eq!(toy[0].extractor.as_deref(), Some("reference"));
    assert!(
        toy[0].message.contains("over the prior workspace"),
        "{toy:?}"
    );
    // The built-in checks ran beside it.
    assert!(
        out.has(Check::LATE_FAILURE, Some("reference")),
        "{:?}",
        out.findings
    );
}

#[test]
fn a_toy_check_reaches_faults() {
    let x = reference();
    // Without faults the reference hydrates the good archive: nothing for the toy check.
    let plain = run_case(&case(), &TarRsProducer, &[&x], &env(vec![]), None).expect("run");
    assert!(
        !plain.findings.iter().any(|f| f.check == TOY),
        "{:?}",
        plain.findings
    );
    let out = run_case(
        &case(),
        &TarRsProducer,
        &[&x],
        &env(vec![FaultKind::Truncate]),
        None,
    )
    .expect("run");
    let toy: Vec<_> = out.findings.iter().filter(|f| f.check == TOY).collect();
    assert_eq!(toy.len(), 1, "{:?}", out.findings);
    assert!(toy[0].message.contains("under fault truncate"), "{toy:?}");
}

#[test]
fn a_toy_check_reaches_fuzz() {
    let report = tempfile::tempdir().expect("report dir");
    // A base the reference refuses: its first member is cut short.
    let mut h = tar::Header::new_ustar();
    h.set_path("a").expect("name");
    h.set_size(600);
    h.set_cksum();
    let mut base = h.as_bytes().to_vec();
    base.extend_from_slice(&[b'x'; 100]);
    let opts = FuzzOptions {
        bases: vec![("cut".into(), base)],
        profile: Profile::default_profile(),
        time: Duration::from_secs(2),
        seed: 1,
        timeout: Duration::from_secs(10),
        jail_base: snapconf_harness::jail::default_jail_base(),
        report_dir: report.path().to_path_buf(),
        shrink_runs: 4,
        bin: "snapconf".into(),
        checks: checks(),
        view: false,
        jobs: 1,
        replay_args: String::new(),
        server: true,
    };
    let summary = fuzz(&reference(), &opts, &mut |_| {}).expect("fuzz");
    assert!(summary.executions > 0);
    // Found, and kept as distinct causes (by the shrunk archive's shape, as far as the
    // small shrink budget gets) up to the cap per check.
    let toy: Vec<_> = summary.findings.iter().filter(|f| f.check == TOY).collect();
    assert!(
        (1..=snapconf_harness::fuzz::MAX_CAUSES_PER_CHECK).contains(&toy.len()),
        "{:?}",
        summary.findings
    );
    assert!(
        toy.iter()
            .all(|f| f.message.starts_with("toy: hydration failed")),
        "{toy:?}"
    );
    let causes: std::collections::BTreeSet<_> = toy.iter().map(|f| &f.cause).collect();
    assert_eq!(causes.len(), toy.len(), "one finding per cause: {toy:?}");
}
