//! Running an external tool under a timeout, and probing its version.
//!
//! Every tool runs in a process group of its own, with the request's scratch directory as
//! its working directory (unless the caller chose one: a tool's writes to `.` never land in
//! the user's cwd), stdin from `/dev/null`, and stdout and stderr captured through pipes
//! drained by threads that keep a bounded head and tail ([`crate::process::capture`]: a tool
//! printing gigabytes neither fills the scratch dir nor blocks against us). We poll for its exit with `waitid(WNOWAIT)`, which
//! leaves the leader a zombie: while it is unreaped its pid, and so the process-group id,
//! cannot be reused, so killing the group afterwards can never hit an unrelated process.
//! After the leader ends (or the timeout passes) the whole group gets `SIGKILL`, so no
//! background child of the tool outlives the run.

use crate::adapter::{Availability, Outcome, ToolError};
use crate::process::capture::{Capture, STDOUT_LISTING_BYTES};
use crate::process::limits::ToolLimits;
use rustix::process::{kill_process_group, waitid, Pid, Signal, WaitId, WaitIdOptions};
use std::ffi::OsStr;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How much of the tail of a tool's stderr a refusal keeps as evidence, in bytes.
pub const STDERR_TAIL_BYTES: usize = 2048;

/// The longest wait between two polls for the tool's exit.
const MAX_POLL: Duration = Duration::from_millis(20);

/// Render a command line for messages: program and arguments separated by spaces, bytes that
/// are not UTF-8 shown as U+FFFD. For humans only; never parsed back.
///
/// An inline script (an argument holding a newline, such as the Python adapters'
/// `-c SCRIPT`) is shown as `<script: N lines>` so that messages stay one line long.
pub fn render_command(cmd: &Command) -> String {
    let mut out = cmd.get_program().to_string_lossy().into_owned();
    for arg in cmd.get_args() {
        out.push(' ');
        let text = arg.to_string_lossy();
        if text.contains('\n') {
            out.push_str(&format!("<script: {} lines>", text.lines().count()));
        } else {
            out.push_str(&text);
        }
    }
    out
}

/// Run `cmd` to completion or until `timeout` (wall clock) passes.
///
/// The tool runs in `scratch` (its working directory, unless `cmd` sets one). stdout is
/// drained and discarded; stderr is captured through a pipe, keeping at most
/// [`crate::process::capture::STDERR_HEAD_BYTES`] of its head and
/// [`crate::process::capture::STDERR_TAIL_BYTES_KEPT`] of its tail (16 MiB in all), and
/// nothing is written to `scratch` for it; stdin is `/dev/null`. The child starts a new process group
/// (`process_group(0)`), and that whole group is killed with `SIGKILL` once the child has
/// ended or timed out, so nothing is left behind.
///
/// # Outcomes
/// - exit 0 → [`Outcome::Success`];
/// - exit ≠ 0 → [`Outcome::Refused`] with the exit code and the last
///   [`STDERR_TAIL_BYTES`] of stderr, followed by ` [N bytes dropped]` when stderr was
///   longer than the capture keeps;
/// - death by a signal → [`Outcome::Hang`] naming the signal;
/// - still running at `timeout` → [`Outcome::Hang`] naming the command and the timeout.
///
/// # Errors
/// [`ToolError::Spawn`] if the program could not be started (e.g. not installed), naming the
/// command; [`ToolError::Io`] if the pipes could not be made or the wait failed.
pub fn run_with_timeout(
    cmd: &mut Command,
    scratch: &Path,
    timeout: Duration,
) -> Result<Outcome, ToolError> {
    run_limited(cmd, scratch, timeout, None)
}

/// [`run_with_timeout`] for a tool whose answer is what it prints (a listing): the outcome
/// and the bytes the tool wrote to stdout, as far as it got (whatever the outcome). At most
/// [`STDOUT_LISTING_BYTES`] (64 MiB) of stdout are kept: a tool that prints more is
/// [`Outcome::Refused`] (`… printed more than 67108864 bytes on stdout [N bytes dropped]`),
/// since a cut listing would be read as a wrong one, and the first 64 MiB come back.
///
/// # Errors
/// As [`run_with_timeout`].
pub fn run_with_timeout_capturing_stdout(
    cmd: &mut Command,
    scratch: &Path,
    timeout: Duration,
) -> Result<(Outcome, Vec<u8>), ToolError> {
    let rendered = render_command(cmd);
    let (outcome, stdout) = run_captured(cmd, scratch, timeout, None, STDOUT_LISTING_BYTES)?;
    let (out, dropped) = stdout.bytes();
    let outcome = match outcome {
        Outcome::Success if dropped > 0 => Outcome::Refused {
            message: format!(
                "`{rendered}` printed more than {STDOUT_LISTING_BYTES} bytes on stdout [{dropped} bytes dropped]"
            ),
        },
        other => other,
    };
    Ok((outcome, out))
}

