//! Fault limits an external tool runs under, and the private mount namespace.
//!
//! Fault injection (`snapconf run --faults`) needs two things of an extractor's process:
//! a file-size limit (`RLIMIT_FSIZE`, so a write past it fails with `EFBIG` or the tool dies
//! of `SIGXFSZ`) and a `SIGKILL` at a chosen moment. Both are applied from outside, without
//! `unsafe` code in our process: the limit by prefixing the command with util-linux
//! `prlimit --fsize=N --` (which sets the limit on itself and then execs the tool, so the
//! tool keeps our pid and process group), the kill by [`crate::process::run::run_limited`],
//! which kills the tool's process group when `kill_after` passes.
//!
//! Every external command can also run in a private mount namespace (util-linux
//! `unshare --mount --propagation private --`, again an exec chain): a mount or unmount made
//! by a tool under test then stays inside its namespace. That needs `CAP_SYS_ADMIN`; the
//! harness probes once per run with [`probe_private_mounts`] and turns it on with
//! [`set_private_mounts`].

use std::ffi::OsString;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The program that applies resource limits (util-linux).
pub const PRLIMIT_PROGRAM: &str = "prlimit";
/// The program that enters a new mount namespace (util-linux).
pub const UNSHARE_PROGRAM: &str = "unshare";

/// Limits for one hydration under a fault. `Default` is no limit at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// `RLIMIT_FSIZE` in bytes (soft and hard): the largest file the tool may write.
    pub fsize: Option<u64>,
    /// `SIGKILL` the tool's process group this long after it started (a fault, reported as
    /// [`crate::Outcome::Hang`]); `None` means only the request's timeout applies.
    pub kill_after: Option<Duration>,
}

static PRIVATE_MOUNTS: AtomicBool = AtomicBool::new(false);

/// Run every external command from now on in a private mount namespace (`true`), or not.
/// Process-wide: the harness sets it once per run after [`probe_private_mounts`].
pub fn set_private_mounts(on: bool) {
    PRIVATE_MOUNTS.store(on, Ordering::SeqCst);
}

/// True when external commands run in a private mount namespace.
pub fn private_mounts() -> bool {
    PRIVATE_MOUNTS.load(Ordering::SeqCst)
}

/// Whether `unshare --mount --propagation private -- true` works here; `Err` says why not
/// (not root, no `unshare`, a seccomp profile that forbids `unshare(2)`).
pub fn probe_private_mounts() -> Result<(), String> {
    let out = Command::new(UNSHARE_PROGRAM)
        .args(["--mount", "--propagation", "private", "--", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot start `{UNSHARE_PROGRAM}`: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{UNSHARE_PROGRAM} --mount` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The command prefix `limits` (and the filesystem view of this thread, or else the private
/// mount namespace, when on) need, outermost first; empty when there is nothing to apply.
pub fn prefix(limits: Option<&Limits>) -> Vec<OsString> {
    let mut p: Vec<OsString> = Vec::new();
    // A filesystem view (set by the fuzzer for one hydration) has a mount namespace of
    // its own already.
    let view = crate::process::view::current();
    let in_view = view.is_some();
    if let Some(v) = view {
        p.extend(v);
    }
    if private_mounts() && !in_view {
        for a in [UNSHARE_PROGRAM, "--mount", "--propagation", "private", "--"] {
            p.push(a.into());
        }
    }
    if let Some(n) = limits.and_then(|l| l.fsize) {
        p.push(PRLIMIT_PROGRAM.into());
        p.push(format!("--fsize={n}").into());
        p.push("--".into());
    }
    p
}

/// `cmd` run through `prefix` (see [`prefix`]): a new command whose program is the first
/// prefix word, with the rest of the prefix, then `cmd`'s program and arguments; `cmd`'s
/// working directory and environment changes are carried over. `None` when the prefix is
/// empty (run `cmd` as it is).
pub fn wrap(cmd: &Command, prefix: &[OsString]) -> Option<Command> {
    let (first, rest) = prefix.split_first()?;
    let mut w = Command::new(first);
    w.args(rest).arg(cmd.get_program()).args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        w.current_dir(dir);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => {
                w.env(k, v);
            }
            None => {
                w.env_remove(k);
            }
        }
    }
    Some(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_wraps_program_and_arguments() {
        let mut cmd = Command::new("tar");
        cmd.arg("-xf").arg("a.tar").env("X", "1");
        let limits = Limits {
            fsize: Some(100),
            kill_after: None,
        };
        let w = wrap(&cmd, &prefix(Some(&limits))).expect("a prefix");
        let args: Vec<String> = w
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(w.get_program(), "prlimit");
        assert_eq!(args, ["--fsize=100", "--", "tar", "-xf", "a.tar"]);
        assert_eq!(w.get_envs().count(), 1);
        assert!(prefix(None).is_empty() || private_mounts());
    }
}
