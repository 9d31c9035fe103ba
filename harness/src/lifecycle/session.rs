//! One sequence through one producer and one extractor instance: per turn the edits, the
//! live workspace changed in place to match them ([`update_in_place`]), a capture (the turn's checkpoint), after a
//! refused capture a restore of the last good checkpoint, then the turn's restores; every
//! step judged with the run's checks.

use crate::checks::{violations_of, Check, Evidence, RestoreKind, SessionStep};
use crate::engine::case::{
    capture_and_check, capture_src, hydrate_and_check, jail_reusable, stragglers, CaptureStep,
    CaseOutcome, Env, Finding, HydrationStep, JAIL_NAME,
};
use crate::error::{HarnessError, IoContext};
use crate::gen::Sequence;
use crate::gen::{apply_edit, remove_paths};
use crate::jail::{Jail, Snapshot};
use crate::model::expected::expected;
use crate::model::spec::{Case, WorkspaceSpec};
use crate::model::tree::Tree;
use crate::workspace::in_place::update_in_place;
use crate::workspace::materialise::remove_tree;
use crate::workspace::observe::observe;
use snapconf_producers::{Extractor, Outcome, Producer};
use std::path::{Path, PathBuf};

/// What one sequence did, and what it found.
#[derive(Clone, Debug, Default)]
pub struct SequenceOutcome {
    /// At most one finding per check (the first); `extractor` is `None` for a capture-side
    /// one.
    pub findings: Vec<Finding>,
    /// Turns run.
    pub turns: usize,
    /// Captures the producer refused.
    pub refused: usize,
    /// Restores run (cold, warm and after a refusal).
    pub restores: usize,
    /// Entries the machine could not create (char devices when not root), over all turns.
    pub skipped_entries: usize,
    /// Faulted restores run (`--faults`: each fault over each warm restore).
    pub faulted: usize,
}

/// An accepted checkpoint: its turn, its archive in the jail, and what restoring it must
/// yield.
struct Checkpoint {
    turn: usize,
    archive: PathBuf,
    spec: WorkspaceSpec,
    tree: Tree,
}

/// Run `seq` through `producer` and `extractor`, one instance of each for the whole
/// sequence, so a backend's state carries from turn to turn. `fresh` is the description
/// of the producer when it is a backend: a fresh instance of it captures the same
/// workspace when the session's one looks stuck (`stuck-session`); a built-in (stateless)
/// producer is asked again. `keep` (a directory) receives each checkpoint as
/// `checkpoint-<turn>.tar`. `Err` only for faults of snapconf itself.
pub fn run_sequence(
    seq: &Sequence,
    producer: &dyn Producer,
    extractor: &dyn Extractor,
    fresh: Option<&snapconf_producers::backend::BackendDescription>,
    env: &Env,
    keep: Option<&Path>,
) -> Result<SequenceOutcome, HarnessError> {
    let mut jail = env
        .jails
        .take(env.jail_base.as_deref())
        .ctx(|| "cannot create a jail".into())?;
    let mut out = CaseOutcome {
        capture: crate::engine::case::Capture::Hung,
        skipped_entries: 0,
        findings: Vec::new(),
        faults: Vec::new(),
        fault_plans: Vec::new(),
    };
    let mut s = Session {
        jail: &mut jail,
        producer,
        extractor,
        fresh,
        env,
        out: &mut out,
        counts: SequenceOutcome::default(),
        checkpoints: Vec::new(),
    };
    s.run(seq, keep)?;
    let mut counts = std::mem::take(&mut s.counts);
    out.name_jail_as(jail.path(), JAIL_NAME);
    if jail_reusable(producer, &[extractor], env, &out) {
        env.jails.give_back(jail);
    }
    counts.findings = out.findings;
    counts.skipped_entries = out.skipped_entries;
    counts.faulted = out.faults.len();
    Ok(counts)
}

/// A sequence in progress.
struct Session<'a> {
    jail: &'a mut Jail,
    producer: &'a dyn Producer,
    extractor: &'a dyn Extractor,
    fresh: Option<&'a snapconf_producers::backend::BackendDescription>,
    env: &'a Env,
    out: &'a mut CaseOutcome,
    counts: SequenceOutcome,
    checkpoints: Vec<Checkpoint>,
}