/// [`run_with_timeout`] under fault `limits` (see [`crate::process::limits`]): the command is run
/// through `prlimit --fsize=N --` when `limits.fsize` is set, and its process group is
/// killed with `SIGKILL` when `limits.kill_after` passes (an [`Outcome::Hang`] saying it was
/// a fault-injection kill). Every command also runs in a private mount namespace when
/// [`crate::process::limits::set_private_mounts`] turned that on. Messages name `cmd` as given,
/// without the prefix.
///
/// # Errors
/// As [`run_with_timeout`].
pub fn run_limited(
    cmd: &mut Command,
    scratch: &Path,
    timeout: Duration,
    limits: Option<&ToolLimits>,
) -> Result<Outcome, ToolError> {
    run_captured(cmd, scratch, timeout, limits, 0).map(|(outcome, _stdout)| outcome)
}

/// The one implementation of [`run_limited`] and its siblings: the outcome, and the capture
/// of the tool's stdout (keeping its first `stdout_max` bytes).
fn run_captured(
    cmd: &mut Command,
    scratch: &Path,
    timeout: Duration,
    limits: Option<&ToolLimits>,
    stdout_max: usize,
) -> Result<(Outcome, Capture), ToolError> {
    let rendered = render_command(cmd);
    if cmd.get_current_dir().is_none() {
        cmd.current_dir(scratch);
    }
    let kill_after = limits.and_then(|l| l.kill_after).filter(|k| *k < timeout);
    let deadline = kill_after.unwrap_or(timeout);
    let io_err = |context: String| move |source| ToolError::Io { context, source };
    let mut prefix = crate::process::limits::prefix(limits);
    // A step of its own reaper, outermost (around a filesystem view's `bwrap` too): it
    // enforces the deadline, names the stragglers and reaps whatever the step's processes
    // leave (bwrap's own exited children are reparented to it, not left as zombies of
    // this process, which would run out of process ids within minutes of fuzzing).
    let reaper = match crate::process::reaper::program() {
        Some(program) => {
            // A file with no name (`O_TMPFILE`), handed to the reaper as its stdin: nothing
            // the tool can reach by a path (see [`crate::process::reaper::args`]).
            let report = tempfile::tempfile_in(scratch).map_err(|source| ToolError::Io {
                context: no_space_note(
                    &source,
                    scratch,
                    format!("creating a reaper report in `{}`", scratch.display()),
                ),
                source,
            })?;
            let mut p = vec![program.as_os_str().to_owned()];
            p.extend(crate::process::reaper::args(deadline));
            p.append(&mut prefix);
            prefix = p;
            Some(report)
        }
        _ => None,
    };
    let mut wrapped = crate::process::limits::wrap(cmd, &prefix);
    let cmd = wrapped.as_mut().unwrap_or(cmd);
    let (stdout, stdout_for_child) = Capture::start(stdout_max, 0)
        .map_err(io_err("creating a pipe for the stdout".to_owned()))?;
    let (stderr, stderr_for_child) =
        Capture::stderr().map_err(io_err("creating a pipe for the stderr".to_owned()))?;

    let stdin = match &reaper {
        Some(report) => Stdio::from(
            report
                .try_clone()
                .map_err(io_err("handing the reaper its report".to_owned()))?,
        ),
        None => Stdio::null(),
    };
    cmd.stdin(stdin)
        .stdout(stdout_for_child)
        .stderr(stderr_for_child)
        .process_group(0);
    let spawned = cmd.spawn();
    // `cmd` holds the pipes' write ends until told otherwise: drop them, so that the
    // captures see end of file once the tool's processes are gone.
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = spawned.map_err(|source| ToolError::Spawn {
        command: rendered.clone(),
        source,
    })?;
    let pid = Pid::from_child(&child);
    // The reaper ends the tool at the deadline itself; it is given a grace period first.
    let wait_for = if reaper.is_some() {
        deadline + crate::process::reaper::GRACE
    } else {
        deadline
    };

    let mut timed_out = match wait_exit(pid, Instant::now() + wait_for) {
        Ok(timed_out) => timed_out,
        Err(e) => {
            kill_group(pid);
            let _ = child.wait();
            return Err(ToolError::Io {
                context: format!("waiting for `{rendered}`"),
                source: e.into(),
            });
        }
    };

    // Kill the whole group: on timeout that is the point; after a normal exit it removes any
    // background process the tool left.
    kill_group(pid);
    let mut status = child
        .wait()
        .map_err(io_err(format!("reaping `{rendered}`")))?;

    if let Some(report) = &reaper {
        match crate::process::reaper::read_report(report) {
            Some(report) => {
                crate::process::stragglers::hand_over(report.stragglers);
                use crate::process::reaper::Ended;
                match report.ended {
                    Ended::Exit(code) => status = ExitStatus::from_raw((code & 0xff) << 8),
                    Ended::Signal(sig) => status = ExitStatus::from_raw(sig & 0x7f),
                    Ended::Deadline => timed_out = true,
                    Ended::NotStarted(errno) => {
                        return Err(ToolError::Spawn {
                            command: rendered,
                            source: std::io::Error::from_raw_os_error(errno),
                        })
                    }
                }
            }
            None if timed_out => {}
            None if status.code() == Some(crate::process::reaper::NO_SPACE) => {
                return Err(ToolError::Io {
                    context: format!(
                        "{}: the reaper of `{rendered}` could not write its report in `{}`",
                        crate::process::full_filesystem(scratch),
                        scratch.display()
                    ),
                    source: std::io::Error::from_raw_os_error(
                        rustix::io::Errno::NOSPC.raw_os_error(),
                    ),
                });
            }
            None => {
                let tail = stderr.tail_text(STDERR_TAIL_BYTES);
                return Err(ToolError::Io {
                    context: format!("running `{rendered}` under its reaper ({status})"),
                    source: std::io::Error::other(tail.trim_end().to_owned()),
                });
            }
        }
    }

    if timed_out {
        if let Some(k) = kill_after {
            let message = format!(
                "`{rendered}` was killed (SIGKILL to its process group) after {} ms by fault injection",
                k.as_millis()
            );
            return Ok((Outcome::Hang { message }, stdout));
        }
    }
    let ended = if timed_out {
        RunEnd::TimedOut
    } else {
        RunEnd::Status(status)
    };
    let outcome = classify(&rendered, timeout, ended, &stderr);
    Ok((outcome, stdout))
}

