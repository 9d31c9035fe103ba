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

#[cfg(test)]
mod tests {
    use crate::adapter::{Availability, CaptureRequest, Extractor, Outcome, Producer};
    use crate::adapters::bsdtar::{BsdtarExtractor, BsdtarProducer};
    use crate::adapters::busybox_tar::{
        BusyboxTarExtractor, BusyboxTarProducer, BUSYBOX_LIMITATION,
    };
    use crate::adapters::gnu_tar::GnuTarExtractor;
    use std::time::Duration;

    /// Every variant keeps the name, the clearing and the limitation it had as a type of
    /// its own.
    #[test]
    fn each_variant_keeps_its_name() {
        let extractors: [(&dyn Extractor, &str, bool); 6] = [
            (&GnuTarExtractor::CLEAR, "gnu-tar", true),
            (&GnuTarExtractor::MERGE, "gnu-tar-merge", false),
            (&BsdtarExtractor::CLEAR, "bsdtar", true),
            (&BsdtarExtractor::MERGE, "bsdtar-merge", false),
            (&BusyboxTarExtractor::CLEAR, "busybox-tar", true),
            (&BusyboxTarExtractor::MERGE, "busybox-tar-merge", false),
        ];
        for (e, name, clears) in extractors {
            assert_eq!((e.name(), e.clears_root()), (name, clears));
            assert!(
                e.honours_limits() && e.view_paths() == Some(Vec::new()),
                "{name}"
            );
        }
        let producers: [(&dyn Producer, &str, Option<&str>); 4] = [
            (&BsdtarProducer::PLAIN, "bsdtar", None),
            (&BsdtarProducer::GZIP, "bsdtar-gz", None),
            (
                &BusyboxTarProducer::PLAIN,
                "busybox-tar",
                Some(BUSYBOX_LIMITATION),
            ),
            (
                &BusyboxTarProducer::GZIP,
                "busybox-tar-gz",
                Some(BUSYBOX_LIMITATION),
            ),
        ];
        for (p, name, limitation) in producers {
            assert_eq!((p.name(), p.limitations()), (name, limitation));
        }
        assert_eq!(BsdtarProducer::default().name(), "bsdtar");
    }

    /// The gzip'd producers (`-z`) write a gzip stream, the plain ones a tar (`ustar` at
    /// offset 257), with the tool installed.
    #[test]
    fn the_gzip_variants_write_gzip() {
        let producers: [&dyn Producer; 4] = [
            &BsdtarProducer::PLAIN,
            &BsdtarProducer::GZIP,
            &BusyboxTarProducer::PLAIN,
            &BusyboxTarProducer::GZIP,
        ];
        for p in producers {
            if let Availability::Unavailable { reason, .. } = p.availability() {
                eprintln!("{}: skipped, {reason}", p.name());
                continue;
            }
            let dir = tempfile::tempdir().expect("tempdir");
            let root = dir.path().join("root");
            std::fs::create_dir(&root).expect("root");
            std::fs::write(root.join("f"), b"data").expect("file");
            let archive = dir.path().join("a");
            let req = CaptureRequest {
                root: &root,
                exclusions: &[],
                archive: &archive,
                scratch: dir.path(),
                timeout: Duration::from_secs(60),
            };
            assert_eq!(
                p.capture(&req).expect("capture"),
                Outcome::Success,
                "{}",
                p.name()
            );
            let bytes = std::fs::read(&archive).expect("archive");
            if p.name().ends_with("-gz") {
                assert_eq!(bytes.get(..2), Some(&[0x1f, 0x8b][..]), "{}", p.name());
            } else {
                assert_eq!(bytes.get(257..262), Some(&b"ustar"[..]), "{}", p.name());
            }
        }
    }
}
