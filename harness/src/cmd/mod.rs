//! Subcommands of the `snapconf` binary.

/// `println!` that never panics: when stdout is closed (`snapconf list | head -1`) the output
/// is dropped and the command goes on to its documented exit code.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

mod adapters;
mod args;
mod audit;
mod backends;
mod baseline;
mod common;
mod fuzz;
mod hydrate;
mod lifecycle;
mod list;
mod output;
mod parsers;
mod policy_flags;
mod replay;
mod report;
mod run;

pub use args::Cli;

static EXE: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();

/// Read this binary's path now, before `main` enters its private mount namespace: in a
/// chroot, once in a namespace of its own, `/proc/self/exe` names the binary from the
/// host's root, not the chroot's (the host-safety tests run snapconf chrooted in an
/// overlay of the host), and a reaper or child started from that path fails to start.
pub fn remember_exe() {
    let _ = EXE.set(std::env::current_exe().ok());
}

/// This binary's path, as read by [`remember_exe`] (or now, if it was not called).
///
/// # Errors
/// The error of [`std::env::current_exe`].
pub fn self_exe() -> std::io::Result<std::path::PathBuf> {
    match EXE.get() {
        Some(Some(p)) => Ok(p.clone()),
        _ => std::env::current_exe(),
    }
}
use args::Command;
use snapconf_harness::exit;

/// Run one subcommand and return its exit code; errors are printed here.
pub fn dispatch(cli: Cli) -> i32 {
    // `hydrate`, `recover` and `check-archive` keep their documented code for any failure
    // that is not bad usage: an I/O failure, the archive's root untouched.
    let archive_tool = matches!(
        cli.command,
        Command::Hydrate(_) | Command::Recover(_) | Command::CheckArchive(_)
    );
    let result = match cli.command {
        Command::Run(a) => run::run(a),
        Command::Audit(a) => audit::audit(a),
        Command::Replay(a) => replay::replay(a),
        Command::List(a) => list::list(a),
        Command::Lifecycle(a) => lifecycle::lifecycle(a),
        Command::Hydrate(a) => hydrate::hydrate(a),
        Command::Recover(a) => hydrate::recover(a),
        Command::CheckArchive(a) => hydrate::check_archive(a),
        Command::ServeHydrate(a) => hydrate::serve(a),
        Command::Baseline(args::BaselineCommand::Update(a)) => baseline::update(a),
        Command::Fuzz(a) => fuzz::fuzz(a),
        Command::Report(args::ReportCommand::Merge(a)) => report::merge(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let code = error_code(&e, archive_tool);
            if code == snapconf_harness::jail::cleanup::INTERRUPTED {
                eprintln!("snapconf: {e}");
            } else {
                eprintln!("snapconf: error: {}", chain(&e));
            }
            code
        }
    }
}

/// The exit code of a command that ended with `e`: 130 for [`Interrupted`],
/// [`exit::USAGE`] for [`Usage`], [`exit::NOTHING_RAN`] for [`Environment`], for an input
/// not run because it could not be run safely here (`HarnessError::NotRun`) and for a full
/// filesystem (`ENOSPC`: the machine failed, not snapconf); any other
/// error is [`exit::IO_FAILURE`] for the archive tools (`hydrate`, `recover`,
/// `check-archive`: `archive_tool`) and [`exit::INTERNAL_ERROR`] for every other command.
fn error_code(e: &anyhow::Error, archive_tool: bool) -> i32 {
    if e.downcast_ref::<Interrupted>().is_some() {
        snapconf_harness::jail::cleanup::INTERRUPTED
    } else if e.downcast_ref::<Usage>().is_some() {
        exit::USAGE
    } else if e.downcast_ref::<Environment>().is_some()
        || common::is_no_space(e)
        || matches!(
            e.downcast_ref::<snapconf_harness::error::HarnessError>(),
            Some(snapconf_harness::error::HarnessError::NotRun(_))
        )
    {
        exit::NOTHING_RAN
    } else if archive_tool {
        exit::IO_FAILURE
    } else {
        exit::INTERNAL_ERROR
    }
}

