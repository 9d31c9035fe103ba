//! Bring a live workspace to a spec in place, as an agent's edits change it: what the spec
//! still has is left alone, so an untouched file keeps its inode and its mtime, a file
//! whose content changed is rewritten through the same inode, and only what is gone or
//! changed kind is removed and made again. What `snapconf lifecycle` does between turns,
//! so that a backend keyed on inode numbers or mtimes sees a workspace that moved on, not
//! one made anew.
//!
//! Whatever the root holds (a tool under test may have left anything there) ends as
//! [`materialise`](super::materialise::materialise) would have made it: the same entries,
//! contents, modes and names of one inode, which is what `observe` and the checks compare.

use super::materialise::{
    check_order, create_entry, prepare_root, remove_tree, MaterialiseError, Materialised,
};
use crate::model::spec::{Entry, EntryKind, Placeholders, WorkspaceSpec};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Make the tree under `root` hold exactly `spec`, changing in place:
///
/// 1. every path under `root` that `spec` does not list, or that is of another kind than
///    its entry (a directory for a file, a file for a symlink, …), is removed, with what
///    is under it; directories that stay are made `u+rwx` for the moment;
/// 2. each entry in `spec.with_parents()` order is kept when it already is what the
///    entry says: a directory; a regular file of no other name outside its hardlinks
///    (its content is rewritten through the same inode when it differs); a hardlink
///    naming its target's inode; a symlink with the target; a FIFO, socket or char
///    device (with the device number). Anything else is removed and created as
///    [`materialise`](super::materialise::materialise) creates it;
/// 3. every entry whose permission bits differ from its mode is `chmod`-ed, deepest
///    first.
///
/// Untouched entries keep their inode and times; rewritten files keep their inode.
///
/// # Errors
/// As [`materialise`](super::materialise::materialise): an invalid spec or order before
/// anything changes, the root, or the first entry that cannot be removed, read, written,
/// created or `chmod`-ed (named with the action).
pub fn update_in_place(
    spec: &WorkspaceSpec,
    root: &Path,
    ph: &Placeholders,
) -> Result<Materialised, MaterialiseError> {
    spec.check()?;
    let entries = spec.with_parents();
    check_order(&entries)?;
    prepare_root(root).map_err(|source| MaterialiseError::Root {
        root: root.to_path_buf(),
        source,
    })?;
    let wanted: BTreeMap<PathBuf, &Entry> =
        entries.iter().map(|e| (e.path.to_path(root), e)).collect();
    // Names each inode should have: one, plus the hardlinks (inside the root) to it.
    let mut names: BTreeMap<PathBuf, u64> = BTreeMap::new();
    for e in &entries {
        if let EntryKind::Hardlink { target } = &e.kind {
            if !target.as_bytes().starts_with(b"{out}/") {
                *names.entry(target.to_path(root)).or_insert(1) += 1;
            }
        }
    }
    prune(root, &wanted).map_err(|(path, source)| entry_error(root, &path, "remove", source))?;
    let mut out = Materialised::default();
    let mut claimed: BTreeSet<(u64, u64)> = BTreeSet::new();
    let mut skipped: BTreeSet<PathBuf> = BTreeSet::new();
    for e in &entries {
        let path = e.path.to_path(root);
        let meta = std::fs::symlink_metadata(&path).ok();
        let keep = match (&e.kind, &meta) {
            (_, None) => false,
            (EntryKind::Dir, Some(m)) => m.is_dir(),
            (EntryKind::File { content }, Some(m)) => {
                let id = (m.dev(), m.ino());
                let ours = m.file_type().is_file()
                    && m.nlink() <= names.get(&path).copied().unwrap_or(1)
                    && !claimed.contains(&id);
                if ours {
                    claimed.insert(id);
                    rewrite_if_changed(&path, m, content.as_bytes())
                        .map_err(|source| entry_error(root, &path, "write file", source))?;
                }
                ours
            }
            (EntryKind::Hardlink { target }, Some(m)) => {
                let from = link_source(target, root, ph);
                std::fs::symlink_metadata(from)
                    .is_ok_and(|t| (t.dev(), t.ino()) == (m.dev(), m.ino()))
            }
            (EntryKind::Symlink { target }, Some(m)) => {
                m.file_type().is_symlink()
                    && std::fs::read_link(&path).is_ok_and(|t| {
                        t.as_os_str().as_bytes() == ph.resolve(target.as_bytes()).as_slice()
                    })
            }
            (EntryKind::Fifo, Some(m)) => m.file_type().is_fifo(),
            (EntryKind::Socket, Some(m)) => m.file_type().is_socket(),
            (EntryKind::CharDevice { major, minor }, Some(m)) => {
                m.file_type().is_char_device() && m.rdev() == rustix::fs::makedev(*major, *minor)
            }
        };
        if keep {
            continue;
        }
        if let Some(m) = &meta {
            let gone = if m.is_dir() {
                remove_tree(&path)
            } else {
                std::fs::remove_file(&path)
            };
            gone.map_err(|source| entry_error(root, &path, "remove", source))?;
        }
        if create_entry(e, root, ph, &mut out)?.is_none() {
            skipped.insert(path);
        }
    }
    // Modes last, deepest first: a directory loses its write bits after its children are
    // done (and regains those `prune` lent it).
    let mut modes: Vec<&Entry> = entries
        .iter()
        .filter(|e| {
            !matches!(
                e.kind,
                EntryKind::Hardlink { .. } | EntryKind::Symlink { .. }
            )
        })
        .filter(|e| !skipped.contains(&e.path.to_path(root)))
        .collect();
    modes.sort_by_key(|e| std::cmp::Reverse(e.path.depth()));
    for e in modes {
        let path = e.path.to_path(root);
        let now = std::fs::symlink_metadata(&path)
            .map_err(|source| entry_error(root, &path, "chmod", source))?
            .mode()
            & 0o7777;
        if now != e.effective_mode() {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(e.effective_mode()))
                .map_err(|source| entry_error(root, &path, "chmod", source))?;
        }
    }
    Ok(out)
}

