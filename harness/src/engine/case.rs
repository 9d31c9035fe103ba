//! One case through one producer and its extractors: capture, list, hydrate, compare.
//!
//! Data flow (docs/design.md): materialise W1 in a jail → capture → list members (dangling and
//! exclusion checks) → hydrate into an empty root, then over the prior W0 → observe →
//! compare with `expected(spec, profile)` and with W0.

use crate::archive::listing::archive_tar;
use crate::checks::{violations_of, Archived, Check, Evidence, Violation};
use crate::error::{HarnessError, IoContext};
use crate::jail::{Jail, Snapshot};
use crate::model::expected::expected;
use crate::model::profile::Profile;
use crate::model::spec::Case;
use crate::model::tree::Tree;
use crate::workspace::materialise::materialise;
use crate::workspace::observe::observe;
use snapconf_producers::{CaptureRequest, Extractor, HydrateRequest, Outcome, Producer};
use std::path::Path;
use std::time::Duration;

/// What the pipeline needs besides the case and the adapters.
#[derive(Clone, Debug)]
pub struct Env {
    /// The profile the expected trees and the checks follow.
    pub profile: Profile,
    /// Limit for each capture and each hydration.
    pub timeout: Duration,
    /// Where jails are created (system temp dir when `None`).
    pub jail_base: Option<std::path::PathBuf>,
    /// Faults injected into hydrations over the prior workspace (`--faults`; none by default).
    pub faults: crate::engine::faults::FaultOptions,
    /// The spare jail reused by the next case (`Default::default()` starts empty).
    pub jails: crate::jail::JailPool,
    /// The checks each step is judged by: [`Check::ALL`] unless a test adds its own.
    pub checks: Vec<Check>,
}

/// A violated check in one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The check violated.
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

impl Finding {
    /// The finding of violation `v` for `extractor` (`None` for a capture-side finding).
    pub fn from_violation(v: Violation, extractor: Option<&str>) -> Finding {
        Finding {
            check: v.check,
            extractor: extractor.map(str::to_string),
            message: v.message,
            expected: v.expected,
            observed: v.observed,
        }
    }
}

/// How the capture went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Capture {
    /// An archive was written with this many members.
    Archived {
        /// Members the reference listed.
        members: usize,
    },
    /// The producer refused (allowed or not by the profile; counted, never a finding by itself).
    Refused {
        /// What the producer said.
        message: String,
    },
    /// The producer hung or died of a signal (a `hang` finding is recorded).
    Hung,
}

/// The result of one case for one producer.
#[derive(Clone, Debug)]
pub struct CaseOutcome {
    /// How the capture went.
    pub capture: Capture,
    /// Entries the machine could not create (char devices when not root), with why.
    pub skipped_entries: usize,
    /// At most one finding per (extractor, check).
    pub findings: Vec<Finding>,
    /// One entry per extractor × fault tried on this case (`--faults`).
    pub faults: Vec<crate::model::fault::FaultTally>,
    /// The fault behind each fault-injection finding, by extractor (for `fault.json`).
    pub fault_plans: Vec<(String, crate::engine::faults::FaultPlan)>,
}

impl CaseOutcome {
    /// True if `check` was violated for `extractor` (capture-side findings count for all).
    pub fn has(&self, check: Check, extractor: Option<&str>) -> bool {
        self.findings.iter().any(|f| {
            f.check == check && (f.extractor.is_none() || f.extractor.as_deref() == extractor)
        })
    }

    /// Writes `name` for the jail's path (`jail`) wherever a finding's message, expected or
    /// observed text has it: the jail is gone when the report is read, and its random name
    /// would make two runs of one seed differ.
    pub(crate) fn name_jail_as(&mut self, jail: &Path, name: &str) {
        let Some(jail) = jail.to_str().filter(|j| !j.is_empty()) else {
            return;
        };
        for f in &mut self.findings {
            for text in [
                Some(&mut f.message),
                f.expected.as_mut(),
                f.observed.as_mut(),
            ]
            .into_iter()
            .flatten()
            {
                if text.contains(jail) {
                    *text = text.replace(jail, name);
                }
            }
        }
    }

