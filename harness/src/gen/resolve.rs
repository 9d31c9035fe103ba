//! Resolution: a deterministic, total map from plans to a valid `WorkspaceSpec`. Parents and
//! targets are indices modulo what exists so far, names are deduplicated by suffixing, so
//! removing or simplifying any plan (what shrinking does) still gives a valid spec.

use super::builder::{inode_groups, Builder, MAX_PATH_BYTES};
use super::plan::{
    EntryPlan, ExclusionPlan, KindPlan, LinkPlan, Order, SpecPlan, LONG_PATH_TOTALS, STORE_DIRS,
};
use super::template;
use crate::model::bytes::RelPath;
use crate::model::spec::{EntryKind, WorkspaceSpec};

/// Length of each directory component of a [`KindPlan::LongPath`].
const LONG_PATH_COMPONENT: usize = 50;

/// A symlink target naming nothing (no plan ever creates this name).
pub const DANGLING_TARGET: &[u8] = b"no-such-entry";

/// The W1 spec a plan describes; always passes `WorkspaceSpec::check`.
pub fn resolve_spec(plan: &SpecPlan) -> WorkspaceSpec {
    let mut b = Builder::new();
    let mut exclusions = Vec::new();
    if let Some(venv) = &plan.venv {
        template::apply(&mut b, venv, &mut exclusions);
    }
    for e in &plan.entries {
        apply_entry(&mut b, e);
    }
    for x in &plan.exclusions {
        exclusions.extend(
            resolve_exclusion(&b, x)
                .filter(|p| plan.newline_exclusions || !p.as_bytes().contains(&b'\n')),
        );
    }
    b.finish(exclusions)
}

/// `prefix` then filler bytes up to exactly `len` bytes (at least one byte).
fn padded(prefix: &[u8], fill: u8, len: usize) -> Vec<u8> {
    let mut v = prefix.to_vec();
    v.resize(len.max(1), fill);
    v
}

/// Add what one entry plan describes.
pub fn apply_entry(b: &mut Builder, plan: &EntryPlan) {
    let parent = b.pick_dir(&plan.parent);
    let parent = parent.as_ref();
    let name = plan.name.bytes();
    match &plan.kind {
        KindPlan::File { content, mode } => {
            b.add_child(parent, &name, Builder::file(content.bytes()), mode.mode());
        }
        KindPlan::Dir => {
            if let Some(dir) = b.add_child(parent, &name, EntryKind::Dir, None) {
                b.open_dirs.push(Some(dir));
            }
        }
        KindPlan::EmptyDir => {
            b.add_child(parent, &name, EntryKind::Dir, None);
        }
        KindPlan::Hardlink { target, content } => {
            let kind = match b.linkable.len() {
                0 => Builder::file(content.bytes()),
                n => EntryKind::Hardlink {
                    target: b.linkable[target.index(n)].clone(),
                },
            };
            b.add_child(parent, &name, kind, None);
        }
        KindPlan::Symlink(link) => {
            let path = b.fresh_child(parent, &name);
            let target = link_target(b, &path, link);
            b.add_at(&path, Builder::symlink(target), None);
        }
        KindPlan::Fifo => {
            b.add_child(parent, &name, EntryKind::Fifo, None);
        }
        KindPlan::Socket => {
            b.add_child(parent, &name, EntryKind::Socket, None);
        }
        KindPlan::CharDevice => {
            let dev = EntryKind::CharDevice { major: 1, minor: 3 };
            b.add_child(parent, &name, dev, None);
        }
        KindPlan::LockedDir { mode, child } => {
            if let Some(dir) = b.add_child(parent, &name, EntryKind::Dir, Some(*mode)) {
                b.add_child(Some(&dir), b"f", Builder::file(child.bytes()), None);
                b.open_dirs.push(Some(dir));
            }
        }
        KindPlan::HardlinkToSymlink { alias_parent } => {
            if let Some(link) = b.add_child(parent, &name, Builder::symlink(b"foo".to_vec()), None)
            {
                let alias_dir = b.pick_dir(alias_parent);
                let kind = EntryKind::Hardlink {
                    target: link.clone(),
                };
                b.add_child(alias_dir.as_ref(), link.file_name(), kind, None);
            }
        }
        KindPlan::LoopPair => {
            let first = b.fresh_child(parent, &name);
            let mut peer_name = first.file_name().to_vec();
            peer_name.extend_from_slice(b"-peer");
            if b.add_at(&first, Builder::symlink(Vec::new()), None) {
                let second = b.fresh_child(parent, &peer_name);
                let back = Builder::symlink(first.file_name().to_vec());
                if b.add_at(&second, back, None) {
                    if let Some(e) = b.entries.iter_mut().find(|e| e.path == first) {
                        e.kind = Builder::symlink(second.file_name().to_vec());
                    }
                }
            }
        }
        KindPlan::SharedInode { content, aliases } => {
            let Some(file) = b.add_child(parent, &name, Builder::file(content.bytes()), None)
            else {
                return;
            };
            for (dir_parent, dir_name) in aliases {
                let dir_parent = b.pick_dir(dir_parent);
                let dir_name = STORE_DIRS[usize::from(*dir_name) % STORE_DIRS.len()];
                let Some(dir) = b.add_child(
                    dir_parent.as_ref(),
                    dir_name.as_bytes(),
                    EntryKind::Dir,
                    None,
                ) else {
                    continue;
                };
                b.open_dirs.push(Some(dir.clone()));
                let kind = EntryKind::Hardlink {
                    target: file.clone(),
                };
                b.add_child(Some(&dir), file.file_name(), kind, None);
            }
        }
        KindPlan::LongPath { total } => {
            let total = LONG_PATH_TOTALS[usize::from(*total) % LONG_PATH_TOTALS.len()];
            let mut dir = parent.cloned();
            for level in 0..16 {
                let used = dir.as_ref().map_or(0, |d| d.as_bytes().len() + 1);
                let remaining = total.saturating_sub(used);
                if remaining <= LONG_PATH_COMPONENT {
                    let file = padded(b"f", b'f', remaining);
                    b.add_child(dir.as_ref(), &file, Builder::file(b"x".to_vec()), None);
                    return;
                }
                let comp = padded(format!("d{level}_").as_bytes(), b'd', LONG_PATH_COMPONENT);
                match b.add_child(dir.as_ref(), &comp, EntryKind::Dir, None) {
                    Some(d) => dir = Some(d),
                    None => return,
                }
            }
        }
    }
}

