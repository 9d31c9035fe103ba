//! A subreaper of its own for each step: stragglers found and named per tool run, so that
//! steps running at the same time in different threads never blame each other's processes.
//!
//! A tool's orphaned descendants are reparented to the nearest ancestor that is a *child
//! subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`, Linux 3.4). When the `snapconf` binary turns
//! the reaper on ([`enable`]), every external command runs as
//! `snapconf __snapconf-reap REPORT DEADLINE_MS -- COMMAND...`: that process (the *reaper*)
//! makes itself a subreaper, runs the command in a process group of its own, and kills it
//! at the deadline, or within a second of its own parent's death (a `snapconf` killed with
//! `SIGKILL` leaves no tool running on). Once the command has ended it kills the command's group (background
//! children, silently, as [`crate::process::run`] always did), then kills, reaps and names
//! every remaining descendant (processes that left the group with `setsid`, daemons), and
//! writes to `REPORT` how the command ended and one line per straggler. Its stragglers are
//! its own children, never another step's, whatever else this process runs in parallel.
//!
//! [`crate::process::run`] reads the report back and hands the straggler lines to the
//! calling thread ([`crate::process::stragglers::reap_stragglers`] returns them).
//!
//! The report's first line is `exit N`, `signal N`, `deadline` or `not-started ERRNO`;
//! every further line is a straggler as `PID COMMAND LINE`.

use crate::process::run::wait_exit;
use crate::process::stragglers::kill_children;
use rustix::process::{kill_process_group, Pid, Signal};
use std::ffi::OsString;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The first argument by which the `snapconf` binary knows it is to act as a reaper
/// ([`main`]); not a subcommand a user types.
pub const REAP_ARG: &str = "__snapconf-reap";

/// How much longer than the reaper's own deadline the caller waits before it kills the
/// reaper itself (it never should have to).
pub const GRACE: Duration = Duration::from_secs(10);

/// The reaper's exit code when its report could not be written because the filesystem
/// holding it is full (`ENOSPC`).
pub const NO_SPACE: i32 = 4;

static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Run every external command from now on under a reaper: `program` (the running
/// `snapconf` binary) started with [`REAP_ARG`]. Process-wide and once; false if it was on
/// already. Without it (libraries, unit tests), stragglers are looked for process-wide
/// after each step ([`crate::process::stragglers`]).
pub fn enable(program: PathBuf) -> bool {
    PROGRAM.set(program).is_ok()
}

/// The reaper program, when [`enable`] turned it on.
pub fn program() -> Option<&'static Path> {
    PROGRAM.get().map(PathBuf::as_path)
}

/// How a command run under a reaper ended, read back from its report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this code.
    Exit(i32),
    /// It died of this signal (not one the reaper sent).
    Signal(i32),
    /// It was still running at the deadline and was killed.
    Deadline,
    /// It could not be started; the `errno` of the failed `execve` (`ENOENT`: not
    /// installed).
    NotStarted(i32),
}

/// What a reaper reported: how the command ended, and the stragglers it killed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// How the command ended (the report's first line).
    pub ended: Ended,
    /// One line per straggler: `PID COMMAND LINE`.
    pub stragglers: Vec<String>,
}

/// Reads a reaper's report from `path`; `None` if it is missing or its first line is not
/// one the reaper writes (the reaper itself was killed).
pub fn read_report(path: &Path) -> Option<Report> {
    use std::io::Read;
    let mut text = String::new();
    open_report(path, false)
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    let mut lines = text.lines();
    let first = lines.next()?;
    let ended = match first.split_once(' ') {
        Some(("exit", n)) => Ended::Exit(n.parse().ok()?),
        Some(("signal", n)) => Ended::Signal(n.parse().ok()?),
        Some(("not-started", n)) => Ended::NotStarted(n.parse().ok()?),
        _ if first == "deadline" => Ended::Deadline,
        _ => return None,
    };
    Some(Report {
        ended,
        stragglers: lines.map(str::to_owned).collect(),
    })
}

/// The reaper's arguments before the command: `[REAP_ARG, REPORT, DEADLINE_MS, "--"]`.
pub fn args(report: &Path, deadline: Duration) -> Vec<OsString> {
    vec![
        REAP_ARG.into(),
        report.as_os_str().to_owned(),
        deadline.as_millis().to_string().into(),
        "--".into(),
    ]
}

/// The reaper itself: `args` are what follows [`REAP_ARG`] on the command line (`REPORT
/// DEADLINE_MS -- COMMAND...`). Returns the reaper's exit code: 0 when the report was
/// written (whatever the command did, including not starting), 2 for bad arguments,
/// [`NO_SPACE`] (4) when the report could not be written because its filesystem is full,
/// 3 for other failures (a message on stderr says which). It never panics.
pub fn main(args: &[OsString]) -> i32 {
    let (report, deadline, command) = match parse(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            say(&format!("snapconf {REAP_ARG}: {e}"));
            return 2;
        }
    };
    if let Err(e) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
        say(&format!(
            "snapconf {REAP_ARG}: cannot become a child subreaper: {e}"
        ));
        return 3;
    }
    let Some((program, rest)) = command.split_first() else {
        say(&format!("snapconf {REAP_ARG}: no command"));
        return 2;
    };
    // Opened before the command starts: a tool that swaps the path for a link (it may sit
    // in a scratch the tool can write) cannot redirect the write.
    let report = match open_report(&report, true) {
        Ok(file) => (report, file),
        Err(e) => {
            say(&format!(
                "snapconf {REAP_ARG}: cannot open `{}`: {e}",
                report.display()
            ));
            return 3;
        }
    };
    let mut child = match std::process::Command::new(program)
        .args(rest)
        .process_group(0)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            let errno = e.raw_os_error().unwrap_or(libc_enoent());
            return write_report(report, format!("not-started {errno}\n"));
        }
    };
    let pid = Pid::from_child(&child);
    let reached = wait_or_orphaned(pid, Instant::now() + deadline);
    // The command's group goes first (as when no reaper runs), then whatever left it.
    let _ = kill_process_group(pid, Signal::KILL);
    let status = child.wait();
    let stragglers = kill_children(&[], Some(pid.as_raw_nonzero().get()));
    let first = match (reached, status) {
        (true, _) => "deadline".to_owned(),
        (false, Ok(s)) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(sig)) => format!("signal {sig}"),
            (None, None) => "exit 255".to_owned(),
        },
        (false, Err(e)) => {
            say(&format!(
                "snapconf {REAP_ARG}: cannot wait for the command: {e}"
            ));
            return 3;
        }
    };
    let mut text = first;
    text.push('\n');
    for s in stragglers {
        text.push_str(&s);
        text.push('\n');
    }
    write_report(report, text)
}

