//! Coverage shapes: named shapes a workspace can have (`name-255`, `symlink-loop-pair`,
//! `prior-fifo-at-file`, ...), detected on specs and cases independently of the generator's
//! plans, to measure what the generators cover ([`spec_shapes`], [`case_shapes`]). Not the
//! model's [`Feature`](crate::model::expected::Feature)s, which say what a profile may
//! refuse; a shape is finer and only counts generator coverage.

use super::builder::inode_groups;
use super::template::{CACHE_FILE, VENV_DIR};
use crate::model::bytes::RelPath;
use crate::model::links;
use crate::model::spec::{Case, Entry, EntryKind, WorkspaceSpec};
use std::collections::{BTreeMap, BTreeSet};

/// Every shape [`spec_shapes`] can report for W1.
pub const SPEC_SHAPES: &[&str] = &[
    "empty-workspace",
    "file",
    "empty-file",
    "binary-content",
    "dir",
    "empty-dir",
    "readonly-dir-with-children",
    "dir-mode-0000",
    "hardlink",
    "shared-inode-cross-dir",
    "shared-inode-3plus",
    "hardlink-to-symlink",
    "exclusion-file",
    "exclusion-dir",
    "alias-excluded-by-file",
    "alias-excluded-by-dir",
    "alias-excluded-first-creation",
    "alias-excluded-first-sorted",
    "alias-excluded-first-reverse",
    "symlink-relative-ok",
    "symlink-target-over-100",
    "hardlink-target-over-100",
    "symlink-abs-into-root",
    "symlink-abs-out",
    "symlink-abs-other",
    "symlink-escaping",
    "symlink-dangling",
    "symlink-loop-self",
    "symlink-loop-pair",
    "fifo",
    "socket",
    "chardev",
    "mode-exec",
    "mode-0000",
    "mode-setuid",
    "mode-setgid",
    "name-99",
    "name-100",
    "name-155",
    "name-255",
    "path-over-100",
    "path-over-255",
    "name-non-utf8",
    "name-newline",
    "realistic-venv",
];

/// Every shape [`case_shapes`] adds for the prior W0 (relative to W1).
pub const PRIOR_SHAPES: &[&str] = &[
    "prior-empty",
    "prior-symlink-at-dir",
    "prior-fifo-at-file",
    "prior-readonly-dir",
    "prior-dir-at-file",
    "prior-stale-overlap",
    "prior-stale-extra",
];

/// Where a relative symlink target leads, lexically from the link's directory: `Err(())`
/// when it climbs above the root, `Ok(None)` for the root itself (see [`links::lexical`]).
fn lexical_target(link: &RelPath, target: &[u8]) -> Result<Option<RelPath>, ()> {
    let parent = link.parent();
    let dir: Vec<&[u8]> = parent
        .as_ref()
        .map_or(Vec::new(), |p| p.components().collect());
    match links::lexical(&dir, target, links::AboveRoot::Leaves) {
        links::End::Inside(path) if path.is_empty() => Ok(None),
        links::End::Inside(path) => Ok(RelPath::new(path.join(&b'/')).ok()),
        _ => Err(()),
    }
}

/// The coverage shapes of one workspace (names from [`SPEC_SHAPES`]).
pub fn spec_shapes(spec: &WorkspaceSpec) -> BTreeSet<&'static str> {
    let mut f = BTreeSet::new();
    let all = spec.with_parents();
    let kinds: BTreeMap<&RelPath, &EntryKind> = all.iter().map(|e| (&e.path, &e.kind)).collect();
    let is_dir = |p: &RelPath| matches!(kinds.get(p), Some(EntryKind::Dir));
    if spec.entries.is_empty() {
        f.insert("empty-workspace");
    }
    for e in &spec.entries {
        one_entry(&mut f, e, &spec.entries, &kinds);
    }
    for x in &spec.exclusions {
        match kinds.get(x) {
            Some(EntryKind::Dir) => f.insert("exclusion-dir"),
            Some(_) => f.insert("exclusion-file"),
            None => false,
        };
    }
    for names in inode_groups(&spec.entries) {
        let parents: BTreeSet<Option<RelPath>> = names.iter().map(RelPath::parent).collect();
        if parents.len() > 1 {
            f.insert("shared-inode-cross-dir");
        }
        if names.len() >= 3 {
            f.insert("shared-inode-3plus");
        }
        let excluded = |p: &RelPath| spec.is_excluded(p);
        if !names.iter().any(excluded) || names.iter().all(excluded) {
            continue;
        }
        for n in names.iter().filter(|n| excluded(n)) {
            if spec.exclusions.contains(n) {
                f.insert("alias-excluded-by-file");
            }
            if spec
                .exclusions
                .iter()
                .any(|x| x != n && n.starts_with(x) && is_dir(x))
            {
                f.insert("alias-excluded-by-dir");
            }
        }
        if names.first().is_some_and(excluded) {
            f.insert("alias-excluded-first-creation");
        }
        if names.iter().min().is_some_and(excluded) {
            f.insert("alias-excluded-first-sorted");
        }
        if names.iter().max().is_some_and(excluded) {
            f.insert("alias-excluded-first-reverse");
        }
    }
    f
}

