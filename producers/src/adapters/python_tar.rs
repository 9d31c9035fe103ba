//! `python-tar`: Python's `tarfile` with the PEP 706 `tar` extraction filter.
//!
//! ```text
//! (clear ROOT) python3 -I -c <scripts/extract_tarfile.py> ARCHIVE ROOT tar
//! ```
//! i.e. `tarfile.open(archive).extractall(root, filter="tar")` (Python docs, tarfile
//! "Extraction filters"; PEP 706). The `tar` filter strips leading `/` from names, refuses
//! names whose path (after following symlinks) ends up outside the destination, and clears
//! setuid/setgid/sticky and group/other write bits; unlike `data` it keeps device and FIFO
//! members, absolute and escaping symlink targets, and owners.

use crate::adapter::{Availability, Extractor, HydrateRequest, Outcome, ToolError};
use crate::adapters::python::python_availability;
use crate::adapters::python_data::{extract_server, extract_with_filter};
use crate::process::server::Server;
use std::process::Command;

/// The `python-tar` extractor.
#[derive(Clone, Copy, Debug, Default)]
pub struct PythonTarExtractor;

impl Extractor for PythonTarExtractor {
    fn name(&self) -> &str {
        "python-tar"
    }

    fn clears_root(&self) -> bool {
        true
    }

    fn availability(&self) -> Availability {
        python_availability()
    }

    fn view_paths(&self) -> Option<Vec<std::path::PathBuf>> {
        Some(crate::adapters::python::view_paths())
    }

    fn hydrate(&self, req: &HydrateRequest<'_>) -> Result<Outcome, ToolError> {
        extract_with_filter(req, "tar", None)
    }

    fn server_command(&self) -> Option<Command> {
        Some(extract_server())
    }

    fn hydrate_served(
        &self,
        req: &HydrateRequest<'_>,
        server: &mut Server,
    ) -> Result<Outcome, ToolError> {
        extract_with_filter(req, "tar", Some(server))
    }

    fn honours_limits(&self) -> bool {
        true
    }
}