/// `context`, preceded by what [`crate::process::full_filesystem`] says of `dir`'s
/// filesystem when `e` is `ENOSPC`.
fn no_space_note(e: &std::io::Error, dir: &Path, context: String) -> String {
    if crate::process::is_no_space(e) {
        format!("{}: {context}", crate::process::full_filesystem(dir))
    } else {
        context
    }
}

/// How a tool's run ended, for [`classify`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum RunEnd {
    /// It was still running at its timeout (and was killed).
    TimedOut,
    /// It ended with this status.
    Status(ExitStatus),
}

/// The [`Outcome`] of a run of the command shown as `rendered` that `ended` so, with its
/// stderr in `stderr`: the one mapping of exits, signals and timeouts to outcomes, shared
/// by one-shot runs ([`run_limited`]) and requests to a persistent server
/// ([`crate::process::server`]), so that both read alike.
pub(crate) fn classify(
    rendered: &str,
    timeout: Duration,
    ended: RunEnd,
    stderr: &Capture,
) -> Outcome {
    let status = match ended {
        RunEnd::TimedOut => {
            let message = format!(
                "`{rendered}` did not finish within {} ms; its process group was killed",
                timeout.as_millis()
            );
            return Outcome::Hang { message };
        }
        RunEnd::Status(status) => status,
    };
    if let Some(signal) = status.signal() {
        let message = format!(
            "`{rendered}` died of signal {signal} ({})",
            signal_name(signal)
        );
        return Outcome::Hang { message };
    }
    match status.code() {
        Some(0) => Outcome::Success,
        code => {
            let tail = stderr.tail_text(STDERR_TAIL_BYTES);
            let code = code.map_or_else(|| "unknown".to_owned(), |c| c.to_string());
            Outcome::Refused {
                message: format!(
                    "`{rendered}` exited with status {code}: {}",
                    tail.trim_end()
                ),
            }
        }
    }
}

