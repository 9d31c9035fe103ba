//! One execution: run an archive through the extractor over the small prior workspace in
//! a fresh jail (and filesystem view) or the worker's kept one ([`super::persist`]), and
//! judge the hydration with the campaign's checks.

use super::host_safe::host_safe;
use super::options::FuzzOptions;
use super::persist::Persist;
use super::safety::judge_safety;
use crate::checks::{self, Check, Evidence, Violation};
use crate::engine::case::stragglers;
use crate::error::{HarnessError, IoContext};
use crate::jail::confined::Confined;
use crate::jail::restore::Laid;
use crate::jail::view::View;
use crate::jail::Jail;
use crate::workspace::observe::observe;
use snapconf_producers::process::view::with_view;
use snapconf_producers::{Extractor, HydrateRequest, Outcome};
use std::path::Path;
use std::time::{Duration, Instant};

/// A finding of one execution (before shrinking): a violation of one check.
pub(super) type Hit = Violation;

/// What an execution found: its violations, and whether the extractor accepted.
pub(super) type Executed = (Vec<Hit>, bool);

/// The small prior every execution hydrates over: a file, a directory with a file, and a
/// link planted by the prior at the decoy in the root's parent (an extractor that writes
/// through it changes the decoy: `containment`).
///
/// Written from a handle on `jail` ([`Confined`]): a persistent worker may still run in its
/// view, and a link it planted in the root must not lead these writes to the host.
pub(super) fn write_prior(jail: &Jail, root: &Path) -> std::io::Result<()> {
    let conf = Confined::open(jail.path())?;
    let at = |name: &str| {
        let mut rel = jail.rel(root);
        rel.push(b'/');
        rel.extend_from_slice(name.as_bytes());
        rel
    };
    conf.create_file(&at("a"), b"old a\n", 0o644)?;
    conf.create_dir(&at("d"), 0o755)?;
    conf.create_file(&at("d/f"), b"old d/f\n", 0o644)?;
    conf.create_symlink(&at("l"), b"../decoy")
}

/// Whether `bytes` can run through `ex` in this session: always in a filesystem view
/// ([`FuzzOptions::view`] and an extractor that can run in one), else only an archive
/// that cannot reach past the jail ([`host_safe`]).
pub(super) fn runnable(bytes: &[u8], ex: &dyn Extractor, opts: &FuzzOptions) -> bool {
    (opts.view && ex.view_paths().is_some()) || host_safe(bytes)
}

/// Run `bytes` through `ex` once over the small prior and judge the hydration with the
/// session's checks; the violations and whether the extractor accepted. Through the
/// worker's persistent server and view when `persist` has one ([`Persist`]), else in a
/// fresh jail (and view) with a process of its own; the checks see the same either way.
pub(super) fn execute(
    bytes: &[u8],
    ex: &dyn Extractor,
    opts: &FuzzOptions,
    persist: &mut Persist,
) -> Result<Executed, HarnessError> {
    persist.runs += 1;
    let began = Instant::now();
    persist.starting = Duration::ZERO;
    let executed = if persist.enabled() {
        persist.execute(bytes, ex, opts)?
    } else {
        execute_once(bytes, ex, opts, persist.timeout(opts))?
    };
    if !executed.0.iter().any(|h| h.check == Check::HANG) {
        // A persistent server's start is not the archive's: the request's timeout does
        // not include it either.
        let spent = began.elapsed().saturating_sub(persist.starting);
        persist.slowest = persist.slowest.max(spent);
    }
    Ok(executed)
}

/// The shortest timeout [`hang_cut`] gives.
const HANG_CUT_MIN: Duration = Duration::from_secs(1);

/// How many times a worker's slowest execution that did not hang an execution may take
/// once the session's `hang` slot is taken ([`hang_cut`]).
const HANG_CUT_FACTOR: u32 = 10;

/// The timeout of a worker's fuzz-loop executions: ten times the worker's slowest
/// execution that did not hang, at least 1 s, at most the session's `--timeout`. An
/// archive that hangs the extractor (python-tar blocks on a FIFO member followed by a
/// regular file of the same name) would otherwise cost a whole `--timeout` each time the
/// fuzzer draws another of its kind, though a session keeps one `hang`. An execution past
/// the cut runs again at the full timeout while a `hang` could still become a finding
/// (none pending, none kept); after that it is another hang, counted in
/// [`FuzzSummary::hangs_cut_short`]. The same cut bounds each run of a shrink (a
/// candidate past it does not reproduce another check; it does reproduce a hang), and a
/// shrunk archive is confirmed at the full timeout (a hang's that was only slow is
/// replaced by the archive found).
pub(super) fn hang_cut(full: Duration, slowest: Duration) -> Duration {
    (slowest * HANG_CUT_FACTOR).max(HANG_CUT_MIN).min(full)
}

