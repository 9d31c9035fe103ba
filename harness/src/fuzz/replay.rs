//! `snapconf fuzz --replay`: run a reproducer's archive through an extractor once,
//! one-shot, as it would run with no campaign around it.

use super::execute::{execute, runnable};
use super::options::FuzzOptions;
use super::persist::Persist;
use crate::checks::Check;
use crate::error::HarnessError;
use snapconf_producers::Extractor;
use std::path::Path;

/// The archive `--replay` names: `dir/archive.tar` of a reproducer directory, or the
/// archive file `dir` itself; read whole, as a regular file of at most
/// [`ARCHIVE_LIMIT`](snapconf_producers::input::ARCHIVE_LIMIT) bytes. Returns the file read
/// and its bytes.
///
/// # Errors
/// [`InputError`](snapconf_producers::input::InputError) naming the file: missing, not a
/// regular file (a FIFO, a device), or larger than the limit.
pub fn read_replay(
    dir: &Path,
) -> Result<(std::path::PathBuf, Vec<u8>), snapconf_producers::input::InputError> {
    let file = if dir.is_dir() {
        dir.join("archive.tar")
    } else {
        dir.to_path_buf()
    };
    let bytes =
        snapconf_producers::input::read_file(&file, snapconf_producers::input::ARCHIVE_LIMIT)?;
    Ok((file, bytes))
}

/// Re-run a reproducer directory's `archive.tar` (or the archive file `dir`) through `ex`,
/// one-shot: the checks that fail now, with their messages ([`read_replay`], then
/// [`replay_archive`]).
///
/// # Errors
/// The archive cannot be read, or a fault of snapconf itself.
pub fn replay_finding(
    dir: &Path,
    ex: &dyn Extractor,
    opts: &FuzzOptions,
) -> Result<Vec<(Check, String)>, HarnessError> {
    let (file, bytes) = read_replay(dir).map_err(|e| HarnessError::Other(e.to_string()))?;
    replay_archive(&file, &bytes, ex, opts)
}

/// Run archive `bytes` (read from `file`, named in messages) through `ex`, one-shot: the
/// checks that fail now, with their messages.
///
/// # Errors
/// [`HarnessError::NotRun`] when the archive could reach past the jail where no
/// filesystem view is available; another variant for a fault of snapconf itself.
pub fn replay_archive(
    file: &Path,
    bytes: &[u8],
    ex: &dyn Extractor,
    opts: &FuzzOptions,
) -> Result<Vec<(Check, String)>, HarnessError> {
    if !runnable(bytes, ex, opts) {
        return Err(HarnessError::NotRun(format!(
            "`{}` could reach past the jail (absolute names or several `..`) and `{}` \
             cannot run in a filesystem view here; not run",
            file.display(),
            ex.name()
        )));
    }
    // One-shot: a reproducer runs as it would with no session around it.
    Ok(execute(bytes, ex, opts, &mut Persist::one_shot())?
        .0
        .into_iter()
        .map(|h| (h.check, h.message))
        .collect())
}
