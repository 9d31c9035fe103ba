//! The persistent worker: one long-lived process per backend, answering JSON lines.
//!
//! The worker starts lazily, at the first request, in a process group of its own, in a
//! private temporary directory as its working directory (removed when it ends; never the
//! user's cwd), with its stdin and stdout as pipes and its stderr captured through a pipe
//! (its first 8 MiB and last 8 MiB kept as evidence, the rest counted:
//! [`crate::process::capture`]).
//! Each request is one line ([`Request`]); the answer is one line ([`Response`]), read by a
//! helper thread so that a wait can time out.
//!
//! Failures of the worker itself are outcomes, with messages naming the command:
//! - no answer within the timeout: the group is killed, the outcome is
//!   [`Outcome::Hang`], and the next request starts a fresh worker;
//! - an answer with `"stalled":true` (the operation can never finish; the Node.js library
//!   tells it): [`Outcome::Hang`] at once, and the worker goes on;
//! - death while a request is open: a signal is [`Outcome::Hang`], an exit is
//!   [`Outcome::Refused`] with the status and the tail of stderr;
//! - an answer that is not a [`Response`] ("garbage"): the worker is killed and the request
//!   is [`Outcome::Refused`].
//!
//! After a death or garbage the worker is restarted once; if the restarted worker fails the
//! same way before it answers a request properly, it is marked unavailable and every later
//! request is refused at once, so the run goes on with the other pairs. Dropping the
//! [`Worker`] kills its process group; a worker must also exit when its stdin closes, which
//! covers snapconf itself being killed.
//!
//! Processes the worker leaves: every process it starts carries
//! `SNAPCONF_WORKER_TAG=<tag>` ([`crate::process::stragglers::WORKER_TAG_VAR`]) in its
//! environment, which `setsid` and reparenting keep. After each answered request, every
//! tagged process or descendant of the worker that left the worker's process group (a
//! `setsid` or daemonised child) is killed and handed to the step's straggler list
//! ([`crate::process::stragglers::reap_stragglers`]), so the step gets a `hang` finding;
//! when the worker is killed (timeout, death, garbage) everything tagged goes with it, also
//! reported for that step. At drop (the end of the run) whatever is left is killed and
//! named on stderr.

use super::protocol::{PathField, Request, Response};
use super::template::{CommandTemplate, Vars};
use crate::adapter::{Outcome, ToolError};
use crate::process::capture::Capture;
use crate::process::run::{render_command, STDERR_TAIL_BYTES};
use crate::process::server::{Exchange, Server};
use rustix::process::{kill_process_group, Pid, Signal};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

/// The longest answer line read, in bytes; a longer one is garbage.
const MAX_LINE: u64 = 1 << 20;
/// How many failures (deaths, garbage) make the worker unavailable.
const MAX_FAILURES: u32 = 2;

/// One backend's persistent worker. All requests are serialised through a mutex.
#[derive(Debug)]
pub struct Worker {
    name: String,
    template: CommandTemplate,
    env: BTreeMap<String, String>,
    dir: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    running: Option<Running>,
    /// Deaths and garbage answers so far.
    failures: u32,
    /// Set once the worker failed [`MAX_FAILURES`] times in a row; the reason.
    unavailable: Option<String>,
    /// How many times a worker process was started (for tests and reports).
    starts: u64,
    /// The first [`MAX_INCIDENTS`] failure messages (timeouts, deaths, garbage).
    incidents: Vec<String>,
}

/// How many failure messages a worker keeps for the end-of-run summary.
const MAX_INCIDENTS: usize = 10;

impl State {
    fn note(&mut self, message: &str) {
        if self.incidents.len() < MAX_INCIDENTS {
            self.incidents.push(message.to_owned());
        }
    }
}

#[derive(Debug)]
struct Running {
    child: Child,
    pid: Pid,
    stdin: ChildStdin,
    lines: Receiver<std::io::Result<Vec<u8>>>,
    stderr: Capture,
    /// The value of [`crate::process::stragglers::WORKER_TAG_VAR`] its processes carry.
    tag: String,
    /// The worker's working directory, removed after it is killed.
    _cwd: tempfile::TempDir,
}

