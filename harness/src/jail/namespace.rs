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
/// Returns `Ok(true)` once in a private namespace; `Ok(false)`, having changed nothing,
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
    Ok(true)
}
