//! Running an external tool: a timeout and its own process group, fault limits and a
//! private mount namespace, the filesystem view a fuzzed extractor runs in, and the
//! stragglers it leaves behind.

pub mod capture;
pub mod limits;
pub mod reaper;
pub mod run;
pub mod server;
pub mod stragglers;
pub mod view;

/// "the jail filesystem `MOUNT` is full (ENOSPC)", naming the mount point of the
/// filesystem holding `path` (the highest ancestor of `path` on the same device; `path`
/// itself when it cannot be examined). For errors of a run that hit a full jail.
pub fn full_filesystem(path: &std::path::Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let mut mount = path.to_path_buf();
    if let Ok(dev) = std::fs::metadata(path).map(|m| m.dev()) {
        let mut up = path.parent();
        while let Some(p) = up {
            match std::fs::metadata(p) {
                Ok(m) if m.dev() == dev => mount = p.to_path_buf(),
                _ => break,
            }
            up = p.parent();
        }
    }
    format!("the jail filesystem `{}` is full (ENOSPC)", mount.display())
}

/// Whether `e` is `ENOSPC` (no space left on the device).
pub fn is_no_space(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(rustix::io::Errno::NOSPC.raw_os_error())
}
