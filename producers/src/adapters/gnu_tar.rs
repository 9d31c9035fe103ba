//! `gnu-tar`: GNU tar as a producer and as an extractor.
//!
//! # Capture
//! ```text
//! tar --create --file ARCHIVE --directory ROOT --format=posix --hard-dereference
//!     --anchored --no-wildcards --exclude=./EX1 --exclude=./EX2 … .
//! ```
//! Member names are `./`, `./a`, `./a/b` (the member set is `.`). Exclusions are passed as
//! `--exclude` arguments, not an `--exclude-from` file: GNU tar 1.34 reads `-X` files line by
//! line and ignores `--null` for them (checked: a NUL-separated `-X` file excludes only its
//! first entry), so a name holding a newline could not be excluded through a file. Argument
//! bytes reach tar verbatim, so non-UTF-8 names work.
//!
//! Matching (GNU tar manual, "Controlling Pattern-Matching"): with `--anchored` a pattern
//! must match from the start of the member name, and member names begin with `./`, so each
//! exclusion is written as `./PATH` (plain `a/b` matches nothing). `--no-wildcards` makes
//! `*`, `?`, `[` and `\` literal. A match on a directory stops tar from descending, so the
//! exclusion covers everything below; a match on a single file drops just that file, and
//! `./c` does not exclude `./cx`.
//!
//! `--hard-dereference` stores every name of a hardlinked inode as a full regular member
//! (the `copy` hardlink profile). Sockets are skipped with a "socket ignored" warning and
//! exit 0. FIFOs and devices are stored as such; tar never opens them.
//!
//! Exit status (GNU tar manual, "Exit status"): 0 success; 1 "some files differ", which on
//! create means a file changed while it was read (the archive may hold an inconsistent copy);
//! 2 fatal. Any non-zero status is a capture refusal: a backend that checks `$?` treats
//! exit 1 as failure too, and an archive of a changing file is not a faithful capture.
//!
//! # Capture with GNU tar's defaults: `gnu-tar-lnk`
//! ```text
//! tar cf ARCHIVE --directory ROOT --no-wildcards --exclude=./EX1 --exclude=./EX2 … .
//! ```
//! What remote sandbox backends run in the image's own tar: no `--format` (GNU tar 1.34's
//! default is its `gnu` format), no `--anchored` (exclusions are then matched after any
//! `/`; member names start with `./`, and no name holds `/./`, so `./EX` still matches
//! only `./EX` and what is under it), and no `--hard-dereference`: the second and later
//! names of a hardlinked inode are stored as LNK members naming the first. `gnu-tar-lnk-gz`
//! runs `tar czf` instead (the same archive, gzip'd), `gnu-tar-lnk-zst` `tar --zstd -cf`
//! (zstd, as backends that snapshot with `--zstd` do). None is in the default set of a run
//! (`--producers gnu-tar-lnk` or `--producers all` asks for them).
//!
//! # Hydrate
//! ```text
//! (clear ROOT) tar -xf ARCHIVE -C ROOT       gnu-tar
//! tar -xf ARCHIVE -C ROOT                    gnu-tar-merge
//! ```
//! `gnu-tar-merge` extracts over whatever the root holds, as backends that hydrate an
//! existing workspace do; it is not in the default set of a run (`--extractors
//! gnu-tar-merge` or `--extractors all`).
//! What a backend running as root runs: plain `tar -xf`. As root GNU tar restores owners
//! (`--same-owner` is the default for the superuser) and permission bits
//! (`--same-permissions` likewise) (GNU tar manual, "Options Controlling the Attributes of
//! Extracted Files"). Exit status 2 (e.g. a member that could not be created) is a refusal,
//! even though GNU tar goes on extracting the other members first. The root is cleared first (see [`crate::clear`]), the common non-atomic
//! resume path.

use crate::adapter::{Availability, CaptureRequest, Outcome, Producer, ToolError};
use crate::adapters::tar_cli::{TarCli, TarCliExtractor};
use crate::exclusion::effective_exclusions;
use crate::process::run::{probe_version, run_with_timeout};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::process::Command;

/// The program run for GNU tar.
pub const GNU_TAR_PROGRAM: &str = "tar";
/// How to install GNU tar on Debian and Ubuntu.
pub const GNU_TAR_INSTALL_HINT: &str = "apt-get install tar";

/// The `gnu-tar` producer (`tar --create --format=posix …`).
#[derive(Clone, Copy, Debug, Default)]
pub struct GnuTarProducer;

/// GNU tar, as the shared command-line tar adapters see it ([`crate::adapters::tar_cli`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct GnuTar;

/// The `gnu-tar` extractor ([`GnuTarExtractor::CLEAR`]: clear the root, then
/// `tar -xf ARCHIVE -C ROOT`) and, with `clear` false ([`GnuTarExtractor::MERGE`]),
/// `gnu-tar-merge` (the same command over what the root holds: a backend's warm restore).
pub type GnuTarExtractor = TarCliExtractor<GnuTar>;

