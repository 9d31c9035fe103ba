//! `bsdtar`: libarchive's bsdtar as a producer and as an extractor.
//!
//! # Capture
//! ```text
//! bsdtar -c -f ARCHIVE -C ROOT --exclude ^ESCAPED1 --exclude ^ESCAPED2 … .
//! ```
//! Member names are `./`, `./a`, …; the default format is libarchive's "restricted pax"
//! (ustar, with PAX records only where needed, `hdrcharset=BINARY` for non-UTF-8 names).
//!
//! Matching (bsdtar(1) `--exclude`, libarchive `archive_pathmatch`): a pattern is a shell
//! wildcard that is *not* anchored at the start: it may match after any `/`, and a leading
//! `./` in the pattern is ignored, so `--exclude ./a/g` also drops `./x/a/g` (checked with
//! bsdtar 3.6.2). A leading `^` anchors the pattern at the start of the member name (the
//! `./` of the name is skipped). The end is unanchored at a `/`, so `^a` also covers `a/…`
//! but not `ab`. `*`, `?`, `[`, `]`, `\` and `^` are escaped with `\`, which makes them
//! literal. Pattern bytes are compared as bytes in the C locale, so non-UTF-8 names work;
//! bsdtar warns "Can't translate pathname … to UTF-8" when it stores one and exits 0.
//!
//! `bsdtar-gz` (opt-in) adds `-z`: the same archive, gzip'd.
//!
//! The second and later names of a hardlinked inode are LNK members; sockets are skipped
//! with "pax format cannot archive sockets" and exit 0; FIFOs are stored without being
//! opened. Exit status: 0 success, 1 failure.
//!
//! # Hydrate
//! ```text
//! (clear ROOT) bsdtar -xf ARCHIVE -C ROOT    bsdtar
//! bsdtar -xf ARCHIVE -C ROOT                 bsdtar-merge
//! ```
//! `bsdtar-merge` extracts over whatever the root holds; it is not in the default set of a
//! run (`--extractors bsdtar-merge` or `--extractors all`).
//! Run as root, bsdtar restores owners and permission bits by default (bsdtar(1),
//! `--same-owner`, `-p`).

use crate::adapter::{
    Availability, CaptureRequest, Extractor, HydrateRequest, Outcome, Producer, ToolError,
};
use crate::clear::clear_root;
use crate::exclusion::effective_exclusions;
use crate::process::run::{probe_version, run_limited, run_with_timeout};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::process::Command;

/// The program run for bsdtar.
pub const BSDTAR_PROGRAM: &str = "bsdtar";
/// How to install bsdtar on Debian and Ubuntu.
pub const BSDTAR_INSTALL_HINT: &str = "apt-get install libarchive-tools";

/// The `bsdtar` producer and, with `gzip`, `bsdtar-gz` (the same with `-z`: a gzip'd
/// archive).
#[derive(Clone, Copy, Debug, Default)]
pub struct BsdtarProducer {
    /// Whether the archive is gzip'd (`-z`).
    pub gzip: bool,
}

/// The `bsdtar` extractor (clear the root, then `bsdtar -xf ARCHIVE -C ROOT`) and, with `clear` false,
/// `bsdtar-merge` (the same command over what the root holds: a backend's warm restore).
#[derive(Clone, Copy, Debug)]
pub struct BsdtarExtractor {
    /// Whether snapconf empties the root before the tool runs (`bsdtar`), or the tool
    /// extracts over the prior workspace (`bsdtar-merge`).
    pub clear: bool,
}

impl BsdtarExtractor {
    /// `bsdtar`: clear the root, then extract.
    pub const CLEAR: Self = Self { clear: true };
    /// `bsdtar-merge`: extract over what the root holds.
    pub const MERGE: Self = Self { clear: false };
}

fn bsdtar_availability() -> Availability {
    probe_version(BSDTAR_PROGRAM, &["--version"], BSDTAR_INSTALL_HINT)
}

/// An anchored, literal libarchive exclusion pattern for the root-relative path `rel`:
/// `^` followed by `rel` with `* ? [ ] \ ^` escaped by a backslash.
pub fn anchored_literal_pattern(rel: &[u8]) -> Vec<u8> {
    let mut pat = vec![b'^'];
    for &b in rel {
        if matches!(b, b'*' | b'?' | b'[' | b']' | b'\\' | b'^') {
            pat.push(b'\\');
        }
        pat.push(b);
    }
    pat
}

impl Producer for BsdtarProducer {
    fn name(&self) -> &str {
        if self.gzip {
            "bsdtar-gz"
        } else {
            "bsdtar"
        }
    }

    fn availability(&self) -> Availability {
        bsdtar_availability()
    }

    fn capture(&self, req: &CaptureRequest<'_>) -> Result<Outcome, ToolError> {
        bsdtar_capture(req, self.gzip)
    }
}

/// The capture (see the module docs), gzip'd with `-z` if `gzip`.
fn bsdtar_capture(req: &CaptureRequest<'_>, gzip: bool) -> Result<Outcome, ToolError> {
    let mut cmd = Command::new(BSDTAR_PROGRAM);
    cmd.arg("-c");
    if gzip {
        cmd.arg("-z");
    }
    cmd.arg("-f").arg(req.archive).arg("-C").arg(req.root);
    for ex in effective_exclusions(req.exclusions) {
        cmd.arg("--exclude")
            .arg(OsString::from_vec(anchored_literal_pattern(ex)));
    }
    cmd.arg(".");
    run_with_timeout(&mut cmd, req.scratch, req.timeout)
}

/// `bsdtar -xf ARCHIVE -C ROOT` under the request's limits, clearing the root first if
/// `clear`.
fn bsdtar_hydrate(req: &HydrateRequest<'_>, clear: bool) -> Result<Outcome, ToolError> {
    if clear {
        clear_root(req.root)?;
    }
    let mut cmd = Command::new(BSDTAR_PROGRAM);
    cmd.arg("-xf").arg(req.archive).arg("-C").arg(req.root);
    run_limited(&mut cmd, req.scratch, req.timeout, req.limits)
}

impl Extractor for BsdtarExtractor {
    fn name(&self) -> &str {
        if self.clear {
            "bsdtar"
        } else {
            "bsdtar-merge"
        }
    }

    fn clears_root(&self) -> bool {
        self.clear
    }

    fn availability(&self) -> Availability {
        bsdtar_availability()
    }

    fn view_paths(&self) -> Option<Vec<std::path::PathBuf>> {
        Some(Vec::new())
    }

    fn hydrate(&self, req: &HydrateRequest<'_>) -> Result<Outcome, ToolError> {
        bsdtar_hydrate(req, self.clear)
    }

    fn honours_limits(&self) -> bool {
        true
    }
}
