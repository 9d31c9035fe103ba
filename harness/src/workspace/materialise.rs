//! Turn a [`WorkspaceSpec`] into real files under a root, and remove trees again.
//!
//! [`materialise`] creates every entry of `spec.with_parents()` in order, then applies the
//! permission bits with `chmod` deepest first, so that read-only (`0555`) and unreadable
//! (`0000`) directories can hold children (H7) and setuid bits are not cleared by a later
//! write. [`clear_dir`] and [`remove_tree`] undo it without ever following a symlink, even
//! through `0000` directories left behind by a tool under test.

use crate::model::bytes::RelPath;
use crate::model::spec::{EntryKind, Placeholders, SpecError, WorkspaceSpec};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, CWD};
use std::ffi::OsStr;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What [`materialise`] could not create and why; everything else exists on disk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Materialised {
    /// Entries left out, with a lower-case reason (e.g. a char device when not root).
    pub skipped: Vec<(RelPath, String)>,
}

/// Why a spec could not be materialised; every variant names the path.
#[derive(Debug, thiserror::Error)]
pub enum MaterialiseError {
    /// The spec itself is inconsistent (see [`WorkspaceSpec::check`]).
    #[error("invalid spec: {0}")]
    Spec(#[from] SpecError),
    /// The root could not be created or is not a directory.
    #[error("cannot prepare root `{root}`: {source}")]
    Root {
        /// The root.
        root: PathBuf,
        /// Why it could not be prepared.
        #[source]
        source: io::Error,
    },
    /// An entry is listed before its parent directory, so it cannot be created in order
    /// (`WorkspaceSpec::check` does not catch this; `with_parents` only adds unlisted
    /// parents).
    #[error("entry `{path}` comes before its parent directory `{parent}`")]
    ParentAfterChild {
        /// The entry listed too early.
        path: RelPath,
        /// Its parent directory, listed after it.
        parent: RelPath,
    },
    /// Creating (or chmod-ing) one entry failed.
    #[error("cannot {action} `{path}`: {source}")]
    Entry {
        /// The entry.
        path: RelPath,
        /// What was attempted: `create dir`, `write file`, `hardlink`, `symlink`, `mkfifo`,
        /// `bind socket`, `mknod`, `chmod`.
        action: &'static str,
        /// The failed call's error.
        #[source]
        source: io::Error,
    },
}

/// True if this process can create an entry of this kind: `false` for a char device
/// unless the effective uid is root, `true` otherwise.
pub fn can_create(kind: &EntryKind) -> bool {
    match kind {
        EntryKind::CharDevice { .. } => rustix::process::geteuid().is_root(),
        _ => true,
    }
}

/// Create `spec` under `root`.
///
/// `root` is created if absent (its parent must exist); if it exists it must be a directory
/// and the entries must not collide with what is there. Entries are created in
/// `spec.with_parents()` order: directories, files with their content, hardlinks (`linkat`
/// without `AT_SYMLINK_FOLLOW`, so a hardlink to a symlink names the symlink inode, H8),
/// symlinks (target passed through [`Placeholders::resolve`]), FIFOs, sockets (bound, then
/// closed) and char devices. Modes are applied afterwards, deepest entry first; symlinks
/// and hardlinks get no `chmod` (a hardlink shares its target's mode). Ownership and times
/// are left as created.
///
/// Sockets whose path exceeds `sun_path` (108 bytes) are bound under a short name through
/// `/proc/self/fd/<dirfd>/` and renamed into place. A char device without root, or whose
/// `mknod` is refused with `EPERM`, and a socket that cannot be bound either way are
/// reported in [`Materialised::skipped`] rather than failing.
///
/// # Errors
/// [`MaterialiseError::Spec`] if `spec.check()` fails,
/// [`MaterialiseError::ParentAfterChild`] if a listed directory follows one of its
/// children (both before anything is created), [`MaterialiseError::Root`] if the
/// root cannot be prepared, and [`MaterialiseError::Entry`] naming the first entry whose
/// creation or `chmod` failed (the root is then left partly populated; see [`clear_dir`]).
pub fn materialise(
    spec: &WorkspaceSpec,
    root: &Path,
    ph: &Placeholders,
) -> Result<Materialised, MaterialiseError> {
    spec.check()?;
    prepare_root(root).map_err(|source| MaterialiseError::Root {
        root: root.to_path_buf(),
        source,
    })?;
    let entries = spec.with_parents();
    check_order(&entries)?;
    let mut out = Materialised::default();
    let mut to_chmod = Vec::new();
    for entry in &entries {
        if create_entry(entry, root, ph, &mut out)? == Some(true) {
            to_chmod.push(entry);
        }
    }
    // Deepest first: a directory loses its write/search bits only after its children are
    // done; the sort is stable, so siblings keep creation order.
    to_chmod.sort_by_key(|e| std::cmp::Reverse(e.path.depth()));
    for entry in to_chmod {
        rustix::fs::chmod(
            entry.path.to_path(root),
            Mode::from_raw_mode(entry.effective_mode()),
        )
        .map_err(|e| MaterialiseError::Entry {
            path: entry.path.clone(),
            action: "chmod",
            source: e.into(),
        })?;
    }
    Ok(out)
}

/// Create one entry of a spec at its path under `root` (its parent exists): as
/// [`materialise`] describes. `Some(true)` when its mode is still to be applied with
/// `chmod` (once the whole tree exists), `Some(false)` when it was created with it, `None`
/// when it was left out (pushed to `out.skipped`: a char device without root, a socket
/// that cannot be bound).
pub(crate) fn create_entry(
    entry: &crate::model::spec::Entry,
    root: &Path,
    ph: &Placeholders,
    out: &mut Materialised,
) -> Result<Option<bool>, MaterialiseError> {
    let path = entry.path.to_path(root);
    let fail = |action: &'static str| {
        let p = entry.path.clone();
        move |source| MaterialiseError::Entry {
            path: p,
            action,
            source,
        }
    };
    // Created with its final mode where the umask lets it (and, for a directory, where
    // that mode still lets us fill it); the rest is `chmod`-ed after everything exists.
    let mode = entry.effective_mode();
    let exact = umask().is_some_and(|u| mode & (u | 0o7000) == 0);
    let chmod_later = match &entry.kind {
        EntryKind::Dir => {
            let now = exact && mode & 0o700 == 0o700;
            let initial = if now { mode } else { 0o755 };
            std::fs::DirBuilder::new()
                .mode(initial)
                .create(&path)
                .map_err(fail("create dir"))?;
            !now
        }
        EntryKind::File { content } => {
            let initial = if exact { mode } else { 0o600 };
            write_new_file(&path, content.as_bytes(), initial).map_err(fail("write file"))?;
            !exact
        }
        EntryKind::Hardlink { target } => {
            let from = if target.as_bytes().starts_with(b"{out}/") {
                std::path::PathBuf::from(OsStr::from_bytes(&ph.resolve(target.as_bytes())))
            } else {
                target.to_path(root)
            };
            rustix::fs::linkat(CWD, from, CWD, &path, AtFlags::empty())
                .map_err(io::Error::from)
                .map_err(fail("hardlink"))?;
            false
        }
        EntryKind::Symlink { target } => {
            let resolved = ph.resolve(target.as_bytes());
            std::os::unix::fs::symlink(OsStr::from_bytes(&resolved), &path)
                .map_err(fail("symlink"))?;
            false
        }
        EntryKind::Fifo => {
            rustix::fs::mkfifoat(CWD, &path, Mode::from_raw_mode(0o600))
                .map_err(io::Error::from)
                .map_err(fail("mkfifo"))?;
            true
        }
        EntryKind::Socket => {
            if let Err(why) = make_socket(&path).map_err(fail("bind socket"))? {
                out.skipped.push((entry.path.clone(), why));
                return Ok(None);
            }
            true
        }
        EntryKind::CharDevice { major, minor } => {
            if !can_create(&entry.kind) {
                out.skipped
                    .push((entry.path.clone(), "char device needs root".to_string()));
                return Ok(None);
            }
            let dev = rustix::fs::makedev(*major, *minor);
            match rustix::fs::mknodat(
                CWD,
                &path,
                FileType::CharacterDevice,
                Mode::from_raw_mode(0o600),
                dev,
            ) {
                Ok(()) => {}
                Err(rustix::io::Errno::PERM) => {
                    out.skipped.push((
                        entry.path.clone(),
                        "mknod refused with EPERM (no CAP_MKNOD?)".to_string(),
                    ));
                    return Ok(None);
                }
                Err(e) => return Err(fail("mknod")(io::Error::from(e))),
            }
            true
        }
    };
    Ok(Some(chmod_later))
}

