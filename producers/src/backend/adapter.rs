//! A loaded backend and the [`Producer`] and [`Extractor`] it yields.

use super::description::{BackendDescription, Mode};
use super::error::BackendError;
use super::resolve::find_program;
use super::run_step::{run_step, write_exclude_file};
use super::template::{CommandTemplate, Vars};
use super::verdicts::Verdicts;
use super::worker::Worker;
use crate::adapter::{
    Availability, CaptureRequest, Extractor, HydrateRequest, Outcome, Producer, ToolError,
};
use crate::process::capture::Capture;
use crate::process::server::Server;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A backend described by a TOML file: one producer and one extractor, both named after it,
/// sharing one worker (worker mode) and one set of validator counters.
#[derive(Clone, Debug)]
pub struct Backend {
    desc: Arc<BackendDescription>,
    worker: Option<Arc<Worker>>,
    verdicts: Arc<Verdicts>,
    promises: crate::LinkPromises,
}

/// The capture side of a [`Backend`].
#[derive(Clone, Debug)]
pub struct BackendProducer(Backend);

/// The hydrate side of a [`Backend`] (validate step, hydrate step, recover step).
#[derive(Clone, Debug)]
pub struct BackendExtractor(Backend);

const LIMITATION_NEWLINE: &str = "`{exclude_file}` holds one path per line, so a case with an \
exclusion whose name holds a newline is refused for this backend (counted as a capture refusal)";

impl Backend {
    /// Load the description at `path`.
    ///
    /// # Errors
    /// [`BackendError`] naming the file and, where there is one, the key.
    pub fn load(path: &Path) -> Result<Self, BackendError> {
        BackendDescription::load(path).map(Self::new)
    }

    /// A backend for `desc`; in worker mode the worker is prepared but not started.
    pub fn new(desc: BackendDescription) -> Self {
        let worker = match (desc.mode, &desc.worker) {
            (Mode::Worker, Some(t)) => Some(Arc::new(Worker::new(
                &desc.name,
                t.clone(),
                desc.env.clone(),
                &desc.dir,
            ))),
            _ => None,
        };
        Backend {
            desc: Arc::new(desc),
            worker,
            verdicts: Arc::new(Verdicts::default()),
            promises: crate::LinkPromises::default(),
        }
    }

    /// The same backend, its extractor promising `promises` about the links it leaves in
    /// the root (what its `[profile]` refuses: the harness reads the profile and says so;
    /// without this, nothing is promised).
    pub fn with_link_promises(mut self, promises: crate::LinkPromises) -> Self {
        self.promises = promises;
        self
    }

    /// The description.
    pub fn description(&self) -> &BackendDescription {
        &self.desc
    }

    /// The adapter name (both roles).
    pub fn name(&self) -> &str {
        &self.desc.name
    }

    /// The worker, in worker mode.
    pub fn worker(&self) -> Option<&Worker> {
        self.worker.as_deref()
    }

    /// The validate step's counters (all zero without a `validate` command).
    pub fn verdicts(&self) -> &Verdicts {
        &self.verdicts
    }

    /// The producer.
    pub fn producer(&self) -> BackendProducer {
        BackendProducer(self.clone())
    }

    /// The extractor.
    pub fn extractor(&self) -> BackendExtractor {
        BackendExtractor(self.clone())
    }

    fn timeout(&self, asked: Duration) -> Duration {
        self.desc.timeout.unwrap_or(asked)
    }