/// How a `gnu-tar-lnk` producer compresses its archive, as backends pass it to GNU tar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TarCompression {
    /// `tar cf`: a plain tar.
    None,
    /// `tar czf`: gzip'd (GNU tar runs `gzip`).
    Gzip,
    /// `tar --zstd -cf`: zstd-compressed (GNU tar runs `zstd`; GNU tar 1.31 and later).
    Zstd,
}

/// The `gnu-tar-lnk` producers: GNU tar with its defaults (LNK members for second names),
/// the archive plain (`gnu-tar-lnk`), gzip'd (`gnu-tar-lnk-gz`) or zstd-compressed
/// (`gnu-tar-lnk-zst`).
#[derive(Clone, Copy, Debug)]
pub struct GnuTarLnkProducer {
    /// How the archive is compressed.
    pub compression: TarCompression,
}

impl TarCli for GnuTar {
    const PROGRAM: &'static str = GNU_TAR_PROGRAM;
    const APPLET: &'static [&'static str] = &[];
    const NAME: &'static str = "gnu-tar";
    const MERGE_NAME: &'static str = "gnu-tar-merge";

    /// `tar --version`, first line (`tar (GNU tar) 1.34`); anything not GNU tar is
    /// unavailable. Every GNU tar adapter (the producers too) asks this.
    fn availability() -> Availability {
        match probe_version(GNU_TAR_PROGRAM, &["--version"], GNU_TAR_INSTALL_HINT) {
            Availability::Available { version } if !version.contains("GNU tar") => {
                Availability::Unavailable {
                    reason: format!("`tar` is not GNU tar: {version}"),
                    install_hint: GNU_TAR_INSTALL_HINT.to_owned(),
                }
            }
            other => other,
        }
    }
}

/// The capture command line for `req` (see the module docs).
pub fn gnu_tar_capture_command(req: &CaptureRequest<'_>) -> Command {
    let mut cmd = Command::new(GNU_TAR_PROGRAM);
    cmd.arg("--create")
        .arg("--file")
        .arg(req.archive)
        .arg("--directory")
        .arg(req.root)
        .arg("--format=posix")
        .arg("--hard-dereference")
        .arg("--anchored")
        .arg("--no-wildcards");
    exclude_then_dot(&mut cmd, req.exclusions);
    cmd
}

/// The `gnu-tar-lnk` capture command line for `req` (see the module docs), compressed as
/// `compression` says.
pub fn gnu_tar_defaults_capture_command(
    req: &CaptureRequest<'_>,
    compression: TarCompression,
) -> Command {
    let mut cmd = Command::new(GNU_TAR_PROGRAM);
    match compression {
        TarCompression::None => cmd.arg("cf"),
        TarCompression::Gzip => cmd.arg("czf"),
        TarCompression::Zstd => cmd.arg("--zstd").arg("-cf"),
    };
    cmd.arg(req.archive)
        .arg("--directory")
        .arg(req.root)
        .arg("--no-wildcards");
    exclude_then_dot(&mut cmd, req.exclusions);
    cmd
}

/// The end of both capture command lines: `--exclude=./EX` for each exclusion (bytes
/// verbatim; with `--no-wildcards` they are literal), then the member set `.`.
fn exclude_then_dot(cmd: &mut Command, exclusions: &[Vec<u8>]) {
    for ex in effective_exclusions(exclusions) {
        let mut arg = b"--exclude=./".to_vec();
        arg.extend_from_slice(ex);
        cmd.arg(OsString::from_vec(arg));
    }
    cmd.arg(OsStr::from_bytes(b"."));
}

impl Producer for GnuTarLnkProducer {
    fn name(&self) -> &str {
        match self.compression {
            TarCompression::None => "gnu-tar-lnk",
            TarCompression::Gzip => "gnu-tar-lnk-gz",
            TarCompression::Zstd => "gnu-tar-lnk-zst",
        }
    }

    fn availability(&self) -> Availability {
        let tar = GnuTar::availability();
        // GNU tar runs the compressor as a program of its own.
        let compressor = match self.compression {
            TarCompression::None => return tar,
            TarCompression::Gzip => probe_version("gzip", &["--version"], "apt-get install gzip"),
            TarCompression::Zstd => probe_version("zstd", &["--version"], "apt-get install zstd"),
        };
        match (tar, compressor) {
            (Availability::Available { version }, Availability::Available { .. }) => {
                Availability::Available { version }
            }
            (Availability::Available { .. }, missing) | (missing, _) => missing,
        }
    }

    fn capture(&self, req: &CaptureRequest<'_>) -> Result<Outcome, ToolError> {
        run_with_timeout(
            &mut gnu_tar_defaults_capture_command(req, self.compression),
            req.scratch,
            req.timeout,
        )
    }
}

impl Producer for GnuTarProducer {
    fn name(&self) -> &str {
        GnuTar::NAME
    }

    fn availability(&self) -> Availability {
        GnuTar::availability()
    }

    fn capture(&self, req: &CaptureRequest<'_>) -> Result<Outcome, ToolError> {
        run_with_timeout(&mut gnu_tar_capture_command(req), req.scratch, req.timeout)
    }
}