/// `ENOENT`, for a start failure that carries no `errno`.
fn libc_enoent() -> i32 {
    rustix::io::Errno::NOENT.raw_os_error()
}

/// Opens the report the caller made, for writing (`write`, truncated) or reading, never
/// through a symbolic link and never blocking (a FIFO swapped in); anything but a regular
/// file is refused. The report may lie in a directory the tool can write (a backend's
/// scratch in a filesystem view) while the reaper and the caller run outside that view:
/// following a link planted there would write or read the host.
fn open_report(path: &Path, write: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = std::fs::OpenOptions::new()
        .read(!write)
        .write(write)
        .custom_flags(flags.bits() as i32)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// Writes the report to the file opened at the start; the reaper's exit code (0;
/// [`NO_SPACE`] when the filesystem is full; else 3), with a message on stderr when it
/// fails.
fn write_report((report, mut file): (PathBuf, std::fs::File), text: String) -> i32 {
    use std::io::Write;
    match file
        .set_len(0)
        .and_then(|()| file.write_all(text.as_bytes()))
    {
        Ok(()) => 0,
        Err(e) => {
            say(&format!(
                "snapconf {REAP_ARG}: cannot write `{}`: {e}",
                report.display()
            ));
            if e.raw_os_error() == Some(rustix::io::Errno::NOSPC.raw_os_error()) {
                NO_SPACE
            } else {
                3
            }
        }
    }
}

/// Writes `message` and a newline to stderr, ignoring failures: `eprintln!` panics when
/// stderr cannot be written (a full filesystem under a capture file, a closed pipe), and a
/// reaper that panics reports nothing.
fn say(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{message}");
}

/// Waits for `pid` until `deadline`, and gives up early if this reaper's parent (the
/// `snapconf` that started it) dies: then the tool is ended at once instead of running on,
/// reparented, until its deadline. True if the tool was still running when the wait ended;
/// a failed wait (the child is gone already) counts as ended.
fn wait_or_orphaned(pid: Pid, deadline: Instant) -> bool {
    let parent = rustix::process::getppid();
    loop {
        let slice = (Instant::now() + Duration::from_secs(1)).min(deadline);
        match wait_exit(pid, slice) {
            Ok(false) | Err(_) => return false,
            Ok(true) if Instant::now() >= deadline => return true,
            Ok(true) if rustix::process::getppid() != parent => return true,
            Ok(true) => {}
        }
    }
}

type Parsed = (PathBuf, Duration, Vec<OsString>);

fn parse(args: &[OsString]) -> Result<Parsed, String> {
    let [report, ms, dashes, command @ ..] = args else {
        return Err("usage: REPORT DEADLINE_MS -- COMMAND...".into());
    };
    if dashes != "--" {
        return Err("expected `--` before the command".into());
    }
    let ms: u64 = ms
        .to_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad deadline `{}`", ms.to_string_lossy()))?;
    Ok((
        PathBuf::from(report),
        Duration::from_millis(ms),
        command.to_vec(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report swapped for a link or a FIFO is neither followed nor waited on, by the
    /// reader or the writer: the target is untouched.
    #[test]
    fn a_report_swapped_for_a_link_or_fifo_is_refused() {
        let t = tempfile::tempdir().expect("tempdir");
        let target = t.path().join("target");
        std::fs::write(&target, "exit 0\n").expect("target");
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&target, &link).expect("link");
        assert!(read_report(&link).is_none());
        assert!(open_report(&link, true).is_err());
        assert_eq!(std::fs::read(&target).expect("target"), b"exit 0\n");
        let fifo = t.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .expect("fifo");
        assert!(read_report(&fifo).is_none());
        assert!(open_report(&fifo, true).is_err());
    }

    #[test]
    fn reports_are_read_back_and_garbage_is_not() {
        let t = tempfile::tempdir().expect("tempdir");
        let p = t.path().join("r");
        std::fs::write(&p, "signal 9\n12 sleep 30\n").expect("write");
        let r = read_report(&p).expect("a report");
        assert_eq!(r.ended, Ended::Signal(9));
        assert_eq!(r.stragglers, ["12 sleep 30"]);
        std::fs::write(&p, "deadline\n").expect("write");
        assert_eq!(read_report(&p).map(|r| r.ended), Some(Ended::Deadline));
        std::fs::write(&p, "exit x\n").expect("write");
        assert!(read_report(&p).is_none());
        assert!(read_report(&t.path().join("missing")).is_none());
    }

    #[test]
    fn arguments_are_checked() {
        let a = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(parse(&a(&["r", "10", "--", "true"])).is_ok());
        assert!(parse(&a(&["r", "ten", "--", "true"])).is_err());
        assert!(parse(&a(&["r", "10", "true"])).is_err());
        assert!(parse(&a(&["r"])).is_err());
    }
}
