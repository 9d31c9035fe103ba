//! Finishing or rolling back what a killed hydration left beside the root.

use std::path::Path;

use rustix::fs::Dir;

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
pub(crate) fn recover_in(sib: &Sibling) -> Result<Option<Phase>, HydrateError> {
    let found = journal::read(sib).map_err(|e| io_err("reading the snapconf journal", e))?;
    if let Some(j) = &found {
        // Only a name of the exact staging shape is ever deleted, whatever the journal says.
        if sib.is_stage_name(&j.stage) {
            remove_tree(sib.parent(), &j.stage)
                .map_err(|e| io_err(format!("removing leftover `{}`", show(&j.stage)), e))?;
        }
    }
    let dir = Dir::read_from(sib.parent()).map_err(|e| io_err("listing the root's parent", e))?;
    let mut strays = Vec::new();
    for entry in dir {
        let entry = entry.map_err(|e| io_err("listing the root's parent", e))?;
        let name = entry.file_name().to_bytes();
        if sib.is_stage_name(name) {
            strays.push(name.to_vec());
        }
    }
    for name in strays {
        remove_tree(sib.parent(), &name)
            .map_err(|e| io_err(format!("removing leftover `{}`", show(&name)), e))?;
    }
    journal::remove(sib).map_err(|e| io_err("removing the snapconf journal", e))?;
    Ok(found.map(|j| j.phase))
}