/// Waits until the child `pid` has exited or `deadline` has passed, without reaping it
/// (`waitid(WNOWAIT)`: while it is an unreaped zombie its pid, and so its process-group id,
/// cannot be reused); true if the deadline came first.
///
/// Blocks on a pidfd (`pidfd_open(2)`, Linux 5.3) with `poll(2)`, so an exit is seen at
/// once; where pidfds are not available, polls `waitid(WNOHANG)` with a backoff of at most
/// 20 ms.
///
/// # Errors
/// The `errno` of a failed `waitid` (`ECHILD`: not a child of this process).
pub(crate) fn wait_exit(pid: Pid, deadline: Instant) -> Result<bool, rustix::io::Errno> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let exited = || loop {
        match waitid(
            WaitId::Pid(pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT,
        ) {
            Ok(found) => return Ok(found.is_some()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e),
        }
    };
    let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok();
    let mut pause = Duration::from_millis(1);
    loop {
        if exited()? {
            return Ok(false);
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(true);
        }
        let left = deadline - now;
        match &pidfd {
            Some(fd) => {
                let mut fds = [PollFd::new(fd, PollFlags::IN)];
                let timeout = Timespec::try_from(left).unwrap_or(Timespec {
                    tv_sec: i64::MAX,
                    tv_nsec: 0,
                });
                match poll(&mut fds, Some(&timeout)) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(_) => std::thread::sleep(pause.min(left)),
                }
            }
            None => {
                std::thread::sleep(pause.min(left));
                pause = (pause * 2).min(MAX_POLL);
            }
        }
    }
}

/// `SIGKILL` the process group led by `pid`; `ESRCH` (group already gone) is fine.
fn kill_group(pid: Pid) {
    let _ = kill_process_group(pid, Signal::KILL);
}

/// A conventional name for the common signals, for messages.
fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        _ => "other signal",
    }
}

/// Probe a tool's version by running `program args…` (stdin null, 10 s limit) and taking the
/// first non-empty line of its stdout (or stderr, if stdout is empty).
///
/// Returns [`Availability::Unavailable`] with `install_hint` (e.g. `apt-get install tar`)
/// when the program cannot be started, exits non-zero, or prints nothing. `program` is a name
/// looked up on `PATH` or a path.
pub fn probe_version(
    program: impl AsRef<OsStr>,
    args: &[&str],
    install_hint: &str,
) -> Availability {
    let program = program.as_ref();
    let name = program.to_string_lossy();
    let unavailable = |reason: String| Availability::Unavailable {
        reason,
        install_hint: install_hint.to_owned(),
    };
    let scratch = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => return unavailable(format!("creating a scratch dir to probe `{name}`: {e}")),
    };
    let mut cmd = Command::new(program);
    cmd.args(args.iter().map(OsStr::new));
    match probe_run(&mut cmd, scratch.path()) {
        Ok(text) => match first_line(&text) {
            Some(line) => Availability::Available { version: line },
            None => unavailable(format!("`{name}` printed no version")),
        },
        Err(reason) => unavailable(reason),
    }
}

/// The most of a version probe's stdout and of its stderr that is kept, in bytes.
const PROBE_KEEP_BYTES: usize = 64 << 10;

/// Run a probe (in `scratch`) and return its stdout, or its stderr if stdout is empty; at
/// most [`PROBE_KEEP_BYTES`] of each are kept.
fn probe_run(cmd: &mut Command, scratch: &Path) -> Result<String, String> {
    let rendered = render_command(cmd);
    let (out, err) = match (
        Capture::start(PROBE_KEEP_BYTES, 0),
        Capture::start(PROBE_KEEP_BYTES, 0),
    ) {
        (Ok(o), Ok(e)) => (o, e),
        _ => return Err(format!("creating pipes to probe `{rendered}`")),
    };
    cmd.stdin(Stdio::null())
        .stdout(out.1)
        .stderr(err.1)
        .current_dir(scratch)
        .process_group(0);
    let spawned = cmd.spawn();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = spawned.map_err(|e| format!("could not start `{rendered}`: {e}"))?;
    let pid = Pid::from_child(&child);
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < Duration::from_secs(10) => std::thread::sleep(MAX_POLL),
            _ => {
                kill_group(pid);
                let _ = child.wait();
                return Err(format!("`{rendered}` did not answer within 10 s"));
            }
        }
    };
    kill_group(pid);
    if !status.success() {
        return Err(format!("`{rendered}` failed: {status}"));
    }
    let stdout = out.0.bytes().0;
    let text = if stdout.iter().all(u8::is_ascii_whitespace) {
        err.0.bytes().0
    } else {
        stdout
    };
    Ok(String::from_utf8_lossy(&text).into_owned())
}

