//! The persistent path of a fuzz worker: one jail and filesystem view kept for many
//! executions, with the extractor's server ([`Server`]) running in it, instead of a fresh
//! jail, view and process per archive.
//!
//! An execution writes the archive in place (the view mounts it read-only by inode, so it
//! must stay the same file), observes the prior and the whole jail, sends the archive to
//! the server, and judges the hydration with exactly the code of the one-shot path
//! ([`super::execute`]'s `Before`). Then the jail is reset to its laid-out state: the
//! root is removed and the prior written again; when something outside the root changed
//! too (what `containment` compares: every entry of the view outside the root, metadata
//! included; only the root's parent may have new timestamps), that is put back first from
//! what the after-snapshot shows changed ([`Laid::restore`]). When the restore is in doubt
//! (a mount point touched, a check after it that fails) or the reset fails, the jail, the
//! view and the server are dropped and the next execution lays out new ones, as the
//! one-shot path does for every archive.
//!
//! A server that died or was killed at a request's timeout (a hang, a crash) is replaced
//! for the next execution; that request alone is affected. A fuzz worker keeps one spare
//! ([`Spares`]): a jail, view and server of its own, laid out, started and warmed up on
//! another thread while the worker runs archives, so that a hang costs no server start
//! (`node`'s is 0.5 to 3 s on a loaded machine) on the worker's path. The spare is
//! trusted exactly as the first server is (its jail compared before and after its start).
//! A server runs on between requests and may change its jail while it waits: every
//! request's snapshot before is compared with the jail as laid out ([`Laid::changed_since`])
//! and its observation of the root with the prior as written, and a jail changed since is
//! dropped (a rebuild) and the archive runs in the spare, or
//! once that changed too, in a jail laid out and started for it (a change there too stops
//! the session, saying so). The server never sees the
//! host: it runs in the same `bwrap` view a one-shot run does, and the view's PID
//! namespace ends with it.

use super::execute::{scratch_beside, write_prior, Before, Executed, Hydration};
use super::options::FuzzOptions;
use crate::error::{HarnessError, IoContext};
use crate::jail::confined::Confined;
use crate::jail::restore::Laid;
use crate::jail::view::View;
use crate::jail::Jail;
use crate::jail::Snapshot;
use crate::workspace::materialise::remove_tree;
use snapconf_producers::process::server::Server;
use snapconf_producers::process::view::with_view;
use snapconf_producers::{Extractor, HydrateRequest};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};

/// A worker's persistent state for one extractor; see the module docs.
#[derive(Default)]
pub(super) struct Persist {
    enabled: bool,
    live: Option<Live>,
    /// Servers started (the first, and one after each death, hang or rebuild).
    pub(super) starts: u64,
    /// Executions that changed something outside the root ([`Laid::restore`] ran).
    pub(super) restores: u64,
    /// Jails laid out anew because something outside the root changed and could not be
    /// restored.
    pub(super) rebuilds: u64,
    /// Time spent per phase of the executions ([`Phases`]).
    pub(super) phases: Phases,
    /// Archives run through the extractor by this worker, either path, shrinking included.
    pub(super) runs: u64,
    /// A timeout shorter than the session's for the next executions, either path (see
    /// [`super::execute`]'s `hang_cut`); `None`: the session's.
    pub(super) cut: Option<std::time::Duration>,
    /// The longest execution of this worker that did not hang, either path, not counting
    /// the time spent starting a server ([`Persist::starting`]).
    pub(super) slowest: std::time::Duration,
    /// Ask the servers this starts for coverage ([`super::feedback`]).
    pub(super) coverage: bool,
    /// The coverage ids the last persistent execution's answer carried, if any.
    pub(super) covered: Option<Vec<u32>>,
    /// The time the last persistent execution spent starting a server (zero when it
    /// reused the running one): a server's start is not the archive's time.
    pub(super) starting: std::time::Duration,
    /// Dead servers and dropped jails replaced by a spare ([`Persist::with_spares`]).
    pub(super) spares_used: u64,
    /// Persistent executions during which the server exited without answering
    /// ([`super::FuzzSummary::worker_deaths`]), and the last one's message.
    pub(super) deaths: u64,
    pub(super) last_death: Option<String>,
    /// The thread making spares, for a fuzz worker's loop ([`Persist::with_spares`]).
    spares: Option<Spares>,
}

