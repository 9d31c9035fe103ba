//! Prior workspaces (W0): resolve prior plans against a resolved W1, so that hostile entries
//! sit exactly where W1 has a directory or a file.

use super::builder::Builder;
use super::edit::apply_edit;
use super::plan::PriorPlan;
use super::resolve::apply_entry;
use crate::model::bytes::RelPath;
use crate::model::spec::{EntryKind, WorkspaceSpec};
use proptest::sample::Index;

/// The jail file outside the root a hostile prior hardlinks to (a decoy planted by
/// `canary::plant`).
pub const OUT_LINKED: &str = "{out}/linked";

/// Content of the files put inside hostile prior directories.
const OLD: &[u8] = b"old";

/// The W0 spec `plans` describe relative to `w1`; always passes `WorkspaceSpec::check`, has
/// no exclusions. Plans that would conflict with earlier prior entries are skipped.
pub fn resolve_prior(plans: &[PriorPlan], w1: &WorkspaceSpec) -> WorkspaceSpec {
    let dirs: Vec<RelPath> = w1
        .with_parents()
        .into_iter()
        .filter(|e| matches!(e.kind, EntryKind::Dir))
        .map(|e| e.path)
        .collect();
    let files: Vec<(RelPath, Vec<u8>)> = w1
        .entries
        .iter()
        .filter_map(|e| regular_content(w1, &e.kind).map(|c| (e.path.clone(), c)))
        .collect();
    let pick_dir = |i: &Index| match dirs.len() {
        0 => None,
        n => Some(dirs[i.index(n)].clone()),
    };
    let pick_file = |i: &Index| match files.len() {
        0 => None,
        n => Some(files[i.index(n)].clone()),
    };
    let mut b = Builder::new();
    // A diverged copy of W1 first, when there is one; the other plans add what still fits.
    if let Some(edits) = plans.iter().find_map(|p| match p {
        PriorPlan::Edited { edits } => Some(edits),
        _ => None,
    }) {
        let mut w0 = WorkspaceSpec {
            entries: w1.entries.clone(),
            exclusions: Vec::new(),
        };
        for e in edits {
            w0 = apply_edit(&w0, e);
        }
        for e in w0.with_parents() {
            b.add_at(&e.path, e.kind, e.mode);
        }
    }
    for plan in plans {
        match plan {
            PriorPlan::Edited { .. } => {}
            PriorPlan::Random(e) => apply_entry(&mut b, e),
            PriorPlan::SymlinkAtDir { dir, to_out } => {
                if let Some(at) = pick_dir(dir) {
                    let target: &[u8] = if *to_out { b"{out}" } else { b".." };
                    b.add_at(&at, Builder::symlink(target.to_vec()), None);
                }
            }
            PriorPlan::FifoAtFile { file } => {
                if let Some((at, _)) = pick_file(file) {
                    b.add_at(&at, EntryKind::Fifo, None);
                }
            }
            PriorPlan::ReadOnlyDir { dir, zero } => {
                let mode = if *zero { 0o000 } else { 0o555 };
                if let Some(at) = pick_dir(dir) {
                    dir_with_old_file(&mut b, &at, Some(mode));
                }
            }
            PriorPlan::DirAtFile { file } => {
                if let Some((at, _)) = pick_file(file) {
                    dir_with_old_file(&mut b, &at, None);
                }
            }
            PriorPlan::HardlinkOut { file } => {
                if let (Some((at, _)), Ok(target)) = (pick_file(file), RelPath::new(OUT_LINKED)) {
                    b.add_outside_hardlink(&at, target);
                }
            }
            PriorPlan::StaleFile { file, content } => {
                if let Some((at, w1_content)) = pick_file(file) {
                    let mut c = content.bytes();
                    if c == w1_content {
                        c.extend_from_slice(b" (old)");
                    }
                    b.add_at(&at, Builder::file(c), None);
                }
            }
        }
    }
    b.finish(Vec::new())
}

/// A directory at `at` with mode `mode` holding a file `old`.
fn dir_with_old_file(b: &mut Builder, at: &RelPath, mode: Option<u32>) {
    if b.add_at(at, EntryKind::Dir, mode) {
        if let Ok(child) = at.join(b"old") {
            b.add_at(&child, Builder::file(OLD.to_vec()), None);
        }
    }
}

/// The content of a regular file entry of `spec` (a hardlink reads through to its target);
/// `None` for anything else.
fn regular_content(spec: &WorkspaceSpec, kind: &EntryKind) -> Option<Vec<u8>> {
    match kind {
        EntryKind::File { content } => Some(content.0.clone()),
        EntryKind::Hardlink { target } => {
            spec.entries
                .iter()
                .find(|e| &e.path == target)
                .and_then(|e| match &e.kind {
                    EntryKind::File { content } => Some(content.0.clone()),
                    _ => None,
                })
        }
        _ => None,
    }
}