impl Running {
    /// Kill the whole group and every process the worker left (tagged or descended),
    /// reap the leader; the status, if it could be read, and one line per other process
    /// killed that had left the group (`PID COMMAND LINE`).
    fn kill_all(mut self) -> (Option<std::process::ExitStatus>, Vec<String>) {
        let raw = self.pid.as_raw_nonzero().get();
        // Before the group is killed: what left it is told apart from its members.
        let left = crate::process::stragglers::kill_tagged(&self.tag, raw, Some(raw));
        let _ = kill_process_group(self.pid, Signal::KILL);
        // The leader is an unreaped zombie now at the latest, so its pid is not reused
        // while the tagged rest is looked for.
        let _ = crate::process::stragglers::kill_tagged(&self.tag, raw, None);
        let status = self.child.wait().ok();
        crate::process::stragglers::unregister_persistent(self.pid);
        (status, left)
    }

    /// [`Running::kill_all`], handing what the worker left to this thread's step
    /// ([`crate::process::stragglers::reap_stragglers`]: a `hang` finding); the status.
    fn kill(self) -> Option<std::process::ExitStatus> {
        let (status, left) = self.kill_all();
        crate::process::stragglers::hand_over(left);
        status
    }

    /// Kills every process the worker left outside its process group (it runs on), and
    /// hands them to this thread's step.
    fn reap_escaped(&self) {
        let raw = self.pid.as_raw_nonzero().get();
        let left = crate::process::stragglers::kill_tagged(&self.tag, raw, Some(raw));
        crate::process::stragglers::hand_over(left);
    }
}

impl Worker {
    /// A worker for backend `name` running `template` (only `{dir}` is meaningful in it) with
    /// `env` added to the environment. Nothing starts until the first request.
    pub fn new(
        name: &str,
        template: CommandTemplate,
        env: BTreeMap<String, String>,
        dir: &Path,
    ) -> Self {
        Worker {
            name: name.to_owned(),
            template,
            env,
            dir: dir.to_path_buf(),
            state: Mutex::new(State::default()),
        }
    }

    /// The worker command, rendered, for messages.
    pub fn rendered(&self) -> String {
        render_command(&self.command())
    }

    /// How many worker processes were started so far.
    pub fn starts(&self) -> u64 {
        self.lock().starts
    }

    /// The first few failure messages (timeouts, deaths, garbage answers), in order.
    pub fn incidents(&self) -> Vec<String> {
        self.lock().incidents.clone()
    }

    /// Why the worker was given up, if it was.
    pub fn unavailable(&self) -> Option<String> {
        self.lock().unavailable.clone()
    }

