//! `python-data` and `python-tar`: Python's `tarfile` with a PEP 706 extraction filter.
//!
//! ```text
//! (clear ROOT) python3 -I -c <scripts/extract_tarfile.py> ARCHIVE ROOT FILTER
//! ```
//! i.e. `tarfile.open(archive).extractall(root, filter=FILTER)` (Python docs, tarfile
//! "Extraction filters"; PEP 706), what a backend's resume path runs. A refusal raises a
//! `FilterError` after the earlier members were written; with the root cleared first, this
//! is the common non-atomic resume path. The two filters:
//! - `tar` (`python-tar`) strips leading `/` from names, refuses names whose path (after
//!   following symlinks) ends up outside the destination, and clears setuid/setgid/sticky
//!   and group/other write bits; it keeps device and FIFO members, absolute and escaping
//!   symlink targets, hardlinks whatever their target, and owners.
//! - `data` (`python-data`) is `tar` plus: refuse links (hard or symbolic) to absolute
//!   paths or leaving the destination, refuse device and FIFO members, force `u+rw` on
//!   regular files, skip directory modes and owners.

use crate::adapter::{Availability, Extractor, HydrateRequest, LinkPromises, Outcome, ToolError};
use crate::adapters::python::{python_availability, python_command};
use crate::clear::clear_root;
use crate::process::run::run_limited;
use crate::process::server::{Server, SERVE_PYTHON_PY};
use std::ffi::OsStr;
use std::process::Command;

/// The embedded extraction script, run with either filter.
pub const EXTRACT_TARFILE_PY: &str = include_str!("../../scripts/extract_tarfile.py");

/// The Python side of the backend protocol (`backends/snapconf_worker.py`), whose
/// `Coverage` the server uses to record the lines of `tarfile` each request runs.
pub const SNAPCONF_WORKER_PY: &str = include_str!("../../backends/snapconf_worker.py");

/// A PEP 706 extraction filter, by the name `extractall(filter=...)` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TarfileFilter {
    /// `filter="data"`: `tarfile.data_filter`.
    Data,
    /// `filter="tar"`: `tarfile.tar_filter`.
    Tar,
}

impl TarfileFilter {
    /// The name passed to `extractall`: `data` or `tar`.
    pub fn name(self) -> &'static str {
        match self {
            TarfileFilter::Data => "data",
            TarfileFilter::Tar => "tar",
        }
    }
}

/// The `python-data` and `python-tar` extractors (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct PythonFilterExtractor {
    /// The filter `extractall` runs with.
    pub filter: TarfileFilter,
}

impl PythonFilterExtractor {
    /// `python-data`.
    pub const DATA: Self = Self {
        filter: TarfileFilter::Data,
    };
    /// `python-tar`.
    pub const TAR: Self = Self {
        filter: TarfileFilter::Tar,
    };

    /// Clear `req.root`, then run the extraction script with this filter: as a request to
    /// `server` when one is given (and no fault limits are asked for), else as a process
    /// of its own. Both run the same script with the same arguments.
    fn extract(
        &self,
        req: &HydrateRequest<'_>,
        server: Option<&mut Server>,
    ) -> Result<Outcome, ToolError> {
        clear_root(req.root)?;
        let args = [
            req.archive.as_os_str(),
            req.root.as_os_str(),
            OsStr::new(self.filter.name()),
        ];
        let mut cmd = python_command(EXTRACT_TARFILE_PY, &args);
        match server {
            Some(server) if req.limits.is_none() => server.request(&cmd, &args, req.timeout),
            _ => run_limited(&mut cmd, req.scratch, req.timeout, req.limits),
        }
    }
}

impl Extractor for PythonFilterExtractor {
    fn name(&self) -> &str {
        match self.filter {
            TarfileFilter::Data => "python-data",
            TarfileFilter::Tar => "python-tar",
        }
    }

    fn clears_root(&self) -> bool {
        true
    }

    fn availability(&self) -> Availability {
        python_availability()
    }

    /// The `data` filter (`tarfile.data_filter`, Python 3.12 and the 3.11.4+ backports):
    /// "refuse to extract links (hard or soft) that link to absolute paths, or ones that
    /// link outside the destination". The `tar` filter promises nothing of links.
    fn link_promises(&self) -> LinkPromises {
        match self.filter {
            TarfileFilter::Data => LinkPromises {
                no_absolute_symlinks: true,
                no_escaping_symlinks: true,
                no_outside_hardlinks: true,
            },
            TarfileFilter::Tar => LinkPromises::default(),
        }
    }

    fn view_paths(&self) -> Option<Vec<std::path::PathBuf>> {
        Some(crate::adapters::python::view_paths())
    }

    fn hydrate(&self, req: &HydrateRequest<'_>) -> Result<Outcome, ToolError> {
        self.extract(req, None)
    }

    /// The persistent server: `python3 -I -S -c <serve_python.py> <extract_tarfile.py>
    /// <snapconf_worker.py>`, which forks a child per request running the extraction
    /// script; with [`crate::coverage::COVERAGE_VAR`]`=1` each answer carries the lines of
    /// `tarfile` the child ran (recorded by `snapconf_worker.py`'s `Coverage`).
    fn server_command(&self) -> Option<Command> {
        Some(python_command(
            SERVE_PYTHON_PY,
            &[
                OsStr::new(EXTRACT_TARFILE_PY),
                OsStr::new(SNAPCONF_WORKER_PY),
            ],
        ))
    }

    fn hydrate_served(
        &self,
        req: &HydrateRequest<'_>,
        server: &mut Server,
    ) -> Result<Outcome, ToolError> {
        self.extract(req, Some(server))
    }

    fn honours_limits(&self) -> bool {
        true
    }
}
