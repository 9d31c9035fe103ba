//! What a killed snapconf left in a jail base, and how the next one removes it.
//!
//! Every directory snapconf makes in a jail base (`/dev/shm`, the temp dir or
//! `--jail-dir`) is named with the pid of the process that made it:
//! ```text
//! snapconf-<pid>.lock          the process's lock file, flocked while it has dirs here
//! snapconf-jail-<pid>-<rand>/  a case's jail (Jail)
//! snapconf-scratch-<pid>-<rand>/  a fuzz scratch dir beside its jail
//! snapconf-fuzz-<pid>-<n>/     an in-process fuzzing jail (FuzzJail)
//! ```
//! The lock file sits beside the jails, never inside one (the `containment` check compares
//! a jail's contents). While a process holds at least one [`BaseLease`] on a base it holds
//! an exclusive `flock` on its lock file there; the kernel drops it when the process dies,
//! `SIGKILL` included. When the last lease goes, the lock file is unlinked (still locked).
//!
//! [`sweep`] removes every `snapconf-<kind>-<pid>-*` entry whose process is dead: its lock
//! file can be locked without waiting, or it has no lock file and no `/proc/<pid>` (a
//! process between leases, or an older snapconf, has no lock file while alive). Before a
//! directory is removed, whatever is mounted below it is lazily unmounted, and the removal
//! makes unreadable or read-only directories writable first
//! ([`snapconf_extract::remove::remove_tree`]). The dead process's lock file goes last,
//! unlinked while the sweeper holds its lock.
//!
//! The first lease on a base in a process sweeps it first, also counting this process's
//! own pid as dead (a reused pid: nothing of this process exists there yet); commands that
//! run cases also sweep their base at start ([`sweep`]).

use crate::workspace::materialise::remove_tree;
use rustix::fs::{flock, open, FlockOperation, Mode, OFlags};
use rustix::io::Errno;
use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The name prefix of everything snapconf makes in a jail base.
const PREFIX: &str = "snapconf-";

/// The prefix of a directory of `kind` (`jail`, `scratch`, `fuzz`) made by this process:
/// `snapconf-<kind>-<pid>-`; the caller appends something unique to it.
pub fn dir_prefix(kind: &str) -> String {
    format!("{PREFIX}{kind}-{}-", std::process::id())
}

/// The lock file of `pid` in `base`: `base/snapconf-<pid>.lock`.
pub fn lock_path(base: &Path, pid: u32) -> PathBuf {
    base.join(format!("{PREFIX}{pid}.lock"))
}

/// The lock files this process holds, by canonical base, with the number of leases on each.
struct Held {
    /// `None` when the lock file could not be made (a read-only base, say): the pid-named
    /// directories then count as live while `/proc/<pid>` exists.
    fd: Option<OwnedFd>,
    leases: usize,
}

fn held() -> MutexGuard<'static, BTreeMap<PathBuf, Held>> {
    static HELD: Mutex<BTreeMap<PathBuf, Held>> = Mutex::new(BTreeMap::new());
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

fn swept() -> MutexGuard<'static, BTreeSet<PathBuf>> {
    static SWEPT: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    SWEPT.lock().unwrap_or_else(|e| e.into_inner())
}

/// The key of `base`: canonical when it can be resolved, so that a jail's parent and the
/// base it was made under are the same key.
fn key(base: &Path) -> PathBuf {
    base.canonicalize().unwrap_or_else(|_| base.to_path_buf())
}

/// A hold on this process's lock file in one base (see the module docs): take one before
/// making a `snapconf-<kind>-<pid>-*` directory there and keep it until that directory is
/// removed. Dropping the last lease on a base unlinks the lock file and releases the lock.
#[derive(Debug)]
pub struct BaseLease {
    base: PathBuf,
}

