//! The adapter contract shared by every built-in and plugged-in producer and extractor.

use crate::process::limits::ToolLimits;
use std::path::Path;
use std::time::Duration;

/// Whether an adapter's tool can run here, with its version or why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Availability {
    /// The tool runs.
    Available {
        /// What the tool printed of its own version (its first line, as text).
        version: String,
    },
    /// The tool is missing or unusable.
    Unavailable {
        /// Why it cannot run, in words (e.g. the probe's spawn error or exit status).
        reason: String,
        /// How to get it (e.g. ``apt-get install libarchive-tools``).
        install_hint: String,
    },
}

/// What happened when a tool ran. A refusal or a hang of the tool under test is data, not an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0 (or `Ok` from an in-process adapter).
    Success,
    /// The tool ran and refused: non-zero exit.
    Refused {
        /// The tail of the tool's stderr (or the adapter's reason), kept as evidence.
        message: String,
    },
    /// The tool did not end within the timeout, or died of a signal.
    Hang {
        /// What happened (the timeout or the signal), with the tail of the tool's stderr.
        message: String,
    },
}

/// Our own infrastructure fault: the tool could not be started, a scratch file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The tool's process could not be started (e.g. the program is not installed).
    #[error("could not start `{command}`: {source}")]
    Spawn {
        /// The command line, rendered for the message.
        command: String,
        /// The error of the spawn (`ENOENT` when the program is missing).
        #[source]
        source: std::io::Error,
    },
    /// An operation of ours around the tool failed: a pipe, a scratch file, a wait.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, in words (names the file or the command).
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// One capture: archive the tree at `root` into `archive`, leaving out `exclusions`.
#[derive(Clone, Copy, Debug)]
pub struct CaptureRequest<'a> {
    /// The workspace root to capture (a directory).
    pub root: &'a Path,
    /// Root-relative paths (bytes, `/`-separated, no leading `/`) to leave out, with everything under them.
    pub exclusions: &'a [Vec<u8>],
    /// Where to write the archive (does not exist yet).
    pub archive: &'a Path,
    /// A private scratch directory for the adapter (exclude files, stderr captures).
    pub scratch: &'a Path,
    /// Wall-clock limit; past it the tool's process group is killed and the outcome is `Hang`.
    pub timeout: Duration,
}

/// One hydration: replace the workspace at `root` with the archive's tree.
#[derive(Clone, Copy, Debug)]
pub struct HydrateRequest<'a> {
    /// The archive to read.
    pub archive: &'a Path,
    /// The workspace root; it exists and may hold a prior workspace.
    pub root: &'a Path,
    /// A private scratch directory for the adapter.
    pub scratch: &'a Path,
    /// Wall-clock limit; past it the tool's process group is killed and the outcome is `Hang`.
    pub timeout: Duration,
    /// Fault limits (file-size limit, kill time) to run the tool under, for fault injection;
    /// `None` for an ordinary hydration. Only adapters whose
    /// [`Extractor::honours_limits`] is true apply them; others ignore the field.
    pub limits: Option<&'a ToolLimits>,
}

/// What an extractor promises about the links it leaves in the root after an accepted
/// hydration (from its documentation or its policy). The `escaping-link` check holds it to
/// them: a link it promised never to write is a finding even when nothing outside the root
/// changed yet, since the next consumer of the tree follows it. `Default` promises nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkPromises {
    /// No symlink with an absolute target.
    pub no_absolute_symlinks: bool,
    /// No symlink whose resolution, from where it sits, leaves the root.
    pub no_escaping_symlinks: bool,
    /// No file that shares its inode with a name outside the root (a hardlink member whose
    /// target resolved outside: Python's `data` filter refuses those, its `tar` filter does
    /// not check hardlink targets).
    pub no_outside_hardlinks: bool,
}

/// Open `archive` for an in-process extractor that reads it itself (the reference, the
/// `tar` crate).
///
/// # Errors
/// [`ToolError::Io`] naming the archive: it is ours to hand over, so failing to open it
/// is an infrastructure fault, not a refusal.
pub(crate) fn open_archive(archive: &Path) -> Result<std::fs::File, ToolError> {
    std::fs::File::open(archive).map_err(|source| ToolError::Io {
        context: format!("opening the archive `{}`", archive.display()),
        source,
    })
}

