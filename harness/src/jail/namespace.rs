//! A private mount namespace for the whole `snapconf` process, so that no mount it makes
//! (the `enospc` fault's tmpfs, or one a tool under test makes) outlives it.

use rustix::mount::{mount_change, MountPropagationFlags};
use rustix::thread::UnshareFlags;

/// Moves this process into a mount namespace of its own whose mounts are all private, so
/// that every mount made from now on by this process or its children exists only in that
/// namespace and is torn down by the kernel when the last process in it ends, `SIGKILL`
/// included. What the host sees of the filesystem does not change: files written (by
/// `hydrate` into the user's root, by a run into its jails) are the same files; only mount
/// and unmount events stop propagating in either direction.
///
/// Two steps: `unshare(CLONE_NEWNS)`, then `mount(NULL, "/", NULL, MS_REC | MS_PRIVATE,
/// NULL)` (`mount --make-rprivate /`), without which a mount under a shared `/` (systemd
/// makes `/` shared) would propagate back to the host's namespace.
///
/// Call it first in `main`, before any thread starts: `unshare` moves only the calling
/// thread, and threads started before would stay in the host's namespace.
///
/// The namespace is named (its `/proc/self/ns/mnt` link) in the environment variable
/// [`PRIVATE_MOUNT_NS`], which the processes this one starts inherit: a `snapconf` started
/// by `snapconf` (a `serve-hydrate` server, a reaper's tool) finds itself already in that
/// namespace and stays in it, so it sees the mounts its parent makes later (the `enospc`
/// tmpfs) rather than a copy taken when it started.
///
/// Returns `Ok(true)` once in a private namespace (also one entered by a `snapconf`
/// ancestor); `Ok(false)`, having changed nothing,
/// when the effective uid is not 0 (an ordinary user cannot mount anything that would need
/// cleaning up) or when the kernel refuses the `unshare` with `EPERM` (root without
/// `CAP_SYS_ADMIN`, as in many containers); the caller then goes on as before, silently.
///
/// # Errors
/// Any other `unshare(2)` error, or a `mount(2)` error making `/` private (the process is
/// then already in a new namespace whose mounts may still propagate to the host's).
pub fn enter_private_mounts() -> std::io::Result<bool> {
    if !rustix::process::geteuid().is_root() {
        return Ok(false);
    }
    let inherited = current_namespace();
    if inherited.is_some() && std::env::var_os(PRIVATE_MOUNT_NS) == inherited {
        return Ok(true);
    }
    // `unshare_unsafe` is only unsafe for `CLONE_FILES`; the safe, deprecated wrapper is
    // sound for `CLONE_NEWNS`.
    #[allow(deprecated)]
    match rustix::thread::unshare(UnshareFlags::NEWNS) {
        Ok(()) => {}
        Err(rustix::io::Errno::PERM) => return Ok(false),
        Err(e) => return Err(e.into()),
    }
    mount_change(
        "/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )?;
    if let Some(ns) = current_namespace() {
        // Single-threaded still (see above), so setting the environment races nothing.
        std::env::set_var(PRIVATE_MOUNT_NS, ns);
    }
    Ok(true)
}

/// The environment variable naming the private mount namespace a `snapconf` process made
/// (`mnt:[<inode>]`, the `/proc/self/ns/mnt` link), for the `snapconf` processes it starts.
pub const PRIVATE_MOUNT_NS: &str = "SNAPCONF_PRIVATE_MOUNT_NS";

/// This process's mount namespace, `mnt:[<inode>]`, if `/proc` tells.
fn current_namespace() -> Option<std::ffi::OsString> {
    std::fs::read_link("/proc/self/ns/mnt")
        .ok()
        .map(std::path::PathBuf::into_os_string)
}