    /// Add each violation as a finding for `extractor` (`None` for the capture), unless its
    /// (extractor, check) cell already has one.
    pub(crate) fn record(&mut self, extractor: Option<&str>, violations: Vec<Violation>) {
        for v in violations {
            self.push_new(Finding::from_violation(v, extractor));
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

/// What a finding's text says for the path of the case's jail: the jail is gone when the
/// report is read, and its random name would make two runs of one seed differ.
pub const JAIL_NAME: &str = "$JAIL";

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
    let mut out = run_in(&mut jail, case, producer, extractors, env, keep)?;
    out.name_jail_as(jail.path(), JAIL_NAME);
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
pub(crate) fn jail_reusable(
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
            .any(|f| f.check == Check::CONTAINMENT || f.check == Check::HANG)
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
    let what = format!("capture by `{}`", producer.name());
    let step = CaptureStep {
        spec: &spec,
        producer,
        env,
        what: &what,
        session: None,
    };
    let captured = capture_and_check(jail, &mut last, &step, &mut out)?;
    let (outcome, members) = (captured.outcome, captured.members);
    match outcome {
        Outcome::Success => {}
        Outcome::Refused { message } => {
            out.capture = Capture::Refused { message };
            return Ok(out);
        }
        Outcome::Hang { .. } => return Ok(out),
    }
    out.capture = Capture::Archived { members };
    if let Some(dir) = keep {
        std::fs::copy(&archive, dir.join("archive.tar"))
            .ctx(|| format!("cannot copy the archive into `{}`", dir.display()))?;
    }

    // Hydration: into an empty root, then over the prior workspace.
    for ex in extractors {
        let root = jail
            .fresh_dir("h")
            .ctx(|| "cannot create a hydration root".into())?;
        let ctx = HydrationStep {
            archive: &archive,
            root: &root,
            ex: *ex,
            expected_tree: &exp.tree,
            env,
            what: None,
            session: None,
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
            let over = HydrationStep { root: &root, ..ctx };
            hydrate_and_check(jail, &mut last, &over, Some(&w0), &mut out)?;
        }
    }
    let step = crate::engine::faults::FaultStep {
        case,
        archive: &archive,
        expected_tree: &exp.tree,
        extractors,
        env,
    };
    crate::engine::faults::run_faults(jail, &mut last, &step, &mut out)?;
    Ok(out)
}

/// How a capture step ended: the producer's outcome and the number of members the
/// reference listed in the archive (0 when there is none or it cannot be listed).
pub(crate) struct Captured {
    pub(crate) outcome: Outcome,
    pub(crate) members: usize,
}

/// One capture step: which workspace, by which producer, under which run, named how.
pub(crate) struct CaptureStep<'a> {
    /// The workspace, materialised in the jail's `src/`.
    pub(crate) spec: &'a crate::model::spec::WorkspaceSpec,
    pub(crate) producer: &'a dyn Producer,
    pub(crate) env: &'a Env,
    /// The step in words.
    pub(crate) what: &'a str,
    /// Where the step stands in a session (`snapconf lifecycle`).
    pub(crate) session: Option<crate::checks::SessionStep>,
}

/// Capture the jail's `src/` (holding `step.spec`, materialised) with `step.producer` into
/// the jail's `archive.tar`, list the archive's members and search it for the decoys, and
/// judge the step with every check of the run; the violations go to `out` as capture-side
/// findings. `last` is the jail's state before the capture and becomes the state after it.
pub(crate) fn capture_and_check(
    jail: &mut Jail,
    last: &mut Snapshot,
    step: &CaptureStep<'_>,
    out: &mut CaseOutcome,
) -> Result<Captured, HarnessError> {
    let CaptureStep {
        spec,
        producer,
        env,
        what,
        session,
    } = *step;
    let src = jail.src();
    let archive = jail.archive();
    let (outcome, exclusions) = capture_src(jail, spec, producer, env.timeout, "scratch-capture")?;
    let left = stragglers(producer.in_process());
    let outside = outside_changes(jail, &src, last)?;
    // The member list and the canary search need the archive; a refused or hung capture
    // may have left none.
    let bytes = match outcome {
        Outcome::Success => Some(std::fs::read(&archive).ctx(|| {
            format!(
                "`{}` wrote no archive at `{}`",
                producer.name(),
                archive.display()
            )
        })?),
        _ => None,
    };
    // The tar inside (decompressed once) serves the member list and the canary search. An
    // archive the reference cannot list is evidence too: the member checks say they cannot
    // hold, instead of passing on an empty list.
    let tar = bytes.as_deref().map(archive_tar);
    let (bytes, members) = match tar {
        Some((tar, listed)) => (Some(tar), Some(listed)),
        None => (None, None),
    };
    let canaries = match &bytes {
        Some(b) if crate::jail::canary::may_hold_canaries(b, jail) => {
            crate::jail::canary::canaries(jail).ctx(|| "cannot read the decoys".into())?
        }
        _ => Vec::new(),
    };
    let stored = bytes
        .as_deref()
        .map(|b| crate::jail::canary::stored_canaries(b, &canaries))
        .unwrap_or_default();
    let mut ev = Evidence::capture(what, &outcome);
    ev.session = session;
    ev.outside = &outside;
    ev.stragglers = &left;
    if let Some(members) = &members {
        ev.archived = Some(Archived {
            members: members.as_deref().map_err(String::as_str),
            exclusions: &exclusions,
            stored_canaries: &stored,
        });
    }
    out.record(None, violations_of(&env.checks, &ev)?);
    let members = members.map_or(0, |m| m.map_or(0, |m| m.len()));
    Ok(Captured { outcome, members })
}

/// Capture the jail's `src/` (holding `spec`) with `producer` into the jail's
/// `archive.tar`, honouring `spec`'s exclusions, with a fresh scratch directory `scratch`
/// of the jail and `timeout`: the producer's outcome and the exclusions as it was given
/// them. The one capture request of a case, a session's turn and its stuck-session probe.
pub(crate) fn capture_src(
    jail: &mut Jail,
    spec: &crate::model::spec::WorkspaceSpec,
    producer: &dyn Producer,
    timeout: std::time::Duration,
    scratch: &str,
) -> Result<(Outcome, Vec<Vec<u8>>), HarnessError> {
    let scratch = jail
        .fresh_dir(scratch)
        .ctx(|| "cannot create scratch".into())?;
    let exclusions: Vec<Vec<u8>> = spec
        .exclusions
        .iter()
        .map(|x| x.as_bytes().to_vec())
        .collect();
    let outcome = producer.capture(&CaptureRequest {
        root: &jail.src(),
        exclusions: &exclusions,
        archive: &jail.archive(),
        scratch: &scratch,
        timeout,
    })?;
    Ok((outcome, exclusions))
}

/// One hydration step: which archive, into which root, by which extractor, expecting what.
pub(crate) struct HydrationStep<'a> {
    pub(crate) archive: &'a Path,
    pub(crate) root: &'a Path,
    pub(crate) ex: &'a dyn Extractor,
    pub(crate) expected_tree: &'a Tree,
    pub(crate) env: &'a Env,
    /// The step in words (`None`: "hydration into an empty root" or "hydration over the
    /// prior workspace").
    pub(crate) what: Option<&'a str>,
    /// Where the step stands in a session (`snapconf lifecycle`).
    pub(crate) session: Option<crate::checks::SessionStep>,
}

/// Hydrate `step.archive` into `step.root` (empty, or holding the prior `prior`) and
/// judge the step with every check of the run.
pub(crate) fn hydrate_and_check(
    jail: &mut Jail,
    last: &mut Snapshot,
    step: &HydrationStep<'_>,
    prior: Option<&Tree>,
    out: &mut CaseOutcome,
) -> Result<(), HarnessError> {
    let HydrationStep {
        archive,
        root,
        ex,
        expected_tree,
        env,
        what,
        session,
    } = *step;
    let what = match (what, prior) {
        (Some(w), _) => w,
        (None, Some(_)) => "hydration over the prior workspace",
        (None, None) => "hydration into an empty root",
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
    let left = stragglers(ex.in_process());
    let outside = outside_changes(jail, root, last)?;
    let mut ev = Evidence::hydration(what, &outcome, root);
    ev.outside = &outside;
    ev.stragglers = &left;
    ev.expected = Some(expected_tree);
    ev.profile = Some(&env.profile);
    ev.prior = prior;
    ev.cleared_by = ex.clears_root().then(|| ex.name());
    ev.promises = Some(ex.link_promises());
    ev.session = session;
    out.record(Some(ex.name()), violations_of(&env.checks, &ev)?);
    Ok(())
}

/// The processes the step just run left behind, one line each (killed and reaped by
/// [`snapconf_producers::process::stragglers::reap_stragglers`] before the jail is
/// compared, so they cannot touch a later step). Nothing to look for after an in-process
/// adapter.
pub(crate) fn stragglers(in_process: bool) -> Vec<String> {
    if in_process {
        Vec::new()
    } else {
        snapconf_producers::process::stragglers::reap_stragglers()
    }
}

/// What changed in the jail outside `root` since `last`, which then becomes the new state.
pub(crate) fn outside_changes(
    jail: &Jail,
    root: &Path,
    last: &mut Snapshot,
) -> Result<Vec<String>, HarnessError> {
    let now = jail.snapshot().ctx(|| "cannot observe the jail".into())?;
    let rel = jail.rel(root);
    let changes = last.changes(&now, &[&rel]);
    *last = now;
    Ok(changes)
}
