//! One case through one producer and its extractors: capture, list, hydrate, compare.
//!
//! Data flow (DESIGN.md): materialise W1 in a jail → capture → list members (dangling and
//! exclusion checks) → hydrate into an empty root, then over the prior W0 → observe →
//! compare with `expected(spec, profile)` and with W0.

use crate::archive::listing::{dangling_hardlinks, excluded_members, list_members};
use crate::checks::Check;
use crate::error::{HarnessError, IoContext};
use crate::jail::{Jail, Snapshot};
use crate::model::expected::{expected, normalise};
use crate::model::profile::Profile;
use crate::model::spec::Case;
use crate::model::tree::Tree;
use crate::workspace::diff::{diff_trees, listing};
use crate::workspace::materialise::materialise;
use crate::workspace::observe::observe;
use snapconf_producers::{CaptureRequest, Extractor, HydrateRequest, Outcome, Producer};
use std::path::Path;
use std::time::Duration;

/// What the pipeline needs besides the case and the adapters.
#[derive(Clone, Debug)]
pub struct Env {
    pub profile: Profile,
    /// Limit for each capture and each hydration.
    pub timeout: Duration,
    /// Where jails are created (system temp dir when `None`).
    pub jail_base: Option<std::path::PathBuf>,
    /// Faults injected into hydrations over the prior workspace (`--faults`; none by default).
    pub faults: crate::faults::FaultOptions,
    /// The spare jail reused by the next case (`Default::default()` starts empty).
    pub jails: crate::jail::JailPool,
}

/// A violated check in one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub check: Check,
    /// The extractor, or `None` for a capture-side finding (it holds for every pair of
    /// this producer: `dangling-link`, `exclusion-leak`, a hang or containment at capture).
    pub extractor: Option<String>,
    /// One line (or a few) saying what happened.
    pub message: String,
    /// `ls -l`-style listing of what was expected, where there is one.
    pub expected: Option<String>,
    /// What was observed: listing, diff, tool message.
    pub observed: Option<String>,
}

/// How the capture went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Capture {
    /// An archive was written with this many members.
    Archived { members: usize },
    /// The producer refused (allowed or not by the profile; counted, never a finding by itself).
    Refused { message: String },
    /// The producer hung or died of a signal (a `hang` finding is recorded).
    Hung,
}

/// The result of one case for one producer.
#[derive(Clone, Debug)]
pub struct CaseOutcome {
    pub capture: Capture,
    /// Entries the machine could not create (char devices when not root), with why.
    pub skipped_entries: usize,
    /// At most one finding per (extractor, check).
    pub findings: Vec<Finding>,
    /// One entry per extractor × fault tried on this case (`--faults`).
    pub faults: Vec<crate::faults::FaultTally>,
    /// The fault behind each fault-injection finding, by extractor (for `fault.json`).
    pub fault_plans: Vec<(String, crate::faults::FaultPlan)>,
}

impl CaseOutcome {
    /// True if `check` was violated for `extractor` (capture-side findings count for all).
    pub fn has(&self, check: Check, extractor: Option<&str>) -> bool {
        self.findings.iter().any(|f| {
            f.check == check && (f.extractor.is_none() || f.extractor.as_deref() == extractor)
        })
    }

    fn push(&mut self, f: Finding) {
        self.push_new(f);
    }

    fn push_opt(&mut self, f: Option<Finding>) {
        if let Some(f) = f {
            self.push_new(f);
        }
    }

    /// Add `f` unless the (extractor, check) cell already has a finding; true if added.
    pub(crate) fn push_new(&mut self, f: Finding) -> bool {
        let new = !self
            .findings
            .iter()
            .any(|g| g.check == f.check && g.extractor == f.extractor);
        if new {
            self.findings.push(f);
        }
        new
    }
}

/// Run `case` through `producer` and every extractor. `keep` (a directory) receives a copy
/// of the archive as `archive.tar`. `Err` only for faults of snapconf itself.
pub fn run_case(
    case: &Case,
    producer: &dyn Producer,
    extractors: &[&dyn Extractor],
    env: &Env,
    keep: Option<&Path>,
) -> Result<CaseOutcome, HarnessError> {
    let mut jail = env
        .jails
        .take(env.jail_base.as_deref())
        .ctx(|| "cannot create a jail".into())?;
    let out = run_in(&mut jail, case, producer, extractors, env, keep)?;
    if jail_reusable(producer, extractors, env, &out) {
        env.jails.give_back(jail);
    }
    Ok(out)
}

