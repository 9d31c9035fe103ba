//! Running one command-template step (capture, validate, hydrate, recover) as a process.

use super::description::BackendDescription;
use super::template::{CommandTemplate, Vars};
use crate::adapter::{Outcome, ToolError};
use crate::process::run::run_with_timeout;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// Run `template` for step `step` (`capture`, `validate`, `hydrate`, `recover`) of `desc`
/// under [`run_with_timeout`], and prefix the outcome's message with the backend and step.
///
/// A program that cannot be started (deleted after the availability check, a script whose
/// interpreter is missing) is a [`Outcome::Refused`] saying so, not an `Err`: the run goes on
/// with the other pairs, and the message names the command.
///
/// # Errors
/// [`ToolError::Io`] when scratch files cannot be made or the wait fails.
pub fn run_step(
    desc: &BackendDescription,
    step: &str,
    template: &CommandTemplate,
    vars: &Vars<'_>,
    scratch: &Path,
    timeout: Duration,
) -> Result<Outcome, ToolError> {
    let mut cmd = template.command(vars, &desc.env);
    let prefix = format!("backend `{}` {step} step", desc.name);
    match run_with_timeout(&mut cmd, scratch, timeout) {
        Ok(Outcome::Success) => Ok(Outcome::Success),
        Ok(Outcome::Refused { message }) => Ok(Outcome::Refused {
            message: format!("{prefix} refused: {message}"),
        }),
        Ok(Outcome::Hang { message }) => Ok(Outcome::Hang {
            message: format!("{prefix}: {message}"),
        }),
        Err(ToolError::Spawn { command, source }) => Ok(Outcome::Refused {
            message: format!("{prefix} could not start `{command}`: {source}"),
        }),
        Err(e) => Err(e),
    }
}

/// Write `exclusions` to `path` for `{exclude_file}`: one root-relative path per line, raw
/// bytes (non-UTF-8 kept), trailing `/` removed, empty ones skipped.
///
/// Returns `Ok(Some(path))` when an exclusion holds a newline: a line-oriented file cannot
/// express it, so the caller refuses the case rather than hand the backend a wrong list.
///
/// # Errors
/// [`ToolError::Io`] naming the file.
pub fn write_exclude_file(
    path: &Path,
    exclusions: &[Vec<u8>],
) -> Result<Option<Vec<u8>>, ToolError> {
    let mut text = Vec::new();
    for ex in exclusions {
        let ex = crate::exclusion::trim_slashes(ex);
        if ex.is_empty() {
            continue;
        }
        if ex.contains(&b'\n') {
            return Ok(Some(ex.to_vec()));
        }
        text.extend_from_slice(ex);
        text.push(b'\n');
    }
    // A new file (`O_EXCL`, which never follows a link): the scratch may be writable by a
    // backend's worker that runs on between requests, in a filesystem view, while this
    // write happens outside it; a link it planted there must not lead the write to the host.
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(ToolError::Io {
                context: format!("replacing the exclude file `{}`", path.display()),
                source: e,
            })
        }
        _ => {}
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .and_then(|mut f| f.write_all(&text))
        .map_err(|source| ToolError::Io {
            context: format!("writing the exclude file `{}`", path.display()),
            source,
        })?;
    Ok(None)
}