/// The target bytes of a symlink about to be created at `path`, at most
/// [`MAX_PATH_BYTES`] long (a longer one becomes [`DANGLING_TARGET`]; `symlink(2)` refuses
/// targets of `PATH_MAX` bytes).
fn link_target(b: &Builder, path: &RelPath, link: &LinkPlan) -> Vec<u8> {
    let target = link_target_unbounded(b, path, link);
    if target.len() > MAX_PATH_BYTES {
        DANGLING_TARGET.to_vec()
    } else {
        target
    }
}

fn link_target_unbounded(b: &Builder, path: &RelPath, link: &LinkPlan) -> Vec<u8> {
    let depth = path.depth().saturating_sub(1);
    let pick = |i: &proptest::sample::Index| -> Option<RelPath> {
        match b.entries.len() {
            0 => None,
            n => Some(b.entries[i.index(n)].path.clone()),
        }
    };
    match link {
        LinkPlan::ToEntry(i) => match pick(i) {
            Some(t) => {
                let mut v = b"../".repeat(depth);
                v.extend_from_slice(t.as_bytes());
                v
            }
            None => DANGLING_TARGET.to_vec(),
        },
        LinkPlan::Dangling => DANGLING_TARGET.to_vec(),
        LinkPlan::AbsIntoRoot(i) => {
            let mut v = b"{root}".to_vec();
            if let Some(t) = pick(i) {
                v.push(b'/');
                v.extend_from_slice(t.as_bytes());
            }
            v
        }
        LinkPlan::AbsOut(deep) => {
            if *deep {
                b"{out}/decoy/file".to_vec()
            } else {
                b"{out}/target".to_vec()
            }
        }
        LinkPlan::Escaping(extra) => {
            let mut v = b"../".repeat(depth + 1 + usize::from(*extra % 2));
            v.push(b'x');
            v
        }
        LinkPlan::LoopSelf => b".".to_vec(),
    }
}

/// The path one exclusion plan names, if there is anything to name.
fn resolve_exclusion(b: &Builder, plan: &ExclusionPlan) -> Option<RelPath> {
    let entry = |i: &proptest::sample::Index| match b.entries.len() {
        0 => None,
        n => Some(b.entries[i.index(n)].path.clone()),
    };
    match plan {
        ExclusionPlan::Entry(i) => entry(i),
        ExclusionPlan::ParentOf(i) => entry(i).map(|p| p.parent().unwrap_or(p)),
        ExclusionPlan::AliasFirst {
            inode,
            order,
            as_dir,
        } => {
            let groups = inode_groups(&b.entries);
            if groups.is_empty() {
                return entry(inode);
            }
            let names = &groups[inode.index(groups.len())];
            let first = match order {
                Order::Creation => names.first(),
                Order::Sorted => names.iter().min(),
                Order::Reverse => names.iter().max(),
            }?
            .clone();
            if *as_dir {
                Some(first.parent().unwrap_or(first))
            } else {
                Some(first)
            }
        }
    }
}
