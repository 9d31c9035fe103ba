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
//! Limitation (also returned by [`Producer::limitations`]): the root and every directory on
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

use crate::adapter::{
    Availability, CaptureRequest, Extractor, HydrateRequest, Outcome, Producer, ToolError,
};
use crate::clear::clear_root;
use crate::exclusion::{effective_exclusions, kept_entries, KeptEntry};
use crate::process::run::{probe_version, run_limited, run_with_timeout};
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

/// The `busybox-tar` producer and, with `gzip`, `busybox-tar-gz` (the same with `-z`: a
/// gzip'd archive).
#[derive(Clone, Copy, Debug, Default)]
pub struct BusyboxTarProducer {
    /// Whether the archive is gzip'd (`-z`).
    pub gzip: bool,
}

/// The `busybox-tar` extractor (clear the root, then `busybox tar -xf ARCHIVE -C ROOT`) and, with `clear` false,
/// `busybox-tar-merge` (the same command over what the root holds: a backend's warm restore).
#[derive(Clone, Copy, Debug)]
pub struct BusyboxTarExtractor {
    /// Whether snapconf empties the root before the tool runs (`busybox-tar`), or the tool
    /// extracts over the prior workspace (`busybox-tar-merge`).
    pub clear: bool,
}

impl BusyboxTarExtractor {
    /// `busybox-tar`: clear the root, then extract.
    pub const CLEAR: Self = Self { clear: true };
    /// `busybox-tar-merge`: extract over what the root holds.
    pub const MERGE: Self = Self { clear: false };
}

/// `busybox tar --help`, first line (`BusyBox v1.35.0 (…) multi-call binary.`); running the
/// `tar` applet also checks that this build has it.
fn busybox_availability() -> Availability {
    probe_version(BUSYBOX_PROGRAM, &["tar", "--help"], BUSYBOX_INSTALL_HINT)
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

impl Producer for BusyboxTarProducer {
    fn name(&self) -> &str {
        if self.gzip {
            "busybox-tar-gz"
        } else {
            "busybox-tar"
        }
    }

    fn availability(&self) -> Availability {
        busybox_availability()
    }

    fn capture(&self, req: &CaptureRequest<'_>) -> Result<Outcome, ToolError> {
        busybox_capture(req, self.gzip)
    }

    fn limitations(&self) -> Option<&str> {
        Some(BUSYBOX_LIMITATION)
    }
}

/// The capture (see the module docs), gzip'd with `-z` if `gzip`.
fn busybox_capture(req: &CaptureRequest<'_>, gzip: bool) -> Result<Outcome, ToolError> {
    let mut cmd = Command::new(BUSYBOX_PROGRAM);
    cmd.arg("tar").arg("-c");
    if gzip {
        cmd.arg("-z");
    }
    cmd.arg("-f").arg(req.archive).arg("-C").arg(req.root);
    let kept = match kept_names(req.root, req.exclusions) {
        Ok(kept) => kept,
        // Not root, and a directory on the way to a nested exclusion is one this user
        // may not list: BusyBox, run as the same user, could not archive it either.
        Err(ToolError::Io { context, source })
            if source.kind() == std::io::ErrorKind::PermissionDenied =>
        {
            return Ok(Outcome::Refused {
                message: format!("{context}: {source}"),
            });
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
    run_with_timeout(&mut cmd, req.scratch, req.timeout)
}

/// `busybox tar -xf ARCHIVE -C ROOT` under the request's limits, clearing the root first if
/// `clear`.
fn busybox_hydrate(req: &HydrateRequest<'_>, clear: bool) -> Result<Outcome, ToolError> {
    if clear {
        clear_root(req.root)?;
    }
    let mut cmd = Command::new(BUSYBOX_PROGRAM);
    cmd.arg("tar")
        .arg("-xf")
        .arg(req.archive)
        .arg("-C")
        .arg(req.root);
    run_limited(&mut cmd, req.scratch, req.timeout, req.limits)
}

impl Extractor for BusyboxTarExtractor {
    fn name(&self) -> &str {
        if self.clear {
            "busybox-tar"
        } else {
            "busybox-tar-merge"
        }
    }

    fn clears_root(&self) -> bool {
        self.clear
    }

    fn availability(&self) -> Availability {
        busybox_availability()
    }

    fn view_paths(&self) -> Option<Vec<std::path::PathBuf>> {
        Some(Vec::new())
    }

    fn hydrate(&self, req: &HydrateRequest<'_>) -> Result<Outcome, ToolError> {
        busybox_hydrate(req, self.clear)
    }

    fn honours_limits(&self) -> bool {
        true
    }
}
