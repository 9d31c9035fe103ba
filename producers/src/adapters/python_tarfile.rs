//! `python-tarfile` and `python-tarfile-gnu`: Python's `tarfile` as a producer, the way
//! sandbox backends call it.
//!
//! ```text
//! python3 -I -c <scripts/capture_tarfile.py> ROOT ARCHIVE SCRATCH/exclusions.hex pax|gnu
//! ```
//! The script runs `tarfile.open(archive, "w", format=…)` and
//! `tar.add(root, arcname=".", filter=drop_excluded)`, where the filter returns `None` for a
//! member at or under an exclusion. Member names are `.` and `./a/b`. The PAX variant is
//! Python 3.11's default format (`tarfile.DEFAULT_FORMAT`); the GNU variant passes
//! `format=tarfile.GNU_FORMAT` (long names as `L` records).
//!
//! Known behaviour it reproduces on purpose (Python docs, `TarFile.add` and
//! `TarFile.gettarinfo`): hardlinks are stored as LNK members for the second and later
//! names (H1), and because `gettarinfo` records the inode before the filter runs, excluding
//! the first name leaves an LNK member whose target is not in the archive (H2). `tarfile`
//! skips sockets (`gettarinfo` returns `None`) and stores FIFOs and devices without opening
//! them. Exclusions are passed hex-encoded, one per line, so any byte string round-trips.

use crate::adapter::{Availability, CaptureRequest, Outcome, Producer, ToolError};
use crate::adapters::python::{python_availability, run_python};
use crate::exclusion::write_hex_lines;
use std::ffi::OsStr;

/// The embedded capture script.
pub const CAPTURE_TARFILE_PY: &str = include_str!("../../scripts/capture_tarfile.py");

/// Which archive format `tarfile` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TarfileFormat {
    /// `tarfile.PAX_FORMAT`, the default since Python 3.8; adapter `python-tarfile`.
    Pax,
    /// `tarfile.GNU_FORMAT`; adapter `python-tarfile-gnu`.
    Gnu,
}

/// The `python-tarfile` / `python-tarfile-gnu` producer.
#[derive(Clone, Copy, Debug)]
pub struct PythonTarfileProducer {
    format: TarfileFormat,
}

impl PythonTarfileProducer {
    /// A producer writing `format`.
    pub fn new(format: TarfileFormat) -> Self {
        PythonTarfileProducer { format }
    }
}

impl Producer for PythonTarfileProducer {
    fn name(&self) -> &str {
        match self.format {
            TarfileFormat::Pax => "python-tarfile",
            TarfileFormat::Gnu => "python-tarfile-gnu",
        }
    }

    fn availability(&self) -> Availability {
        python_availability()
    }

    fn capture(&self, req: &CaptureRequest<'_>) -> Result<Outcome, ToolError> {
        let exclude_file = req.scratch.join("exclusions.hex");
        write_hex_lines(&exclude_file, req.exclusions)?;
        let format = match self.format {
            TarfileFormat::Pax => "pax",
            TarfileFormat::Gnu => "gnu",
        };
        run_python(
            CAPTURE_TARFILE_PY,
            &[
                req.root.as_os_str(),
                req.archive.as_os_str(),
                exclude_file.as_os_str(),
                OsStr::new(format),
            ],
            req.scratch,
            req.timeout,
        )
    }
}