/// A shape of a hardlink only ([`entry_shapes`], never a coverage shape of its own): the
/// hardlink and the symlink it names are in directories from one of which the symlink's
/// relative target stays inside the root and from the other leaves it. An extractor that
/// makes the second name a symlink of its own checks the target where the archive put the
/// first and writes it where the second is (Python's data filter kept
/// `.venv/lib/python3.11/a -> ../../../../x` that way, seeds 3 and 9 of the default job,
/// from BusyBox's archive, which stored the symlink under its deeper name).
pub const ESCAPING_AT_ONE_NAME: &str = "symlink-escaping-at-one-name";

/// The shapes of each entry of `spec` on its own, in entry order: what one entry's path,
/// name, kind and mode show ([`spec_shapes`] is their union plus the shapes of the whole
/// workspace: empty, exclusions, shared inodes). A hardlink to a symlink in another
/// directory also carries the shapes of that symlink's target (not its name or path), so
/// such a hardlink to an absolute symlink shows `hardlink-to-symlink` and
/// `symlink-abs-out` together: from another directory a relative target means something
/// else to an extractor that makes the second name a symlink of its own (seed 9 of the
/// default job: Python's data filter kept `a -> ../x` only with the hardlink under a
/// directory), and an absolute one the same. An odd name
/// (`name-newline`, `name-non-utf8`) counts here only in a *directory* of the entry's path,
/// not in its own last component: a file deep under a directory named with a newline shows
/// `path-over-255` and `name-newline` together, a long path ending in such a name does not
/// (`tar-rs` 0.4.46 refuses to unpack the first from GNU tar's and Python's archives, and
/// unpacked the second in every seed of the default job seen). Used to tell whether two shapes meet in one entry
/// (`gen::strata`).
pub fn entry_shapes(spec: &WorkspaceSpec) -> Vec<BTreeSet<&'static str>> {
    let all = spec.with_parents();
    let kinds: BTreeMap<&RelPath, &EntryKind> = all.iter().map(|e| (&e.path, &e.kind)).collect();
    spec.entries
        .iter()
        .map(|e| {
            let mut f = BTreeSet::new();
            one_entry(&mut f, e, &spec.entries, &kinds);
            let dirs = e.path.parent();
            let in_dirs =
                |odd: fn(&[u8]) -> bool| dirs.as_ref().is_some_and(|d| d.components().any(odd));
            if !in_dirs(|c| c.contains(&b'\n')) {
                f.remove("name-newline");
            }
            if !in_dirs(|c| std::str::from_utf8(c).is_err()) {
                f.remove("name-non-utf8");
            }
            if let EntryKind::Hardlink { target } = &e.kind {
                let elsewhere = e.path.parent() != target.parent();
                if let Some(EntryKind::Symlink { target: to }) = kinds.get(target) {
                    if elsewhere {
                        link_target_shapes(&mut f, target, &to.0, &kinds);
                        let escapes = |at: &RelPath| lexical_target(at, &to.0).is_err();
                        let relative = !to.0.starts_with(b"/") && !to.0.starts_with(b"{");
                        if relative && escapes(target) != escapes(&e.path) {
                            f.insert(ESCAPING_AT_ONE_NAME);
                        }
                    }
                }
            }
            f
        })
        .collect()
}

/// The shapes of entry `e` of `entries` alone (`kinds`: every path of the workspace, its
/// parents included, with its kind), added to `f`.
fn one_entry(
    f: &mut BTreeSet<&'static str>,
    e: &Entry,
    entries: &[Entry],
    kinds: &BTreeMap<&RelPath, &EntryKind>,
) {
    let bytes = e.path.as_bytes();
    for comp in e.path.components() {
        match comp.len() {
            99 => f.insert("name-99"),
            100 => f.insert("name-100"),
            155 => f.insert("name-155"),
            255 => f.insert("name-255"),
            _ => false,
        };
        if std::str::from_utf8(comp).is_err() {
            f.insert("name-non-utf8");
        }
        if comp.contains(&b'\n') {
            f.insert("name-newline");
        }
    }
    if bytes.len() > 100 {
        f.insert("path-over-100");
    }
    if bytes.len() > 255 {
        f.insert("path-over-255");
    }
    if e.path.components().next() == Some(VENV_DIR.as_bytes()) || bytes == CACHE_FILE.as_bytes() {
        f.insert("realistic-venv");
    }
    let mode = e.effective_mode();
    match &e.kind {
        EntryKind::Dir => {
            f.insert("dir");
            let has_child = entries
                .iter()
                .any(|c| c.path != e.path && c.path.starts_with(&e.path));
            if !has_child {
                f.insert("empty-dir");
            }
            if mode & 0o222 == 0 && has_child {
                f.insert("readonly-dir-with-children");
            }
            if mode == 0 {
                f.insert("dir-mode-0000");
            }
        }
        EntryKind::File { content } => {
            f.insert("file");
            if content.0.is_empty() {
                f.insert("empty-file");
            }
            if content.0.contains(&0) {
                f.insert("binary-content");
            }
            if mode & 0o111 != 0 {
                f.insert("mode-exec");
            }
            if mode == 0 {
                f.insert("mode-0000");
            }
            if mode & 0o4000 != 0 {
                f.insert("mode-setuid");
            }
            if mode & 0o2000 != 0 {
                f.insert("mode-setgid");
            }
        }
        EntryKind::Hardlink { target } => {
            f.insert("hardlink");
            if target.as_bytes().len() > 100 {
                f.insert("hardlink-target-over-100");
            }
            if matches!(kinds.get(target), Some(EntryKind::Symlink { .. })) {
                f.insert("hardlink-to-symlink");
            }
        }
        EntryKind::Symlink { target } => link_target_shapes(f, &e.path, &target.0, kinds),
        EntryKind::Fifo => {
            f.insert("fifo");
        }
        EntryKind::Socket => {
            f.insert("socket");
        }
        EntryKind::CharDevice { .. } => {
            f.insert("chardev");
        }
    }
}