/// `e` and its causes, `: `-separated, leaving out a cause whose text the message before
/// it already ends with (an error that prints its source, as `context: source` does, and
/// also returns it as its source would otherwise show it twice).
fn chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.is_empty() {
            out = text;
        } else if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
    }
    out
}

/// A SIGINT or SIGTERM that came while a command was still setting up (probing tools,
/// reading backends), before its first case: it ends with exit 130 and nothing written.
#[derive(Debug, thiserror::Error)]
#[error("interrupted while setting up, before the first case: nothing was written")]
pub struct Interrupted;

/// Make SIGINT and SIGTERM set the stop flag from now on (see
/// [`snapconf_harness::jail::cleanup`]), so that a signal during set-up leaves no probe's
/// scratch behind; call first in every command that runs cases.
///
/// # Errors
/// The `sigaction(2)` error.
pub fn stop_on_signals() -> anyhow::Result<()> {
    use anyhow::Context as _;
    snapconf_harness::jail::cleanup::install_stop_handler()
        .context("cannot install the SIGINT/SIGTERM handler")
}

/// [`Interrupted`] if a stop was asked for since [`stop_on_signals`].
///
/// # Errors
/// [`Interrupted`].
pub fn not_interrupted() -> anyhow::Result<()> {
    if snapconf_harness::jail::cleanup::stop_requested() {
        return Err(Interrupted.into());
    }
    Ok(())
}

/// The machine, not snapconf, failed (exit 3): an unusable temp directory, in which no
/// tool can be probed or run (found before any work), or a host canary that changed
/// during a fuzz session (its results are void).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Environment(pub String);

/// A usage or configuration error (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

impl From<snapconf_harness::engine::report_dir::ReportDirError> for Usage {
    fn from(e: snapconf_harness::engine::report_dir::ReportDirError) -> Usage {
        Usage(e.0)
    }
}

#[cfg(test)]
mod tests {
    use snapconf_harness::exit;

    /// Each kind of error has its documented code; an error of no known kind is an
    /// internal error, except for the archive tools, whose failures are I/O failures.
    #[test]
    fn errors_map_to_their_documented_codes() {
        let code = |e: anyhow::Error, archive_tool| super::error_code(&e, archive_tool);
        assert_eq!(code(super::Usage("bad".into()).into(), false), exit::USAGE);
        assert_eq!(code(super::Usage("bad".into()).into(), true), exit::USAGE);
        assert_eq!(
            code(super::Environment("TMPDIR".into()).into(), false),
            exit::NOTHING_RAN
        );
        assert_eq!(
            code(super::Interrupted.into(), false),
            snapconf_harness::jail::cleanup::INTERRUPTED
        );
        let full = std::io::Error::from_raw_os_error(28);
        assert_eq!(
            code(anyhow::Error::new(full).context("jail"), false),
            exit::NOTHING_RAN,
            "ENOSPC: the machine failed"
        );
        let not_run = snapconf_harness::error::HarnessError::NotRun("not run".into());
        assert_eq!(
            code(anyhow::Error::new(not_run).context("replay"), false),
            exit::NOTHING_RAN,
            "an input not run for safety: nothing ran"
        );
        let other = || anyhow::anyhow!("cannot write `report.json`");
        assert_eq!(code(other(), false), exit::INTERNAL_ERROR);
        assert_eq!(code(other(), true), exit::IO_FAILURE);
        // A typed error keeps its code under added context.
        let wrapped = anyhow::Error::from(super::Usage("bad".into())).context("while setting up");
        assert_eq!(code(wrapped, false), exit::USAGE);
        assert_ne!(exit::INTERNAL_ERROR, exit::NOTHING_RAN);
    }

    /// A cause already printed by the error above it is not printed again; one that is not
    /// is.
    #[test]
    fn a_cause_is_printed_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "Not a directory");
        let e = anyhow::Error::new(snapconf_harness::error::HarnessError::Io {
            context: "cannot read `a.tar/archive.tar`".into(),
            source: io,
        });
        assert_eq!(
            super::chain(&e),
            "cannot read `a.tar/archive.tar`: Not a directory"
        );
        let e = e.context("the replay failed");
        assert_eq!(
            super::chain(&e),
            "the replay failed: cannot read `a.tar/archive.tar`: Not a directory"
        );
    }
}
