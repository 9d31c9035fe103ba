//! A check added outside the drivers reaches every driver: a toy check defined here, handed
//! to `run`'s pipeline, to `--faults` and to `fuzz` through their check lists, finds what
//! it looks for in each, with no driver code knowing of it.

use snapconf_harness::checks::{Check, CheckDef, Evidence, Step, Violation};
use snapconf_harness::engine::case::{run_case, Env};
use snapconf_harness::engine::faults::FaultOptions;
use snapconf_harness::error::HarnessError;
use snapconf_harness::fuzz::{fuzz, FuzzOptions};
use snapconf_harness::model::fault::FaultKind;
use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::model::profile::Profile;
use snapconf_harness::model::spec::{Case, WorkspaceSpec};
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
        runs: None,
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
        known: Default::default(),
        causes_per_check: snapconf_harness::fuzz::MAX_CAUSES_PER_CHECK,
        coverage: snapconf_harness::fuzz::CoverageMode::Off,
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

/// A toy extractor that refuses an archive holding a hardlink or a symlink from a top-level
/// name to a top-level name (signature part `1:d1->d1` or `2:d1->d1`), and accepts
/// anything else without writing: exactly two causes of the toy check, whatever the
/// mutations, once shrunk to the one member that matters.
struct TwoCauses;

const HARDLINK: &str = "1:d1->d1";
const SYMLINK: &str = "2:d1->d1";

impl snapconf_producers::Extractor for TwoCauses {
    fn name(&self) -> &str {
        "two-causes"
    }

    fn availability(&self) -> Availability {
        Availability::Available {
            version: "test".into(),
        }
    }

    fn hydrate(&self, req: &snapconf_producers::HydrateRequest<'_>) -> Result<Outcome, ToolError> {
        let bytes = std::fs::read(req.archive).map_err(|source| ToolError::Io {
            context: "toy extractor".into(),
            source,
        })?;
        let sig = snapconf_harness::fuzz::signature(&bytes);
        let refused = sig.split(' ').find(|p| *p == HARDLINK || *p == SYMLINK);
        Ok(match refused {
            Some(p) => Outcome::Refused {
                message: format!("toy refuses {p}"),
            },
            None => Outcome::Success,
        })
    }

    fn in_process(&self) -> bool {
        true
    }
}

/// A base archive: a file `a` and a member of `flag` named `b` pointing at `a`.
fn link_base(flag: tar::EntryType) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_ustar();
    h.set_size(1);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    b.append_data(&mut h, "a", &b"x"[..]).expect("a");
    let mut l = tar::Header::new_ustar();
    l.set_size(0);
    l.set_mode(0o644);
    l.set_entry_type(flag);
    l.set_link_name("a").expect("link");
    b.append_data(&mut l, "b", &[][..]).expect("b");
    b.into_inner().expect("finish")
}

/// A session of the toy check through [`TwoCauses`] with one slot per check and
/// `known` as its baseline; its report (through the writer every mode uses) and exit code.
fn two_cause_session(
    known: &snapconf_harness::report::Baseline,
) -> (snapconf_harness::report::ReportFile, i32) {
    let report = tempfile::tempdir().expect("report dir");
    let opts = FuzzOptions {
        bases: vec![
            ("hardlink".into(), link_base(tar::EntryType::Link)),
            ("symlink".into(), link_base(tar::EntryType::Symlink)),
        ],
        runs: None,
        profile: Profile::default_profile(),
        time: Duration::from_secs(3),
        seed: 5,
        timeout: Duration::from_secs(10),
        jail_base: snapconf_harness::jail::default_jail_base(),
        report_dir: report.path().to_path_buf(),
        shrink_runs: 60,
        bin: "snapconf".into(),
        checks: vec![TOY],
        view: false,
        jobs: 1,
        replay_args: String::new(),
        server: false,
        known: known.clone(),
        causes_per_check: 1,
        coverage: snapconf_harness::fuzz::CoverageMode::Off,
    };
    let summary = fuzz(&TwoCauses, &opts, &mut |_| {}).expect("fuzz");
    assert!(summary.executions > 0);
    for f in &summary.findings {
        assert!(
            f.cause == HARDLINK || f.cause == SYMLINK,
            "shrunk to one of the two causes: {f:?}"
        );
        assert!(
            report.path().join(&f.case_dir).join("repro.sh").is_file(),
            "{f:?}"
        );
    }
    let run = snapconf_harness::fuzz::fuzz_report(&summary, "two-causes", "default", 5);
    let file = snapconf_harness::report::write_report(run, report.path(), Some(known))
        .expect("the report is written");
    let summary_md = std::fs::read_to_string(report.path().join("summary.md")).expect("md");
    assert!(
        summary_md.starts_with("# snapconf fuzz of two-causes:"),
        "{summary_md}"
    );
    let code = file.exit_code();
    (file, code)
}

/// The causes of the toy check in `file`, `(cause signature, known)`.
fn toy_causes(file: &snapconf_harness::report::ReportFile) -> Vec<(String, bool)> {
    file.causes
        .iter()
        .filter(|c| c.check == TOY)
        .map(|c| (c.cause.clone().unwrap_or_default(), c.known))
        .collect()
}

/// Issue 18: a cause in the baseline neither fails the session nor takes one of its
/// check's slots, and hides nothing else. With one slot, a session finds one of the two
/// causes (exit 1); with that cause in the baseline, the same seed reports it as known and
/// still finds the other as new (exit 1: a new cause); with both in the baseline, nothing
/// is new (exit 0).
#[test]
fn a_baselined_fuzz_cause_takes_no_slot_and_hides_no_other() {
    use snapconf_harness::report::Baseline;
    let (first, code) = two_cause_session(&Baseline::default());
    let found = toy_causes(&first);
    assert_eq!(found.len(), 1, "one slot, one cause: {found:?}");
    assert!(!found[0].1, "nothing is known without a baseline");
    assert_eq!(code, 1);
    let a = found[0].0.clone();
    let b = if a == HARDLINK { SYMLINK } else { HARDLINK };

    // The baseline of the first session, as `snapconf baseline update` writes it.
    let baseline = Baseline::from_report(&first.run, None);
    assert_eq!(baseline.known.len(), 1);
    assert_eq!(baseline.known[0].cause.as_deref(), Some(a.as_str()));
    let (second, code) = two_cause_session(&baseline);
    let found = toy_causes(&second);
    assert!(
        found.contains(&(a.clone(), true)),
        "the known cause is reported as known: {found:?}"
    );
    assert!(
        found.contains(&(b.to_string(), false)),
        "the other cause is found in the slot the known one left: {found:?}"
    );
    assert_eq!(code, 1, "a new cause fails the session");
    assert!(second.run.fixed.is_empty(), "{:?}", second.run.fixed);

    let both = Baseline::from_report(&second.run, Some(&baseline));
    assert_eq!(both.known.len(), 2);
    let (third, code) = two_cause_session(&both);
    let found = toy_causes(&third);
    assert!(
        !found.is_empty() && found.iter().all(|(_, known)| *known),
        "{found:?}"
    );
    assert_eq!(code, 0, "every finding is known: {found:?}");
}