/// Wall-clock seconds a worker's persistent executions spent in each phase, for the
/// summary: what limits the rate.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Phases {
    /// Laying out jails and views (the first, and after each rebuild).
    pub lay_out: f64,
    /// Starting servers.
    pub start: f64,
    /// Writing the archive, observing the prior and snapshotting the jail before.
    pub before: f64,
    /// The request: clearing the root, the tool's run, the answer.
    pub hydrate: f64,
    /// Snapshotting the jail after, the reference's judgement and the checks.
    pub judge: f64,
    /// Resetting the root to the prior.
    pub reset: f64,
}

impl Phases {
    /// Adds `other` to `self`.
    pub(super) fn add(&mut self, other: &Phases) {
        self.lay_out += other.lay_out;
        self.start += other.start;
        self.before += other.before;
        self.hydrate += other.hydrate;
        self.judge += other.judge;
        self.reset += other.reset;
    }
}

/// A laid-out jail and view, and the server in it. Fields drop in order: the server
/// (killed) before the jail (removed).
struct Live {
    server: Option<Server>,
    /// The adapter's scratch outside the jail, unless the view has one of its own
    /// ([`View::scratch`]).
    scratch: tempfile::TempDir,
    view: View,
    archive: PathBuf,
    root: PathBuf,
    laid: Laid,
    /// The prior's tree as written in the root at lay-out, as every request must find it.
    prior: crate::model::tree::Tree,
    jail: Jail,
}

impl Persist {
    /// The persistent path for `ex` in a session of `opts`: used when the session runs in
    /// a view, asks for servers ([`FuzzOptions::server`]) and `ex` has one
    /// ([`Extractor::server_command`]); else every execution is one-shot.
    pub(super) fn new(ex: &dyn Extractor, opts: &FuzzOptions) -> Persist {
        let enabled =
            opts.view && opts.server && ex.view_paths().is_some() && ex.server_command().is_some();
        Persist {
            enabled,
            ..Persist::default()
        }
    }

    /// [`Persist::new`], keeping a spare jail, view and server made ahead on a thread of
    /// `scope` ([`Spares`]) once the first is running; the thread ends when this is
    /// dropped (after the spare it is making, if any, is made and removed).
    pub(super) fn with_spares<'scope, 'env>(
        ex: &'env dyn Extractor,
        opts: &'env FuzzOptions,
        coverage: bool,
        scope: &'scope std::thread::Scope<'scope, 'env>,
    ) -> Persist {
        let mut persist = Persist::new(ex, opts);
        persist.coverage = coverage;
        if persist.enabled {
            persist.spares = Some(Spares::spawn(ex, opts, coverage, scope));
        }
        persist
    }

    /// The spare asked for, once made: `None` when none was asked for, its thread is gone,
    /// or its server no longer runs (it is removed; counted as a rebuild). Waits for it if
    /// it is still being made. Whether its jail changed while it waited is checked before
    /// its first request, as for every request ([`Persist::execute`]).
    fn spare(&mut self) -> Result<Option<Live>, HarnessError> {
        let Some(spares) = self.spares.as_mut().filter(|s| s.asked) else {
            return Ok(None);
        };
        spares.asked = false;
        let Ok(made) = spares.made.recv() else {
            return Ok(None);
        };
        let Made {
            mut live,
            starts,
            rebuilds,
        } = made?;
        self.starts += starts;
        self.rebuilds += rebuilds;
        if live.running() {
            self.spares_used += 1;
            Ok(Some(live))
        } else {
            self.rebuilds += 1;
            Ok(None)
        }
    }

    /// Ask for a spare to be made if none is asked for yet.
    fn ask_spare(&mut self) {
        if let Some(spares) = self.spares.as_mut().filter(|s| !s.asked) {
            spares.asked = spares.ask.send(()).is_ok();
        }
    }

    /// A worker that runs every execution one-shot (replay, shrinking checks in tests).
    pub(super) fn one_shot() -> Persist {
        Persist::default()
    }

    /// The timeout of the next execution: the session's, or the shorter [`Persist::cut`].
    pub(super) fn timeout(&self, opts: &FuzzOptions) -> std::time::Duration {
        self.cut.map_or(opts.timeout, |c| c.min(opts.timeout))
    }

