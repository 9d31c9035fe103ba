//! Edits: what an agent does to a workspace between two checkpoints of a session (`snapconf
//! lifecycle`), and the related prior workspaces of single cases (a workspace that moved on
//! from W1 by a few edits).
//!
//! An [`Edit`] never names a path: it names entries and directories by number (modulo what
//! exists), as plans do, so every edit applies to every workspace. [`apply_edit`] returns a
//! workspace that passes [`WorkspaceSpec::check`]; an edit that has nothing to act on, or
//! whose result would not be a valid workspace, leaves the workspace as it was. So a
//! sequence of edits stays valid when any of them is dropped (what shrinking does).

use super::builder::{Builder, MAX_PATH_BYTES};
use super::config::GenConfig;
use super::plan::PLAIN_NAMES;
use crate::model::bytes::{RawBytes, RelPath};
use crate::model::spec::{Entry, EntryKind, WorkspaceSpec};
use serde::{Deserialize, Serialize};
use snapconf_tarbytes::Rng;
use std::collections::{BTreeMap, BTreeSet};

/// One edit of a workspace. Numbers pick (modulo) among the entries of the right kind in
/// creation order, with implicit parents counted as directories; `name` picks a base name
/// from the generator's plain names (suffixed `-N` when taken); `dir` picks among the root
/// (0) and the directories.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "edit", rename_all = "kebab-case")]
pub enum Edit {
    /// A new regular file in directory `dir`.
    Create {
        /// Which directory: the root (0) or the `dir`-th directory (modulo).
        dir: u16,
        /// Which plain base name (modulo), suffixed `-N` when taken.
        name: u8,
        /// The bytes the new file holds.
        content: RawBytes,
    },
    /// New content for regular file `file` (a hardlinked name changes every name).
    Modify {
        /// Which regular file (modulo).
        file: u16,
        /// Its new bytes.
        content: RawBytes,
    },
    /// Remove entry `entry` with everything under it; another name of a removed inode
    /// keeps the content.
    Delete {
        /// Which entry: the `entry`-th in creation order (modulo).
        entry: u16,
    },
    /// Move entry `entry` (with everything under it) into directory `dir`, keeping its
    /// base name (suffixed when taken).
    Rename {
        /// Which entry: the `entry`-th in creation order (modulo).
        entry: u16,
        /// The directory it moves into: the root (0) or the `dir`-th directory (modulo).
        dir: u16,
    },
    /// Replace non-directory `entry` by a directory holding one file.
    ToDir {
        /// Which non-directory entry (modulo).
        entry: u16,
        /// The bytes of the file the new directory holds.
        content: RawBytes,
    },
    /// Replace entry `entry` (a directory with everything under it, or any other entry) by
    /// a regular file.
    ToFile {
        /// Which entry: the `entry`-th in creation order (modulo).
        entry: u16,
        /// The bytes the new file holds.
        content: RawBytes,
    },
    /// Replace entry `entry` by a relative symlink to the `to`-th of its siblings (or to
    /// a missing name when it has none).
    ToSymlink {
        /// Which entry: the `entry`-th in creation order (modulo).
        entry: u16,
        /// Which sibling the symlink points to (modulo).
        to: u16,
    },
    /// A second name for regular file or symlink `file`, in directory `dir`.
    Hardlink {
        /// Which regular file or symlink (modulo).
        file: u16,
        /// Where the new name goes: the root (0) or the `dir`-th directory (modulo).
        dir: u16,
    },
    /// Set the permission bits of a file (`0644`, `0755`, `0600`) or a directory
    /// (`0755`, `0700`, `0555`), the `mode`-th of its kind's three.
    Chmod {
        /// Which entry: the `entry`-th in creation order (modulo).
        entry: u16,
        /// Which of the kind's three modes (modulo 3).
        mode: u8,
    },
    /// A FIFO in directory `dir` (a profile may let capture refuse it).
    Fifo {
        /// Which directory: the root (0) or the `dir`-th directory (modulo).
        dir: u16,
        /// Which plain base name (modulo), suffixed `-N` when taken.
        name: u8,
    },
    /// An absolute symlink to the jail's decoy `{out}/target`, outside the root (a profile
    /// may let capture refuse it).
    AbsSymlink {
        /// Which directory: the root (0) or the `dir`-th directory (modulo).
        dir: u16,
        /// Which plain base name (modulo), suffixed `-N` when taken.
        name: u8,
    },
}

