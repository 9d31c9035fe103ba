//! `python-data`: Python's `tarfile` with the PEP 706 `data` extraction filter.
//!
//! ```text
//! (clear ROOT) python3 -I -c <scripts/extract_tarfile.py> ARCHIVE ROOT data
//! ```
//! i.e. `tarfile.open(archive).extractall(root, filter="data")` (Python docs, tarfile
//! "Extraction filters"; PEP 706). The `data` filter is the `tar` filter (strip leading `/`,
//! refuse names ending up outside the destination, clear setuid/setgid/sticky and group/other
//! write) plus: refuse links (hard or symbolic) to absolute paths or leaving the destination,
//! refuse device and FIFO members, force `u+rw` on regular files, skip directory modes and
//! owners. A refusal raises a `FilterError` after the earlier members were written; with the
//! root cleared first, this is the common non-atomic resume path.

use crate::adapter::{Availability, Extractor, HydrateRequest, Outcome, ToolError};
use crate::adapters::python::{python_availability, python_command};
use crate::clear::clear_root;
use crate::process::run::run_limited;
use crate::process::server::{Server, SERVE_PYTHON_PY};
use std::ffi::OsStr;
use std::process::Command;

/// The embedded extraction script, shared with `python-tar`.
pub const EXTRACT_TARFILE_PY: &str = include_str!("../../scripts/extract_tarfile.py");

/// Clear `req.root`, then run the extraction script with the named PEP 706 filter: as a
/// request to `server` when one is given (and no fault limits are asked for), else as a
/// process of its own. Both run the same script with the same arguments.
pub(crate) fn extract_with_filter(
    req: &HydrateRequest<'_>,
    filter: &str,
    server: Option<&mut Server>,
) -> Result<Outcome, ToolError> {
    clear_root(req.root)?;
    let args = [
        req.archive.as_os_str(),
        req.root.as_os_str(),
        OsStr::new(filter),
    ];
    let mut cmd = python_command(EXTRACT_TARFILE_PY, &args);
    match server {
        Some(server) if req.limits.is_none() => server.request(&cmd, &args, req.timeout),
        _ => run_limited(&mut cmd, req.scratch, req.timeout, req.limits),
    }
}

/// The persistent server of the Python extractors: `python3 -I -S -c <serve_python.py>
/// <extract_tarfile.py>`, which forks a child per request running the extraction script.
pub(crate) fn extract_server() -> Command {
    python_command(SERVE_PYTHON_PY, &[OsStr::new(EXTRACT_TARFILE_PY)])
}

/// The `python-data` extractor.
#[derive(Clone, Copy, Debug, Default)]
pub struct PythonDataExtractor;

impl Extractor for PythonDataExtractor {
    fn name(&self) -> &str {
        "python-data"
    }

    fn clears_root(&self) -> bool {
        true
    }

    fn availability(&self) -> Availability {
        python_availability()
    }

    /// Python's `data` filter (`tarfile.data_filter`, Python 3.12 and the 3.11.4+
    /// backports): "refuse to extract links (hard or soft) that link to absolute paths, or
    /// ones that link outside the destination".
    fn link_promises(&self) -> crate::LinkPromises {
        crate::LinkPromises {
            no_absolute_symlinks: true,
            no_escaping_symlinks: true,
            no_outside_hardlinks: true,
        }
    }

    fn view_paths(&self) -> Option<Vec<std::path::PathBuf>> {
        Some(crate::adapters::python::view_paths())
    }

    fn hydrate(&self, req: &HydrateRequest<'_>) -> Result<Outcome, ToolError> {
        extract_with_filter(req, "data", None)
    }

    fn server_command(&self) -> Option<Command> {
        Some(extract_server())
    }

    fn hydrate_served(
        &self,
        req: &HydrateRequest<'_>,
        server: &mut Server,
    ) -> Result<Outcome, ToolError> {
        extract_with_filter(req, "data", Some(server))
    }

    fn honours_limits(&self) -> bool {
        true
    }
}
