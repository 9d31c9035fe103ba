//! The end of a hydration: the state of the root before we start ([`RootState`]), the
//! write pass of a plan validated in place ([`apply`]), and the commit ([`commit`]): the
//! root's owner and mode given to the staged tree, the exchange ([`swap`]) and the old
//! tree's removal.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{fchmod, renameat_with, statat, AtFlags, FileType, Mode, RenameFlags};
use rustix::io::Errno;

use crate::error::io_err;
use crate::plan::{self, Plan};
use crate::recover::recover_in;
use crate::sibling::Sibling;
use crate::{stage, HydrateError, HydrateReport};

use super::staged::{set_root_time, Staged};

/// The end of a single pass ([`stage_stream`](super::staged::stage_stream)): takes the
/// parent's lock, then commits `staged` or returns its error.
pub(super) fn commit_staged(
    sib: &Sibling,
    staged: Result<Staged<'_>, HydrateError>,
    root: &Path,
) -> Result<HydrateReport, HydrateError> {
    sib.lock(root)?;
    // What a crash left is resolved first, whatever the verdict on this archive.
    recover_in(sib)?;
    let staged = staged?;
    commit(sib, staged, root)
}

/// What is at `root` before we start.
enum RootState {
    Absent,
    /// A directory: its permission bits (with setuid/setgid/sticky), owner and group.
    Dir {
        mode: u32,
        uid: u32,
        gid: u32,
    },
}

fn root_state(sib: &Sibling, root: &Path) -> Result<RootState, HydrateError> {
    let shown = root.display();
    match statat(sib.parent(), sib.root_name(), AtFlags::SYMLINK_NOFOLLOW) {
        Err(Errno::NOENT) => Ok(RootState::Absent),
        Err(e) => Err(io_err(format!("inspecting root `{shown}`"), e)),
        Ok(st) => match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory => Ok(RootState::Dir {
                mode: st.st_mode & 0o7777,
                uid: st.st_uid,
                gid: st.st_gid,
            }),
            FileType::Symlink => Err(io_err(
                format!("root `{shown}`"),
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "root is a symlink; refusing to hydrate through it",
                ),
            )),
            _ => Err(io_err(
                format!("root `{shown}`"),
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "root exists and is not a directory",
                ),
            )),
        },
    }
}

/// The write pass of a checked plan (payloads read from `data` by offset), the swap and the
/// clean-up; under the parent's lock.
pub(super) fn apply(
    sib: &Sibling,
    plan: Plan,
    data: &File,
    root: &Path,
) -> Result<HydrateReport, HydrateError> {
    // The caller ran `recover_in` under the same lock before building the plan. A bad root
    // fails before anything is written.
    root_state(sib, root)?;
    let (name, fd) = sib.create_stage()?;
    let staged = Staged {
        sib,
        name,
        fd,
        plan,
        committed: false,
    };
    stage::write(staged.fd.as_fd(), &staged.plan, data)?;
    set_root_time(&staged.fd, &staged.plan)?;
    commit(sib, staged, root)
}

/// Gives the staged tree the root's mode, swaps it in and removes the old tree; under the
/// parent's lock. On error the staging directory is removed and the root is unchanged.
fn commit(
    sib: &Sibling,
    mut staged: Staged<'_>,
    root: &Path,
) -> Result<HydrateReport, HydrateError> {
    let state = root_state(sib, root)?;
    let mode = match state {
        RootState::Dir { mode, uid, gid } => {
            keep_owner(&staged.fd, uid, gid)?;
            mode
        }
        RootState::Absent => staged.plan.root_mode.unwrap_or(plan::IMPLICIT_DIR_MODE),
    };
    // After the owner: a change of group may clear setgid, and this sets it again.
    fchmod(&staged.fd, Mode::from_raw_mode(mode))
        .map_err(|e| io_err("setting the root's mode", e))?;
    swap(sib, &staged.name, &state, root)?;
    // Committed: the exchange is the commit record. From here on the new tree is in place
    // whatever happens; a failure only leaves the old tree under the staging name, which
    // `recover` (and the next hydration) removes, as it removes any staging-shaped name.
    staged.committed = true;
    let mut report = std::mem::take(&mut staged.plan.report);
    // The old root is empty after a first hydration.
    if let Err(e) = crate::remove::remove_likely_empty_at(sib.parent(), &staged.name) {
        report.leftover = Some(format!(
            "the old tree, now `{}` beside the root, could not be removed: {e}",
            crate::sibling::show(&staged.name)
        ));
    }
    Ok(report)
}

/// Gives the staged root (`fd`) the prior root's owner `uid` and group `gid`, as far as the
/// caller may: both when it may (root, or an owner already the caller), else the group
/// alone (a group the caller is a member of), else neither (`EPERM` is not an error: the
/// root is then the caller's, as any directory it makes).
///
/// # Errors
/// [`HydrateError::Io`] for a `fchown(2)` error other than `EPERM`.
fn keep_owner(fd: &OwnedFd, uid: u32, gid: u32) -> Result<(), HydrateError> {
    use rustix::fs::{fchown, Gid, Uid};
    let gid = Some(Gid::from_raw(gid));
    let result = match fchown(fd, Some(Uid::from_raw(uid)), gid) {
        Err(Errno::PERM) => fchown(fd, None, gid),
        other => other,
    };
    match result {
        Ok(()) | Err(Errno::PERM) => Ok(()),
        Err(e) => Err(io_err("giving the root its prior owner", e)),
    }
}

/// The commit point: one `renameat2`. `RENAME_EXCHANGE` swaps the two names atomically (the
/// staging name then holds the old tree); a missing root gets `RENAME_NOREPLACE`, so a root
/// created meanwhile by someone else is not clobbered.
fn swap(sib: &Sibling, stage: &[u8], state: &RootState, root: &Path) -> Result<(), HydrateError> {
    let flags = match state {
        RootState::Dir { .. } => RenameFlags::EXCHANGE,
        RootState::Absent => RenameFlags::NOREPLACE,
    };
    renameat_with(sib.parent(), stage, sib.parent(), sib.root_name(), flags).map_err(|e| {
        io_err(
            format!("swapping the staged tree into `{}`", root.display()),
            e,
        )
    })
}