/// File modes a [`Edit::Chmod`] sets.
const FILE_MODES: [u32; 3] = [0o644, 0o755, 0o600];
/// Directory modes a [`Edit::Chmod`] sets.
const DIR_MODES: [u32; 3] = [0o755, 0o700, 0o555];

/// `spec` after `edit`; `spec` itself when the edit has nothing to act on or its result
/// would not pass [`WorkspaceSpec::check`]. Exclusions stay as they are.
pub fn apply_edit(spec: &WorkspaceSpec, edit: &Edit) -> WorkspaceSpec {
    let entries = spec.with_parents();
    let next = match edit {
        Edit::Create { dir, name, content } => {
            add(&entries, *dir, base(*name), |_| EntryKind::File {
                content: content.clone(),
            })
        }
        Edit::Fifo { dir, name } => add(&entries, *dir, base(*name), |_| EntryKind::Fifo),
        Edit::AbsSymlink { dir, name } => {
            add(&entries, *dir, base(*name), |_| EntryKind::Symlink {
                target: RawBytes(b"{out}/target".to_vec()),
            })
        }
        Edit::Hardlink { file, dir } => {
            let linkable: Vec<&Entry> = entries
                .iter()
                .filter(|e| matches!(e.kind, EntryKind::File { .. } | EntryKind::Symlink { .. }))
                .collect();
            pick(&linkable, *file).and_then(|target| {
                let t = target.path.clone();
                add(
                    &entries,
                    *dir,
                    target.path.file_name().to_vec(),
                    move |_| EntryKind::Hardlink { target: t.clone() },
                )
            })
        }
        Edit::Modify { file, content } => {
            let files: Vec<&Entry> = entries
                .iter()
                .filter(|e| matches!(e.kind, EntryKind::File { .. }))
                .collect();
            pick(&files, *file).map(|f| {
                let path = f.path.clone();
                let mut out = entries.clone();
                for e in &mut out {
                    if e.path == path {
                        e.kind = EntryKind::File {
                            content: content.clone(),
                        };
                    }
                }
                out
            })
        }
        Edit::Chmod { entry, mode } => {
            let targets: Vec<&Entry> = entries
                .iter()
                .filter(|e| matches!(e.kind, EntryKind::File { .. } | EntryKind::Dir))
                .collect();
            pick(&targets, *entry).map(|t| {
                let path = t.path.clone();
                let mut out = entries.clone();
                for e in &mut out {
                    if e.path == path {
                        let modes = match e.kind {
                            EntryKind::Dir => DIR_MODES,
                            _ => FILE_MODES,
                        };
                        e.mode = Some(modes[usize::from(*mode) % modes.len()]);
                    }
                }
                out
            })
        }
        Edit::Delete { entry } => {
            pick(&entries.iter().collect::<Vec<_>>(), *entry).map(|e| delete(&entries, &e.path))
        }
        Edit::ToFile { entry, content } => {
            pick(&entries.iter().collect::<Vec<_>>(), *entry).map(|e| {
                let mut out = delete(&entries, &e.path);
                out.push(Entry {
                    path: e.path.clone(),
                    kind: EntryKind::File {
                        content: content.clone(),
                    },
                    mode: None,
                });
                out
            })
        }
        Edit::ToDir { entry, content } => {
            let leaves: Vec<&Entry> = entries
                .iter()
                .filter(|e| !matches!(e.kind, EntryKind::Dir))
                .collect();
            pick(&leaves, *entry).and_then(|e| {
                let mut out = delete(&entries, &e.path);
                let child = e.path.join(PLAIN_NAMES[0].as_bytes()).ok()?;
                out.push(Entry {
                    path: e.path.clone(),
                    kind: EntryKind::Dir,
                    mode: None,
                });
                out.push(Entry {
                    path: child,
                    kind: EntryKind::File {
                        content: content.clone(),
                    },
                    mode: None,
                });
                Some(out)
            })
        }
        Edit::ToSymlink { entry, to } => {
            pick(&entries.iter().collect::<Vec<_>>(), *entry).map(|e| {
                let siblings: Vec<&Entry> = entries
                    .iter()
                    .filter(|s| s.path != e.path && s.path.parent() == e.path.parent())
                    .collect();
                let target = pick(&siblings, *to)
                    .map_or(b"missing".to_vec(), |s| s.path.file_name().to_vec());
                let mut out = delete(&entries, &e.path);
                out.push(Entry {
                    path: e.path.clone(),
                    kind: EntryKind::Symlink {
                        target: RawBytes(target),
                    },
                    mode: None,
                });
                out
            })
        }
        Edit::Rename { entry, dir } => pick(&entries.iter().collect::<Vec<_>>(), *entry)
            .and_then(|e| rename(&entries, &e.path, *dir)),
    };
    next.and_then(|entries| valid(entries, spec))
        .unwrap_or_else(|| spec.clone())
}

