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
//! by a tool under test then stays inside its namespace. That needs `CAP_SYS_ADMIN`: root
//! has it; an ordinary user gets it inside an unprivileged user namespace of its own
//! (`unshare --user --map-current-user`), where the kernel allows those. The harness probes
//! once per run with [`probe_private_mounts`] and turns it on with [`set_private_mounts`].

use std::ffi::OsString;
use std::process::Command;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

/// The program that applies resource limits (util-linux).
pub const PRLIMIT_PROGRAM: &str = "prlimit";
/// The program that enters a new mount namespace (util-linux).
pub const UNSHARE_PROGRAM: &str = "unshare";

/// Limits for one hydration under a fault. `Default` is no limit at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolLimits {
    /// `RLIMIT_FSIZE` in bytes (soft and hard): the largest file the tool may write.
    pub fsize: Option<u64>,
    /// `SIGKILL` the tool's process group this long after it started (a fault, reported as
    /// [`crate::Outcome::Hang`]); `None` means only the request's timeout applies.
    pub kill_after: Option<Duration>,
}

/// The private mount namespace external commands run in (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MountNamespace {
    /// `unshare --mount --propagation private --`: needs `CAP_SYS_ADMIN` (root).
    Mount,
    /// `unshare --user --map-current-user --mount --propagation private --`: an
    /// unprivileged user namespace mapping the caller's own uid and gid to themselves, in
    /// which the tool may make mounts of its own; for an ordinary user where the kernel
    /// allows unprivileged user namespaces (`--map-current-user`: util-linux 2.38 and
    /// later). The tool keeps the caller's uid, so what it may write is unchanged.
    UserAndMount,
}

impl MountNamespace {
    /// The `unshare` arguments, ending with `--`.
    fn args(self) -> &'static [&'static str] {
        match self {
            MountNamespace::Mount => &["--mount", "--propagation", "private", "--"],
            MountNamespace::UserAndMount => &[
                "--user",
                "--map-current-user",
                "--mount",
                "--propagation",
                "private",
                "--",
            ],
        }
    }
}

/// 0: none; 1: [`MountNamespace::Mount`]; 2: [`MountNamespace::UserAndMount`].
static PRIVATE_MOUNTS: AtomicU8 = AtomicU8::new(0);

/// Run every external command from now on in the private mount namespace `ns` (`None`:
/// in none). Process-wide: the harness sets it once per run after [`probe_private_mounts`].
pub fn set_private_mounts(ns: Option<MountNamespace>) {
    let v = match ns {
        None => 0,
        Some(MountNamespace::Mount) => 1,
        Some(MountNamespace::UserAndMount) => 2,
    };
    PRIVATE_MOUNTS.store(v, Ordering::SeqCst);
}

/// The private mount namespace external commands run in, if any.
pub fn private_mounts() -> Option<MountNamespace> {
    match PRIVATE_MOUNTS.load(Ordering::SeqCst) {
        1 => Some(MountNamespace::Mount),
        2 => Some(MountNamespace::UserAndMount),
        _ => None,
    }
}

/// The private mount namespace that works here: [`MountNamespace::Mount`] if
/// `unshare --mount … -- true` runs (root), else [`MountNamespace::UserAndMount`] if
/// that runs (an ordinary user with unprivileged user namespaces); `Err` says why neither
/// does (no `unshare`, user namespaces disabled, a seccomp profile that forbids
/// `unshare(2)`).
pub fn probe_private_mounts() -> Result<MountNamespace, String> {
    let mut why = Vec::new();
    for ns in [MountNamespace::Mount, MountNamespace::UserAndMount] {
        let out = Command::new(UNSHARE_PROGRAM)
            .args(ns.args())
            .arg("true")
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("cannot start `{UNSHARE_PROGRAM}`: {e}"))?;
        if out.status.success() {
            return Ok(ns);
        }
        why.push(format!(
            "`{UNSHARE_PROGRAM} {}` failed ({}): {}",
            ns.args()[..ns.args().len() - 1].join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Err(why.join("; "))
}

/// The command prefix `limits` (and the filesystem view of this thread, or else the private
/// mount namespace, when on) need, outermost first; empty when there is nothing to apply.
pub fn prefix(limits: Option<&ToolLimits>) -> Vec<OsString> {
    let mut p: Vec<OsString> = Vec::new();
    // A filesystem view (set by the fuzzer for one hydration) has a mount namespace of
    // its own already.
    let view = crate::process::view::current();
    let in_view = view.is_some();
    if let Some(v) = view {
        p.extend(v);
    }
    if let Some(ns) = private_mounts().filter(|_| !in_view) {
        p.push(UNSHARE_PROGRAM.into());
        p.extend(ns.args().iter().map(OsString::from));
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
        let limits = ToolLimits {
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
        assert!(prefix(None).is_empty() || private_mounts().is_some());
    }
}