    /// Whether executions go through the server.
    pub(super) fn enabled(&self) -> bool {
        self.enabled
    }

    /// One execution of `bytes` through the server; as the one-shot `execute`.
    pub(super) fn execute(
        &mut self,
        bytes: &[u8],
        ex: &dyn Extractor,
        opts: &FuzzOptions,
    ) -> Result<Executed, HarnessError> {
        let mut clock = std::time::Instant::now();
        let mut laps = [0f64; 6];
        let mut lap = |i: usize| {
            let now = std::time::Instant::now();
            let spent = (now - clock).as_secs_f64();
            clock = now;
            laps[i] = spent;
            spent
        };
        // The jail is checked against its layout in the snapshot taken before the request
        // (the one the request is judged against): a server, the first or a spare, that
        // changed it while it waited is not trusted; its jail is dropped and the archive
        // runs in the spare, or once that changed too, in a jail laid out and started here.
        let mut changes = 0;
        // The time of attempts in jails dropped so: a start's, not the archive's.
        let mut dropped = std::time::Duration::ZERO;
        let (mut live, before, started) = loop {
            let attempt = std::time::Instant::now();
            // A dead server (killed at a hang) or a jail dropped after a failed restore: the
            // spare made ahead takes its place, if one was asked for.
            let mut waited = 0.0;
            let running = self.live.as_mut().is_some_and(Live::running);
            let mut live = match self.live.take() {
                Some(live) if running => live,
                _ if changes > 1 => Live::lay_out(ex, opts)?,
                dead => {
                    let began = std::time::Instant::now();
                    let spare = self.spare()?;
                    waited = began.elapsed().as_secs_f64();
                    match (spare, dead) {
                        (Some(spare), _) => spare,
                        (None, Some(live)) => live,
                        (None, None) => Live::lay_out(ex, opts)?,
                    }
                }
            };
            // Waiting for a spare is a start's time, not a lay-out's.
            self.phases.lay_out += lap(0) - waited;
            let started = !live.alive();
            if started {
                let made = live.started(ex, opts, self.coverage)?;
                self.starts += made.starts;
                self.rebuilds += made.rebuilds;
                live = made.live;
            }
            self.ask_spare();
            let starting = lap(1) + waited;
            self.phases.start += starting;
            self.starting = std::time::Duration::from_secs_f64(starting) + dropped;
            // In place: the view holds the file's inode, read-only.
            std::fs::write(&live.archive, bytes).ctx(|| "cannot write the archive".into())?;
            let before = Before::take(&live.jail, &live.root, Some((&live.view, bytes)))?;
            self.phases.before += lap(2);
            let changed =
                before.changed_since(&live.laid, &live.prior, &live.jail, live.view.scratch());
            if changed.is_empty() {
                break (live, before, started);
            }
            drop(live);
            self.rebuilds += 1;
            dropped += attempt.elapsed();
            if changes > 1 {
                return Err(changed_while_waiting(ex, &changed));
            }
            changes += 1;
        };
        let req = HydrateRequest {
            archive: &live.archive,
            root: &live.root,
            scratch: live.view.scratch().unwrap_or(live.scratch.path()),
            limits: None,
            timeout: self.timeout(opts),
        };
        // In the view: what the request starts besides the server (a backend's validate
        // and recover commands) runs there too.
        let outcome = with_view(live.view.prefix().to_vec(), || match live.server.as_mut() {
            Some(server) => ex.hydrate_served(&req, server),
            None => ex.hydrate(&req),
        })?;
        self.covered = live.server.as_mut().and_then(Server::take_coverage);
        // A refusal with the server gone is its exit, not the extractor's answer (a signal
        // or a timeout is a hang, and judged as one).
        if let (snapconf_producers::Outcome::Refused { message }, Some(server)) =
            (&outcome, live.server.as_ref())
        {
            if !server.alive() {
                self.deaths += 1;
                self.last_death = Some(message.clone());
            }
        }
        if let Some(own) = live.view.scratch() {
            // The backend's own space, not compared: empty for each request.
            clear_dir(own).ctx(|| "cannot empty the scratch".into())?;
        }
        self.phases.hydrate += lap(3);
        // Nothing outlives the request: the server kills the tool's process group, and a
        // killed server takes its PID namespace with it.
        let (judged, dirty) = before.judge(
            &Hydration {
                jail: &live.jail,
                root: &live.root,
                own: live.view.scratch(),
                bytes,
                outcome: &outcome,
                left: &[],
            },
            ex,
            opts,
        )?;
        self.phases.judge += lap(4);
        let restored = match &dirty {
            None => true,
            Some(now) => {
                self.restores += 1;
                live.laid.restore(&live.jail, now).unwrap_or(false)
            }
        };
        if restored && reset_root(&live.jail, &live.root).is_ok() {
            self.live = Some(live);
        } else {
            drop(live);
            self.rebuilds += 1;
        }
        self.phases.reset += lap(5);
        if trace_wanted() {
            trace(&laps, started, &outcome);
        }
        Ok(judged)
    }
}

