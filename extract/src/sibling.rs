//! The root's parent directory and the names we keep beside the root while a hydration runs.
//!
//! For a root named `ws` the one sibling is `.ws.snapconf-stage-<16 hex>`: the staging tree;
//! after the swap, the same name holds the old tree until it is removed.
//!
//! A live staging directory is `flock`ed through its own handle by the hydration writing
//! it (taken under the parent's lock, right after `mkdir`), so that the validation pass of
//! a stream can write into it without holding the parent's lock, and a recovery running
//! meanwhile (which takes the parent's lock) skips it; the kernel drops that lock when the
//! process dies, and the directory is then a leftover like any other. After the exchange
//! the name holds the old tree, whose directory nobody locks.
//!
//! Nothing else outside the root is ever created, and after a successful call (or `recover`)
//! it does not remain. (Earlier versions also kept a journal, `.ws.snapconf-journal[.tmp]`;
//! `recover` unlinks such leftovers.) The parent is held through one handle, so a rename of the parent's
//! path during the call cannot move our writes elsewhere; concurrent hydrations of roots in
//! the same parent are serialised by `flock` on that handle (released by the kernel if the
//! process dies, so a crash never leaves a stale lock).

use std::collections::hash_map::RandomState;
use std::ffi::OsStr;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use rustix::fs::{flock, mkdirat, open, openat, FlockOperation, Mode, OFlags};

use crate::error::io_err;
use crate::HydrateError;

/// Bytes of the root's name used in sibling names (keeps them under `NAME_MAX`).
const NAME_PREFIX_MAX: usize = 200;
/// Hex digits of the random part of a staging name.
const RANDOM_HEX: usize = 16;

/// The root's parent, locked, plus the root's name.
pub(crate) struct Sibling {
    parent: OwnedFd,
    name: Vec<u8>,
    prefix: Vec<u8>,
}

impl Sibling {
    /// Opens and locks the parent of `root`. `root` must end in a normal component (not `/`,
    /// `.` or `..`); its parent must exist.
    pub(crate) fn open(root: &Path) -> Result<Sibling, HydrateError> {
        let sib = Sibling::open_unlocked(root)?;
        sib.lock(root)?;
        Ok(sib)
    }

    /// Takes the exclusive `flock` on the parent (blocks while another hydration of a root in
    /// the same parent holds it).
    pub(crate) fn lock(&self, root: &Path) -> Result<(), HydrateError> {
        flock(&self.parent, FlockOperation::LockExclusive).map_err(|e| {
            io_err(
                format!("locking the parent of root `{}`", root.display()),
                e,
            )
        })
    }

    /// Releases the `flock` on the parent.
    pub(crate) fn unlock(&self) -> Result<(), HydrateError> {
        flock(&self.parent, FlockOperation::Unlock)
            .map_err(|e| io_err("unlocking the parent of the root", e))
    }

    /// Creates a fresh staging directory (mode `0700`) and takes the exclusive `flock` on
    /// it, which the returned handle holds until it is closed: while it is held,
    /// [`crate::recover`] (of this or any process) leaves the directory alone. The caller
    /// holds the parent's lock, so no recovery can see the directory before it is locked.
    pub(crate) fn create_stage(&self) -> Result<(Vec<u8>, OwnedFd), HydrateError> {
        let name = self.new_stage_name();
        mkdirat(self.parent(), name.as_slice(), Mode::from_raw_mode(0o700))
            .map_err(|e| io_err("creating the staging directory", e))?;
        let opened = openat(
            self.parent(),
            name.as_slice(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .and_then(|fd| flock(&fd, FlockOperation::NonBlockingLockExclusive).map(|()| fd));
        match opened {
            Ok(fd) => Ok((name, fd)),
            Err(e) => {
                let _ = crate::remove::remove_tree_at(self.parent(), &name);
                Err(io_err("opening the staging directory", e))
            }
        }
    }

    /// Opens the parent of `root` without locking it (for reading a slow stream before the
    /// lock is taken, so one stalled input does not block other hydrations).
    pub(crate) fn open_unlocked(root: &Path) -> Result<Sibling, HydrateError> {
        let shown = root.display();
        let name = match root.components().next_back() {
            Some(Component::Normal(n)) => n.as_bytes().to_vec(),
            _ => {
                return Err(io_err(
                    format!("root `{shown}`"),
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "root must end in a plain name (not `/`, `.` or `..`)",
                    ),
                ))
            }
        };
        let parent_path = match root.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let parent = open(
            parent_path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io_err(format!("opening the parent of root `{shown}`"), e))?;
        let mut prefix = b".".to_vec();
        prefix.extend_from_slice(&name[..name.len().min(NAME_PREFIX_MAX)]);
        prefix.extend_from_slice(b".snapconf-");
        Ok(Sibling {
            parent,
            name,
            prefix,
        })
    }

    pub(crate) fn parent(&self) -> BorrowedFd<'_> {
        self.parent.as_fd()
    }

    /// The root's own name in the parent.
    pub(crate) fn root_name(&self) -> &[u8] {
        &self.name
    }

    /// The journal name earlier versions wrote beside the root (`recover` unlinks it).
    pub(crate) fn legacy_journal_name(&self) -> Vec<u8> {
        [&self.prefix[..], b"journal"].concat()
    }

    /// Its temporary name (`recover` unlinks it too).
    pub(crate) fn legacy_journal_tmp_name(&self) -> Vec<u8> {
        [&self.prefix[..], b"journal.tmp"].concat()
    }

    /// A fresh staging name.
    pub(crate) fn new_stage_name(&self) -> Vec<u8> {
        let mut h = RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            h.write_u128(t.as_nanos());
        }
        let hex = format!("{:016x}", h.finish());
        [&self.prefix[..], b"stage-", hex.as_bytes()].concat()
    }

    /// True if `name` is a staging name of this root (exact prefix, 16 lowercase hex digits).
    pub(crate) fn is_stage_name(&self, name: &[u8]) -> bool {
        let Some(rest) = name.strip_prefix(&self.prefix[..]) else {
            return false;
        };
        let Some(hex) = rest.strip_prefix(b"stage-") else {
            return false;
        };
        hex.len() == RANDOM_HEX
            && hex
                .iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
    }
}

/// Lossy display of a name for messages.
pub(crate) fn show(name: &[u8]) -> String {
    OsStr::from_bytes(name).to_string_lossy().into_owned()
}
