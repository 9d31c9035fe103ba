//! A subreaper of its own for each step: stragglers found and named per tool run, so that
//! steps running at the same time in different threads never blame each other's processes.
//!
//! A tool's orphaned descendants are reparented to the nearest ancestor that is a *child
//! subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`, Linux 3.4). When the `snapconf` binary turns
//! the reaper on ([`enable`]), every external command runs as
//! `snapconf __snapconf-reap DEADLINE_MS -- COMMAND...` with its report file as stdin: that
//! process (the *reaper*)
//! makes itself a subreaper, runs the command in a process group of its own, and kills it
//! at the deadline, or within a second of its own parent's death (a `snapconf` killed with
//! `SIGKILL` leaves no tool running on). Once the command has ended it kills the command's group (background
//! children, silently, as [`crate::process::run`] always did), then kills, reaps and names
//! every remaining descendant (processes that left the group with `setsid`, daemons), and
//! writes to its report how the command ended and one line per straggler. Its stragglers are
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

/// Reads a reaper's report back from `report`, the file its caller made and handed to it
/// as its stdin ([`args`]); `None` if its first line is not one the reaper writes (the
/// reaper itself was killed).
pub fn read_report(report: &std::fs::File) -> Option<Report> {
    use std::io::{Read, Seek};
    let mut text = String::new();
    let mut file = report;
    file.seek(std::io::SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
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

/// The reaper's arguments before the command: `[REAP_ARG, DEADLINE_MS, "--"]`. Its report
/// goes to its stdin, which the caller makes a regular file of its own, with no name a tool
/// could reach (`tempfile::tempfile_in`, read back with [`read_report`]): the report may
/// lie in a directory the tool can write (a backend's scratch in a filesystem view) while
/// the reaper and its caller run outside that view, and a name there could be swapped for
/// a link, a FIFO or a device node of the host between any two steps.
pub fn args(deadline: Duration) -> Vec<OsString> {
    vec![
        REAP_ARG.into(),
        deadline.as_millis().to_string().into(),
        "--".into(),
    ]
}

/// The reaper itself: `args` are what follows [`REAP_ARG`] on the command line
/// (`DEADLINE_MS -- COMMAND...`), its stdin the report file ([`args`]); the command gets
/// `/dev/null` as its stdin. Returns the reaper's exit code: 0 when the report was
/// written (whatever the command did, including not starting), 2 for bad arguments,
/// [`NO_SPACE`] (4) when the report could not be written because its filesystem is full,
/// 3 for other failures (a message on stderr says which, as when stdin is not a regular
/// file). It never panics.
pub fn main(args: &[OsString]) -> i32 {
    let (deadline, command) = match parse(args) {
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
    let report = match report_on_stdin() {
        Ok(file) => file,
        Err(e) => {
            say(&format!(
                "snapconf {REAP_ARG}: stdin is not a report file: {e}"
            ));
            return 3;
        }
    };
    let mut child = match std::process::Command::new(program)
        .args(rest)
        .stdin(std::process::Stdio::null())
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

/// This reaper's stdin as the report: a regular file (anything else is refused).
fn report_on_stdin() -> std::io::Result<std::fs::File> {
    use std::os::fd::AsFd;
    let file = std::fs::File::from(std::io::stdin().as_fd().try_clone_to_owned()?);
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// Writes the report (from its start) to `file`, this reaper's stdin; the reaper's exit
/// code (0; [`NO_SPACE`] when the filesystem is full; else 3), with a message on stderr
/// when it fails.
fn write_report(file: std::fs::File, text: String) -> i32 {
    use std::os::unix::fs::FileExt;
    match file
        .set_len(0)
        .and_then(|()| file.write_all_at(text.as_bytes(), 0))
    {
        Ok(()) => 0,
        Err(e) => {
            say(&format!(
                "snapconf {REAP_ARG}: cannot write the report: {e}"
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

type Parsed = (Duration, Vec<OsString>);

fn parse(args: &[OsString]) -> Result<Parsed, String> {
    let [ms, dashes, command @ ..] = args else {
        return Err("usage: DEADLINE_MS -- COMMAND... (the report file as stdin)".into());
    };
    if dashes != "--" {
        return Err("expected `--` before the command".into());
    }
    let ms: u64 = ms
        .to_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad deadline `{}`", ms.to_string_lossy()))?;
    Ok((Duration::from_millis(ms), command.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_read_back_and_garbage_is_not() {
        let f = tempfile::tempfile().expect("tempfile");
        let put = |text: &str| {
            use std::os::unix::fs::FileExt;
            f.set_len(0).expect("truncate");
            f.write_all_at(text.as_bytes(), 0).expect("write");
        };
        put("signal 9\n12 sleep 30\n");
        let r = read_report(&f).expect("a report");
        assert_eq!(r.ended, Ended::Signal(9));
        assert_eq!(r.stragglers, ["12 sleep 30"]);
        put("deadline\n");
        assert_eq!(read_report(&f).map(|r| r.ended), Some(Ended::Deadline));
        assert_eq!(
            read_report(&f).map(|r| r.ended),
            Some(Ended::Deadline),
            "read again from the start"
        );
        put("exit x\n");
        assert!(read_report(&f).is_none());
        put("");
        assert!(read_report(&f).is_none());
    }

    #[test]
    fn arguments_are_checked() {
        let a = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(parse(&a(&["10", "--", "true"])).is_ok());
        assert!(parse(&a(&["ten", "--", "true"])).is_err());
        assert!(parse(&a(&["10", "true"])).is_err());
        assert!(parse(&a(&["10"])).is_err());
    }
}