/// A server start that changed the jail (it must be laid out anew), with the servers
/// started.
struct Unclean(u64);

/// The error when even a newly laid-out jail changes while `ex`'s server starts.
fn unclean_twice(ex: &dyn Extractor) -> HarnessError {
    HarnessError::Other(format!(
        "`{}`'s server changes its jail while it starts, even in a new one",
        ex.name()
    ))
}

/// The error when a server changed its jail while it waited for a request (`changed`: what
/// changed) even in a jail laid out and started for that request.
fn changed_while_waiting(ex: &dyn Extractor, changed: &[String]) -> HarnessError {
    HarnessError::Other(format!(
        "`{}`'s server changes its jail between requests, even in a new one: {}",
        ex.name(),
        changed[..changed.len().min(5)].join("; ")
    ))
}

/// The shortest wait for a warm-up's answer ([`Live::start_server`]): a start is not a
/// hydration, and on a loaded machine `node` alone can take seconds to start; the session's
/// `--timeout` applies when it is longer.
const WARM_UP_TIMEOUT_MIN: std::time::Duration = std::time::Duration::from_secs(10);

/// The file and directory in a worker's scratch that [`Live::start_server`]'s warm-up
/// request hydrates (an empty archive into an empty directory).
const WARM_UP: [&str; 2] = ["snapconf-warm-up.tar", "snapconf-warm-up"];

impl Live {
    /// Start `ex`'s server in the view; the servers started (1, or 2 when the first did
    /// not survive its warm-up), or `Err(Unclean)` (below).
    ///
    /// A plugged-in backend's worker (it sees the scratch) is then sent one warm-up
    /// request, an empty archive hydrated into a directory of the scratch, and its answer
    /// awaited (at most the session's timeout, and at least [`WARM_UP_TIMEOUT_MIN`]), so
    /// that the interpreter's start (about a
    /// second for `node` on a loaded machine) is counted as the start's, not as the first
    /// archive's: it neither eats into that archive's (possibly cut) timeout nor raises
    /// the worker's slowest execution, hence its hang cut ([`super::execute`]). A server
    /// the warm-up killed (it hung or died) is started again without one, as before.
    /// The scratch is emptied after it. The warm-up goes through
    /// [`Extractor::hydrate_served`], so a backend's validate step runs on the empty
    /// archive too.
    ///
    /// The whole jail is snapshotted before the start and after it: a server whose start
    /// changed anything in it (nothing should) is `Err(Unclean)`, killed, and the jail is
    /// not reused.
    ///
    /// # Errors
    /// `ex` has no server, it cannot be started, or the jail cannot be snapshotted.
    fn start_server(
        &mut self,
        ex: &dyn Extractor,
        opts: &FuzzOptions,
        coverage: bool,
    ) -> Result<Result<u64, Unclean>, HarnessError> {
        self.server = None;
        let observe = |jail: &Jail, root: &Path| {
            jail.snapshot_whole(root)
                .ctx(|| "cannot observe the jail".into())
        };
        let before = observe(&self.jail, &self.root)?;
        let mut starts = 0;
        let prefix = self.view.prefix().to_vec();
        // A plugged-in backend's worker has a scratch of the view's own (in the jail, its
        // own space): only such a worker is warmed up, in it.
        let own = self.view.scratch().map(Path::to_path_buf);
        let scratch = own
            .clone()
            .unwrap_or_else(|| self.scratch.path().to_path_buf());
        for warm in [own.is_some(), false] {
            let mut cmd = ex
                .server_command()
                .ok_or_else(|| HarnessError::Other(format!("`{}` has no server", ex.name())))?;
            if coverage {
                cmd.env(snapconf_producers::coverage::COVERAGE_VAR, "1");
            }
            let mut server = with_view(prefix.clone(), || Server::start(&mut cmd, &scratch))?;
            starts += 1;
            if warm {
                let timeout = opts.timeout.max(WARM_UP_TIMEOUT_MIN);
                // Best effort: when its files cannot be made (the worker, already running,
                // put something in their way), the server goes without a warm-up.
                let _ = warm_up(&mut server, ex, &prefix, &self.jail, &scratch, timeout);
                clear_dir(&scratch).ctx(|| "cannot empty the scratch".into())?;
            }
            if !warm || server.alive() {
                self.server = Some(server);
                break;
            }
        }
        let after = observe(&self.jail, &self.root)?;
        let clean = self.same(&before, &after);
        Ok(if clean {
            Ok(starts)
        } else {
            Err(Unclean(starts))
        })
    }