    /// The placeholders for a command run outside any request (finding a step's program,
    /// the `version` command): `{dir}` is the description's directory, the per-request
    /// ones (`{root}`, `{archive}`, `{exclude_file}`) are empty.
    fn unbound_vars(&self) -> Vars<'_> {
        let empty = Path::new("");
        Vars {
            root: empty,
            archive: empty,
            exclude_file: empty,
            dir: &self.desc.dir,
        }
    }

    /// Available when every program the role runs can be found; the version is the first
    /// line the `version` command prints, else the description file.
    fn availability(&self, templates: &[(&str, Option<&CommandTemplate>)]) -> Availability {
        let path_var = self.desc.env.get("PATH").map(std::ffi::OsString::from);
        for (key, t) in templates {
            let Some(t) = t else { continue };
            let program = t
                .render(&self.unbound_vars())
                .into_iter()
                .next()
                .unwrap_or_default();
            if let Err(why) = find_program(program.as_bytes(), path_var.as_ref()) {
                return Availability::Unavailable {
                    reason: format!(
                        "backend `{}` (`{}`): the `{key}` command {why}",
                        self.desc.name,
                        self.desc.path.display()
                    ),
                    install_hint: format!(
                        "install `{}` or fix `{key}` in `{}`",
                        t.program(),
                        self.desc.path.display()
                    ),
                };
            }
        }
        let version = match &self.desc.version {
            Some(t) => self.probe_version(t),
            None => None,
        };
        Availability::Available {
            version: version.unwrap_or_else(|| format!("backend `{}`", self.desc.path.display())),
        }
    }

    /// The first non-empty line the `version` command prints within 10 s, if it exits 0.
    fn probe_version(&self, t: &CommandTemplate) -> Option<String> {
        let mut cmd = t.command(&self.unbound_vars(), &self.desc.env);
        // At most 64 KiB of what it prints is kept; it runs in a directory of its own.
        let (out, out_child) = Capture::start(64 << 10, 0).ok()?;
        let cwd = tempfile::tempdir().ok()?;
        cmd.stdin(Stdio::null())
            .stdout(out_child)
            .stderr(Stdio::null())
            .current_dir(cwd.path())
            .process_group(0);
        let spawned = cmd.spawn();
        drop(cmd);
        let mut child = spawned.ok()?;
        let pid = rustix::process::Pid::from_child(&child);
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if started.elapsed() < Duration::from_secs(10) => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                _ => break None,
            }
        };
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        let _ = child.wait();
        if !status?.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&out.bytes().0).into_owned();
        text.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_owned)
    }

    fn capture(&self, req: &CaptureRequest<'_>) -> Result<Outcome, ToolError> {
        let timeout = self.timeout(req.timeout);
        if let Some(w) = &self.worker {
            return w.call(
                "capture",
                req.root,
                req.archive,
                req.exclusions,
                req.scratch,
                timeout,
            );
        }
        let Some(t) = &self.desc.capture else {
            return Ok(refused(format!(
                "backend `{}` has no capture command",
                self.name()
            )));
        };
        let exclude_file = req.scratch.join("exclude");
        if let Some(bad) = write_exclude_file(&exclude_file, req.exclusions)? {
            if t.uses("{exclude_file}") {
                return Ok(refused(format!(
                    "snapconf cannot run this case on backend `{}`: exclusion `{}` holds a newline, which `{{exclude_file}}` (one path per line) cannot express",
                    self.name(),
                    String::from_utf8_lossy(&bad).escape_debug()
                )));
            }
        }
        let vars = Vars {
            root: req.root,
            archive: req.archive,
            exclude_file: &exclude_file,
            dir: &self.desc.dir,
        };
        run_step(&self.desc, "capture", t, &vars, req.scratch, timeout)
    }

    /// A hydration: the validate step, the hydrate step (`main`, given the request and
    /// the backend's timeout), the recover step; see the README's "The validate step".
    fn hydrate(
        &self,
        req: &HydrateRequest<'_>,
        main: impl FnOnce(&HydrateRequest<'_>, Duration) -> Result<Outcome, ToolError>,
    ) -> Result<Outcome, ToolError> {
        let timeout = self.timeout(req.timeout);
        let exclude_file = req.scratch.join("exclude");
        write_exclude_file(&exclude_file, &[])?;
        let vars = self.hydrate_vars(req, &exclude_file);
        let validated = match &self.desc.validate {
            None => false,
            Some(t) => match run_step(&self.desc, "validate", t, &vars, req.scratch, timeout)? {
                Outcome::Success => {
                    self.verdicts.accept();
                    true
                }
                other => {
                    if matches!(other, Outcome::Refused { .. }) {
                        self.verdicts.refuse();
                    }
                    return Ok(other);
                }
            },
        };
        let outcome = main(req, timeout)?;
        let outcome = match outcome {
            Outcome::Refused { message } if validated => {
                self.verdicts.late_refusal();
                Outcome::Refused {
                    message: format!("the validate step accepted the archive, then: {message}"),
                }
            }
            Outcome::Hang { message } if validated => {
                self.verdicts.late_hang();
                Outcome::Hang {
                    message: format!("the validate step accepted the archive, then: {message}"),
                }
            }
            other => other,
        };
        match (&outcome, &self.desc.recover) {
            (Outcome::Success, _) | (_, None) => Ok(outcome),
            (_, Some(t)) => {
                let recovered = run_step(&self.desc, "recover", t, &vars, req.scratch, timeout)?;
                let note = match recovered {
                    Outcome::Success => "the recover step ran".to_owned(),
                    Outcome::Refused { message } | Outcome::Hang { message } => message,
                };
                Ok(match outcome {
                    Outcome::Refused { message } => refused(format!("{message}; {note}")),
                    Outcome::Hang { message } => Outcome::Hang {
                        message: format!("{message}; {note}"),
                    },
                    Outcome::Success => Outcome::Success,
                })
            }
        }
    }
}

