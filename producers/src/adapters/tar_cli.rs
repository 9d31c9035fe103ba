//! What the command-line tars (GNU tar, bsdtar, BusyBox tar) share as adapters, written
//! once: the extractor and the plain-or-gzip'd producer. Each tool's module says what
//! differs ([`TarCli`], [`TarCliCapture`]) and documents its tool's behaviour.
//!
//! # Hydrate
//! ```text
//! (clear ROOT) PROGRAM [APPLET] -xf ARCHIVE -C ROOT    NAME         (TarCliExtractor::CLEAR)
//! PROGRAM [APPLET] -xf ARCHIVE -C ROOT                 MERGE_NAME   (TarCliExtractor::MERGE)
//! ```
//! run under the request's fault limits ([`run_limited`]). The merging extractor extracts
//! over whatever the root holds, as backends that hydrate an existing workspace do.
//!
//! # Capture
//! ```text
//! PROGRAM [APPLET] -c -f ARCHIVE -C ROOT OPERANDS…        NAME         (TarCliProducer::PLAIN)
//! PROGRAM [APPLET] -c -z -f ARCHIVE -C ROOT OPERANDS…     GZIP_NAME    (TarCliProducer::GZIP)
//! ```
//! where the tool appends its exclusion options and members ([`TarCliCapture::operands`]).
//! `-z` makes the tool gzip the same archive.

use crate::adapter::{
    Availability, CaptureRequest, Extractor, HydrateRequest, Outcome, Producer, ToolError,
};
use crate::clear::clear_root;
use crate::process::run::{run_limited, run_with_timeout};
use std::fmt::Debug;
use std::marker::PhantomData;
use std::process::Command;

/// A command-line tar, by what its adapters need to know of it: the program, the adapter
/// names, and how to tell whether it runs here. Implemented by the unit types
/// [`GnuTar`](crate::adapters::gnu_tar::GnuTar),
/// [`Bsdtar`](crate::adapters::bsdtar::Bsdtar) and
/// [`BusyboxTar`](crate::adapters::busybox_tar::BusyboxTar).
pub trait TarCli: Clone + Copy + Debug + Default + Send + Sync + 'static {
    /// The program run (`tar`, `bsdtar`, `busybox`).
    const PROGRAM: &'static str;
    /// The words between the program and tar's own options: `["tar"]` for BusyBox's
    /// applet, none for a program that is tar itself.
    const APPLET: &'static [&'static str];
    /// The clearing extractor's name (`gnu-tar`), also the plain producer's.
    const NAME: &'static str;
    /// The merging extractor's name (`gnu-tar-merge`).
    const MERGE_NAME: &'static str;

    /// Whether the tool runs here, with its version: the tool's own probe.
    fn availability() -> Availability;

    /// `PROGRAM APPLET…`, ready for tar's own options.
    fn command() -> Command {
        let mut cmd = Command::new(Self::PROGRAM);
        cmd.args(Self::APPLET);
        cmd
    }
}

/// A command-line tar whose producer takes `-c [-z] -f ARCHIVE -C ROOT` and then the
/// tool's own exclusion options and members (see the module docs).
pub trait TarCliCapture: TarCli {
    /// The gzip'd producer's name (`bsdtar-gz`).
    const GZIP_NAME: &'static str;
    /// What the producer cannot honour exactly, for [`Producer::limitations`]; `None`
    /// when it honours every request.
    const LIMITATION: Option<&'static str>;

    /// Append what follows `-C ROOT` for `req` (exclusion options, then the members), or
    /// return `Some(outcome)` when the case cannot be captured at all: the outcome the
    /// producer then reports without running the tool.
    ///
    /// # Errors
    /// [`ToolError::Io`] when something of ours needed for the operands fails (e.g.
    /// listing the root).
    fn operands(cmd: &mut Command, req: &CaptureRequest<'_>) -> Result<Option<Outcome>, ToolError>;
}

/// The extractor of the command-line tar `T`: `T::NAME` clears the root and then runs
/// `-xf ARCHIVE -C ROOT`; with `clear` false, `T::MERGE_NAME` runs the same command over
/// what the root holds (a backend's warm restore).
#[derive(Clone, Copy, Debug, Default)]
pub struct TarCliExtractor<T> {
    /// Whether snapconf empties the root before the tool runs (`T::NAME`), or the tool
    /// extracts over the prior workspace (`T::MERGE_NAME`).
    pub clear: bool,
    tool: PhantomData<T>,
}

impl<T> TarCliExtractor<T> {
    /// `T::NAME`: clear the root, then extract.
    pub const CLEAR: Self = Self {
        clear: true,
        tool: PhantomData,
    };
    /// `T::MERGE_NAME`: extract over what the root holds.
    pub const MERGE: Self = Self {
        clear: false,
        tool: PhantomData,
    };
}

impl<T: TarCli> Extractor for TarCliExtractor<T> {
    fn name(&self) -> &str {
        if self.clear {
            T::NAME
        } else {
            T::MERGE_NAME
        }
    }

    fn clears_root(&self) -> bool {
        self.clear
    }

    fn availability(&self) -> Availability {
        T::availability()
    }

    fn view_paths(&self) -> Option<Vec<std::path::PathBuf>> {
        Some(Vec::new())
    }

    /// `-xf ARCHIVE -C ROOT` under the request's limits, clearing the root first if
    /// `clear`.
    fn hydrate(&self, req: &HydrateRequest<'_>) -> Result<Outcome, ToolError> {
        if self.clear {
            clear_root(req.root)?;
        }
        let mut cmd = T::command();
        cmd.arg("-xf").arg(req.archive).arg("-C").arg(req.root);
        run_limited(&mut cmd, req.scratch, req.timeout, req.limits)
    }

    fn honours_limits(&self) -> bool {
        true
    }
}

/// The producer of the command-line tar `T`: `T::NAME`, or with `gzip` `T::GZIP_NAME`
/// (the same with `-z`: a gzip'd archive).
#[derive(Clone, Copy, Debug, Default)]
pub struct TarCliProducer<T> {
    /// Whether the archive is gzip'd (`-z`).
    pub gzip: bool,
    tool: PhantomData<T>,
}

impl<T> TarCliProducer<T> {
    /// `T::NAME`: a plain archive.
    pub const PLAIN: Self = Self {
        gzip: false,
        tool: PhantomData,
    };
    /// `T::GZIP_NAME`: a gzip'd archive (`-z`).
    pub const GZIP: Self = Self {
        gzip: true,
        tool: PhantomData,
    };
}

impl<T: TarCliCapture> Producer for TarCliProducer<T> {
    fn name(&self) -> &str {
        if self.gzip {
            T::GZIP_NAME
        } else {
            T::NAME
        }
    }

    fn availability(&self) -> Availability {
        T::availability()
    }

    /// `-c [-z] -f ARCHIVE -C ROOT OPERANDS…` under the request's timeout, unless the
    /// tool's operands decide the outcome first.
    fn capture(&self, req: &CaptureRequest<'_>) -> Result<Outcome, ToolError> {
        let mut cmd = T::command();
        cmd.arg("-c");
        if self.gzip {
            cmd.arg("-z");
        }
        cmd.arg("-f").arg(req.archive).arg("-C").arg(req.root);
        if let Some(outcome) = T::operands(&mut cmd, req)? {
            return Ok(outcome);
        }
        run_with_timeout(&mut cmd, req.scratch, req.timeout)
    }

    fn limitations(&self) -> Option<&str> {
        T::LIMITATION
    }
}