/// Whether the jail of a finished case may serve the next one. Only if no process but
/// this one ever saw it: every adapter ran in process and no fault ran the extractor in a
/// child (a tool's straggler, say a daemon that left its process group, could otherwise
/// write into the jail during the next case and be blamed on that case's pair); and no
/// `containment` or `hang` finding says the jail was changed or a tool was killed.
fn jail_reusable(
    producer: &dyn Producer,
    extractors: &[&dyn Extractor],
    env: &Env,
    out: &CaseOutcome,
) -> bool {
    producer.in_process()
        && extractors.iter().all(|x| x.in_process())
        && env.faults.kinds.is_empty()
        && !out
            .findings
            .iter()
            .any(|f| matches!(f.check, Check::Containment | Check::Hang))
}

fn run_in(
    jail: &mut Jail,
    case: &Case,
    producer: &dyn Producer,
    extractors: &[&dyn Extractor],
    env: &Env,
    keep: Option<&Path>,
) -> Result<CaseOutcome, HarnessError> {
    let src = jail.src();
    let ph = jail.placeholders(&src);
    let made = materialise(&case.spec, &src, &ph).map_err(|e| HarnessError::Materialise {
        what: "the workspace (spec.json)".into(),
        message: e.to_string(),
    })?;
    let mut spec = case.spec.clone();
    spec.entries
        .retain(|e| !made.skipped.iter().any(|(p, _)| *p == e.path));
    let exp = expected(&spec, &env.profile, &ph);
    let mut out = CaseOutcome {
        capture: Capture::Hung,
        skipped_entries: made.skipped.len(),
        findings: Vec::new(),
        faults: Vec::new(),
        fault_plans: Vec::new(),
    };

    crate::jail::canary::plant(jail, &[&case.spec, &case.prior])
        .ctx(|| "cannot plant the jail's decoys".into())?;

    // Capture.
    let archive = jail.archive();
    // The capture's comparison ignores `src/`, so its contents need not be walked before.
    let mut last = jail
        .snapshot_outside(&src)
        .ctx(|| "cannot observe the jail".into())?;
    let scratch = jail
        .fresh_dir("scratch-capture")
        .ctx(|| "cannot create scratch".into())?;
    let exclusions: Vec<Vec<u8>> = spec
        .exclusions
        .iter()
        .map(|x| x.as_bytes().to_vec())
        .collect();
    let outcome = producer.capture(&CaptureRequest {
        root: &src,
        exclusions: &exclusions,
        archive: &archive,
        scratch: &scratch,
        timeout: env.timeout,
    })?;
    if !producer.in_process() {
        stragglers(None, &format!("capture by `{}`", producer.name()), &mut out);
    }
    containment(jail, &src, &mut last, None, "capture", &mut out)?;
    match outcome {
        Outcome::Success => {}
        Outcome::Refused { message } => {
            out.capture = Capture::Refused { message };
            return Ok(out);
        }
        Outcome::Hang { message } => {
            out.push(Finding {
                check: Check::Hang,
                extractor: None,
                message: format!("capture by `{}`: {message}", producer.name()),
                expected: None,
                observed: None,
            });
            return Ok(out);
        }
    }
    if let Some(dir) = keep {
        std::fs::copy(&archive, dir.join("archive.tar"))
            .ctx(|| format!("cannot copy the archive into `{}`", dir.display()))?;
    }

    // Capture-side checks on the member list.
    let bytes = std::fs::read(&archive).ctx(|| {
        format!(
            "`{}` wrote no archive at `{}`",
            producer.name(),
            archive.display()
        )
    })?;
    let members = list_members(bytes.as_slice()).unwrap_or_default();
    capture_canaries(jail, &bytes, producer.name(), &mut out)?;
    out.capture = Capture::Archived {
        members: members.len(),
    };
    let dangling = dangling_hardlinks(&members);
    if let Some((name, target)) = dangling.first() {
        out.push(Finding {
            check: Check::DanglingLink,
            extractor: None,
            message: format!(
                "hardlink member `{}` names `{}`, which is not an earlier member ({} such member(s))",
                crate::model::bytes::escape(name),
                crate::model::bytes::escape(target),
                dangling.len()
            ),
            expected: None,
            observed: None,
        });
    }
    let leaked = excluded_members(&members, &exclusions);
    if let Some(m) = leaked.first() {
        out.push(Finding {
            check: Check::ExclusionLeak,
            extractor: None,
            message: format!(
                "member `{}` lies under an excluded path ({} such member(s))",
                crate::model::bytes::escape(&m.name),
                leaked.len()
            ),
            expected: None,
            observed: None,
        });
    }

    // Hydration: into an empty root, then over the prior workspace.
    for ex in extractors {
        let root = jail
            .fresh_dir("h")
            .ctx(|| "cannot create a hydration root".into())?;
        let ctx = Step {
            archive: &archive,
            root: &root,
            ex: *ex,
            expected_tree: &exp.tree,
            env,
        };
        hydrate_and_check(jail, &mut last, &ctx, None, &mut out)?;
        if !case.prior.entries.is_empty() {
            let root = jail
                .fresh_dir("h")
                .ctx(|| "cannot create a hydration root".into())?;
            let ph0 = jail.placeholders(&root);
            materialise(&case.prior, &root, &ph0).map_err(|e| HarnessError::Materialise {
                what: "the prior workspace (prior.json)".into(),
                message: e.to_string(),
            })?;
            let w0 = observe(&root).ctx(|| "cannot observe the prior workspace".into())?;
            let ctx = Step {
                archive: &archive,
                root: &root,
                ex: *ex,
                expected_tree: &exp.tree,
                env,
            };
            hydrate_and_check(jail, &mut last, &ctx, Some(&w0), &mut out)?;
        }
    }
    let step = crate::faults::FaultStep {
        case,
        archive: &archive,
        expected_tree: &exp.tree,
        extractors,
        env,
    };
    crate::faults::run_faults(jail, &mut last, &step, &mut out)?;
    Ok(out)
}

