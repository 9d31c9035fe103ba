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

use crate::adapter::{Availability, CaptureRequest, Outcome, ToolError};
use crate::adapters::tar_cli::{TarCli, TarCliCapture, TarCliExtractor, TarCliProducer};
use crate::exclusion::effective_exclusions;
use crate::process::run::probe_version;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::process::Command;

/// The program run for bsdtar.
pub const BSDTAR_PROGRAM: &str = "bsdtar";
/// How to install bsdtar on Debian and Ubuntu.
pub const BSDTAR_INSTALL_HINT: &str = "apt-get install libarchive-tools";

/// libarchive's bsdtar, as the shared command-line tar adapters see it
/// ([`crate::adapters::tar_cli`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Bsdtar;

/// The `bsdtar` producer and, with `gzip` ([`BsdtarProducer::GZIP`]), `bsdtar-gz` (the
/// same with `-z`: a gzip'd archive).
pub type BsdtarProducer = TarCliProducer<Bsdtar>;

/// The `bsdtar` extractor ([`BsdtarExtractor::CLEAR`]: clear the root, then
/// `bsdtar -xf ARCHIVE -C ROOT`) and, with `clear` false ([`BsdtarExtractor::MERGE`]),
/// `bsdtar-merge` (the same command over what the root holds: a backend's warm restore).
pub type BsdtarExtractor = TarCliExtractor<Bsdtar>;

impl TarCli for Bsdtar {
    const PROGRAM: &'static str = BSDTAR_PROGRAM;
    const APPLET: &'static [&'static str] = &[];
    const NAME: &'static str = "bsdtar";
    const MERGE_NAME: &'static str = "bsdtar-merge";

    /// `bsdtar --version`, first line (`bsdtar 3.6.2 - libarchive 3.6.2 …`).
    fn availability() -> Availability {
        probe_version(BSDTAR_PROGRAM, &["--version"], BSDTAR_INSTALL_HINT)
    }
}

impl TarCliCapture for Bsdtar {
    const GZIP_NAME: &'static str = "bsdtar-gz";
    const LIMITATION: Option<&'static str> = None;

    /// `--exclude ^ESCAPED` for each exclusion ([`anchored_literal_pattern`]), then `.`.
    fn operands(cmd: &mut Command, req: &CaptureRequest<'_>) -> Result<Option<Outcome>, ToolError> {
        for ex in effective_exclusions(req.exclusions) {
            cmd.arg("--exclude")
                .arg(OsString::from_vec(anchored_literal_pattern(ex)));
        }
        cmd.arg(".");
        Ok(None)
    }
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