    /// The pid of the running worker process, if one is running (for tests).
    pub fn pid(&self) -> Option<u32> {
        self.lock().running.as_ref().map(|r| r.child.id())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves a state that is still consistent (at worst a
        // worker that will be killed), so poisoning is ignored.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The worker command as a [`std::process::Command`] (its `{dir}` filled in, the
    /// description's `[env]` added): what [`Worker`] starts, and what a fuzzer starts as a
    /// persistent server inside its own filesystem view ([`Worker::call_served`]).
    pub fn command(&self) -> std::process::Command {
        let empty = Path::new("");
        let vars = Vars {
            root: empty,
            archive: empty,
            exclude_file: empty,
            dir: &self.dir,
        };
        self.template.command(&vars, &self.env)
    }

    fn start(&self) -> Result<Running, String> {
        let mut cmd = self.command();
        static STARTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let tag = format!(
            "{}-{}",
            std::process::id(),
            STARTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let (stderr, stderr_child) =
            Capture::stderr().map_err(|e| format!("creating a pipe for its stderr: {e}"))?;
        let cwd = tempfile::Builder::new()
            .prefix("snapconf-worker-")
            .tempdir()
            .map_err(|e| format!("creating its working directory: {e}"))?;
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr_child)
            .current_dir(cwd.path())
            .env(crate::process::stragglers::WORKER_TAG_VAR, &tag)
            .process_group(0);
        let spawned = cmd.spawn();
        drop(cmd);
        let mut child = spawned.map_err(|e| format!("could not start: {e}"))?;
        let pid = Pid::from_child(&child);
        crate::process::stragglers::register_persistent(pid);
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = kill_process_group(pid, Signal::KILL);
            let _ = child.wait();
            crate::process::stragglers::unregister_persistent(pid);
            return Err("could not open its stdin and stdout".into());
        };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match (&mut reader).take(MAX_LINE).read_until(b'\n', &mut line) {
                    Ok(0) => break,
                    Ok(_) => {
                        if tx.send(Ok(line)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        break;
                    }
                }
            }
        });
        Ok(Running {
            child,
            pid,
            stdin,
            lines: rx,
            stderr,
            tag,
            _cwd: cwd,
        })
    }

    /// Send one request and wait up to `timeout` (wall clock, including a start-up) for the
    /// answer. `op` is `capture` or `hydrate`; see the module docs for the outcomes.
    ///
    /// # Errors
    /// None today: every failure of the worker is an [`Outcome`]. The `Result` keeps the
    /// adapter signature and leaves room for faults of snapconf itself.
    pub fn call(
        &self,
        op: &'static str,
        root: &Path,
        archive: &Path,
        exclusions: &[Vec<u8>],
        scratch: &Path,
        timeout: Duration,
    ) -> Result<Outcome, ToolError> {
        let cmd = self.rendered();
        let mut state = self.lock();
        if let Some(reason) = &state.unavailable {
            return Ok(Outcome::Refused {
                message: format!(
                    "backend `{}` worker `{cmd}` is unavailable: {reason}",
                    self.name
                ),
            });
        }
        let running = match state.running.take() {
            Some(r) => r,
            None => {
                state.starts += 1;
                match self.start() {
                    Ok(r) => r,
                    Err(e) => {
                        let reason = format!("{e} (not restarted)");
                        state.unavailable = Some(reason.clone());
                        return Ok(Outcome::Refused {
                            message: format!("backend `{}` worker `{cmd}` {reason}", self.name),
                        });
                    }
                }
            }
        };
        let line = request_line(op, root, archive, exclusions, scratch)?;
        let mut running = running;
        let sent = running
            .stdin
            .write_all(&line)
            .and_then(|()| running.stdin.flush());
        let what = format!("backend `{}` worker `{cmd}`", self.name);
        let answer = match sent {
            Ok(()) => running.lines.recv_timeout(timeout),
            // A closed stdin means it died; collect the status below.
            Err(_) => Err(RecvTimeoutError::Disconnected),
        };
        match answer {
            Ok(Ok(bytes)) => match answer_outcome(&what, op, &bytes) {
                Ok((outcome, _)) => {
                    running.reap_escaped();
                    state.running = Some(running);
                    Ok(outcome)
                }
                Err(garbage) => {
                    let running = running;
                    let tail = running.stderr.tail_text(STDERR_TAIL_BYTES);
                    let _ = running.kill();
                    let reason = format!("{garbage}{}", stderr_note(&tail));
                    Ok(self.fail(&mut state, &what, reason, false))
                }
            },
            Err(RecvTimeoutError::Timeout) => {
                let _ = running.kill();
                let message = format!(
                    "{what} did not answer the {op} request within {} ms; its process group was killed (a fresh worker starts for the next request)",
                    timeout.as_millis()
                );
                state.note(&message);
                Ok(Outcome::Hang { message })
            }
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => {
                let running = running;
                let tail = running.stderr.tail_text(STDERR_TAIL_BYTES);
                let (how, signalled) = death(running.kill());
                let reason = format!("{how} during the {op} request{}", stderr_note(&tail));
                Ok(self.fail(&mut state, &what, reason, signalled))
            }
        }
    }

    /// One request through `server`, a process of [`Worker::command`] that the caller
    /// started (a fuzzer: one per fuzz thread, inside that thread's filesystem view) and
    /// restarts when it is no longer [`Server::alive`]. Outcomes read as [`Worker::call`]'s,
    /// except that nothing is given up here: a worker that died, hung or answered garbage
    /// is killed (its whole process group; in a view, its PID namespace) and the caller
    /// starts a fresh one for its next request.
    ///
    /// # Errors
    /// [`ToolError::Io`] when `server` is not running or the request cannot be encoded.
    pub fn call_served(
        &self,
        server: &mut Server,
        op: &'static str,
        root: &Path,
        archive: &Path,
        scratch: &Path,
        timeout: Duration,
    ) -> Result<Outcome, ToolError> {
        let line = request_line(op, root, archive, &[], scratch)?;
        let what = format!("backend `{}` worker `{}`", self.name, self.rendered());
        Ok(match server.exchange(&line, timeout)? {
            Exchange::Line(bytes) => match answer_outcome(&what, op, &bytes) {
                Ok((outcome, coverage)) => {
                    server.note_coverage(coverage);
                    outcome
                }
                Err(garbage) => {
                    let tail = server.stderr_tail(STDERR_TAIL_BYTES);
                    server.stop();
                    Outcome::Refused {
                        message: format!(
                            "{what} {garbage}{}; a fresh worker starts for the next request",
                            stderr_note(&tail)
                        ),
                    }
                }
            },
            Exchange::TimedOut => Outcome::Hang {
                message: format!(
                    "{what} did not answer the {op} request within {} ms; its process group was killed (a fresh worker starts for the next request)",
                    timeout.as_millis()
                ),
            },
            Exchange::Gone(status) => {
                let tail = server.stderr_tail(STDERR_TAIL_BYTES);
                let (how, signalled) = death(status);
                let message = format!(
                    "{what} {how} during the {op} request{}; a fresh worker starts for the next request",
                    stderr_note(&tail)
                );
                if signalled {
                    Outcome::Hang { message }
                } else {
                    Outcome::Refused { message }
                }
            }
        })
    }

    /// Record a death or garbage; give the worker up after [`MAX_FAILURES`].
    fn fail(&self, state: &mut State, what: &str, reason: String, hang: bool) -> Outcome {
        state.failures += 1;
        let next = if state.failures >= MAX_FAILURES {
            state.unavailable = Some(format!("it failed twice; last: {reason}"));
            "it failed twice and is not restarted: later requests are refused"
        } else {
            "it is restarted once for the next request"
        };
        let message = format!("{what} {reason}; {next}");
        state.note(&message);
        if hang {
            Outcome::Hang { message }
        } else {
            Outcome::Refused { message }
        }
    }
}

