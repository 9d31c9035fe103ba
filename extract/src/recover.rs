//! Finishing or rolling back what a killed hydration left beside the root.

use std::path::Path;

use std::mem::MaybeUninit;

use rustix::fs::{seek, RawDir, SeekFrom};

use crate::error::io_err;
use crate::journal::{self, Phase};
use crate::remove::remove_tree_at as remove_tree;
use crate::sibling::{show, Sibling};
use crate::HydrateError;

/// Resolves whatever a crashed [`crate::hydrate`] of `root` left in `root`'s parent, so that
/// `root` is exactly the prior tree or exactly the new tree and no staging, old tree or
/// journal remains beside it.
///
/// - Journal phase `staged` (killed before the swap): the staging tree is deleted (roll back;
///   `root` is the prior tree).
/// - Journal phase `swapped` (killed after the swap): the old tree, now under the staging
///   name, is deleted (finish; `root` is the new tree).
/// - Any other `.<root>.snapconf-stage-<16 hex>` sibling is a leftover too and is deleted.
///
/// `root` itself is never modified. Doing nothing is success. [`crate::hydrate`] calls this
/// first, so an explicit call is only needed to clean up without hydrating.
///
/// # Errors
/// [`HydrateError::Io`] if the parent cannot be opened or locked, the journal is unreadable
/// (it is then left for a human), or a leftover cannot be removed (e.g. a mount point inside
/// it). Hydrations of roots in the same parent directory wait for each other (`flock`).
pub fn recover(root: &Path) -> Result<(), HydrateError> {
    let sib = Sibling::open(root)?;
    recover_in(&sib).map(|_| ())
}

/// [`recover`] with the parent already open and locked; returns the phase found, if any.
///
/// The parent is listed once (by its handle, from offset 0): with no journal and no
/// staging-shaped name in it, which is every hydration after a clean one, that listing is
/// all the work.
pub(crate) fn recover_in(sib: &Sibling) -> Result<Option<Phase>, HydrateError> {
    let listing_err = |e: rustix::io::Errno| io_err("listing the root's parent", e);
    let (journal, journal_tmp) = (sib.journal_name(), sib.journal_tmp_name());
    let mut strays = Vec::new();
    let mut journals = false;
    seek(sib.parent(), SeekFrom::Start(0)).map_err(listing_err)?;
    let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
    let mut dir = RawDir::new(sib.parent(), &mut buf);
    while let Some(entry) = dir.next() {
        let entry = entry.map_err(listing_err)?;
        let name = entry.file_name().to_bytes();
        if sib.is_stage_name(name) {
            strays.push(name.to_vec());
        } else if name == journal.as_slice() || name == journal_tmp.as_slice() {
            journals = true;
        }
    }
    // An unreadable journal stops everything before anything is removed (left for a human).
    let found = if journals {
        journal::read(sib).map_err(|e| io_err("reading the snapconf journal", e))?
    } else {
        None
    };
    // Only names of the exact staging shape are ever deleted, whatever the journal says; the
    // one the journal names is among them if it still exists.
    for name in strays {
        remove_tree(sib.parent(), &name)
            .map_err(|e| io_err(format!("removing leftover `{}`", show(&name)), e))?;
    }
    if journals {
        journal::remove(sib).map_err(|e| io_err("removing the snapconf journal", e))?;
    }
    Ok(found.map(|j| j.phase))
}
