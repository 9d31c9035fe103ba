//! The staging directory beside the root ([`Staged`], removed unless committed) and the
//! single pass that validates a decompressed stream and writes it there ([`stage_stream`]).

use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use crate::error::io_err;
use crate::input::StreamInput;
use crate::plan::{self, Plan};
use crate::remove::remove_tree_at as remove_tree;
use crate::sibling::Sibling;
use crate::{stage, HydrateError, Policy};

use super::{discard_trailer, validate_tar};

/// A staging directory of ours beside the root, with its lock (see
/// [`Sibling::create_stage`]) and the plan it was built from. Dropped uncommitted, it is
/// removed (before its lock is released).
pub(super) struct Staged<'s> {
    pub(super) sib: &'s Sibling,
    pub(super) name: Vec<u8>,
    pub(super) fd: OwnedFd,
    pub(super) plan: Plan,
    /// Set once the exchange put it in place of the root.
    pub(super) committed: bool,
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        if !self.committed {
            // A failure here leaves it for `recover` (the lock goes with the handle).
            let _ = remove_tree(self.sib.parent(), &self.name);
        }
    }
}

/// Creates and locks a staging directory of `root` (briefly taking the parent's lock, so
/// that no recovery can see it unlocked).
fn new_stage<'s>(sib: &'s Sibling, root: &Path) -> Result<Staged<'s>, HydrateError> {
    sib.lock(root)?;
    let created = sib.create_stage();
    let unlocked = sib.unlock();
    let (name, fd) = created?;
    let staged = Staged {
        sib,
        name,
        fd,
        plan: Plan::default(),
        committed: false,
    };
    unlocked?;
    Ok(staged)
}

/// The single pass over a decompressed tar stream: validates it and writes each checked
/// member into a new staging directory as it is read (see [`stage::Direct`]), then the rest
/// of the tree. On any error the staging directory is gone.
pub(super) fn stage_stream<'s>(
    sib: &'s Sibling,
    root: &Path,
    tar: impl Read,
    policy: &Policy,
) -> Result<Staged<'s>, HydrateError> {
    let mut staged = match new_stage(sib, root) {
        Ok(staged) => staged,
        // No staging directory (a full or read-only parent): the archive is still read
        // through, so that a refusal wins over the fault, as it does for a fault later on.
        Err(fault) => {
            validate_tar(tar, policy)?;
            return Err(fault);
        }
    };
    let mut input = StreamInput::new(tar);
    let mut writer = stage::Direct::new(staged.fd.as_fd());
    let (plan, _) = plan::build_into(&mut input, 0, policy, false, &mut writer)?;
    discard_trailer(&mut input)?;
    writer.finish(&plan)?;
    set_root_time(&staged.fd, &plan)?;
    staged.plan = plan;
    Ok(staged)
}

/// Gives the staging root the time of a `.` member. Last: writing the tree moved it; the
/// root's mode, set later, and the exchange, which renames the directory within one parent,
/// leave it alone.
pub(super) fn set_root_time(fd: &OwnedFd, plan: &Plan) -> Result<(), HydrateError> {
    if let Some(t) = plan.root_mtime.and_then(stage::times) {
        rustix::fs::futimens(fd, &t).map_err(|e| io_err("setting the root's time", e))?;
    }
    Ok(())
}