/// The first non-empty line of `text`, trimmed.
fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_scripts_are_abbreviated_in_rendered_commands() {
        let mut cmd = Command::new("python3");
        cmd.args(["-I", "-c", "import sys\nprint(1)\n", "a b"]);
        assert_eq!(render_command(&cmd), "python3 -I -c <script: 2 lines> a b");
    }

    /// What a tool printed comes back with its outcome, a refusal's included, and a missing
    /// program is a spawn error (not an outcome).
    #[test]
    fn stdout_is_captured_whatever_the_outcome() {
        let dir = tempfile::tempdir().expect("tempdir");
        let t = Duration::from_secs(10);
        let mut ok = Command::new("sh");
        ok.args(["-c", "printf 'a\\nb'"]);
        let (outcome, out) =
            run_with_timeout_capturing_stdout(&mut ok, dir.path(), t).expect("runs");
        assert!(matches!(outcome, Outcome::Success), "{outcome:?}");
        assert_eq!(out, b"a\nb");
        let mut refused = Command::new("sh");
        refused.args(["-c", "printf partial; echo why >&2; exit 3"]);
        let (outcome, out) =
            run_with_timeout_capturing_stdout(&mut refused, dir.path(), t).expect("runs");
        match outcome {
            Outcome::Refused { message } => assert!(message.contains("status 3: why"), "{message}"),
            other => panic!("a non-zero exit is a refusal: {other:?}"),
        }
        assert_eq!(out, b"partial");
        let mut missing = Command::new("snapconf-no-such-program");
        assert!(matches!(
            run_with_timeout_capturing_stdout(&mut missing, dir.path(), t),
            Err(ToolError::Spawn { .. })
        ));
    }

    /// An exit is seen when it happens, not at the next poll: a tool of 50 ms, with a
    /// 10 s timeout, is done in well under a second (a generous bound for a loaded machine;
    /// the wait blocks on a pidfd), and a tool still running at its timeout is killed then.
    #[test]
    fn an_exit_is_seen_when_it_happens_and_a_timeout_when_it_comes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let started = Instant::now();
        let mut quick = Command::new("sh");
        quick.args(["-c", "sleep 0.05"]);
        let outcome =
            run_with_timeout(&mut quick, dir.path(), Duration::from_secs(10)).expect("runs");
        assert!(matches!(outcome, Outcome::Success), "{outcome:?}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let started = Instant::now();
        let mut slow = Command::new("sleep");
        slow.arg("30");
        let outcome =
            run_with_timeout(&mut slow, dir.path(), Duration::from_millis(300)).expect("runs");
        assert!(matches!(outcome, Outcome::Hang { .. }), "{outcome:?}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }

    /// A listing longer than [`STDOUT_LISTING_BYTES`] comes back cut at that length and
    /// refused, saying how many bytes were dropped; the tool ran in the scratch dir.
    #[test]
    fn a_flood_on_stdout_is_cut_and_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "head -c 70000000 /dev/zero; pwd > where"]);
        let (outcome, out) =
            run_with_timeout_capturing_stdout(&mut cmd, dir.path(), Duration::from_secs(60))
                .expect("runs");
        assert_eq!(out.len(), STDOUT_LISTING_BYTES);
        let dropped = 70_000_000 - STDOUT_LISTING_BYTES;
        match outcome {
            Outcome::Refused { message } => {
                assert!(
                    message.contains(&format!("[{dropped} bytes dropped]")),
                    "{message}"
                )
            }
            other => panic!("a cut listing is refused: {other:?}"),
        }
        assert!(
            dir.path().join("where").exists(),
            "it ran in the scratch dir"
        );
    }
}