/// Remove under `dir` every path `wanted` does not list or lists as another kind, and make
/// the directories that stay `u+rwx`; `Err` names the path that could not be handled.
fn prune(dir: &Path, wanted: &BTreeMap<PathBuf, &Entry>) -> Result<(), (PathBuf, io::Error)> {
    let lend = |p: &Path| -> io::Result<()> {
        let mode = std::fs::symlink_metadata(p)?.mode() & 0o7777;
        if mode & 0o700 != 0o700 {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode | 0o700))?;
        }
        Ok(())
    };
    lend(dir).map_err(|e| (dir.to_path_buf(), e))?;
    let children: Vec<PathBuf> = std::fs::read_dir(dir)
        .and_then(|rd| rd.map(|c| c.map(|c| c.path())).collect())
        .map_err(|e| (dir.to_path_buf(), e))?;
    for path in children {
        let m = std::fs::symlink_metadata(&path).map_err(|e| (path.clone(), e))?;
        let ft = m.file_type();
        let fits = wanted.get(&path).is_some_and(|e| match &e.kind {
            EntryKind::Dir => ft.is_dir(),
            EntryKind::File { .. } | EntryKind::Hardlink { .. } => !ft.is_dir(),
            EntryKind::Symlink { .. } => ft.is_symlink(),
            EntryKind::Fifo => ft.is_fifo(),
            EntryKind::Socket => ft.is_socket(),
            EntryKind::CharDevice { .. } => ft.is_char_device(),
        });
        if fits && ft.is_dir() {
            prune(&path, wanted)?;
        } else if !fits {
            let gone = if ft.is_dir() {
                remove_tree(&path)
            } else {
                std::fs::remove_file(&path)
            };
            gone.map_err(|e| (path.clone(), e))?;
        }
    }
    Ok(())
}

/// Write `content` into the regular file at `path` (metadata `m`) through its own inode
/// when it holds something else; leave it untouched (times included) when it holds
/// `content`. A file the owner may not read or write gets those bits for the moment (the
/// mode pass gives it its mode back).
fn rewrite_if_changed(path: &Path, m: &std::fs::Metadata, content: &[u8]) -> io::Result<()> {
    let mode = m.mode() & 0o7777;
    if mode & 0o600 != 0o600 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | 0o600))?;
    }
    let same = m.len() == content.len() as u64 && {
        let mut now = Vec::with_capacity(content.len());
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)?
            .read_to_end(&mut now)?;
        now == content
    };
    if same {
        return Ok(());
    }
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?
        .write_all(content)
}

/// The path a hardlink entry's target names: under the root, or outside it (`{out}/…`).
fn link_source(target: &crate::model::bytes::RelPath, root: &Path, ph: &Placeholders) -> PathBuf {
    if target.as_bytes().starts_with(b"{out}/") {
        PathBuf::from(OsStr::from_bytes(&ph.resolve(target.as_bytes())))
    } else {
        target.to_path(root)
    }
}