/// `spec` without the entries at `paths` and everything under them (another name of a
/// removed inode keeps the content): what a session removes after a refused capture.
pub fn remove_paths(spec: &WorkspaceSpec, paths: &[RelPath]) -> WorkspaceSpec {
    let mut entries = spec.with_parents();
    for p in paths {
        entries = delete(&entries, p);
    }
    valid(entries, spec).unwrap_or_else(|| spec.clone())
}

/// A random edit, drawn with `rng`: mostly creations, changes and removals of files, now
/// and then a rename, a change of kind, a second name, a mode, and (with weight 1 of 18
/// each) a FIFO or an absolute symlink.
pub fn draw_edit(rng: &mut Rng) -> Edit {
    let n = |rng: &mut Rng| rng.below(1 << 16) as u16;
    let name = |rng: &mut Rng| rng.below(256) as u8;
    let content = |rng: &mut Rng| {
        let len = rng.below(24);
        RawBytes((0..len).map(|_| b'a' + rng.below(26) as u8).collect())
    };
    match rng.below(18) {
        0..=3 => Edit::Create {
            dir: n(rng),
            name: name(rng),
            content: content(rng),
        },
        4..=6 => Edit::Modify {
            file: n(rng),
            content: content(rng),
        },
        7 | 8 => Edit::Delete { entry: n(rng) },
        9 | 10 => Edit::Rename {
            entry: n(rng),
            dir: n(rng),
        },
        11 => Edit::ToDir {
            entry: n(rng),
            content: content(rng),
        },
        12 => Edit::ToFile {
            entry: n(rng),
            content: content(rng),
        },
        13 => Edit::ToSymlink {
            entry: n(rng),
            to: n(rng),
        },
        14 => Edit::Hardlink {
            file: n(rng),
            dir: n(rng),
        },
        15 => Edit::Chmod {
            entry: n(rng),
            mode: name(rng),
        },
        16 => Edit::Fifo {
            dir: n(rng),
            name: name(rng),
        },
        _ => Edit::AbsSymlink {
            dir: n(rng),
            name: name(rng),
        },
    }
}

/// The edit [`draw_edit`] draws from a generator seeded with `seed`, with what `cfg`
/// turns off replaced: a FIFO (`fifo_weight = 0`) or an absolute symlink
/// (`symlink_abs_out_weight = 0`) by a new file, a second name (`hardlink_weight = 0`) by
/// a change of content. Related priors are drawn with it.
pub fn edit_for(cfg: &GenConfig, seed: u64) -> Edit {
    let edit = draw_edit(&mut Rng::new(seed));
    match edit {
        Edit::Fifo { dir, name } if cfg.fifo_weight == 0 => Edit::Create {
            dir,
            name,
            content: RawBytes::default(),
        },
        Edit::AbsSymlink { dir, name } if cfg.symlink_abs_out_weight == 0 => Edit::Create {
            dir,
            name,
            content: RawBytes::default(),
        },
        Edit::Hardlink { file, .. } if cfg.hardlink_weight == 0 => Edit::Modify {
            file,
            content: RawBytes(b"changed".to_vec()),
        },
        e => e,
    }
}

/// The `i`-th (modulo) of `items`; `None` when there are none.
fn pick<'a, T>(items: &[&'a T], i: u16) -> Option<&'a T> {
    match items.len() {
        0 => None,
        n => Some(items[usize::from(i) % n]),
    }
}

/// The plain name `i` picks.
fn base(i: u8) -> Vec<u8> {
    PLAIN_NAMES[usize::from(i) % PLAIN_NAMES.len()]
        .as_bytes()
        .to_vec()
}

/// A builder holding `entries` (explicit parents, valid order).
fn builder(entries: &[Entry]) -> Builder {
    let mut b = Builder::new();
    for e in entries {
        b.add_at(&e.path, e.kind.clone(), e.mode);
    }
    b
}