impl Session<'_> {
    fn run(&mut self, seq: &Sequence, keep: Option<&Path>) -> Result<(), HarnessError> {
        let src = self.jail.src();
        let ph = self.jail.placeholders(&src);
        let profile = &self.env.profile;
        let mut spec = seq.initial.clone();
        let mut refused_before = false;
        for (t, turn) in seq.turns.iter().enumerate() {
            let n = t + 1;
            self.counts.turns = n;
            if refused_before {
                // The agent removes what the producer may refuse, and goes on.
                let offending: Vec<_> = expected(&spec, profile, &ph)
                    .refusable
                    .into_iter()
                    .map(|(p, _)| p)
                    .collect();
                spec = remove_paths(&spec, &offending);
            }
            for e in &turn.edits {
                spec = apply_edit(&spec, e);
            }
            // The live workspace, changed in place as the agent's edits change it (what
            // a restore left there included): untouched entries keep their inodes and
            // mtimes, rewritten files their inodes.
            let made =
                update_in_place(&spec, &src, &ph).map_err(|e| HarnessError::Materialise {
                    what: format!("turn {n}'s workspace"),
                    message: e.to_string(),
                })?;
            self.out.skipped_entries += made.skipped.len();
            let mut live = spec.clone();
            live.entries
                .retain(|e| !made.skipped.iter().any(|(p, _)| *p == e.path));
            crate::jail::canary::plant(self.jail, &[&live])
                .ctx(|| "cannot plant the jail's decoys".into())?;
            let exp = expected(&live, profile, &ph);
            let mut last = self
                .jail
                .snapshot_outside(&src)
                .ctx(|| "cannot observe the jail".into())?;
            let what = format!("turn {n}: capture by `{}`", self.producer.name());
            let session = SessionStep {
                turn: n,
                restore: None,
                fresh_capture: None,
            };
            let step = CaptureStep {
                spec: &live,
                producer: self.producer,
                env: self.env,
                what: &what,
                session: Some(session),
            };
            let captured = capture_and_check(self.jail, &mut last, &step, self.out)?;
            let archive = self.jail.archive();
            let refused = matches!(captured.outcome, Outcome::Refused { .. });
            match &captured.outcome {
                Outcome::Success => {
                    let at = self.jail.path().join(format!("checkpoint-{n}.tar"));
                    std::fs::rename(&archive, &at)
                        .ctx(|| format!("cannot keep turn {n}'s checkpoint"))?;
                    if let Some(dir) = keep {
                        std::fs::copy(&at, dir.join(format!("checkpoint-{n}.tar"))).ctx(|| {
                            format!("cannot copy the checkpoint into `{}`", dir.display())
                        })?;
                    }
                    self.checkpoints.push(Checkpoint {
                        turn: n,
                        archive: at,
                        spec: live.clone(),
                        tree: exp.tree.clone(),
                    });
                }
                Outcome::Refused { .. } => {
                    self.counts.refused += 1;
                    if refused_before && exp.refusable.is_empty() {
                        self.probe_stuck(n, &live, &what, &captured.outcome, &mut last)?;
                    }
                }
                Outcome::Hang { .. } => {}
            }
            remove_file_if_any(&archive)?;
            last = self
                .jail
                .snapshot()
                .ctx(|| "cannot observe the jail".into())?;
            if refused {
                if let Some(k) = self.checkpoints.len().checked_sub(1) {
                    self.restore(n, k, RestoreKind::AfterRefusal, &live, &mut last)?;
                }
            }
            for r in &turn.restores {
                let len = self.checkpoints.len();
                if len == 0 {
                    continue;
                }
                let k = len - 1 - usize::from(r.back) % len;
                let kind = if r.warm {
                    RestoreKind::Warm
                } else {
                    RestoreKind::Cold
                };
                self.restore(n, k, kind, &live, &mut last)?;
            }
            refused_before = refused;
        }
        Ok(())
    }

    /// The capture of turn `n` (`what`) was refused right after a refused turn, of a workspace
    /// holding nothing the profile lets a capture refuse: capture the same workspace with
    /// a fresh instance of the producer, and judge the session's refusal against it.
    fn probe_stuck(
        &mut self,
        n: usize,
        live: &WorkspaceSpec,
        what: &str,
        outcome: &Outcome,
        last: &mut Snapshot,
    ) -> Result<(), HarnessError> {
        let fresh_backend = self
            .fresh
            .map(|d| snapconf_producers::Backend::new(d.clone()));
        let fresh_producer = fresh_backend.as_ref().map(|b| b.producer());
        let probe: &dyn Producer = match &fresh_producer {
            Some(p) => p,
            None => self.producer,
        };
        let archive = self.jail.archive();
        remove_file_if_any(&archive)?;
        let (fresh_outcome, _) =
            capture_src(self.jail, live, probe, self.env.timeout, "scratch-probe")?;
        drop(fresh_producer);
        drop(fresh_backend);
        let _ = stragglers(probe_in_process(self.producer, self.fresh));
        remove_file_if_any(&archive)?;
        *last = self
            .jail
            .snapshot()
            .ctx(|| "cannot observe the jail".into())?;
        let mut ev = Evidence::capture(what, outcome);
        ev.session = Some(SessionStep {
            turn: n,
            restore: None,
            fresh_capture: Some(matches!(fresh_outcome, Outcome::Success)),
        });
        let checks: Vec<Check> = self
            .env
            .checks
            .iter()
            .copied()
            .filter(|c| *c != Check::HANG)
            .collect();
        self.out.record(None, violations_of(&checks, &ev)?);
        Ok(())
    }

    /// Restore checkpoint number `k` at turn `n`, `kind`-wise (`live` is what the live
    /// workspace holds), and judge it; under `--faults`, a warm restore is repeated under
    /// each fault over a fresh copy of the live workspace.
    fn restore(
        &mut self,
        n: usize,
        k: usize,
        kind: RestoreKind,
        live: &WorkspaceSpec,
        last: &mut Snapshot,
    ) -> Result<(), HarnessError> {
        self.counts.restores += 1;
        let src = self.jail.src();
        let (root, prior) = match kind {
            RestoreKind::Cold => (
                self.jail
                    .fresh_dir("h")
                    .ctx(|| "cannot create a hydration root".into())?,
                None,
            ),
            RestoreKind::Warm | RestoreKind::AfterRefusal => (
                src.clone(),
                Some(observe(&src).ctx(|| "cannot observe the live workspace".into())?),
            ),
        };
        let c = &self.checkpoints[k];
        let place = match kind {
            RestoreKind::Cold => "into an empty root",
            _ => "over the live workspace",
        };
        let what = format!(
            "turn {n}: {} of turn {}'s checkpoint {place}",
            kind.words(),
            c.turn
        );
        let step = HydrationStep {
            archive: &c.archive,
            root: &root,
            ex: self.extractor,
            expected_tree: &c.tree,
            env: self.env,
            what: Some(&what),
            session: Some(SessionStep {
                turn: n,
                restore: Some((c.turn, kind)),
                fresh_capture: None,
            }),
        };
        hydrate_and_check(self.jail, last, &step, prior.as_ref(), self.out)?;
        if kind == RestoreKind::Cold {
            remove_tree(&root).ctx(|| format!("cannot remove `{}`", root.display()))?;
            *last = self
                .jail
                .snapshot()
                .ctx(|| "cannot observe the jail".into())?;
        } else if !self.env.faults.kinds.is_empty() {
            let case = Case {
                spec: c.spec.clone(),
                prior: live.clone(),
            };
            let (archive, tree) = (c.archive.clone(), c.tree.clone());
            let step = crate::engine::faults::FaultStep {
                case: &case,
                archive: &archive,
                expected_tree: &tree,
                extractors: &[self.extractor],
                env: self.env,
            };
            crate::engine::faults::run_faults(self.jail, last, &step, self.out)?;
            // The fault runs leave their roots; the next step compares from here.
            *last = self
                .jail
                .snapshot()
                .ctx(|| "cannot observe the jail".into())?;
        }
        Ok(())
    }
}

/// Whether the stuck probe ran in this process (nothing to reap then).
fn probe_in_process(
    producer: &dyn Producer,
    fresh: Option<&snapconf_producers::backend::BackendDescription>,
) -> bool {
    fresh.is_none() && producer.in_process()
}

/// Remove the file at `path` if there is one.
fn remove_file_if_any(path: &Path) -> Result<(), HarnessError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).ctx(|| format!("cannot remove `{}`", path.display())),
    }
}