/// Turns (root, exclusions) into an archive, or refuses.
pub trait Producer: Send + Sync {
    /// Stable adapter name, e.g. `gnu-tar`.
    fn name(&self) -> &str;
    /// Whether the tool is installed, and its version.
    fn availability(&self) -> Availability;
    /// Run one capture.
    fn capture(&self, req: &CaptureRequest<'_>) -> Result<Outcome, ToolError>;
    /// Known ways this adapter cannot honour a request exactly (e.g. a tool without
    /// `--exclude` whose exclusions are emulated), for reports; `None` when there are none.
    fn limitations(&self) -> Option<&str> {
        None
    }
    /// True if the capture runs in this process and starts no other process (the `tar`
    /// crate). The harness reuses a jail only when every adapter of the case was in
    /// process: a tool run as a child may leave a process behind (a daemon that left its
    /// process group) that writes into the jail later, and a reused jail would then blame
    /// the next case. Default `false`, which is always safe.
    fn in_process(&self) -> bool {
        false
    }
}

/// Turns (archive, root that may hold a prior workspace) into a hydrated root, or refuses.
pub trait Extractor: Send + Sync {
    /// Stable adapter name, e.g. `python-data`.
    fn name(&self) -> &str;
    /// Whether the tool is installed, and its version.
    fn availability(&self) -> Availability;
    /// Run one hydration.
    fn hydrate(&self, req: &HydrateRequest<'_>) -> Result<Outcome, ToolError>;
    /// Known ways this adapter cannot honour a request exactly (e.g. an in-process extractor
    /// that cannot be killed at the timeout), for reports; `None` when there are none.
    fn limitations(&self) -> Option<&str> {
        None
    }
    /// True if [`HydrateRequest::limits`] is applied to the tool (an external process run
    /// through [`crate::process::run::run_limited`]). In-process extractors cannot be limited or
    /// killed and keep the default `false`; fault injection then runs them in a child
    /// process where it can, or skips them.
    fn honours_limits(&self) -> bool {
        false
    }
    /// True if the hydration runs in this process and starts no other process (the
    /// reference extractor, the `tar` crate); see [`Producer::in_process`]. Default `false`.
    fn in_process(&self) -> bool {
        false
    }
    /// True if snapconf's adapter empties the root before the tool runs (the common,
    /// non-atomic clear-then-extract resume path, [`crate::clear::clear_root`]) rather than
    /// the tool itself deciding what to do with what the root holds. An
    /// `atomic-hydration` finding then says that the adapter cleared the root, so that it
    /// is read as the verdict on that resume path, not on the tool. Default `false`.
    fn clears_root(&self) -> bool {
        false
    }
    /// What the extractor promises about the links it writes ([`LinkPromises`]); nothing
    /// by default.
    fn link_promises(&self) -> LinkPromises {
        LinkPromises::default()
    }

    /// Whether the tool can run in a filesystem view ([`crate::process::view`]), and the
    /// host paths it needs there besides `/usr` (and `/bin`, `/lib`... where they are not
    /// links into it), mounted read-only: an interpreter installed elsewhere, say; the one
    /// path [`crate::process::view::WHOLE_HOST`] asks for the whole host, read-only (a
    /// plugged-in backend, whose files snapconf does not know). `None` (the default) for
    /// a tool that cannot run in a view: an in-process adapter.
    fn view_paths(&self) -> Option<Vec<std::path::PathBuf>> {
        None
    }

    /// The persistent server this extractor can run as ([`crate::process::server`]): the
    /// command to start (inside the fuzzer's filesystem view) that then runs one
    /// hydration per request. `None` (the default) for an extractor without one: each
    /// hydration is then a process of its own.
    fn server_command(&self) -> Option<std::process::Command> {
        None
    }

    /// Run one hydration through `server` (started from [`Extractor::server_command`]),
    /// doing what [`Extractor::hydrate`] does: the same steps before the tool (clearing
    /// the root), the same script or code, the same arguments, and outcomes that read the
    /// same. The default ignores the server and calls [`Extractor::hydrate`].
    fn hydrate_served(
        &self,
        req: &HydrateRequest<'_>,
        server: &mut crate::process::server::Server,
    ) -> Result<Outcome, ToolError> {
        let _ = server;
        self.hydrate(req)
    }

    /// The backend's recovery step after a killed hydration of `req.root` (e.g. the
    /// reference extractor's `recover`: finish or roll back a half-done swap). `Ok(None)`
    /// when the adapter declares none (the default).
    fn recover(&self, req: &HydrateRequest<'_>) -> Result<Option<Outcome>, ToolError> {
        let _ = req;
        Ok(None)
    }
}