/// One hydration step: which archive, into which root, by which extractor, expecting what.
struct Step<'a> {
    archive: &'a Path,
    root: &'a Path,
    ex: &'a dyn Extractor,
    expected_tree: &'a Tree,
    env: &'a Env,
}

fn hydrate_and_check(
    jail: &mut Jail,
    last: &mut Snapshot,
    step: &Step<'_>,
    prior: Option<&Tree>,
    out: &mut CaseOutcome,
) -> Result<(), HarnessError> {
    let Step {
        archive,
        root,
        ex,
        expected_tree,
        env,
    } = *step;
    let name = ex.name().to_string();
    let into = if prior.is_some() {
        "over the prior workspace"
    } else {
        "into an empty root"
    };
    let scratch = jail
        .fresh_dir("scratch-h")
        .ctx(|| "cannot create scratch".into())?;
    let outcome = ex.hydrate(&HydrateRequest {
        archive,
        root,
        scratch: &scratch,
        timeout: env.timeout,
        limits: None,
    })?;
    if !ex.in_process() {
        stragglers(Some(&name), &format!("hydration {into}"), out);
    }
    containment(jail, root, last, Some(&name), "hydration", out)?;
    match outcome {
        Outcome::Success => {
            let seen = observe(root).ctx(|| format!("cannot observe `{}`", root.display()))?;
            let seen = normalise(&seen, &env.profile);
            out.push_opt(tree_finding(
                Check::Roundtrip,
                &name,
                format!("hydration {into} differs from the expected tree"),
                (expected_tree, "expected"),
                (&seen, "observed"),
                String::new(),
            ));
        }
        Outcome::Refused { message } => {
            out.push(Finding {
                check: Check::LateFailure,
                extractor: Some(name.clone()),
                message: format!(
                    "capture succeeded but hydration {into} was refused: {}",
                    first_line(&message)
                ),
                expected: Some(listing(expected_tree)),
                observed: Some(format!("hydration refused:\n{message}\n")),
            });
            if let Some(w0) = prior {
                let now = observe(root).ctx(|| format!("cannot observe `{}`", root.display()))?;
                out.push_opt(tree_finding(
                    Check::AtomicHydration,
                    &name,
                    "refused hydration changed the prior workspace".to_string(),
                    (w0, "prior"),
                    (&now, "after"),
                    format!("hydration refused:\n{message}\n\n"),
                ));
            }
        }
        Outcome::Hang { message } => {
            out.push(Finding {
                check: Check::Hang,
                extractor: Some(name),
                message: format!("hydration {into}: {message}"),
                expected: None,
                observed: None,
            });
        }
    }
    Ok(())
}