/// Every listed parent directory must come before its children.
pub(crate) fn check_order(entries: &[crate::model::spec::Entry]) -> Result<(), MaterialiseError> {
    let position: std::collections::BTreeMap<&RelPath, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (&e.path, i))
        .collect();
    for (i, entry) in entries.iter().enumerate() {
        let mut parent = entry.path.parent();
        while let Some(dir) = parent {
            if position.get(&dir).is_some_and(|&j| j > i) {
                return Err(MaterialiseError::ParentAfterChild {
                    path: entry.path.clone(),
                    parent: dir,
                });
            }
            parent = dir.parent();
        }
    }
    Ok(())
}

pub(crate) fn prepare_root(root: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(root) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "exists and is not a directory (symlinks are not followed)",
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::create_dir(root),
        Err(e) => Err(e),
    }
}

/// The process's umask, from `/proc/self/status` (read once; snapconf never changes it);
/// `None` where that line is missing, and every entry is then `chmod`-ed.
fn umask() -> Option<u32> {
    static UMASK: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *UMASK.get_or_init(|| {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
        u32::from_str_radix(line.trim(), 8).ok()
    })
}

fn write_new_file(path: &Path, content: &[u8], mode: u32) -> io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    f.write_all(content)
}

/// Bind a Unix socket at `path` and close it, leaving the socket inode behind.
///
/// A path too long for `sun_path` (`bind` fails with `InvalidInput`) is bound under a
/// short temporary name via `/proc/self/fd/<parent fd>/` and renamed into place with
/// `RENAME_NOREPLACE`; if that fails too, `Ok(Err(reason))` asks the caller to skip the
/// entry. Any other `bind` failure, and an existing entry at `path`, is `Err`.
fn make_socket(path: &Path) -> io::Result<Result<(), String>> {
    let direct = match std::os::unix::net::UnixListener::bind(path) {
        Ok(listener) => {
            drop(listener);
            return Ok(Ok(()));
        }
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => e,
        Err(e) => return Err(e),
    };
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(Err(format!("cannot bind socket: {direct}")));
    };
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let short = format!(
        ".snapconf-sock-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let long = || -> io::Result<()> {
        let dir = rustix::fs::openat(
            CWD,
            parent,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let via = format!("/proc/self/fd/{}/{short}", dir.as_raw_fd());
        drop(std::os::unix::net::UnixListener::bind(&via)?);
        let renamed =
            rustix::fs::renameat_with(&dir, short.as_str(), &dir, name, RenameFlags::NOREPLACE);
        if let Err(e) = renamed {
            // Best effort: the rename error is the one worth reporting.
            let _ = rustix::fs::unlinkat(&dir, short.as_str(), AtFlags::empty());
            return Err(e.into());
        }
        Ok(())
    };
    match long() {
        Ok(()) => Ok(Ok(())),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(e),
        Err(e) => Ok(Err(format!(
            "cannot bind socket: {direct}; via /proc/self/fd: {e}"
        ))),
    }
}

/// Remove everything under a directory but not the directory itself, and remove a tree:
/// the reference extractor's removers (never follow a symlink, make `0555` and `0000`
/// directories writable as they go, never cross into another mount), shared so that the
/// jails, the adapters and the extractor clean up the same way. See
/// [`snapconf_extract::remove`] for shapes and errors.
pub use snapconf_extract::remove::{clear_dir, remove_tree};

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