/// The shapes of the target of symlink `path` (its length, where it leads).
fn link_target_shapes(
    f: &mut BTreeSet<&'static str>,
    path: &RelPath,
    target: &[u8],
    kinds: &BTreeMap<&RelPath, &EntryKind>,
) {
    if target.len() > 100 {
        f.insert("symlink-target-over-100");
    }
    symlink_shapes(f, path, target, kinds);
}

fn symlink_shapes(
    f: &mut BTreeSet<&'static str>,
    path: &RelPath,
    target: &[u8],
    kinds: &BTreeMap<&RelPath, &EntryKind>,
) {
    if target.starts_with(b"{root}") {
        f.insert("symlink-abs-into-root");
        return;
    }
    if target.starts_with(b"{out}") {
        f.insert("symlink-abs-out");
        return;
    }
    if target.starts_with(b"/") {
        f.insert("symlink-abs-other");
        return;
    }
    match lexical_target(path, target) {
        Err(()) => {
            f.insert("symlink-escaping");
        }
        Ok(to) => {
            let is_ancestor = match &to {
                None => true,
                Some(t) => t != path && path.starts_with(t),
            };
            if is_ancestor {
                f.insert("symlink-loop-self");
                return;
            }
            let Some(to) = to else { return };
            match kinds.get(&to) {
                None => {
                    f.insert("symlink-dangling");
                }
                Some(EntryKind::Symlink { target: back }) => {
                    if lexical_target(&to, &back.0) == Ok(Some(path.clone())) {
                        f.insert("symlink-loop-pair");
                    } else {
                        f.insert("symlink-relative-ok");
                    }
                }
                Some(_) => {
                    f.insert("symlink-relative-ok");
                }
            }
        }
    }
}

/// The coverage shapes of a case: W1's [`spec_shapes`] plus the prior's, relative to W1
/// (names from [`PRIOR_SHAPES`]).
pub fn case_shapes(case: &Case) -> BTreeSet<&'static str> {
    let mut f = spec_shapes(&case.spec);
    let w1 = case.spec.with_parents();
    let w1_kinds: BTreeMap<&RelPath, &EntryKind> = w1.iter().map(|e| (&e.path, &e.kind)).collect();
    let w1_content = |p: &RelPath| -> Option<&[u8]> {
        let mut kind = w1_kinds.get(p)?;
        if let EntryKind::Hardlink { target } = kind {
            kind = w1_kinds.get(target)?;
        }
        match kind {
            EntryKind::File { content } => Some(&content.0),
            _ => None,
        }
    };
    if case.prior.entries.is_empty() {
        f.insert("prior-empty");
    }
    for e in &case.prior.entries {
        let w1_kind = w1_kinds.get(&e.path);
        let w1_dir = matches!(w1_kind, Some(EntryKind::Dir));
        let w1_regular = w1_content(&e.path).is_some();
        match &e.kind {
            EntryKind::Symlink { .. } if w1_dir => {
                f.insert("prior-symlink-at-dir");
            }
            EntryKind::Fifo if w1_regular => {
                f.insert("prior-fifo-at-file");
            }
            EntryKind::Dir => {
                if e.effective_mode() & 0o222 == 0 {
                    f.insert("prior-readonly-dir");
                }
                if w1_kind.is_some() && !w1_dir {
                    f.insert("prior-dir-at-file");
                }
            }
            EntryKind::File { content } => {
                if let Some(new) = w1_content(&e.path) {
                    if new != content.0.as_slice() {
                        f.insert("prior-stale-overlap");
                    }
                }
            }
            _ => {}
        }
        if !matches!(e.kind, EntryKind::Dir) && w1_kind.is_none() {
            f.insert("prior-stale-extra");
        }
    }
    f
}
