//! `busybox-tar`: BusyBox tar as a producer and as an extractor.
//!
//! # Capture
//! ```text
//! busybox tar -c -f ARCHIVE -C ROOT .                          (no exclusion applies)
//! busybox tar -c -f ARCHIVE -C ROOT ./KEPT1 ./KEPT2 …           (exclusions emulated)
//! busybox tar -c -f ARCHIVE -C ROOT --no-recursion .            (everything excluded)
//! ```
//! `busybox-tar-gz` (opt-in) adds `-z`: the same archive, gzip'd.
//!
//! Common BusyBox builds (Debian's 1.35 included) are compiled without
//! `FEATURE_TAR_FROM`, so there is no `--exclude` and no `-X`: both are rejected as unknown
//! options. Exclusions are therefore emulated by naming what is kept: the root's entries
//! except the excluded ones, and for an entry that is an ancestor of a nested exclusion
//! (`a` for `a/b`), its own kept entries instead, recursively. Every name is passed as `./…`
//! so a name starting with `-` is not read as an option.
//!
//! Limitation (also returned by [`crate::Producer::limitations`]): the root and every directory on
//! the path to a nested exclusion are not archived as members, so their modes, owners and
//! times are not captured (extractors create them with defaults). Exclusions themselves are
//! honoured exactly, including single files.
//!
//! BusyBox walks directories in `readdir` order, stores the second and later names of a
//! hardlinked inode as LNK members, stores FIFOs as FIFO members without opening them, skips
//! sockets silently (exit 0), and uses GNU `L`/`K` records for long names and targets.
//! Exit status is 0 or 1 (any error).
//!
//! # Hydrate
//! ```text
//! (clear ROOT) busybox tar -xf ARCHIVE -C ROOT     busybox-tar
//! busybox tar -xf ARCHIVE -C ROOT                  busybox-tar-merge
//! ```
//! `busybox-tar-merge` extracts over whatever the root holds; it is not in the default set
//! of a run (`--extractors busybox-tar-merge` or `--extractors all`).

use crate::adapter::{Availability, CaptureRequest, Outcome, ToolError};
use crate::adapters::tar_cli::{TarCli, TarCliCapture, TarCliExtractor, TarCliProducer};
use crate::exclusion::{effective_exclusions, kept_entries, KeptEntry};
use crate::process::run::probe_version;
use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::Command;

/// The program run for BusyBox.
pub const BUSYBOX_PROGRAM: &str = "busybox";
/// How to install BusyBox on Debian and Ubuntu.
pub const BUSYBOX_INSTALL_HINT: &str = "apt-get install busybox";

/// What [`BusyboxTarProducer`] cannot honour exactly.
pub const BUSYBOX_LIMITATION: &str = "busybox tar has no --exclude: exclusions are emulated by \
    naming the kept entries, so the root and the directories on the path to a nested exclusion \
    are not archived as members (their modes, owners and times are not captured)";

/// BusyBox's `tar` applet, as the shared command-line tar adapters see it
/// ([`crate::adapters::tar_cli`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct BusyboxTar;

/// The `busybox-tar` producer and, with `gzip` ([`BusyboxTarProducer::GZIP`]),
/// `busybox-tar-gz` (the same with `-z`: a gzip'd archive).
pub type BusyboxTarProducer = TarCliProducer<BusyboxTar>;

/// The `busybox-tar` extractor ([`BusyboxTarExtractor::CLEAR`]: clear the root, then
/// `busybox tar -xf ARCHIVE -C ROOT`) and, with `clear` false
/// ([`BusyboxTarExtractor::MERGE`]), `busybox-tar-merge` (the same command over what the
/// root holds: a backend's warm restore).
pub type BusyboxTarExtractor = TarCliExtractor<BusyboxTar>;

impl TarCli for BusyboxTar {
    const PROGRAM: &'static str = BUSYBOX_PROGRAM;
    const APPLET: &'static [&'static str] = &["tar"];
    const NAME: &'static str = "busybox-tar";
    const MERGE_NAME: &'static str = "busybox-tar-merge";

    /// `busybox tar --help`, first line (`BusyBox v1.35.0 (…) multi-call binary.`); running
    /// the `tar` applet also checks that this build has it.
    fn availability() -> Availability {
        probe_version(BUSYBOX_PROGRAM, &["tar", "--help"], BUSYBOX_INSTALL_HINT)
    }
}

impl TarCliCapture for BusyboxTar {
    const GZIP_NAME: &'static str = "busybox-tar-gz";
    const LIMITATION: Option<&'static str> = Some(BUSYBOX_LIMITATION);

    /// `.` when no exclusion applies, else the kept names ([`kept_names`]), or
    /// `--no-recursion .` when nothing is kept. A directory this user may not list on the
    /// way to a nested exclusion is a refusal: BusyBox, run as the same user, could not
    /// archive it either.
    fn operands(cmd: &mut Command, req: &CaptureRequest<'_>) -> Result<Option<Outcome>, ToolError> {
        let kept = match kept_names(req.root, req.exclusions) {
            Ok(kept) => kept,
            Err(ToolError::Io { context, source })
                if source.kind() == std::io::ErrorKind::PermissionDenied =>
            {
                return Ok(Some(Outcome::Refused {
                    message: format!("{context}: {source}"),
                }));
            }
            Err(e) => return Err(e),
        };
        match kept {
            None => {
                cmd.arg(".");
            }
            Some(names) if names.is_empty() => {
                cmd.arg("--no-recursion").arg(".");
            }
            Some(names) => {
                cmd.args(names.into_iter().map(OsString::from_vec));
            }
        }
        Ok(None)
    }
}

/// The names to pass to `busybox tar -c` for `root` minus `exclusions`: `None` when no
/// exclusion applies (pass `.`), else the kept `./…` names (possibly none).
///
/// # Errors
/// [`ToolError::Io`] if a directory on the way cannot be read.
pub fn kept_names(root: &Path, exclusions: &[Vec<u8>]) -> Result<Option<Vec<Vec<u8>>>, ToolError> {
    let exclusions: Vec<Vec<u8>> = effective_exclusions(exclusions)
        .map(<[u8]>::to_vec)
        .collect();
    if exclusions.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::new();
    cover(root, &[], &exclusions, &mut out)?;
    Ok(Some(out))
}

/// Push the kept entries of `dir` (root-relative `rel`), descending into real directories
/// that hold an exclusion below them.
fn cover(
    dir: &Path,
    rel: &[u8],
    exclusions: &[Vec<u8>],
    out: &mut Vec<Vec<u8>>,
) -> Result<(), ToolError> {
    let kept = kept_entries(dir, rel, exclusions).map_err(|source| ToolError::Io {
        context: format!("listing `{}` to emulate exclusions", dir.display()),
        source,
    })?;
    for KeptEntry { path, rel: child } in kept {
        let holds_exclusion = exclusions
            .iter()
            .any(|e| e.len() > child.len() && e.starts_with(&child) && e[child.len()] == b'/');
        let is_real_dir = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_dir());
        if holds_exclusion && is_real_dir {
            cover(&path, &child, exclusions, out)?;
        } else {
            let mut arg = b"./".to_vec();
            arg.extend_from_slice(&child);
            out.push(arg);
        }
    }
    Ok(())
}
