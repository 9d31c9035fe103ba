//! A size-bounded filesystem for a fuzz session's jails: a plugged-in backend (or an
//! extractor with a bug) may write without end, and the default jail base is `/dev/shm`,
//! a tmpfs in the machine's memory (half of it, on Debian). As root in the process's
//! private mount namespace ([`crate::jail::namespace::enter_private_mounts`]), a session
//! whose jail directory was not chosen mounts a tmpfs of at most
//! [`DEFAULT_FUZZ_JAIL_BYTES`] (or [`FUZZ_JAIL_BYTES_VAR`]) on a directory of the default
//! base and lays its jails out there, with one inode per 4 KiB of it. A write past it
//! fails with `ENOSPC`: the extractor's is its own failure; snapconf's own ends the session
//! with exit 3 naming the full filesystem and the bound. The mount exists only in
//! snapconf's namespace and goes with it, also after a `SIGKILL`; the empty directory it
//! was mounted on is named like the jails (`snapconf-fuzzfs-<pid>-0`), so the next start
//! removes it when its process is dead.
//!
//! Where no mount can be made (not root, or no private namespace), the jails go to the
//! base as before, unbounded.

use crate::engine::faults::Tmpfs;
use std::path::{Path, PathBuf};

/// The environment variable that sets the bound, in bytes (a number, optionally followed
/// by `K`, `M` or `G`, powers of 1024); `0` turns the bound off.
pub const FUZZ_JAIL_BYTES_VAR: &str = "SNAPCONF_FUZZ_JAIL_BYTES";

/// The default bound: 1 GiB, some hundred times what a session's jails hold (the generated
/// archives are at most a few MiB, each worker keeps a jail and a spare).
pub const DEFAULT_FUZZ_JAIL_BYTES: u64 = 1 << 30;

/// A tmpfs mounted as the jails' base; dropping it unmounts the tmpfs (whatever it still
/// holds goes with it) and removes the directory it was mounted on.
#[derive(Debug)]
pub struct BoundedJailBase {
    tmpfs: Option<Tmpfs>,
    dir: PathBuf,
    bytes: u64,
    /// This process's lock file in `base`, held while the directory exists: another
    /// snapconf's sweep (one in another PID namespace sharing `/dev/shm` cannot see this
    /// pid in `/proc`) then knows the directory is in use and does not remove it, which
    /// would detach the mount under a running session.
    _lease: crate::jail::leftovers::BaseLease,
}

impl BoundedJailBase {
    /// Mounts a tmpfs of `bytes` on a new directory `snapconf-fuzzfs-<pid>-0` of `base`,
    /// holding this process's lease on `base` while it exists.
    /// `Ok(None)`, having made nothing, when `bytes` is 0 or this process is not root in a
    /// private mount namespace of its own: [`crate::jail::namespace::PRIVATE_MOUNT_NS`] set
    /// and the namespace not that of PID 1 (a spoofed variable would put the mount in the
    /// caller's namespace, where it would outlive a `SIGKILL`).
    ///
    /// # Errors
    /// The directory cannot be made, or the `mount(2)` error (the directory is removed).
    pub fn mount(base: &Path, bytes: u64) -> std::io::Result<Option<BoundedJailBase>> {
        let ns = |p: &str| std::fs::read_link(format!("/proc/{p}/ns/mnt")).ok();
        let ours = ns("self");
        let private = std::env::var_os(crate::jail::namespace::PRIVATE_MOUNT_NS).is_some()
            && ours.is_some()
            && ours != ns("1");
        if bytes == 0 || !private || !rustix::process::geteuid().is_root() {
            return Ok(None);
        }
        let lease = crate::jail::leftovers::BaseLease::take(base);
        let dir = base.join(format!("snapconf-fuzzfs-{}-0", std::process::id()));
        std::fs::create_dir(&dir)?;
        match Tmpfs::mount("snapconf-fuzz", &dir, bytes, Some(inodes_for(bytes))) {
            Ok(tmpfs) => Ok(Some(BoundedJailBase {
                tmpfs: Some(tmpfs),
                dir,
                bytes,
                _lease: lease,
            })),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// Where the jails go.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The bound, in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for BoundedJailBase {
    fn drop(&mut self) {
        drop(self.tmpfs.take());
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The inodes a bound of `bytes` allows: one per 4 KiB (262,144 for 1 GiB), at least
/// 4,096. Without it a writer of empty files would take kernel memory the size does not
/// count.
fn inodes_for(bytes: u64) -> u64 {
    (bytes / 4096).max(4096)
}

/// The bound [`FUZZ_JAIL_BYTES_VAR`] asks for, else [`DEFAULT_FUZZ_JAIL_BYTES`].
///
/// # Errors
/// A message naming the variable and its value when that is not a size.
pub fn fuzz_jail_bytes() -> Result<u64, String> {
    let Some(raw) = std::env::var_os(FUZZ_JAIL_BYTES_VAR) else {
        return Ok(DEFAULT_FUZZ_JAIL_BYTES);
    };
    let text = raw.to_string_lossy();
    parse_size(text.trim()).ok_or_else(|| {
        format!(
            "{FUZZ_JAIL_BYTES_VAR}={text:?} is not a size (bytes, or a number with K, M or G; 0 for no bound)"
        )
    })
}

/// `123`, `64K`, `512M`, `2G` (powers of 1024, either case) as bytes.
fn parse_size(s: &str) -> Option<u64> {
    let (digits, shift) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], 10),
        b'm' | b'M' => (&s[..s.len() - 1], 20),
        b'g' | b'G' => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    /// Sizes read as a number of bytes with an optional binary suffix; anything else is
    /// not a size (never a silent default).
    #[test]
    fn sizes_parse_with_binary_suffixes_and_nothing_else() {
        assert_eq!(parse_size("0"), Some(0));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64k"), Some(64 << 10));
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        for bad in ["", "G", "1.5G", "-1", "1T", "12 M", "99999999999999999999G"] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
    }
}
