//! The one way the tests run the `snapconf` binary: [`Snapconf`], a command with the
//! methods of [`std::process::Command`] that the tests use, plus bytes for stdin
//! ([`Snapconf::input`]) and a time limit ([`Snapconf::timeout`]).
//!
//! Every command starts from [`snapconf_bin`] with the environment variables that pick
//! backends, profiles, faults, baselines and the jail base removed ([`SELECTION_VARS`]: a
//! developer's shell may set them); a test that wants one sets it with [`Snapconf::env`].

use std::ffi::OsStr;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// The variables removed from every [`Snapconf`] command's environment.
pub const SELECTION_VARS: [&str; 5] = [
    "SNAPCONF_BACKEND",
    "SNAPCONF_PROFILE",
    "SNAPCONF_FAULTS",
    "SNAPCONF_BASELINE",
    "SNAPCONF_JAIL_DIR",
];

/// The `snapconf` binary the tests run: `$SNAPCONF_TEST_BINARY` when set (a copy that an
/// ordinary user can reach, when `.ci/run` runs the compiled tests as uid 65534), else the
/// one cargo built for this test binary.
pub fn snapconf_bin() -> PathBuf {
    std::env::var_os("SNAPCONF_TEST_BINARY")
        .map_or_else(|| env!("CARGO_BIN_EXE_snapconf").into(), Into::into)
}

/// A `snapconf` command: build it like a [`Command`] (`arg`, `args`, `env`, `env_remove`,
/// `current_dir`, `stdin`/`stdout`/`stderr`), then `output`, `status` or `spawn` it.
///
/// - [`Snapconf::input`]: bytes written to its stdin (stdin is a pipe then);
/// - [`Snapconf::timeout`]: `output` and `status` kill it past the limit and return an
///   error of kind [`io::ErrorKind::TimedOut`] (its output then goes to files, so that a
///   hung process cannot block on a full pipe).
pub struct Snapconf {
    cmd: Command,
    input: Option<Vec<u8>>,
    limit: Option<Duration>,
}

impl Default for Snapconf {
    fn default() -> Self {
        Self::new()
    }
}

impl Snapconf {
    /// `snapconf` ([`snapconf_bin`]) with no arguments and [`SELECTION_VARS`] removed.
    pub fn new() -> Snapconf {
        let mut cmd = Command::new(snapconf_bin());
        for var in SELECTION_VARS {
            cmd.env_remove(var);
        }
        Snapconf {
            cmd,
            input: None,
            limit: None,
        }
    }

    /// `WRAPPER… BIN` with [`SELECTION_VARS`] removed: `snapconf` run through another
    /// program that runs its arguments (`setpriv --reuid=…`, `prlimit --fsize=… --`), `bin`
    /// being [`snapconf_bin`] or a copy of it.
    pub fn wrapped<S: AsRef<OsStr>>(wrapper: &[S], bin: &Path) -> Snapconf {
        let (program, rest) = wrapper.split_first().expect("a wrapper program");
        let mut cmd = Command::new(program);
        cmd.args(rest).arg(bin);
        for var in SELECTION_VARS {
            cmd.env_remove(var);
        }
        Snapconf {
            cmd,
            input: None,
            limit: None,
        }
    }

    /// Adds one argument.
    pub fn arg<S: AsRef<OsStr>>(&mut self, arg: S) -> &mut Self {
        self.cmd.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&mut self, args: I) -> &mut Self {
        self.cmd.args(args);
        self
    }

    /// Sets an environment variable.
    pub fn env<K: AsRef<OsStr>, V: AsRef<OsStr>>(&mut self, key: K, value: V) -> &mut Self {
        self.cmd.env(key, value);
        self
    }

