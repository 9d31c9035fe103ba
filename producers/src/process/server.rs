//! A persistent extractor server: one long-lived process (in the fuzzer's filesystem view)
//! that runs many hydrations, one request at a time, instead of one process per archive.
//!
//! Why: starting `bwrap` and an interpreter per archive costs more than most extractions
//! (a `python3` start is tens of milliseconds). A server pays for that once: the Python one
//! (`scripts/serve_python.py`) imports `tarfile` once and forks a child per archive that
//! runs the adapter's own script; the reference's (`snapconf serve-hydrate`) runs the same
//! code as `snapconf hydrate` for each request.
//!
//! Protocol, one line each way: a request is the tool's arguments, each hex-encoded and
//! separated by spaces; the answer is `exit N` or `signal N`, optionally followed by
//! `cov=IDS`, the code the request ran ([`crate::coverage`], kept for
//! [`Server::take_coverage`]); an answer line longer than [`MAX_ANSWER`] is a broken server.
//! What the tool prints goes to the server's stderr, a
//! pipe drained into a capped capture ([`crate::process::capture`]: 16 MiB kept, the rest
//! counted) that this side clears before each request, so that a refusal's message holds
//! that request's stderr only. The server runs in the scratch directory it was started
//! with (unless the command sets a working directory).
//!
//! The caller enforces each request's timeout: a server that does not answer in time is
//! killed (SIGKILL to its process group: with `bwrap`, its whole PID namespace) and the
//! request is a [`Outcome::Hang`] reading as a one-shot run's timeout does; a server that
//! dies mid-request makes that request a hang too. A dead server is not restarted here;
//! [`Server::alive`] tells the caller to start a new one.

use crate::adapter::{Outcome, ToolError};
use crate::process::capture::Capture;
use crate::process::run::{classify, render_command, wait_exit, RunEnd};
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::process::{kill_process_group, Pid, Signal};
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The embedded Python server (see the module docs).
pub const SERVE_PYTHON_PY: &str = include_str!("../../scripts/serve_python.py");

/// The longest answer line read, in bytes (room for some 130,000 coverage ids); a longer one is
/// an unexpected answer.
pub const MAX_ANSWER: usize = 1 << 20;

/// How long a server may take to end after its stdin is closed before it is killed.
const END_GRACE: Duration = Duration::from_millis(200);

/// One running server; killed (its whole process group) when dropped.
#[derive(Debug)]
pub struct Server {
    child: Option<Child>,
    pid: Pid,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    buf: Vec<u8>,
    capture: Capture,
    rendered: String,
    coverage: Option<Vec<u32>>,
}

impl Server {
    /// Start `cmd` as a server, through this thread's filesystem view when one is set
    /// ([`crate::process::view::with_view`]), in a process group of its own, its stderr
    /// going to a capped capture (see the module docs), with `scratch` as its working
    /// directory unless `cmd` sets one.
    ///
    /// # Errors
    /// [`ToolError::Spawn`] naming the command if it cannot be started, [`ToolError::Io`]
    /// if the stderr pipe cannot be made.
    pub fn start(cmd: &mut Command, scratch: &Path) -> Result<Server, ToolError> {
        let rendered = render_command(cmd);
        if cmd.get_current_dir().is_none() {
            cmd.current_dir(scratch);
        }
        let prefix = crate::process::limits::prefix(None);
        let mut wrapped = crate::process::limits::wrap(cmd, &prefix);
        let cmd = wrapped.as_mut().unwrap_or(cmd);
        let io_err = |context: String| move |source| ToolError::Io { context, source };
        let (capture, for_child) =
            Capture::stderr().map_err(io_err("creating a pipe for the stderr".to_owned()))?;
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(for_child)
            .process_group(0);
        let spawned = cmd.spawn();
        // Drop this side's copy of the pipe's write end (`cmd` holds it).
        cmd.stderr(Stdio::null());
        let mut child = spawned.map_err(|source| ToolError::Spawn {
            command: rendered.clone(),
            source,
        })?;
        Ok(Server {
            pid: Pid::from_child(&child),
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            child: Some(child),
            buf: Vec::new(),
            capture,
            rendered,
            coverage: None,
        })
    }

    /// The coverage ids the last request's answer carried ([`crate::coverage`]), taken
    /// (a second call returns `None`); `None` when it carried none.
    pub fn take_coverage(&mut self) -> Option<Vec<u32>> {
        self.coverage.take()
    }

    /// Keep `ids` as the coverage of the last request (for a protocol that reads them
    /// from its own answers, [`crate::backend`]'s worker).
    pub fn note_coverage(&mut self, ids: Option<Vec<u32>>) {
        self.coverage = ids;
    }

    /// False once the server has died, been killed or failed to answer a request.
    pub fn alive(&self) -> bool {
        self.child.is_some()
    }

