//! The fault settings of a run (`--faults`).

use crate::model::fault::FaultKind;
use std::path::PathBuf;

/// Fault injection settings of a run. `Default`: no faults.
#[derive(Clone, Debug, Default)]
pub struct FaultOptions {
    /// The faults to inject, each into every case with a prior workspace and an archive.
    pub kinds: Vec<FaultKind>,
    /// The `snapconf` binary whose `hydrate` subcommand runs the reference extractor in a
    /// child process (so it can be limited and killed); `None` skips `efbig` and `kill` for
    /// in-process extractors.
    pub bin: Option<PathBuf>,
}
