//! Finishing or rolling back what a killed hydration left beside the root.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use std::mem::MaybeUninit;

use std::os::fd::OwnedFd;

use rustix::fs::{
    flock, openat, seek, unlinkat, AtFlags, FlockOperation, Mode, OFlags, RawDir, SeekFrom,
};
use rustix::io::Errno;

use crate::error::io_err;
use crate::remove::remove_tree_at as remove_tree;
use crate::sibling::{show, Sibling};
use crate::HydrateError;

/// Resolves whatever a crashed [`crate::hydrate`] of `root` left in `root`'s parent, so that
/// `root` is exactly the prior tree or exactly the new tree and nothing of ours remains
/// beside it.
///
/// A hydration leaves at most one thing behind: a `.<root>.snapconf-stage-<16 hex>`
/// sibling. Killed before the exchange, it is a partial staging tree and `root` is the prior
/// tree (rolled back); killed after it, it holds the old tree and `root` is the new tree
/// (finished). Either way the sibling is deleted, and no record is needed to tell the two
/// apart: the `renameat2(RENAME_EXCHANGE)` is the single commit point. Journals that earlier
/// versions wrote beside the root (`.<root>.snapconf-journal[.tmp]`) are unlinked unread.
///
/// A staging directory that a hydration still running holds (its `flock`, see
/// [`crate::hydrate`]) is not a leftover and is left alone.
///
/// `root` itself is never modified. Doing nothing is success. [`crate::hydrate`] calls this
/// first, so an explicit call is only needed to clean up without hydrating (`snapconf
/// recover ROOT`). Returns what it found and did ([`Recovery`]).
///
/// # Errors
/// [`HydrateError::Io`] if the parent cannot be opened or locked, or a leftover cannot be
/// removed (e.g. a mount point inside it; it is then left in place). Leftovers removed
/// before the failing one stay removed.
///
/// # Example
/// A hydration killed before its exchange leaves a partial staging tree beside the root;
/// `recover` removes it and leaves the root alone.
///
/// ```rust
/// use snapconf_extract::recover;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let root = dir.path().join("ws");
/// std::fs::create_dir(&root)?;
/// std::fs::write(root.join("kept.txt"), "prior tree")?;
/// // What a hydration killed mid-way leaves: `.<root>.snapconf-stage-<16 hex>`.
/// let stage = dir.path().join(".ws.snapconf-stage-0123456789abcdef");
/// std::fs::create_dir_all(stage.join("half/written"))?;
///
/// let recovery = recover(&root)?;
/// assert_eq!(recovery.removed, [stage.file_name().unwrap_or_default()]);
/// assert!(!stage.exists());
/// assert_eq!(std::fs::read(root.join("kept.txt"))?, b"prior tree");
/// assert!(recover(&root)?.is_empty(), "nothing left to do");
/// # Ok(())
/// # }
/// ```
pub fn recover(root: &Path) -> Result<Recovery, HydrateError> {
    let sib = Sibling::open(root)?;
    recover_in(&sib)
}

/// What [`recover`] found beside a root: file names in the root's parent directory, in the
/// order the directory listed them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// Staging directories of dead hydrations, removed: each held either a partial tree
    /// (the root kept its prior tree) or, after the exchange, the old tree (the root holds
    /// the new one); both cases end the same way, with the root whole.
    pub removed: Vec<OsString>,
    /// Staging directories a live hydration holds (locked), left alone.
    pub live: Vec<OsString>,
    /// Journals of earlier versions (`.<root>.snapconf-journal[.tmp]`), unlinked.
    pub journals: Vec<OsString>,
}

impl Recovery {
    /// True if nothing was found (no leftover, no live staging directory).
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty() && self.live.is_empty() && self.journals.is_empty()
    }
}

/// `Some` if the staging-shaped `name` is not a live hydration's staging directory: with
/// the directory's `flock`, held until the value is dropped, when it could be opened; with
/// `None` inside when it could not (not a directory, or one we cannot open: a live staging
/// directory is always ours, mode `0700`, so one we cannot open is no live one). `None` if
/// another open file holds the lock.
fn unless_live(sib: &Sibling, name: &[u8]) -> Option<Option<OwnedFd>> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(fd) = openat(sib.parent(), name, flags, Mode::empty()) else {
        return Some(None);
    };
    match flock(&fd, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Some(Some(fd)),
        Err(Errno::WOULDBLOCK) => None,
        // A filesystem without `flock` has no live hydration's lock to respect either.
        Err(_) => Some(Some(fd)),
    }
}

/// [`recover`] with the parent already open and locked.
///
/// The parent is listed once (by its handle, from offset 0): with no staging-shaped name in
/// it, which is every hydration after a clean one, that listing is all the work.
pub(crate) fn recover_in(sib: &Sibling) -> Result<Recovery, HydrateError> {
    let listing_err = |e: rustix::io::Errno| io_err("listing the root's parent", e);
    let legacy = [sib.legacy_journal_name(), sib.legacy_journal_tmp_name()];
    let mut strays = Vec::new();
    let mut journals = Vec::new();
    seek(sib.parent(), SeekFrom::Start(0)).map_err(listing_err)?;
    let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
    let mut dir = RawDir::new(sib.parent(), &mut buf);
    while let Some(entry) = dir.next() {
        let entry = entry.map_err(listing_err)?;
        let name = entry.file_name().to_bytes();
        if sib.is_stage_name(name) {
            strays.push(name.to_vec());
        } else if legacy.iter().any(|l| l.as_slice() == name) {
            journals.push(name.to_vec());
        }
    }
    // Only names of the exact staging shape are ever deleted as trees, and only if no live
    // hydration holds the staging directory's lock (see `crate::sibling`): the lock is
    // taken here before removing and held until it is done.
    let mut done = Recovery::default();
    let os = |name: Vec<u8>| OsString::from_vec(name);
    for name in strays {
        let Some(_held) = unless_live(sib, &name) else {
            done.live.push(os(name));
            continue;
        };
        remove_tree(sib.parent(), &name)
            .map_err(|e| io_err(format!("removing leftover `{}`", show(&name)), e))?;
        done.removed.push(os(name));
    }
    // A journal name is unlinked as a name (never opened: it may be anything, a FIFO too);
    // a directory there was never ours and is left alone.
    for name in journals {
        match unlinkat(sib.parent(), name.as_slice(), AtFlags::empty()) {
            Ok(()) => done.journals.push(os(name)),
            Err(Errno::NOENT | Errno::ISDIR) => {}
            Err(e) => return Err(io_err(format!("removing leftover `{}`", show(&name)), e)),
        }
    }
    Ok(done)
}