    /// Whether the server still runs: [`Server::alive`], and its process has not exited
    /// since (one that died while it waited for a request, say; it is then killed and
    /// reaped here, and [`Server::alive`] is false from now on).
    pub fn running(&mut self) -> bool {
        match self.child.as_mut().map(Child::try_wait) {
            Some(Ok(None)) => true,
            Some(_) => {
                self.kill();
                false
            }
            None => false,
        }
    }

    /// Run one request: `args` are the tool's arguments; `shown` is the one-shot command
    /// the request stands for (messages name it, so that outcomes read as
    /// [`crate::process::run::run_limited`]'s). Waits at most `timeout` for the answer.
    ///
    /// # Errors
    /// [`ToolError::Io`] when the server is not running ([`Server::alive`] is false) or the
    /// capture cannot be read; a server that dies or hangs is an outcome, not an error.
    pub fn request(
        &mut self,
        shown: &Command,
        args: &[&OsStr],
        timeout: Duration,
    ) -> Result<Outcome, ToolError> {
        let rendered = render_command(shown);
        let mut line = String::new();
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                line.push(' ');
            }
            crate::exclusion::push_hex(&mut line, a.as_bytes());
        }
        line.push('\n');
        let ended = match self.exchange(line.as_bytes(), timeout)? {
            Exchange::Line(reply) => match parse_reply(&reply) {
                Some((status, coverage)) => {
                    self.coverage = coverage;
                    RunEnd::Status(status)
                }
                None => {
                    self.stop();
                    return Err(ToolError::Io {
                        context: format!("asking the server `{}`", self.rendered),
                        source: std::io::Error::other(format!(
                            "unexpected answer `{}`",
                            String::from_utf8_lossy(&reply)
                        )),
                    });
                }
            },
            Exchange::TimedOut => RunEnd::TimedOut,
            // The server died with the request (`bwrap` exits 128 + the signal that
            // ended what it ran): the request's process died with it, whatever killed it.
            Exchange::Gone(status) => {
                let how = status.map_or_else(|| "is gone".to_owned(), |s| format!("ended ({s})"));
                let message = format!("`{rendered}` never answered: its server {how}");
                return Ok(Outcome::Hang { message });
            }
        };
        Ok(classify(&rendered, timeout, ended, &self.capture))
    }

    /// Send one request `line` (which must end with a newline; any protocol) and wait at
    /// most `timeout` for one answer line (at most [`MAX_ANSWER`] bytes; a longer one is
    /// returned as it is, for the caller to refuse). The stderr capture is cleared first,
    /// so [`Server::stderr`] then holds this request's. A server that does not answer in
    /// time, or dies, is killed (its whole process group) and reaped: [`Server::alive`] is
    /// false after [`Exchange::TimedOut`] and [`Exchange::Gone`].
    ///
    /// # Errors
    /// [`ToolError::Io`] when the server is not running ([`Server::alive`] is false).
    pub fn exchange(&mut self, line: &[u8], timeout: Duration) -> Result<Exchange, ToolError> {
        if !self.alive() {
            return Err(ToolError::Io {
                context: format!("asking the server `{}`", self.rendered),
                source: std::io::Error::other("the server is not running"),
            });
        }
        self.capture.clear();
        self.coverage = None;
        let sent = match self.stdin.as_mut() {
            Some(s) => s.write_all(line).and_then(|()| s.flush()).is_ok(),
            None => false,
        };
        let answer = if sent {
            self.answer(Instant::now() + timeout)
        } else {
            Answer::Gone
        };
        Ok(match answer {
            Answer::Line(reply) => Exchange::Line(reply),
            Answer::TimedOut => {
                self.kill();
                Exchange::TimedOut
            }
            Answer::Gone => Exchange::Gone(self.kill()),
        })
    }

    /// Kills the server's process group now (after an answer the caller refuses).
    pub fn stop(&mut self) {
        self.kill();
    }

    /// The last `max` bytes of the server's stderr since the last request began, lossily
    /// decoded.
    pub fn stderr_tail(&self, max: usize) -> String {
        self.capture.tail_text(max)
    }

    /// The server's command, rendered, for messages.
    pub fn rendered(&self) -> &str {
        &self.rendered
    }

    /// The server's stderr since the last request began, lossily decoded (for messages
    /// about a server that failed).
    pub fn stderr(&mut self) -> String {
        let (s, dropped) = self.capture.bytes();
        let mut text = String::from_utf8_lossy(&s).into_owned();
        if dropped > 0 {
            text.push_str(&format!(" [{dropped} bytes dropped]"));
        }
        text
    }

    /// Reads the answer line, until `deadline`.
    fn answer(&mut self, deadline: Instant) -> Answer {
        let Some(out) = self.stdout.as_mut() else {
            return Answer::Gone;
        };
        loop {
            if let Some(end) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=end).collect();
                return Answer::Line(line[..end].to_vec());
            }
            if self.buf.len() > MAX_ANSWER {
                return Answer::Line(std::mem::take(&mut self.buf));
            }
            let now = Instant::now();
            if now >= deadline {
                return Answer::TimedOut;
            }
            let left = Timespec::try_from(deadline - now).unwrap_or(Timespec {
                tv_sec: i64::MAX,
                tv_nsec: 0,
            });
            let mut fds = [PollFd::new(&*out, PollFlags::IN)];
            match poll(&mut fds, Some(&left)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => continue,
                Ok(_) => {}
                Err(_) => return Answer::Gone,
            }
            let mut chunk = [0u8; 256];
            match out.read(&mut chunk) {
                Ok(0) => return Answer::Gone,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Answer::Gone,
            }
        }
    }

    /// Kills the server's process group and reaps it; its exit status if it was running.
    fn kill(&mut self) -> Option<ExitStatus> {
        self.stdin = None;
        self.stdout = None;
        let mut child = self.child.take()?;
        let _ = kill_process_group(self.pid, Signal::KILL);
        child.wait().ok()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // End of stdin ends a server that is waiting for a request; one that is not gets
        // SIGKILL. Either way its whole group is killed before it is reaped.
        self.stdin = None;
        if self.child.is_some() {
            let _ = wait_exit(self.pid, Instant::now() + END_GRACE);
        }
        self.kill();
    }
}