/// A `check` finding for `extractor` if the tree `seen` differs from `want`: the message is
/// `what` and the diff's first line; the expected side is `want`'s listing, the observed
/// side `preamble`, `seen`'s listing and the diff (its sides named by the two labels).
fn tree_finding(
    check: Check,
    extractor: &str,
    what: String,
    (want, want_label): (&Tree, &str),
    (seen, seen_label): (&Tree, &str),
    preamble: String,
) -> Option<Finding> {
    let d = diff_trees(want, seen);
    (!d.is_empty()).then(|| Finding {
        check,
        extractor: Some(extractor.to_string()),
        message: format!("{what}: {}", first_line(&d.to_string())),
        expected: Some(listing(want)),
        observed: Some(format!(
            "{preamble}{}\ndiff (- {want_label}, + {seen_label}):\n{d}",
            listing(seen)
        )),
    })
}

/// A `hang` finding if the step just run left processes behind (killed and reaped by
/// [`snapconf_producers::process::stragglers::reap_stragglers`] before the jail is compared, so they
/// cannot touch a later step); `step` says which, e.g. "capture by `gnu-tar`".
pub(crate) fn stragglers(extractor: Option<&str>, step: &str, out: &mut CaseOutcome) {
    let left = snapconf_producers::process::stragglers::reap_stragglers();
    if let Some(first) = left.first() {
        out.push(Finding {
            check: Check::Hang,
            extractor: extractor.map(str::to_string),
            message: format!(
                "{step} left {} process(es) running after it ended (killed): {first}",
                left.len()
            ),
            expected: Some("no process of the tool outlives its step\n".into()),
            observed: Some(format!("killed:\n{}\n", left.join("\n"))),
        });
    }
}

/// Record a `containment` finding if anything in the jail outside `root` changed since
/// `last`, which then becomes the new state.
pub(crate) fn containment(
    jail: &Jail,
    root: &Path,
    last: &mut Snapshot,
    extractor: Option<&str>,
    step: &str,
    out: &mut CaseOutcome,
) -> Result<(), HarnessError> {
    let now = jail.snapshot().ctx(|| "cannot observe the jail".into())?;
    let rel = jail.rel(root);
    let changes = last.changes(&now, &[&rel]);
    if let Some(first) = changes.first() {
        out.push(Finding {
            check: Check::Containment,
            extractor: extractor.map(str::to_string),
            message: format!("{step} changed the jail outside the root: {first}"),
            expected: Some("nothing outside the root changes\n".into()),
            observed: Some(format!(
                "changes outside the root:\n{}\n",
                changes.join("\n")
            )),
        });
    }
    *last = now;
    Ok(())
}

/// Capture-side containment: a `containment` finding if the archive (its whole `bytes`)
/// holds the bytes of a decoy or canary (read from behind a symlink).
fn capture_canaries(
    jail: &Jail,
    bytes: &[u8],
    producer: &str,
    out: &mut CaseOutcome,
) -> Result<(), HarnessError> {
    if !crate::jail::canary::may_hold_canaries(bytes, jail) {
        return Ok(());
    }
    let canaries = crate::jail::canary::canaries(jail).ctx(|| "cannot read the decoys".into())?;
    let stored = crate::jail::canary::stored_canaries(bytes, &canaries);
    if let Some(first) = stored.first() {
        out.push(Finding {
            check: Check::Containment,
            extractor: None,
            message: format!(
                "capture by `{producer}` stored the bytes of `{first}`, outside the root (read through a symlink)"
            ),
            expected: Some("no bytes from outside the root in the archive\n".into()),
            observed: Some(format!("decoys found in the archive:\n{}\n", stored.join("\n"))),
        });
    }
    Ok(())
}

fn first_line(s: &str) -> String {
    let first = s
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    // A Python traceback's first line says nothing; its last line names the error
    // (`tarfile.SpecialFileError: ...`).
    if first.ends_with("Traceback (most recent call last):") {
        if let Some(last) = s.lines().rev().find(|l| !l.trim().is_empty()) {
            return format!("{first} ... {}", last.trim());
        }
    }
    first.to_string()
}