impl Backend {
    /// The placeholders of a hydration's steps (`exclude_file`: an empty file in the
    /// request's scratch).
    fn hydrate_vars<'a>(&'a self, req: &HydrateRequest<'a>, exclude_file: &'a Path) -> Vars<'a> {
        Vars {
            root: req.root,
            archive: req.archive,
            exclude_file,
            dir: &self.desc.dir,
        }
    }

    /// The hydrate step alone: the worker (in a filesystem view, a process of its own in
    /// that view: the shared worker runs outside any view) or the `hydrate` command.
    fn hydrate_step(
        &self,
        req: &HydrateRequest<'_>,
        timeout: Duration,
    ) -> Result<Outcome, ToolError> {
        match (&self.worker, &self.desc.hydrate) {
            (Some(w), _) if crate::process::view::current().is_some() => {
                let mut server = Server::start(&mut w.command(), req.scratch)?;
                w.call_served(
                    &mut server,
                    "hydrate",
                    req.root,
                    req.archive,
                    req.scratch,
                    timeout,
                )
            }
            (Some(w), _) => w.call("hydrate", req.root, req.archive, &[], req.scratch, timeout),
            (None, Some(t)) => {
                let exclude_file = req.scratch.join("exclude");
                let vars = self.hydrate_vars(req, &exclude_file);
                run_step(&self.desc, "hydrate", t, &vars, req.scratch, timeout)
            }
            (None, None) => Ok(refused(format!(
                "backend `{}` has no hydrate command",
                self.name()
            ))),
        }
    }
}

fn refused(message: String) -> Outcome {
    Outcome::Refused { message }
}

impl Producer for BackendProducer {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn availability(&self) -> Availability {
        let d = &self.0.desc;
        match d.mode {
            Mode::Command => self.0.availability(&[("capture", d.capture.as_ref())]),
            Mode::Worker => self.0.availability(&[("worker", d.worker.as_ref())]),
        }
    }

    fn capture(&self, req: &CaptureRequest<'_>) -> Result<Outcome, ToolError> {
        self.0.capture(req)
    }

    fn limitations(&self) -> Option<&str> {
        let d = &self.0.desc;
        let uses =
            d.mode == Mode::Command && d.capture.as_ref().is_some_and(|t| t.uses("{exclude_file}"));
        uses.then_some(LIMITATION_NEWLINE)
    }
}

impl Extractor for BackendExtractor {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn availability(&self) -> Availability {
        let d = &self.0.desc;
        let main = match d.mode {
            Mode::Command => ("hydrate", d.hydrate.as_ref()),
            Mode::Worker => ("worker", d.worker.as_ref()),
        };
        self.0.availability(&[
            ("validate", d.validate.as_ref()),
            main,
            ("recover", d.recover.as_ref()),
        ])
    }

    fn link_promises(&self) -> crate::LinkPromises {
        self.0.promises
    }

    /// The whole host, read-only ([`crate::process::view::WHOLE_HOST`]), and the
    /// description's own directory (`{dir}`, which may lie where the view shows nothing of
    /// the host, such as `/tmp`), for a backend in command mode: each step is a process of
    /// its own, started through the thread's view.
    /// In worker mode the same: a hydration in a view never goes to the shared worker
    /// (started outside any view) but to a worker process in that view, the fuzzer's
    /// persistent one ([`Extractor::server_command`]) or one started for the request.
    fn view_paths(&self) -> Option<Vec<std::path::PathBuf>> {
        Some(vec![
            std::path::PathBuf::from(crate::process::view::WHOLE_HOST),
            self.0.desc.dir.clone(),
        ])
    }

    fn hydrate(&self, req: &HydrateRequest<'_>) -> Result<Outcome, ToolError> {
        self.0
            .hydrate(req, |req, timeout| self.0.hydrate_step(req, timeout))
    }

    /// In worker mode, the worker command ([`Worker::command`]): a fuzzer starts one per
    /// fuzz thread in that thread's view and drives it through the worker protocol
    /// ([`Extractor::hydrate_served`]). `None` in command mode.
    fn server_command(&self) -> Option<std::process::Command> {
        self.0.worker.as_ref().map(|w| w.command())
    }

    /// In worker mode, the hydrate step is one request to `server` (a process of
    /// [`Extractor::server_command`]); the validate and recover steps run as in
    /// [`Extractor::hydrate`] (commands, through the thread's view when one is set).
    fn hydrate_served(
        &self,
        req: &HydrateRequest<'_>,
        server: &mut Server,
    ) -> Result<Outcome, ToolError> {
        match &self.0.worker {
            Some(w) => self.0.hydrate(req, |req, timeout| {
                w.call_served(
                    server,
                    "hydrate",
                    req.root,
                    req.archive,
                    req.scratch,
                    timeout,
                )
            }),
            None => self.hydrate(req),
        }
    }
}