/// One request line ([`Request`]), newline included.
fn request_line(
    op: &'static str,
    root: &Path,
    archive: &Path,
    exclusions: &[Vec<u8>],
    scratch: &Path,
) -> Result<Vec<u8>, ToolError> {
    let request = Request {
        op,
        root: PathField::from_path(root),
        archive: PathField::from_path(archive),
        exclude: exclusions
            .iter()
            .map(|e| PathField::from_bytes(crate::exclusion::trim_slashes(e)))
            .filter(|f| f != &PathField::Text(String::new()))
            .collect(),
        scratch: PathField::from_path(scratch),
    };
    let mut line = serde_json::to_vec(&request).map_err(|e| ToolError::Io {
        context: "encoding a worker request".into(),
        source: std::io::Error::other(e),
    })?;
    line.push(b'\n');
    Ok(line)
}

/// The outcome an answer line `bytes` to an `op` request of `what` (the worker, for
/// messages) stands for, and the coverage ids it carried; `Err` with the reason when it is
/// not a [`Response`] (garbage).
/// A `coverage` field that is not a coverage string ([`crate::coverage::parse_ids`]) is
/// read as none.
fn answer_outcome(
    what: &str,
    op: &str,
    bytes: &[u8],
) -> Result<(Outcome, Option<Vec<u32>>), String> {
    match serde_json::from_slice::<Response>(bytes) {
        Ok(resp) => {
            let coverage = resp
                .coverage
                .as_deref()
                .and_then(crate::coverage::parse_ids);
            let outcome = match resp.ok {
                true => Outcome::Success,
                false if resp.stalled => Outcome::Hang {
                    message: format!(
                        "{what} answered that the {op} request stalled: {} (the worker goes on)",
                        resp.error.unwrap_or_else(|| "(no error given)".into())
                    ),
                },
                false => Outcome::Refused {
                    message: format!(
                        "{what} refused the {op} request: {}",
                        resp.error.unwrap_or_else(|| "(no error given)".into())
                    ),
                },
            };
            Ok((outcome, coverage))
        }
        Err(e) => {
            let shown = String::from_utf8_lossy(bytes);
            let shown: String = shown.trim_end().chars().take(200).collect();
            Err(format!(
                "answered the {op} request with garbage `{shown}` ({e})"
            ))
        }
    }
}

/// How a worker that ended during a request ended, and whether by a signal (a `hang`).
///
/// A status of 128 + N (N a signal number, 1 to 31) is a death by signal N too: that is
/// how `bwrap` (the fuzzer's filesystem view) and shells report the signal that ended what
/// they ran, so a worker in a view that segfaults exits "139".
fn death(status: Option<std::process::ExitStatus>) -> (String, bool) {
    match status {
        Some(s) if s.signal().is_some() => (
            format!("died of signal {}", s.signal().unwrap_or_default()),
            true,
        ),
        Some(s) if s.code().is_some_and(|c| (129..=159).contains(&c)) => {
            let code = s.code().unwrap_or_default();
            (
                format!(
                    "exited with status {code} (128 + {}: how a view or a shell reports a death by signal {})",
                    code - 128,
                    code - 128
                ),
                true,
            )
        }
        Some(s) => (
            format!(
                "exited with status {}",
                s.code().map_or_else(|| "unknown".into(), |c| c.to_string())
            ),
            false,
        ),
        None => ("ended".to_owned(), false),
    }
}