/// One execution in a fresh jail (and view) with a process of its own; see [`execute`].
fn execute_once(
    bytes: &[u8],
    ex: &dyn Extractor,
    opts: &FuzzOptions,
    timeout: Duration,
) -> Result<Executed, HarnessError> {
    let jail = Jail::new(opts.jail_base.as_deref()).ctx(|| "cannot create a jail".into())?;
    let archive = jail.archive();
    std::fs::write(&archive, bytes).ctx(|| "cannot write the archive".into())?;
    // The same layout with or without the view, so that findings do not depend on it.
    let paths = ex.view_paths().filter(|_| opts.view);
    let view = View::for_fuzz(
        &jail,
        paths.as_deref().unwrap_or_default(),
        std::slice::from_ref(&archive),
    )
    .ctx(|| "cannot lay out the filesystem view".into())?;
    // The adapter's scratch lives outside the jail, unseen by the tool; a plugged-in
    // backend's steps run in and write to a scratch of the view's own (`{exclude_file}`,
    // the worker's scratch: [`View::with_scratch`]).
    let scratch_dir = scratch_beside(&jail)?;
    let scratch = view.scratch().unwrap_or(scratch_dir.path());
    let root = view.root();
    write_prior(&jail, &root).ctx(|| "cannot write the prior workspace".into())?;
    let before = Before::take(&jail, &root, paths.as_ref().map(|_| (&view, bytes)))?;
    let req = HydrateRequest {
        archive: &archive,
        root: &root,
        scratch,
        limits: None,
        timeout,
    };
    let outcome = match paths {
        Some(_) => with_view(view.prefix().to_vec(), || ex.hydrate(&req))?,
        None => ex.hydrate(&req)?,
    };
    let left = match paths {
        // Nothing outlives a view: its PID namespace ends with the tool. What is reaped
        // here is bwrap's own process inside it, still on its way out.
        Some(_) => {
            let _ = stragglers(ex.in_process());
            Vec::new()
        }
        None => stragglers(ex.in_process()),
    };
    let hydration = Hydration {
        jail: &jail,
        root: &root,
        own: view.scratch(),
        bytes,
        outcome: &outcome,
        left: &left,
    };
    let (judged, _) = before.judge(&hydration, ex, opts)?;
    Ok(judged)
}

/// A scratch directory beside `jail` (outside it: the view shows the tool the whole jail).
pub(super) fn scratch_beside(jail: &Jail) -> Result<tempfile::TempDir, HarnessError> {
    // Named with this process's pid, beside a jail that holds this process's lock in the
    // base, so a sweep after a SIGKILL removes it (`crate::jail::leftovers`).
    tempfile::Builder::new()
        .prefix(&crate::jail::leftovers::dir_prefix("scratch"))
        .tempdir_in(jail.path().parent().unwrap_or(jail.path()))
        .ctx(|| "cannot create scratch".into())
}

/// Plant, in `view` of `jail`, the decoy directories that archive `bytes` aims at through
/// links leaving `root` over the prior `w0`: where `traversal` would look for each member's
/// write ([`crate::checks::traversal::decoy_dirs`] over the reference's listing, made by
/// [`View::plant_decoys`], which bounds them). What was made, jail-relative.
fn plant(
    jail: &Jail,
    root: &Path,
    view: &View,
    w0: &crate::model::tree::Tree,
    bytes: &[u8],
) -> Result<Vec<Vec<u8>>, HarnessError> {
    let members = crate::archive::listing::archive_tar(bytes)
        .1
        .unwrap_or_default();
    let dirs = crate::checks::traversal::decoy_dirs(Some(w0), &members, &jail.rel(root));
    if dirs.is_empty() {
        return Ok(Vec::new());
    }
    view.plant_decoys(&dirs)
        .ctx(|| "cannot plant decoy directories".into())
}

/// One hydration to judge ([`Before::judge`]): archive `bytes` hydrated into `root` in
/// `jail`, ending with `outcome` and leaving the processes `left`.
pub(super) struct Hydration<'a> {
    /// The jail it ran in.
    pub(super) jail: &'a Jail,
    /// The workspace root it hydrated into (inside `jail`).
    pub(super) root: &'a Path,
    /// The backend's own scratch in `jail` ([`View::scratch`]), not compared.
    pub(super) own: Option<&'a Path>,
    /// The archive's bytes.
    pub(super) bytes: &'a [u8],
    /// How the extractor ended.
    pub(super) outcome: &'a Outcome,
    /// Processes left behind (`crate::engine::case::stragglers`).
    pub(super) left: &'a [String],
}