/// The root (`None`) and every directory of `entries`, in creation order.
fn dirs(entries: &[Entry]) -> Vec<Option<RelPath>> {
    std::iter::once(None)
        .chain(
            entries
                .iter()
                .filter(|e| matches!(e.kind, EntryKind::Dir))
                .map(|e| Some(e.path.clone())),
        )
        .collect()
}

/// `entries` and a fresh child of the `dir`-th directory named after `name`, of the kind
/// `kind` makes for its path.
fn add(
    entries: &[Entry],
    dir: u16,
    name: Vec<u8>,
    kind: impl Fn(&RelPath) -> EntryKind,
) -> Option<Vec<Entry>> {
    let ds = dirs(entries);
    let parent = ds[usize::from(dir) % ds.len()].clone();
    let mut b = builder(entries);
    let path = b.fresh_child(parent.as_ref(), &name);
    let k = kind(&path);
    b.add_at(&path, k, None).then_some(b.entries)
}

/// `entries` without `path` and everything under it. The first remaining hardlink to a
/// removed file or symlink takes its kind, content and mode; later ones name it instead.
fn delete(entries: &[Entry], path: &RelPath) -> Vec<Entry> {
    let removed: BTreeMap<&RelPath, &Entry> = entries
        .iter()
        .filter(|e| e.path.starts_with(path))
        .map(|e| (&e.path, e))
        .collect();
    let mut heir: BTreeMap<RelPath, RelPath> = BTreeMap::new();
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        if removed.contains_key(&e.path) {
            continue;
        }
        let mut e = e.clone();
        if let EntryKind::Hardlink { target } = &e.kind {
            if let Some(h) = heir.get(target) {
                e.kind = EntryKind::Hardlink { target: h.clone() };
            } else if let Some(first) = removed.get(target) {
                heir.insert(target.clone(), e.path.clone());
                e.kind = first.kind.clone();
                e.mode = first.mode;
            }
        }
        out.push(e);
    }
    out
}

/// `entries` with `path` (and everything under it) moved into the `dir`-th directory that
/// is not under it; the moved entries go last, and so do hardlinks naming one of them.
fn rename(entries: &[Entry], path: &RelPath, dir: u16) -> Option<Vec<Entry>> {
    let ds: Vec<Option<RelPath>> = dirs(entries)
        .into_iter()
        .filter(|d| !d.as_ref().is_some_and(|d| d.starts_with(path)))
        .filter(|d| d.as_ref() != path.parent().as_ref())
        .collect();
    if ds.is_empty() {
        return None;
    }
    let parent = ds[usize::from(dir) % ds.len()].clone();
    let b = builder(entries);
    let new = b.fresh_child(parent.as_ref(), path.file_name());
    let moved = |p: &RelPath| -> Option<RelPath> {
        if !p.starts_with(path) {
            return None;
        }
        let mut bytes = new.as_bytes().to_vec();
        bytes.extend_from_slice(&p.as_bytes()[path.as_bytes().len()..]);
        RelPath::new(bytes).ok()
    };
    let mut stay = Vec::new();
    let mut group = Vec::new();
    let mut after = Vec::new();
    let mut moved_paths = BTreeSet::new();
    for e in entries {
        let mut e = e.clone();
        let own = moved(&e.path);
        if let EntryKind::Hardlink { target } = &e.kind {
            if let Some(t) = moved(target) {
                e.kind = EntryKind::Hardlink { target: t };
                if own.is_none() {
                    after.push(e);
                    continue;
                }
            }
        }
        match own {
            Some(p) => {
                moved_paths.insert(p.clone());
                e.path = p;
                group.push(e);
            }
            None => stay.push(e),
        }
    }
    if moved_paths.is_empty() {
        return None;
    }
    stay.extend(group);
    stay.extend(after);
    Some(stay)
}

/// `entries` as a workspace with `spec`'s exclusions, if it is a valid one within the
/// builder's path limit.
fn valid(entries: Vec<Entry>, spec: &WorkspaceSpec) -> Option<WorkspaceSpec> {
    if entries
        .iter()
        .any(|e| e.path.as_bytes().len() > MAX_PATH_BYTES)
    {
        return None;
    }
    let out = WorkspaceSpec {
        entries,
        exclusions: spec.exclusions.clone(),
    };
    out.check().is_ok().then_some(out)
}

#[cfg(test)]
mod tests;