fn stderr_note(tail: &str) -> String {
    let tail = tail.trim();
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its stderr ends: {tail}")
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = state.running.take() {
            let (_, left) = r.kill_all();
            if !left.is_empty() {
                // Not `eprintln!`, which panics when stderr cannot be written.
                let _ = writeln!(
                    std::io::stderr(),
                    "snapconf: backend `{}` worker left {} process(es) running at its end (killed): {}",
                    self.name,
                    left.len(),
                    left.join("; ")
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker's death by a signal is a `hang` however it is reported: by the kernel (the
    /// status holds the signal), or as 128 + the signal by the view or a shell around it;
    /// any other exit status is not.
    #[test]
    fn deaths_by_signal_are_told_whoever_reports_them() {
        use std::os::unix::process::ExitStatusExt;
        let of = |raw: i32| death(Some(std::process::ExitStatus::from_raw(raw)));
        assert_eq!(of(9), ("died of signal 9".to_owned(), true));
        let (how, signalled) = of(139 << 8);
        assert!(signalled && how.contains("a death by signal 11"), "{how}");
        assert!(of(137 << 8).1);
        for code in [0, 1, 7, 128, 160, 255] {
            let (how, signalled) = of(code << 8);
            assert!(!signalled, "{code}: {how}");
            assert_eq!(how, format!("exited with status {code}"));
        }
        assert_eq!(death(None), ("ended".to_owned(), false));
    }

    /// A served worker (a process of [`Worker::command`] the caller started): answers are
    /// outcomes as [`Worker::call`]'s (a told stall a hang, the worker kept); garbage, a
    /// death and a timeout kill it (the caller
    /// starts another), each read as the worker's failure, never given up.
    #[test]
    fn a_served_worker_answers_and_its_failures_are_outcomes() {
        let dir = tempfile::tempdir().expect("tempdir");
        // Reads the archive field: `ok`, `no`, `stall`, `junk`, `die`, `hang`.
        let script = r#"
while read -r line; do
  case "$line" in
    *'"archive":"ok"'*) echo '{"ok":true}';;
    *'"archive":"no"'*) echo '{"ok":false,"error":"not this one"}';;
    *'"archive":"stall"'*) echo '{"ok":false,"stalled":true,"error":"Stalled: idle"}';;
    *'"archive":"junk"'*) echo 'hello';;
    *'"archive":"die"'*) echo 'dying' >&2; exit 7;;
    *'"archive":"hang"'*) sleep 30;;
  esac
done
"#;
        let template =
            CommandTemplate::new(vec!["sh".into(), "-c".into(), script.into()]).expect("template");
        let w = Worker::new("b", template, BTreeMap::new(), dir.path());
        let t = Duration::from_secs(10);
        let start = || Server::start(&mut w.command(), dir.path()).expect("starts");
        let call = |s: &mut Server, archive: &str, t| {
            w.call_served(s, "hydrate", dir.path(), Path::new(archive), dir.path(), t)
                .expect("an outcome")
        };
        let mut s = start();
        assert!(matches!(call(&mut s, "ok", t), Outcome::Success));
        match call(&mut s, "no", t) {
            Outcome::Refused { message } => {
                assert!(
                    message.ends_with("refused the hydrate request: not this one"),
                    "{message}"
                )
            }
            other => panic!("{other:?}"),
        }
        // A stall the worker tells is a hang at once, and the worker goes on.
        match call(&mut s, "stall", t) {
            Outcome::Hang { message } => assert!(
                message.contains("hydrate request stalled: Stalled: idle"),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
        assert!(s.alive(), "a told stall does not kill the worker");
        assert!(matches!(call(&mut s, "ok", t), Outcome::Success));
        match call(&mut s, "junk", t) {
            Outcome::Refused { message } => {
                assert!(message.contains("garbage `hello`"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        assert!(!s.alive(), "garbage kills it");
        let mut s = start();
        match call(&mut s, "die", t) {
            Outcome::Refused { message } => assert!(
                message.contains("exited with status 7") && message.contains("dying"),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
        assert!(!s.alive());
        let mut s = start();
        match call(&mut s, "hang", Duration::from_millis(300)) {
            Outcome::Hang { message } => assert!(message.contains("within 300 ms"), "{message}"),
            other => panic!("{other:?}"),
        }
        assert!(!s.alive());
        assert!(w
            .call_served(
                &mut s,
                "hydrate",
                dir.path(),
                Path::new("ok"),
                dir.path(),
                t
            )
            .is_err());
        assert_eq!(w.starts(), 0, "the shared worker never started");
    }
}