    /// Whether `before` and `after`, two snapshots of the whole jail, are the same but in
    /// the view's own scratch (the backend's own space).
    fn same(&self, before: &Snapshot, after: &Snapshot) -> bool {
        let own = self.view.scratch().map(|o| self.jail.rel(o));
        let ignore: Vec<&[u8]> = own.as_deref().into_iter().collect();
        before.changes_touching(after, &ignore, &[]).is_empty()
    }

    /// Whether the server runs.
    fn alive(&self) -> bool {
        self.server.as_ref().is_some_and(Server::alive)
    }

    /// Whether the server runs and has not exited since its last request (it may die
    /// while it waits: [`Server::running`]).
    fn running(&mut self) -> bool {
        self.server.as_mut().is_some_and(Server::running)
    }

    /// This jail and view with a started server: when the server changes its jail while
    /// starting, this one is not trusted and one more jail is laid out and started; when
    /// that one's changes too, the error of [`unclean_twice`].
    fn started(
        mut self,
        ex: &dyn Extractor,
        opts: &FuzzOptions,
        coverage: bool,
    ) -> Result<Made, HarnessError> {
        let (starts, rebuilds) = match self.start_server(ex, opts, coverage)? {
            Ok(n) => (n, 0),
            Err(Unclean(n)) => {
                drop(self);
                self = Live::lay_out(ex, opts)?;
                let m = self
                    .start_server(ex, opts, coverage)?
                    .map_err(|_| unclean_twice(ex))?;
                (n + m, 1)
            }
        };
        Ok(Made {
            live: self,
            starts,
            rebuilds,
        })
    }

    /// A new jail and view with a started server ([`Live::started`]), as
    /// [`Persist::execute`] makes one.
    fn ready(ex: &dyn Extractor, opts: &FuzzOptions, coverage: bool) -> Result<Made, HarnessError> {
        Live::lay_out(ex, opts)?.started(ex, opts, coverage)
    }

    /// A new jail with the view laid out as the one-shot path lays it out, an (empty)
    /// archive file to mount, and the prior in the root.
    fn lay_out(ex: &dyn Extractor, opts: &FuzzOptions) -> Result<Live, HarnessError> {
        let jail = Jail::new(opts.jail_base.as_deref()).ctx(|| "cannot create a jail".into())?;
        let archive = jail.archive();
        std::fs::write(&archive, b"").ctx(|| "cannot write the archive".into())?;
        let paths = ex.view_paths().unwrap_or_default();
        let scratch = scratch_beside(&jail)?;
        // A plugged-in backend's worker writes to a scratch of the view's own (and runs
        // in it).
        let view = View::for_fuzz(&jail, &paths, std::slice::from_ref(&archive))
            .ctx(|| "cannot lay out the filesystem view".into())?;
        let root = view.root();
        write_prior(&jail, &root).ctx(|| "cannot write the prior workspace".into())?;
        let laid = Laid::record(&jail, &root, &archive, view.mount_points())
            .ctx(|| "cannot record the laid-out jail".into())?;
        let prior =
            crate::workspace::observe::observe(&root).ctx(|| "cannot observe the prior".into())?;
        Ok(Live {
            server: None,
            scratch,
            view,
            archive,
            root,
            laid,
            prior,
            jail,
        })
    }
}

