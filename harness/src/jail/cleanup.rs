//! Leaving nothing behind: a stop flag set by `SIGINT`/`SIGTERM`, checked by the runner at
//! step boundaries, and a sweep that unmounts whatever is still mounted inside a jail.
//!
//! The handler only sets a flag (`signal-hook`'s `flag::register`, async-signal-safe); the
//! runner then finishes the step it is in (every external tool is killed at its timeout, so
//! a step ends), drops its jails (which unmount and remove) and returns a partial report.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Exit code after an interrupt (128 + SIGINT), as shells report it.
pub const INTERRUPTED: i32 = 130;

fn flag() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Make `SIGINT` and `SIGTERM` set the stop flag instead of killing the process.
///
/// # Errors
/// The `sigaction(2)` error.
pub fn install_stop_handler() -> std::io::Result<()> {
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(flag()))?;
    }
    Ok(())
}

/// True once a stop was asked for (a signal, or [`request_stop`]).
pub fn stop_requested() -> bool {
    flag().load(Ordering::SeqCst)
}

/// Ask the runner to stop at the next step boundary.
pub fn request_stop() {
    flag().store(true, Ordering::SeqCst);
}

/// Mount points at or below `dir`, deepest first, from `/proc/self/mountinfo` (field 5,
/// with the kernel's `\NNN` octal escapes undone).
pub fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let dir = dir.as_os_str().as_bytes();
    let mut out: Vec<PathBuf> = text
        .split(|b| *b == b'\n')
        .filter_map(|line| line.split(|b| *b == b' ').nth(4))
        .map(unescape)
        .filter(|m| m.starts_with(dir) && (m.len() == dir.len() || m[dir.len()] == b'/'))
        .map(|m| PathBuf::from(std::ffi::OsString::from(std::ffi::OsStr::from_bytes(&m))))
        .collect();
    out.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
    out
}

/// Lazily unmount everything mounted at or below `dir` (deepest first); errors are ignored
/// (a mount that is already gone is the goal).
pub fn unmount_under(dir: &Path) {
    for m in mounts_under(dir) {
        let _ = rustix::mount::unmount(&m, rustix::mount::UnmountFlags::DETACH);
    }
}

fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        if field[i] == b'\\'
            && i + 3 < field.len()
            && field[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let v = field[i + 1..i + 4]
                .iter()
                .fold(0u32, |a, b| a * 8 + u32::from(b - b'0'));
            out.push(u8::try_from(v).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(field[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape(b"/a\\040b"), b"/a b");
        assert_eq!(unescape(b"/plain"), b"/plain");
        assert_eq!(unescape(b"/x\\0"), b"/x\\0");
    }
}