/// What came back for one [`Server::exchange`].
#[derive(Debug)]
pub enum Exchange {
    /// The answer line, without its newline.
    Line(Vec<u8>),
    /// No answer within the timeout; the server was killed.
    TimedOut,
    /// The server died (or closed its stdout) before answering; its exit status if it
    /// could be read. It was killed and reaped.
    Gone(Option<ExitStatus>),
}

/// What came back for a request.
enum Answer {
    Line(Vec<u8>),
    TimedOut,
    Gone,
}

/// `exit N` or `signal N` as an exit status, and the coverage ids of a `cov=IDS` after it.
fn parse_reply(line: &[u8]) -> Option<(ExitStatus, Option<Vec<u32>>)> {
    let text = std::str::from_utf8(line).ok()?;
    let mut words = text.split_ascii_whitespace();
    let (what, n) = (words.next()?, words.next()?);
    let coverage = match words.next() {
        None => None,
        Some(w) => Some(crate::coverage::parse_ids(w.strip_prefix("cov=")?)?),
    };
    if words.next().is_some() {
        return None;
    }
    let n: i32 = n.parse().ok()?;
    let status = match what {
        "exit" => ExitStatus::from_raw((n & 0xff) << 8),
        "signal" => ExitStatus::from_raw(n & 0x7f),
        _ => return None,
    };
    Some((status, coverage))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer may end with `cov=IDS`; anything else after the status is not an answer.
    #[test]
    fn answers_read_their_coverage() {
        let (status, cov) = parse_reply(b"exit 3 cov=0000000a000000ff").expect("an answer");
        assert_eq!((status.code(), cov), (Some(3), Some(vec![10, 255])));
        assert_eq!(parse_reply(b"signal 9").map(|r| r.1), Some(None));
        assert!(parse_reply(b"exit 0 cov=0a").is_none());
        assert!(parse_reply(b"exit 0 more").is_none());
        assert!(parse_reply(b"exit 0 cov= x").is_none());
    }

    /// A server answers requests in order; a request it does not answer in time is a hang
    /// that kills it; a server that dies mid-request makes that request a hang.
    #[test]
    fn requests_are_answered_and_a_wedged_or_dead_server_is_a_hang() {
        let dir = tempfile::tempdir().expect("tempdir");
        // The arguments arrive hex-encoded: `ok`, `no`, `hang`, `die`.
        let script = r#"
while read -r line; do
  case "$line" in
    6f6b) echo "exit 0";;
    6e6f) echo "why not" >&2; echo "exit 3";;
    68616e67) sleep 30;;
    646965) kill -9 $$;;
  esac
done
"#;
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(script);
        let shown = Command::new("tool");
        let t = Duration::from_secs(10);
        let mut s = Server::start(&mut cmd, dir.path()).expect("starts");
        let r = |s: &mut Server, a: &str, t| s.request(&shown, &[OsStr::new(a)], t);
        assert!(matches!(r(&mut s, "ok", t), Ok(Outcome::Success)));
        match r(&mut s, "no", t) {
            Ok(Outcome::Refused { message }) => {
                assert_eq!(message, "`tool` exited with status 3: why not")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(r(&mut s, "ok", t), Ok(Outcome::Success)));
        let began = Instant::now();
        match r(&mut s, "hang", Duration::from_millis(300)) {
            Ok(Outcome::Hang { message }) => assert!(message.contains("300 ms"), "{message}"),
            other => panic!("{other:?}"),
        }
        assert!(began.elapsed() < Duration::from_secs(10));
        assert!(!s.alive());
        assert!(
            r(&mut s, "ok", t).is_err(),
            "a dead server takes no request"
        );
        let mut s = Server::start(&mut cmd, dir.path()).expect("starts again");
        assert!(matches!(r(&mut s, "die", t), Ok(Outcome::Hang { .. })));
        assert!(!s.alive());
    }
}