/// A [`MaterialiseError::Entry`] for `path` under `root`.
fn entry_error(
    root: &Path,
    path: &Path,
    action: &'static str,
    source: io::Error,
) -> MaterialiseError {
    let rel = path.strip_prefix(root).unwrap_or(path);
    match crate::model::bytes::RelPath::new(rel.as_os_str().as_bytes().to_vec()) {
        Ok(path) => MaterialiseError::Entry {
            path,
            action,
            source,
        },
        Err(_) => MaterialiseError::Root {
            root: root.to_path_buf(),
            source,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bytes::RelPath;
    use crate::workspace::materialise::{clear_dir, materialise};
    use crate::workspace::observe::observe;

    fn ph(root: &Path, out: &Path) -> Placeholders {
        Placeholders {
            root: root.as_os_str().as_bytes().to_vec(),
            out: out.as_os_str().as_bytes().to_vec(),
        }
    }

    fn entry(path: &str, kind: EntryKind, mode: Option<u32>) -> Entry {
        Entry {
            path: RelPath::new(path).expect("path"),
            kind,
            mode,
        }
    }

    fn file(path: &str, content: &str) -> Entry {
        entry(
            path,
            EntryKind::File {
                content: content.into(),
            },
            None,
        )
    }

    /// (inode, mtime in ns) of `path`.
    fn stamp(path: &Path) -> (u64, i64) {
        let m = std::fs::symlink_metadata(path).expect("stat");
        (m.ino(), m.mtime() * 1_000_000_000 + m.mtime_nsec())
    }

    /// An edit of one file leaves every other file as it was (inode and mtime), rewrites
    /// the edited one through its inode (its second name sees the new content), removes
    /// what is gone, adds what is new and applies a new mode; the tree is the one a fresh
    /// materialisation makes.
    #[test]
    fn untouched_files_keep_inode_and_mtime_and_an_edited_one_its_inode() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (root, out) = (tmp.path().join("root"), tmp.path().join("out"));
        std::fs::create_dir(&out).expect("out");
        let ph = ph(&root, &out);
        let before = WorkspaceSpec {
            entries: vec![
                file("a", "old a"),
                file("b", "b stays"),
                entry("d", EntryKind::Dir, None),
                file("d/f", "to delete"),
                entry(
                    "h",
                    EntryKind::Hardlink {
                        target: RelPath::new("a").expect("path"),
                    },
                    None,
                ),
                entry("l", EntryKind::Symlink { target: "b".into() }, None),
            ],
            exclusions: vec![],
        };
        materialise(&before, &root, &ph).expect("materialise");
        let (a0, b0, l0) = (
            stamp(&root.join("a")),
            stamp(&root.join("b")),
            stamp(&root.join("l")),
        );
        // Time passes, so a rewritten or re-made entry would show a new mtime.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut after = before.clone();
        after.entries[0] = file("a", "new a, longer");
        after.entries.retain(|e| e.path.as_bytes() != b"d/f");
        after.entries.push(file("d/n", "new"));
        after.entries[1].mode = Some(0o755);
        update_in_place(&after, &root, &ph).expect("in place");
        let (a1, b1, l1) = (
            stamp(&root.join("a")),
            stamp(&root.join("b")),
            stamp(&root.join("l")),
        );
        assert_eq!(b1, b0, "an untouched file keeps its inode and mtime");
        assert_eq!(l1, l0, "an untouched symlink too");
        assert_eq!(a1.0, a0.0, "an edited file keeps its inode");
        assert_ne!(a1.1, a0.1, "and has a new mtime");
        assert_eq!(std::fs::read(root.join("h")).expect("h"), b"new a, longer");
        assert!(!root.join("d/f").exists());
        assert_eq!(std::fs::read(root.join("d/n")).expect("d/n"), b"new");
        let fresh = tmp.path().join("fresh");
        materialise(&after, &fresh, &ph).expect("fresh");
        assert_eq!(
            observe(&root).expect("observe"),
            observe(&fresh).expect("observe")
        );
    }

    /// Property: over the lifecycle's own drawn sequences, a root brought turn by turn to
    /// each turn's workspace in place, with leftovers of a tool planted before each turn (a
    /// `0000` directory, a symlink where a directory was, a changed mode), holds what a
    /// fresh materialisation of that workspace holds.
    #[test]
    fn in_place_ends_where_a_fresh_materialisation_does() {
        let cfg = crate::gen::GenConfig::default();
        let tmp = tempfile::tempdir().expect("tempdir");
        let (root, fresh, out) = (
            tmp.path().join("root"),
            tmp.path().join("fresh"),
            tmp.path().join("out"),
        );
        std::fs::create_dir(&out).expect("out");
        let ph = ph(&root, &out);
        for index in 0..40 {
            let seq = crate::gen::draw_sequence(&cfg, 11, index, 6).expect("sequence");
            let mut spec = seq.initial.clone();
            if root.exists() {
                clear_dir(&root).expect("clear");
            }
            for (t, turn) in seq.turns.iter().enumerate() {
                for e in &turn.edits {
                    spec = crate::gen::apply_edit(&spec, e);
                }
                if t > 0 {
                    let junk = root.join("junk-dir");
                    if !junk.exists() {
                        std::fs::create_dir(&junk).expect("junk");
                        std::fs::write(junk.join("x"), b"x").expect("junk file");
                        std::fs::set_permissions(&junk, std::fs::Permissions::from_mode(0o000))
                            .expect("chmod");
                    }
                    if let Some(d) = spec.entries.iter().find(|e| e.kind == EntryKind::Dir) {
                        let p = d.path.to_path(&root);
                        if p.is_dir() {
                            remove_tree(&p).expect("remove");
                            std::os::unix::fs::symlink("elsewhere", &p).expect("symlink");
                        }
                    }
                }
                let made = update_in_place(&spec, &root, &ph).expect("in place");
                if fresh.exists() {
                    clear_dir(&fresh).expect("clear");
                }
                let again = materialise(&spec, &fresh, &ph).expect("fresh");
                assert_eq!(made, again, "sequence {index} turn {t}: the same skipped");
                assert_eq!(
                    observe(&root).expect("observe"),
                    observe(&fresh).expect("observe"),
                    "sequence {index} turn {t}"
                );
            }
        }
    }
}