/// What an execution observes before the hydration: the prior workspace and the whole
/// jail, and in a view the decoy directories planted for the archive.
pub(super) struct Before {
    w0: crate::model::tree::Tree,
    last: crate::jail::Snapshot,
    /// The step runs in a filesystem view (its root's path there is `jail.rel(root)`).
    in_view: bool,
    /// The decoy directories planted (jail-relative), removed with the jail's reset.
    planted: Vec<Vec<u8>>,
}

impl Before {
    /// Observe the prior in `root`; in `view`, plant the decoy directories archive `bytes`
    /// calls for ([`plant`]); then snapshot the whole jail.
    pub(super) fn take(
        jail: &Jail,
        root: &Path,
        view: Option<(&View, &[u8])>,
    ) -> Result<Before, HarnessError> {
        let w0 = observe(root).ctx(|| "cannot observe the prior".into())?;
        let planted = match view {
            Some((view, bytes)) => plant(jail, root, view, &w0, bytes)?,
            None => Vec::new(),
        };
        let last = jail
            .snapshot_whole(root)
            .ctx(|| "cannot observe the jail".into())?;
        Ok(Before {
            w0,
            last,
            in_view: view.is_some(),
            planted,
        })
    }

    /// What changed since `laid` recorded the jail, as seen before the step: outside the
    /// root (a backend's scratch `own` and the decoy directories just planted aside;
    /// [`Laid::changed_since`]), and in the root, whose tree must be `prior`, the prior as
    /// written. Empty when nothing did.
    pub(super) fn changed_since(
        &self,
        laid: &Laid,
        prior: &crate::model::tree::Tree,
        jail: &Jail,
        own: Option<&Path>,
    ) -> Vec<String> {
        let mut ignore = self.planted.clone();
        ignore.extend(own.map(|o| jail.rel(o)));
        let mut changed = laid.changed_since(&self.last, &ignore);
        if self.w0 != *prior {
            changed.push("the prior in the root".to_string());
        }
        changed
    }

    /// Judge `hydration` by `ex`: the violations and whether the extractor accepted, and
    /// the snapshot of the jail after it when anything outside the root changed (besides
    /// the root's parent's timestamps) or decoy directories were planted before it (the
    /// caller puts the jail back as laid out), `None` when neither.
    pub(super) fn judge(
        self,
        hydration: &Hydration,
        ex: &dyn Extractor,
        opts: &FuzzOptions,
    ) -> Result<(Executed, Option<crate::jail::Snapshot>), HarnessError> {
        let &Hydration {
            jail,
            root,
            own,
            bytes,
            outcome,
            left,
        } = hydration;
        let now = jail
            .snapshot_whole(root)
            .ctx(|| "cannot observe the jail".into())?;
        let rel = jail.rel(root);
        // The root's parent may be touched by a staging sibling that is gone again.
        let parent = rel
            .iter()
            .rposition(|&b| b == b'/')
            .map_or(&rel[..0], |i| &rel[..i]);
        // A backend's scratch is its own space (emptied after every execution).
        let own = own.map(|o| jail.rel(o));
        let mut ignore: Vec<&[u8]> = vec![&rel];
        ignore.extend(own.as_deref());
        let outside = self.last.changes_touching(&now, &ignore, &[parent]);
        let accepted = matches!(outcome, Outcome::Success);
        // The reference's judgement costs a parse: only an accepted archive needs it.
        let judged = accepted.then(|| judge_safety(bytes, &opts.profile));
        let mut ev = Evidence::hydration("hydration", outcome, root);
        ev.outside = &outside;
        ev.stragglers = left;
        ev.prior = Some(&self.w0);
        ev.profile = Some(&opts.profile);
        ev.judged = judged.as_ref();
        ev.cleared_by = ex.clears_root().then(|| ex.name());
        ev.promises = Some(ex.link_promises());
        ev.view = self.in_view.then_some(checks::InView {
            root: &rel,
            before: &self.last,
            after: &now,
        });
        let hits = checks::violations_of(&opts.checks, &ev)?;
        // Planted decoys go with the rest of what changed outside the root.
        let dirty = !outside.is_empty() || !self.planted.is_empty();
        Ok(((hits, accepted), dirty.then_some(now)))
    }
}