/// A spare made by [`Spares`]' thread: the jail, view and started server, the servers
/// started for it and the jails laid out again (a start that changed its jail).
struct Made {
    live: Live,
    starts: u64,
    rebuilds: u64,
}

/// The thread that makes a fuzz worker's spare ([`Live::ready`]) each time it is asked,
/// while the worker runs archives on its own.
struct Spares {
    /// Asks for one spare.
    ask: Sender<()>,
    /// The spares made, in order.
    made: Receiver<Result<Made, HarnessError>>,
    /// A spare was asked for and not yet taken.
    asked: bool,
}

impl Spares {
    /// The thread, in `scope`: it makes one spare per ask and ends when [`Spares`] is
    /// dropped (a spare made and not taken is then removed with its channel).
    fn spawn<'scope, 'env>(
        ex: &'env dyn Extractor,
        opts: &'env FuzzOptions,
        coverage: bool,
        scope: &'scope std::thread::Scope<'scope, 'env>,
    ) -> Spares {
        let (ask, asks) = channel::<()>();
        let (made_tx, made) = channel();
        scope.spawn(move || {
            while asks.recv().is_ok() {
                if made_tx.send(Live::ready(ex, opts, coverage)).is_err() {
                    break;
                }
            }
        });
        Spares {
            ask,
            made,
            asked: false,
        }
    }
}

/// Whether `SNAPCONF_FUZZ_TRACE` is set (to anything but empty or `0`): then every
/// persistent execution prints one line of its phases on stderr ([`trace`]).
fn trace_wanted() -> bool {
    static WANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WANTED.get_or_init(|| {
        std::env::var_os("SNAPCONF_FUZZ_TRACE").is_some_and(|v| !v.is_empty() && v != "0")
    })
}

/// One execution's line for `SNAPCONF_FUZZ_TRACE`: milliseconds per phase, in the order of
/// [`Phases`]' fields, whether a server was started for it, and how the extractor ended.
fn trace(laps: &[f64; 6], started: bool, outcome: &snapconf_producers::Outcome) {
    let ended = match outcome {
        snapconf_producers::Outcome::Success => "ok",
        snapconf_producers::Outcome::Refused { .. } => "refused",
        snapconf_producers::Outcome::Hang { .. } => "hang",
    };
    let ms: Vec<String> = laps.iter().map(|s| format!("{:.1}", s * 1e3)).collect();
    eprintln!(
        "fuzz-trace: lay_out,start,before,hydrate,judge,reset ms {} start={started} {ended}",
        ms.join(",")
    );
}

/// One warm-up request to a newly started `server` of `ex` (see [`Live::start_server`]):
/// an empty archive into an empty directory, both in `scratch`, through the view
/// `prefix`, waiting at most `timeout`. Its answer does not matter, only that one came.
fn warm_up(
    server: &mut Server,
    ex: &dyn Extractor,
    prefix: &[std::ffi::OsString],
    jail: &Jail,
    scratch: &Path,
    timeout: std::time::Duration,
) -> std::io::Result<()> {
    let [archive, root] = WARM_UP.map(|n| scratch.join(n));
    // The worker already runs in its view and can write the scratch (in the jail): its
    // files are made from a handle on the jail, never through a link it planted.
    let confined = Confined::open(jail.path())?;
    // Two zero blocks: a tar archive with no member.
    confined.create_file(&jail.rel(&archive), &[0u8; 1024], 0o644)?;
    confined.create_dir(&jail.rel(&root), 0o755)?;
    let req = HydrateRequest {
        archive: &archive,
        root: &root,
        scratch,
        limits: None,
        timeout,
    };
    let _ = with_view(prefix.to_vec(), || ex.hydrate_served(&req, server));
    Ok(())
}

/// Remove everything in `dir`, keeping `dir`.
fn clear_dir(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => remove_tree(&path)?,
            Ok(_) => std::fs::remove_file(&path)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Bring `root` (in `jail`) back to the prior: remove whatever is there (a directory tree,
/// or what replaced it) and write the prior again, from a handle on the jail (the worker
/// runs on in its view: [`Confined`]).
fn reset_root(jail: &Jail, root: &Path) -> std::io::Result<()> {
    let rel = jail.rel(root);
    let conf = Confined::open(jail.path())?;
    conf.remove(&rel)?;
    conf.create_dir(&rel, 0o755)?;
    write_prior(jail, root)
}
