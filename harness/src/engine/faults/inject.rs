//! Running every fault of a run against every extractor for one case, and checking that a
//! failed hydration left the prior workspace exactly as it was.

use super::child::ChildReference;
use super::layout::{layout, TarLayout};
use super::plan::{fault_seed, FaultPlan};
use super::tmpfs::Tmpfs;
use crate::checks::Check;
use crate::checks::{violations_of, Evidence};
use crate::engine::case::{outside_changes, stragglers, CaseOutcome, Env, Finding};
use crate::error::{HarnessError, IoContext};
use crate::jail::{Jail, Snapshot};
use crate::model::diff::diff_trees;
use crate::model::expected::normalise;
use crate::model::fault::FaultKind;
use crate::model::fault::{FaultResult, FaultTally};
use crate::model::policy_map::reference_policy;
use crate::model::spec::{Case, EntryKind};
use crate::model::tree::Tree;
use crate::workspace::materialise::materialise;
use crate::workspace::observe::observe;
use snapconf_producers::{Extractor, HydrateRequest, Outcome, ToolLimits};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Page size assumed for tmpfs accounting, in bytes.
const PAGE: u64 = 4096;
/// The tmpfs is mounted this large, filled with the prior, then shrunk.
const TMPFS_START: u64 = 64 << 20;

static ENOSPC_WARNED: AtomicBool = AtomicBool::new(false);

/// One case's faults: the case, its archive (as captured), the expected new tree
/// (normalised), the extractors and the run settings.
pub struct FaultStep<'a> {
    /// The case (its prior is what each fault hydrates over).
    pub case: &'a Case,
    /// The archive as captured.
    pub archive: &'a Path,
    /// The expected new tree, normalised.
    pub expected_tree: &'a Tree,
    /// The extractors each fault runs with.
    pub extractors: &'a [&'a dyn Extractor],
    /// The run's settings (its `--faults`).
    pub env: &'a Env,
}

/// Run every fault of `step.env.faults` against every extractor, over a fresh copy of the
/// prior workspace each time. Counts go to `out.faults`; a failed hydration that changed
/// the prior is an `atomic-hydration` finding (its plan in `out.fault_plans`); a change
/// outside the root a `containment` finding. Does nothing for a case without a prior.
///
/// # Errors
/// Faults of snapconf itself (jail, materialise, observe the jail).
pub fn run_faults(
    jail: &mut Jail,
    last: &mut Snapshot,
    step: &FaultStep<'_>,
    out: &mut CaseOutcome,
) -> Result<(), HarnessError> {
    if step.case.prior.entries.is_empty() || step.env.faults.kinds.is_empty() {
        return Ok(());
    }
    let bytes = std::fs::read(step.archive)
        .ctx(|| format!("cannot read the archive `{}`", step.archive.display()))?;
    let l = layout(&bytes);
    for kind in step.env.faults.kinds.clone() {
        let plan = match draw(kind, &l, step.case) {
            Ok(p) => p,
            Err(why) => {
                for ex in step.extractors {
                    out.faults.push(FaultTally {
                        extractor: ex.name().to_string(),
                        kind,
                        result: FaultResult::Skipped(why.clone()),
                    });
                }
                continue;
            }
        };
        let archive = match plan.apply(&bytes) {
            Some(faulted) => {
                let dir = jail
                    .fresh_dir("scratch-fault")
                    .ctx(|| "cannot create scratch".into())?;
                let p = dir.join("archive.tar");
                std::fs::write(&p, faulted).ctx(|| format!("cannot write `{}`", p.display()))?;
                p
            }
            None => step.archive.to_path_buf(),
        };
        for ex in step.extractors {
            let faulted = Faulted {
                plan: &plan,
                archive: &archive,
                layout: &l,
            };
            let result = one(jail, last, step, *ex, faulted, out)?;
            out.faults.push(FaultTally {
                extractor: ex.name().to_string(),
                kind,
                result,
            });
        }
    }
    Ok(())
}

fn draw(kind: FaultKind, l: &TarLayout, case: &Case) -> Result<FaultPlan, String> {
    let seed = fault_seed(case, kind);
    match kind {
        FaultKind::Truncate => {
            FaultPlan::truncate(l, seed).ok_or_else(|| "the archive has no member".to_string())
        }
        FaultKind::Corrupt => {
            FaultPlan::corrupt(l, seed).ok_or_else(|| "the archive has no member".to_string())
        }
        FaultKind::Efbig => {
            FaultPlan::efbig(l).ok_or_else(|| "no file in the archive over 16 bytes".to_string())
        }
        FaultKind::Enospc => Ok(FaultPlan::enospc(l)),
        FaultKind::Kill => Ok(FaultPlan::kill(l, seed)),
    }
}

