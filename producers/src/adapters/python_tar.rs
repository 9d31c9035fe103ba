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
use crate::adapters::python_data::extract_with_filter;

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
        extract_with_filter(req, "tar")
    }

    fn honours_limits(&self) -> bool {
        true
    }
}