    /// Sets environment variables.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.cmd.envs(vars);
        self
    }

    /// Clears the environment (as `env -i`): only what the test sets with
    /// [`Snapconf::env`] afterwards is passed.
    pub fn env_clear(&mut self) -> &mut Self {
        self.cmd.env_clear();
        self
    }

    /// Removes an environment variable.
    pub fn env_remove<K: AsRef<OsStr>>(&mut self, key: K) -> &mut Self {
        self.cmd.env_remove(key);
        self
    }

    /// Runs it in `dir`.
    pub fn current_dir<P: AsRef<Path>>(&mut self, dir: P) -> &mut Self {
        self.cmd.current_dir(dir);
        self
    }

    /// Its stdin (ignored when [`Snapconf::input`] is set).
    pub fn stdin<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Self {
        self.cmd.stdin(cfg);
        self
    }

    /// Its stdout (`output` captures it whatever this says).
    pub fn stdout<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Self {
        self.cmd.stdout(cfg);
        self
    }

    /// Its stderr (`output` captures it whatever this says).
    pub fn stderr<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Self {
        self.cmd.stderr(cfg);
        self
    }

    /// Bytes written to its stdin, which is then closed.
    pub fn input(&mut self, bytes: impl Into<Vec<u8>>) -> &mut Self {
        self.input = Some(bytes.into());
        self
    }

    /// A time limit for `output` and `status`.
    pub fn timeout(&mut self, limit: Duration) -> &mut Self {
        self.limit = Some(limit);
        self
    }

    /// Starts it (stdin, stdout and stderr as set; with [`Snapconf::input`], stdin is a
    /// pipe that a thread writes the bytes to). No time limit applies.
    pub fn spawn(&mut self) -> io::Result<Child> {
        if self.input.is_some() {
            self.cmd.stdin(Stdio::piped());
        }
        let mut child = self.cmd.spawn()?;
        // Only with an input is stdin ours to write: else the caller's pipe stays in `child`.
        if let Some(bytes) = self.input.clone() {
            if let Some(mut pipe) = child.stdin.take() {
                // The child may exit before reading it all: a write error is its business.
                std::thread::spawn(move || {
                    let _ = pipe.write_all(&bytes);
                });
            }
        }
        Ok(child)
    }

    /// Runs it to the end, capturing stdout and stderr (stdin: the input, else empty).
    pub fn output(&mut self) -> io::Result<Output> {
        if self.input.is_none() {
            self.cmd.stdin(Stdio::null());
        }
        let Some(limit) = self.limit else {
            self.cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
            return self.spawn()?.wait_with_output();
        };
        let out = tempfile::tempfile()?;
        let err = tempfile::tempfile()?;
        self.cmd.stdout(out.try_clone()?).stderr(err.try_clone()?);
        let mut child = self.spawn()?;
        let status = self.wait(&mut child, limit)?;
        Ok(Output {
            status,
            stdout: read_all(out)?,
            stderr: read_all(err)?,
        })
    }

    /// Runs it to the end with stdin, stdout and stderr as set (inherited by default, like
    /// [`Command::status`]); its exit status.
    pub fn status(&mut self) -> io::Result<ExitStatus> {
        let mut child = self.spawn()?;
        match self.limit {
            Some(limit) => self.wait(&mut child, limit),
            None => child.wait(),
        }
    }

    /// Runs it to the end ([`Snapconf::output`]): its exit code (-1 for a signal), stdout
    /// and stderr as text. Panics if it cannot run or outlives its time limit.
    pub fn run(&mut self) -> (i32, String, String) {
        let out = self
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", self.describe()));
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// The command as the tests print it: `snapconf ["ARG", …]` (or the wrapper's name).
    pub fn describe(&self) -> String {
        let program = Path::new(self.cmd.get_program());
        let name = program.file_name().unwrap_or(program.as_os_str());
        let args: Vec<_> = self.cmd.get_args().map(OsStr::to_string_lossy).collect();
        format!("{} {args:?}", name.to_string_lossy())
    }

    /// Waits for `child`, killing it past `limit` (a [`io::ErrorKind::TimedOut`] error).
    fn wait(&self, child: &mut Child, limit: Duration) -> io::Result<ExitStatus> {
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait()? {
                return Ok(status);
            }
            if started.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("{} still ran after {limit:?} (killed)", self.describe()),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The whole of a temporary file written by a child.
fn read_all(mut f: std::fs::File) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    f.seek(io::SeekFrom::Start(0))?;
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
}