/// Bytes the archive's regular files take on a tmpfs (whole pages).
fn file_pages(l: &TarLayout) -> u64 {
    l.members
        .iter()
        .filter(|m| m.is_regular())
        .map(|m| m.size.div_ceil(PAGE) * PAGE)
        .sum()
}

/// One fault drawn for a case's archive: the plan, the archive with it applied, and the
/// layout of the archive before it.
#[derive(Clone, Copy)]
struct Faulted<'a> {
    plan: &'a FaultPlan,
    /// The faulted archive (the original when the plan changes no byte).
    archive: &'a Path,
    /// The original archive's layout.
    layout: &'a TarLayout,
}

/// Hydrates `faulted` over the prior with `ex` (a child reference when the fault needs
/// limits an in-process extractor cannot honour), judges the step, and says how it ended.
fn one(
    jail: &mut Jail,
    last: &mut Snapshot,
    step: &FaultStep<'_>,
    ex: &dyn Extractor,
    faulted: Faulted<'_>,
    out: &mut CaseOutcome,
) -> Result<FaultResult, HarnessError> {
    let Faulted {
        plan,
        archive,
        layout: l,
    } = faulted;
    let name = ex.name().to_string();
    let needs_limits = matches!(plan.kind, FaultKind::Efbig | FaultKind::Kill);
    let child;
    let ex: &dyn Extractor = if needs_limits && !ex.honours_limits() {
        match (&step.env.faults.bin, name.as_str()) {
            (Some(bin), "reference") => {
                child =
                    ChildReference::new(bin.clone(), &reference_policy(&step.env.profile, None));
                &child
            }
            _ => {
                return Ok(FaultResult::Skipped(format!(
                    "`{name}` runs in process: it cannot be limited or killed"
                )))
            }
        }
    } else {
        ex
    };

    // The root, with the prior in place; for `enospc` inside a small tmpfs.
    let mut plan = plan.clone();
    let mut fs: Option<Tmpfs> = None;
    let root: PathBuf = if plan.kind == FaultKind::Enospc {
        let outside_link = step.case.prior.entries.iter().any(|e| {
            matches!(&e.kind, EntryKind::Hardlink { target } if target.as_bytes().starts_with(b"{out}/"))
        });
        if outside_link {
            return Ok(FaultResult::Skipped(
                "the prior hardlinks a jail file, which cannot cross into the tmpfs".to_string(),
            ));
        }
        let need = file_pages(l);
        if need == 0 {
            return Ok(FaultResult::Skipped(
                "the archive has no file data".to_string(),
            ));
        }
        let dir = jail
            .fresh_dir("h-fs")
            .ctx(|| "cannot create a mount point".into())?;
        let t = match Tmpfs::mount(&dir, TMPFS_START) {
            Ok(t) => t,
            Err(e) => {
                let why = format!("cannot mount a tmpfs in the jail: {e}");
                if !ENOSPC_WARNED.swap(true, Ordering::SeqCst) {
                    eprintln!("snapconf: enospc fault skipped: {why}");
                }
                return Ok(FaultResult::Skipped(why));
            }
        };
        let root = t.path().join("root");
        std::fs::create_dir(&root).ctx(|| format!("cannot create `{}`", root.display()))?;
        fs = Some(t);
        root
    } else {
        jail.fresh_dir("h")
            .ctx(|| "cannot create a hydration root".into())?
    };
    let ph = jail.placeholders(&root);
    materialise(&step.case.prior, &root, &ph).map_err(|e| HarnessError::Materialise {
        what: "the prior workspace (prior.json)".into(),
        message: e.to_string(),
    })?;
    if let Some(t) = &fs {
        // The prior fits; the new tree beside it (as a staging extractor builds it) does not.
        let used = t.used().ctx(|| "cannot measure the tmpfs".into())?;
        let size = (used + file_pages(l) / 2).div_ceil(PAGE) * PAGE;
        t.resize(size.max(PAGE))
            .ctx(|| "cannot shrink the tmpfs".into())?;
        plan.limit = Some(size.max(PAGE));
    }
    let w0 = observe(&root).ctx(|| "cannot observe the prior workspace".into())?;
    *last = jail.snapshot().ctx(|| "cannot observe the jail".into())?;

    let scratch = jail
        .fresh_dir("scratch-h")
        .ctx(|| "cannot create scratch".into())?;
    let limits = ToolLimits {
        fsize: (plan.kind == FaultKind::Efbig)
            .then_some(plan.limit)
            .flatten(),
        kill_after: plan.kill_after(),
    };
    let req = HydrateRequest {
        archive,
        root: &root,
        scratch: &scratch,
        timeout: step.env.timeout,
        limits: Some(&limits),
    };
    let outcome = ex.hydrate(&req)?;
    // The backend's recovery step, if it declares one (a no-op after a success).
    let recovery = ex.recover(&HydrateRequest {
        limits: None,
        ..req
    })?;
    let what = format!("hydration under fault {plan}");
    let left = stragglers(ex.in_process());
    // For `enospc` the whole mount is the extractor's: its staging sibling lives there.
    let inside = fs.as_ref().map_or(root.as_path(), |t| t.path());
    let outside = outside_changes(jail, inside, last)?;
    let accepted = outcome == Outcome::Success;
    // A refusal's evidence carries the recovery step's word.
    let outcome = match (outcome, recovery) {
        (Outcome::Refused { message }, Some(r)) => Outcome::Refused {
            message: format!("{message}\nrecovery: {r:?}"),
        },
        (Outcome::Hang { message }, Some(r)) => Outcome::Hang {
            message: format!("{message}\nrecovery: {r:?}"),
        },
        (o, _) => o,
    };
    let jail = std::cell::RefCell::new(jail);
    // "The complete new tree" after a kill is what this extractor makes of the archive
    // when it is not killed (for a producer that loses something, that differs from the
    // profile's expected tree), or failing that the expected tree.
    let complete_new = |now: &Tree| -> Result<bool, HarnessError> {
        let new = unfaulted(&mut jail.borrow_mut(), step, ex, archive)?;
        Ok(new.is_some_and(|t| diff_trees(&t, now).is_empty())
            || diff_trees(step.expected_tree, &normalise(now, &step.env.profile)).is_empty())
    };
    let fault = plan.to_string();
    let mut ev = Evidence::hydration(&what, &outcome, &root);
    ev.fault = Some(&fault);
    ev.outside = &outside;
    ev.stragglers = &left;
    ev.prior = Some(&w0);
    ev.cleared_by = ex.clears_root().then(|| ex.name());
    if plan.kind == FaultKind::Kill {
        ev.also_intact = Some(&complete_new);
    }
    let violations = violations_of(&step.env.checks, &ev)?;
    drop(ev);
    drop(fs);
    let damaged = violations
        .iter()
        .any(|v| v.check == Check::ATOMIC_HYDRATION);
    for v in violations {
        let atomic = v.check == Check::ATOMIC_HYDRATION;
        if out.push_new(Finding::from_violation(v, Some(&name))) && atomic {
            out.fault_plans.push((name.clone(), plan.clone()));
        }
    }
    Ok(if accepted {
        FaultResult::Accepted
    } else if damaged {
        FaultResult::FailedDamaged
    } else {
        FaultResult::FailedIntact
    })
}

/// The tree `ex` leaves after an ordinary (unfaulted) hydration of `archive` over the
/// prior, in a fresh root; `None` if that hydration fails.
fn unfaulted(
    jail: &mut Jail,
    step: &FaultStep<'_>,
    ex: &dyn Extractor,
    archive: &Path,
) -> Result<Option<Tree>, HarnessError> {
    let root = jail
        .fresh_dir("h")
        .ctx(|| "cannot create a hydration root".into())?;
    let ph = jail.placeholders(&root);
    materialise(&step.case.prior, &root, &ph).map_err(|e| HarnessError::Materialise {
        what: "the prior workspace (prior.json)".into(),
        message: e.to_string(),
    })?;
    let scratch = jail
        .fresh_dir("scratch-h")
        .ctx(|| "cannot create scratch".into())?;
    let outcome = ex.hydrate(&HydrateRequest {
        archive,
        root: &root,
        scratch: &scratch,
        timeout: step.env.timeout,
        limits: None,
    })?;
    if outcome != Outcome::Success {
        return Ok(None);
    }
    Ok(Some(
        observe(&root).ctx(|| format!("cannot observe `{}`", root.display()))?,
    ))
}