impl BaseLease {
    /// A lease on `base` (a directory). The first lease on a base in this process sweeps it
    /// first ([`sweep`], with this process's own pid counted as dead) and then creates and
    /// locks `snapconf-<pid>.lock` (waiting for a sweeper that holds it for a moment).
    /// Never fails: without a lock file (a read-only base) the directories are still named
    /// with the pid, and a sweeper then goes by `/proc/<pid>`.
    pub fn take(base: &Path) -> BaseLease {
        let base = key(base);
        let mut held = held();
        if let Some(h) = held.get_mut(&base) {
            h.leases += 1;
            return BaseLease { base };
        }
        sweep_once(&base);
        let fd = open(
            lock_path(&base, std::process::id()),
            OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .ok()
        .filter(|fd| flock(fd, FlockOperation::LockExclusive).is_ok());
        held.insert(base.clone(), Held { fd, leases: 1 });
        BaseLease { base }
    }
}

impl Drop for BaseLease {
    fn drop(&mut self) {
        let mut held = held();
        let Some(h) = held.get_mut(&self.base) else {
            return;
        };
        h.leases -= 1;
        if h.leases > 0 {
            return;
        }
        let last = held.remove(&self.base);
        // Unlinked while still locked, then closed (which releases the lock).
        if last.as_ref().is_some_and(|h| h.fd.is_some()) {
            let _ = std::fs::remove_file(lock_path(&self.base, std::process::id()));
        }
        drop(last);
    }
}

/// [`sweep`] the first time `base` is seen in this process (own pid counted as dead).
fn sweep_once(base: &Path) {
    let first = swept().insert(base.to_path_buf());
    if first {
        sweep_dead(base, true);
    }
}

/// Removes from `base` every `snapconf-<kind>-<pid>-*` entry and `snapconf-<pid>.lock`
/// file of a dead process (see the module docs); returns the entries removed (lock files
/// not included). The first sweep of a base in this process (by this function or a
/// [`BaseLease`]) also counts this process's own pid as dead: call it before this process
/// makes anything there, as commands do at start. Errors are ignored: what cannot be
/// removed now is tried again by the next sweep; a base that cannot be listed is skipped.
pub fn sweep(base: &Path) -> Vec<PathBuf> {
    let base = key(base);
    let first = swept().insert(base.clone());
    sweep_dead(&base, first)
}

/// [`sweep`] of the base jails go to when none is given: `base`, else `/dev/shm` when
/// writable ([`super::default_jail_base`]), else the system temp dir.
pub fn sweep_at_start(base: Option<&Path>) -> Vec<PathBuf> {
    match base {
        Some(b) => sweep(b),
        None => sweep(&super::default_jail_base().unwrap_or_else(std::env::temp_dir)),
    }
}

/// What a name in a base is, with the pid it names.
enum Entry {
    /// `snapconf-<pid>.lock`.
    Lock(u32),
    /// `snapconf-<kind>-<pid>-<rest>`.
    Dir(u32),
}

fn parse(name: &str) -> Option<Entry> {
    let rest = name.strip_prefix(PREFIX)?;
    if let Some(pid) = rest.strip_suffix(".lock") {
        return digits(pid).map(Entry::Lock);
    }
    let mut parts = rest.splitn(3, '-');
    let kind = parts.next()?;
    let pid = parts.next()?;
    let tail = parts.next()?;
    let kind_ok = !kind.is_empty() && kind.bytes().all(|b| b.is_ascii_lowercase());
    if !kind_ok || tail.is_empty() {
        return None;
    }
    digits(pid).map(Entry::Dir)
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Whether pid `pid`'s entries in `base` are a dead process's: `Some` with the lock file's
/// handle, locked by us, when its lock could be taken without waiting (held until the
/// caller drops it); `Some(None)` when there is no lock file and no `/proc/<pid>`.
fn dead(base: &Path, pid: u32) -> Option<Option<OwnedFd>> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let gone = || !Path::new("/proc").join(pid.to_string()).exists();
    match open(lock_path(base, pid), flags, Mode::empty()) {
        // No lock file (a live process between leases, an older snapconf), or one not ours
        // to open (a symlink, a file we cannot read): by `/proc` alone.
        Err(_) => gone().then_some(None),
        Ok(fd) => match flock(&fd, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Some(Some(fd)),
            Err(Errno::WOULDBLOCK) => None,
            // A filesystem without `flock`: by `/proc` alone.
            Err(_) => gone().then_some(Some(fd)),
        },
    }
}

/// The sweep itself, of the canonical `base`; `own_dead` counts this process's pid as dead.
fn sweep_dead(base: &Path, own_dead: bool) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut dirs: BTreeMap<u32, Vec<PathBuf>> = BTreeMap::new();
    let mut locks = BTreeSet::new();
    for e in rd.flatten() {
        let name = e.file_name();
        match name.to_str().and_then(parse) {
            Some(Entry::Dir(pid)) => dirs.entry(pid).or_default().push(e.path()),
            Some(Entry::Lock(pid)) => {
                locks.insert(pid);
            }
            None => {}
        }
    }
    let mut removed = Vec::new();
    let pids: BTreeSet<u32> = dirs.keys().copied().chain(locks.iter().copied()).collect();
    for pid in pids {
        let lock = if pid == me {
            if !own_dead {
                continue;
            }
            None
        } else {
            match dead(base, pid) {
                Some(lock) => lock,
                None => continue,
            }
        };
        for dir in dirs.remove(&pid).unwrap_or_default() {
            if remove_tree(&dir).is_err() {
                super::cleanup::unmount_under(&dir);
                let _ = remove_tree(&dir);
            }
            if std::fs::symlink_metadata(&dir).is_err() {
                removed.push(dir);
            }
        }
        if lock.is_some() {
            // Unlinked while we hold its lock; closed (unlocked) when `lock` drops.
            let _ = std::fs::remove_file(lock_path(base, pid));
        }
        drop(lock);
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_parsed_strictly() {
        assert!(matches!(
            parse("snapconf-jail-12-abc"),
            Some(Entry::Dir(12))
        ));
        assert!(matches!(parse("snapconf-fuzz-7-0"), Some(Entry::Dir(7))));
        assert!(matches!(parse("snapconf-9.lock"), Some(Entry::Lock(9))));
        // Older names (a random suffix, no pid) and others' names are not ours to judge.
        for other in [
            "snapconf-jail-AbC123",
            "snapconf-jail-123456",
            "snapconf-enospc",
            ".snapconf-jail-1-x",
            "snapconf-Jail-1-x",
            "snapconf-x.lock",
        ] {
            assert!(parse(other).is_none(), "{other}");
        }
    }

    /// A dead pid's directories (with a `0000` directory inside) and its unlocked lock file
    /// are removed; a live pid's (lock held here) and a foreign name are kept.
    #[test]
    fn a_dead_pids_dirs_go_and_a_live_ones_stay() {
        let base = tempfile::tempdir().expect("tempdir");
        let b = base.path();
        // A pid that exists no more: past the kernel's pid_max.
        let dead_pid = 4_194_305u32;
        let live_pid = 4_194_306u32;
        let dead_dir = b.join(format!("snapconf-jail-{dead_pid}-x"));
        std::fs::create_dir_all(dead_dir.join("h-1/locked/in")).expect("mkdir");
        std::fs::set_permissions(
            dead_dir.join("h-1/locked"),
            std::os::unix::fs::PermissionsExt::from_mode(0o000),
        )
        .expect("chmod");
        std::fs::create_dir(b.join(format!("snapconf-scratch-{dead_pid}-y"))).expect("mkdir");
        std::fs::write(lock_path(b, dead_pid), "").expect("lock file");
        let live_dir = b.join(format!("snapconf-fuzz-{live_pid}-0"));
        std::fs::create_dir(&live_dir).expect("mkdir");
        let live_lock = std::fs::File::create(lock_path(b, live_pid)).expect("lock file");
        flock(&live_lock, FlockOperation::LockExclusive).expect("flock");
        std::fs::create_dir(b.join("snapconf-jail-Q1w2e3")).expect("mkdir");
        let removed = sweep_dead(&key(b), false);
        assert_eq!(removed.len(), 2, "{removed:?}");
        let mut left: Vec<String> = std::fs::read_dir(b)
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                format!("snapconf-{live_pid}.lock"),
                format!("snapconf-fuzz-{live_pid}-0"),
                "snapconf-jail-Q1w2e3".to_string(),
            ]
        );
    }

    /// A lease makes and locks this process's lock file beside the base's entries, and the
    /// last lease unlinks it.
    #[test]
    fn the_last_lease_removes_the_lock_file() {
        let base = tempfile::tempdir().expect("tempdir");
        let lock = lock_path(&key(base.path()), std::process::id());
        let a = BaseLease::take(base.path());
        let b = BaseLease::take(base.path());
        assert!(lock.exists());
        let other = std::fs::File::open(&lock).expect("open");
        assert_eq!(
            flock(&other, FlockOperation::NonBlockingLockExclusive),
            Err(Errno::WOULDBLOCK),
            "the lock is held while a lease is"
        );
        drop(a);
        assert!(lock.exists());
        drop(b);
        assert!(!lock.exists());
    }
}
