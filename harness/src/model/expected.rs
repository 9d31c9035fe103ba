//! `expected(spec, profile)`: the tree a conforming capture + hydration yields, the
//! entries for which the profile allows a capture refusal, and the features a spec has.
//!
//! The runner compares `expected(..).tree` with `normalise(&observe(root)?, profile)`:
//! both sides go through [`normalise`], so only what the profile promises is compared.

use crate::model::bytes::{RawBytes, RelPath};
use crate::model::profile::{
    AbsoluteRule, EscapingRule, HardlinkRule, ModeRule, Profile, SpecialRule,
};
use crate::model::spec::{Entry, EntryKind, Placeholders, WorkspaceSpec};
use crate::model::tree::{Node, NodeKind, Tree};
use crate::workspace::observe::sha256_hex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

/// A property of a workspace that some producers or extractors mishandle. Used for
/// `refusable` entries, refusal counts in reports, and generator coverage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Feature {
    /// An inode with two or more names (a hardlink entry).
    SharedInode,
    /// An inode with an excluded name and a kept name (H2).
    ExcludedAlias,
    /// A symlink whose target is absolute (including `{root}`/`{out}` placeholders).
    AbsoluteSymlink,
    /// A relative symlink whose target, read lexically from the link's directory, climbs
    /// above the root (`../../etc`).
    EscapingSymlink,
    /// A symlink that resolves (inside the spec) to nothing, or through a non-directory.
    DanglingSymlink,
    /// A symlink whose resolution loops (more than 40 hops) or names a directory that
    /// contains the link (`self -> .`, `up -> ..`), so a producer that follows it recurses.
    SymlinkLoop,
    /// A named pipe.
    Fifo,
    /// A Unix domain socket.
    Socket,
    /// A character device node.
    CharDevice,
    /// A listed directory with no entries under it.
    EmptyDir,
    /// A directory without owner write permission (`0555`, `0000`; H7).
    ReadOnlyDir,
    /// Setuid/setgid/sticky bits, no permission bits at all (`0000`), or an executable file.
    SpecialMode,
    /// A path, or a symlink/hardlink target, longer than 100 bytes (ustar's `name` and
    /// `linkname` fields), or a component of 100 bytes or more.
    LongName,
    /// A path that is not valid UTF-8.
    NonUtf8Name,
    /// A path with a control byte (newline, tab, DEL, ...).
    ControlCharName,
    /// A hardlink whose inode is a symlink (H8).
    HardlinkToSymlink,
}

impl Feature {
    /// Every feature, in declaration order.
    pub const ALL: [Feature; 16] = [
        Feature::SharedInode,
        Feature::ExcludedAlias,
        Feature::AbsoluteSymlink,
        Feature::EscapingSymlink,
        Feature::DanglingSymlink,
        Feature::SymlinkLoop,
        Feature::Fifo,
        Feature::Socket,
        Feature::CharDevice,
        Feature::EmptyDir,
        Feature::ReadOnlyDir,
        Feature::SpecialMode,
        Feature::LongName,
        Feature::NonUtf8Name,
        Feature::ControlCharName,
        Feature::HardlinkToSymlink,
    ];

    /// The kebab-case name, as in JSON and reports (`shared-inode`).
    pub fn name(self) -> &'static str {
        match self {
            Feature::SharedInode => "shared-inode",
            Feature::ExcludedAlias => "excluded-alias",
            Feature::AbsoluteSymlink => "absolute-symlink",
            Feature::EscapingSymlink => "escaping-symlink",
            Feature::DanglingSymlink => "dangling-symlink",
            Feature::SymlinkLoop => "symlink-loop",
            Feature::Fifo => "fifo",
            Feature::Socket => "socket",
            Feature::CharDevice => "char-device",
            Feature::EmptyDir => "empty-dir",
            Feature::ReadOnlyDir => "read-only-dir",
            Feature::SpecialMode => "special-mode",
            Feature::LongName => "long-name",
            Feature::NonUtf8Name => "non-utf8-name",
            Feature::ControlCharName => "control-char-name",
            Feature::HardlinkToSymlink => "hardlink-to-symlink",
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a conforming capture + hydration of a spec yields under a profile (serialises for
/// case directories and JSON reports).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Expected {
    /// The hydrated tree, already passed through [`normalise`] (root not included).
    pub tree: Tree,
    /// Entries for which the profile allows capture to refuse, with the reason, in
    /// creation order. If capture does not refuse, `tree` still holds these entries.
    pub refusable: Vec<(RelPath, Feature)>,
}

/// Derive the expected result of capturing `spec` and hydrating it under `profile`.
///
/// `ph` must be the placeholders the spec was materialised with at capture (symlink targets
/// are compared after [`Placeholders::resolve`]). The rules, per entry of
/// `spec.with_parents()`:
/// - excluded paths and everything under them are absent; implicit parents are present
///   (mode `0755`), also when everything in them is excluded or dropped;
/// - every kept name of an inode (its file/symlink entry and its hardlinks) is a node of
///   the inode's kind, content and mode, even if the inode's first name is excluded (H2);
///   `preserve` lists the kept names as a shared-inode group (two or more), every other
///   hardlink rule compares no inode sharing. `refuse-at-capture` makes every kept name of
///   a shared inode refusable (`shared-inode`), `refuse-excluded-alias` every kept name of
///   an inode that also has an excluded name (`excluded-alias`);
/// - FIFOs and char devices are absent under `special-files = drop`, kept and refusable
///   under `refuse-at-capture`; sockets are always absent (no tar format stores them) and
///   refusable under `refuse-at-capture`;
/// - absolute symlinks: `keep` and `refuse-at-capture` (refusable) keep the target
///   verbatim, `drop` removes every name of the link, `rebase-inside-root` rewrites a
///   target under `ph.root` relative to the link's directory (`a/b/l -> {root}/x/y`
///   becomes `../../x/y`; a target equal to the root becomes `../..`, or `.` for a
///   top-level link); a target outside the root (or climbing out of it with `..`) is kept
///   verbatim, since there is nothing inside the root to rebase onto. Under `preserve`,
///   names of one symlink inode whose rebased targets differ cannot share an inode and
///   form separate groups;
/// - escaping relative symlinks (judged lexically, see [`Feature::EscapingSymlink`]) are
///   kept, and refusable under `escaping-symlinks = refuse-at-capture`.
///
/// Finally [`normalise`] applies the mode rule.
pub fn expected(spec: &WorkspaceSpec, profile: &Profile, ph: &Placeholders) -> Expected {
    let index = Index::new(spec);
    let mut tree = Tree::default();
    let mut refusable = Vec::new();
    for entry in &index.entries {
        if spec.is_excluded(&entry.path) {
            continue;
        }
        let Some(inode) = index.inode_of(entry) else {
            continue; // a hardlink to nothing: `spec.check()` refuses such specs
        };
        let names = index.names(&inode.path);
        if names.len() >= 2 {
            match profile.hardlinks {
                HardlinkRule::RefuseAtCapture => {
                    refusable.push((entry.path.clone(), Feature::SharedInode))
                }
                HardlinkRule::RefuseExcludedAlias if names.iter().any(|n| spec.is_excluded(n)) => {
                    refusable.push((entry.path.clone(), Feature::ExcludedAlias))
                }
                _ => {}
            }
        }
        let mode = inode.effective_mode();
        let special = |feature: Feature, refusable: &mut Vec<(RelPath, Feature)>| {
            if profile.special_files == SpecialRule::RefuseAtCapture {
                refusable.push((entry.path.clone(), feature));
                true
            } else {
                false
            }
        };
        let kind = match &inode.kind {
            EntryKind::Dir => NodeKind::Dir,
            EntryKind::File { content } => NodeKind::File {
                size: content.as_bytes().len() as u64,
                sha256: sha256_hex(content.as_bytes()),
            },
            EntryKind::Symlink { target } => {
                let target = ph.resolve(target.as_bytes());
                let target = if target.starts_with(b"/") {
                    match profile.absolute_symlinks {
                        AbsoluteRule::Keep => target,
                        AbsoluteRule::Drop => continue,
                        AbsoluteRule::RebaseInsideRoot => rebase(&entry.path, &target, &ph.root),
                        AbsoluteRule::RefuseAtCapture => {
                            refusable.push((entry.path.clone(), Feature::AbsoluteSymlink));
                            target
                        }
                    }
                } else {
                    if profile.escaping_symlinks == EscapingRule::RefuseAtCapture
                        && escapes(&parent_components(&entry.path), &target)
                    {
                        refusable.push((entry.path.clone(), Feature::EscapingSymlink));
                    }
                    target
                };
                NodeKind::Symlink {
                    target: RawBytes(target),
                }
            }
            EntryKind::Fifo => {
                if !special(Feature::Fifo, &mut refusable) {
                    continue;
                }
                NodeKind::Fifo
            }
            EntryKind::CharDevice { major, minor } => {
                if !special(Feature::CharDevice, &mut refusable) {
                    continue;
                }
                NodeKind::CharDevice {
                    major: *major,
                    minor: *minor,
                }
            }
            EntryKind::Socket => {
                special(Feature::Socket, &mut refusable);
                continue;
            }
            EntryKind::Hardlink { .. } => continue, // inode_of never returns a hardlink
        };
        let mode = if matches!(kind, NodeKind::Symlink { .. }) {
            0
        } else {
            mode
        };
        tree.nodes.insert(entry.path.clone(), Node { kind, mode });
    }
    if profile.hardlinks == HardlinkRule::Preserve {
        let mut groups = Vec::new();
        for names in index.inodes.values() {
            // Names whose nodes are equal can share the inode (see the rebase note above).
            let mut by_node: Vec<(&Node, Vec<RelPath>)> = Vec::new();
            for name in names {
                let Some(node) = tree.nodes.get(name) else {
                    continue;
                };
                match by_node.iter_mut().find(|(n, _)| *n == node) {
                    Some((_, group)) => group.push(name.clone()),
                    None => by_node.push((node, vec![name.clone()])),
                }
            }
            for (_, mut group) in by_node {
                if group.len() >= 2 {
                    group.sort();
                    groups.push(group);
                }
            }
        }
        groups.sort();
        tree.shared_inodes = groups;
    }
    Expected {
        tree: normalise(&tree, profile),
        refusable,
    }
}

/// Apply the profile's mode rule to every node and keep `shared_inodes` only under
/// `hardlinks = preserve`:
/// - `exact`: modes as they are;
/// - `exec-bit`: files keep only the owner-execute bit `0o100`; every other node gets 0;
/// - `data-filter`: `mode & !0o7022` (no setuid/setgid/sticky, no group/other write);
/// - `ignore`: 0 for every node.
///
/// Symlinks always have mode 0.
pub fn normalise(tree: &Tree, profile: &Profile) -> Tree {
    let nodes = tree
        .nodes
        .iter()
        .map(|(path, node)| {
            let mode = match (&node.kind, profile.modes) {
                (NodeKind::Symlink { .. }, _) => 0,
                (_, ModeRule::Exact) => node.mode,
                (NodeKind::File { .. }, ModeRule::ExecBit) => node.mode & 0o100,
                (_, ModeRule::ExecBit) => 0,
                (_, ModeRule::DataFilter) => node.mode & !0o7022,
                (_, ModeRule::Ignore) => 0,
            };
            let node = Node {
                kind: node.kind.clone(),
                mode,
            };
            (path.clone(), node)
        })
        .collect();
    let shared_inodes = if profile.hardlinks == HardlinkRule::Preserve {
        tree.shared_inodes.clone()
    } else {
        Vec::new()
    };
    Tree {
        nodes,
        shared_inodes,
    }
}

/// The features `spec` has (see [`Feature`] for each definition). Symlink resolution for
/// [`Feature::DanglingSymlink`] and [`Feature::SymlinkLoop`] is simulated on the spec
/// (`{root}/...` targets resolve inside it; other absolute targets are outside and never
/// dangling); [`Feature::EscapingSymlink`] is judged on the target string alone.
pub fn features(spec: &WorkspaceSpec) -> BTreeSet<Feature> {
    let index = Index::new(spec);
    let mut out = BTreeSet::new();
    let has_children: BTreeSet<RelPath> = index
        .entries
        .iter()
        .filter_map(|e| e.path.parent())
        .collect();
    for entry in &index.entries {
        let path = entry.path.as_bytes();
        if path.len() > 100 || entry.path.components().any(|c| c.len() >= 100) {
            out.insert(Feature::LongName);
        }
        match std::str::from_utf8(path) {
            Err(_) => {
                out.insert(Feature::NonUtf8Name);
            }
            Ok(text) if text.chars().any(char::is_control) => {
                out.insert(Feature::ControlCharName);
            }
            Ok(_) => {}
        }
        if path.iter().any(|b| *b < 0x20 || *b == 0x7f) {
            out.insert(Feature::ControlCharName);
        }
        let mode = entry.effective_mode();
        match &entry.kind {
            EntryKind::Dir => {
                if entry.mode.is_some() && mode & 0o200 == 0 {
                    out.insert(Feature::ReadOnlyDir);
                }
                if mode & 0o7000 != 0 || mode & 0o777 == 0 {
                    out.insert(Feature::SpecialMode);
                }
                if !has_children.contains(&entry.path) {
                    out.insert(Feature::EmptyDir);
                }
            }
            EntryKind::File { .. } => {
                if mode & 0o7000 != 0 || mode & 0o777 == 0 || mode & 0o111 != 0 {
                    out.insert(Feature::SpecialMode);
                }
            }
            EntryKind::Hardlink { target } => {
                out.insert(Feature::SharedInode);
                if target.as_bytes().len() > 100 {
                    out.insert(Feature::LongName);
                }
                if let Some(inode) = index.inode_of(entry) {
                    if let EntryKind::Symlink { target } = &inode.kind {
                        out.insert(Feature::HardlinkToSymlink);
                        // The same target string, read from this name's directory.
                        symlink_features(&index, &entry.path, target.as_bytes(), &mut out);
                    }
                    let names = index.names(&inode.path);
                    let excluded = names.iter().filter(|n| spec.is_excluded(n)).count();
                    if excluded > 0 && excluded < names.len() {
                        out.insert(Feature::ExcludedAlias);
                    }
                }
            }
            EntryKind::Symlink { target } => {
                symlink_features(&index, &entry.path, target.as_bytes(), &mut out);
            }
            EntryKind::Fifo => {
                out.insert(Feature::Fifo);
            }
            EntryKind::Socket => {
                out.insert(Feature::Socket);
            }
            EntryKind::CharDevice { .. } => {
                out.insert(Feature::CharDevice);
            }
        }
    }
    out
}

/// The features of a symlink named `link` with target `t` (unresolved placeholders).
fn symlink_features(index: &Index, link: &RelPath, t: &[u8], out: &mut BTreeSet<Feature>) {
    if t.len() > 100 {
        out.insert(Feature::LongName);
    }
    if t.starts_with(b"/") || t.starts_with(b"{root}") || t.starts_with(b"{out}") {
        out.insert(Feature::AbsoluteSymlink);
    } else if escapes(&parent_components(link), t) {
        out.insert(Feature::EscapingSymlink);
    }
    match index.resolve(link, t) {
        Resolution::Dangling => {
            out.insert(Feature::DanglingSymlink);
        }
        Resolution::Loop => {
            out.insert(Feature::SymlinkLoop);
        }
        Resolution::Inside(dir) => {
            // Following the link lands on a directory that contains it: a walker that
            // follows links recurses without end.
            let dir_is_ancestor = index.is_dir(&dir)
                && dir.len() < link.depth()
                && link.components().zip(&dir).all(|(a, b)| a == b.as_slice());
            if dir_is_ancestor {
                out.insert(Feature::SymlinkLoop);
            }
        }
        Resolution::Outside => {}
    }
}

/// Components of the link's directory (empty at top level).
fn parent_components(link: &RelPath) -> Vec<&[u8]> {
    let mut comps: Vec<&[u8]> = link.components().collect();
    comps.pop();
    comps
}

/// True if `target`, read from the directory `dir` without following links, climbs above
/// the root at some point (`..` past the top).
fn escapes(dir: &[&[u8]], target: &[u8]) -> bool {
    let mut depth = dir.len();
    for comp in target.split(|&b| b == b'/') {
        match comp {
            b"" | b"." => {}
            b".." => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return true,
            },
            _ => depth += 1,
        }
    }
    false
}

/// `target` (absolute, already resolved) rewritten relative to the link's directory if it
/// lies under `root`; verbatim otherwise (see [`expected`]).
fn rebase(link: &RelPath, target: &[u8], root: &[u8]) -> Vec<u8> {
    if root.is_empty() {
        return target.to_vec();
    }
    let mut trimmed = root;
    while let Some(t) = trimmed.strip_suffix(b"/") {
        trimmed = t;
    }
    let rest = if !trimmed.is_empty() && target == trimmed {
        &b""[..]
    } else {
        match target.strip_prefix(trimmed) {
            Some(r) if r.starts_with(b"/") => r,
            _ => return target.to_vec(),
        }
    };
    let mut rest = rest;
    while let Some(r) = rest.strip_prefix(b"/") {
        rest = r;
    }
    if escapes(&[], rest) {
        return target.to_vec();
    }
    let ups = link.depth().saturating_sub(1);
    let mut out: Vec<u8> = Vec::new();
    for i in 0..ups {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(b"..");
    }
    if !rest.is_empty() {
        if !out.is_empty() {
            out.push(b'/');
        }
        out.extend_from_slice(rest);
    }
    if out.is_empty() {
        out.push(b'.');
    }
    out
}

/// How a symlink resolves within the spec.
enum Resolution {
    /// To this path (components; empty = the root).
    Inside(Vec<Vec<u8>>),
    /// Out of the root (`..` past the top, or an absolute target not under `{root}`).
    Outside,
    /// To a missing path, or through a non-directory.
    Dangling,
    /// More than [`MAX_HOPS`] symlinks followed.
    Loop,
}

/// Linux's limit on symlinks followed in one resolution (`ELOOP`).
const MAX_HOPS: usize = 40;

/// The entries of a spec with parents, by path, and its inodes.
struct Index {
    entries: Vec<Entry>,
    by_path: BTreeMap<RelPath, usize>,
    /// Inode (path of its file/symlink entry) → all its names, in creation order.
    inodes: BTreeMap<RelPath, Vec<RelPath>>,
}

impl Index {
    fn new(spec: &WorkspaceSpec) -> Self {
        let entries = spec.with_parents();
        let mut index = Index {
            by_path: BTreeMap::new(),
            inodes: BTreeMap::new(),
            entries: Vec::new(),
        };
        for (i, e) in entries.iter().enumerate() {
            index.by_path.entry(e.path.clone()).or_insert(i);
        }
        index.entries = entries;
        let mut inodes: BTreeMap<RelPath, Vec<RelPath>> = BTreeMap::new();
        for e in &index.entries {
            if let Some(inode) = index.inode_of(e) {
                if matches!(
                    inode.kind,
                    EntryKind::File { .. } | EntryKind::Symlink { .. }
                ) {
                    inodes
                        .entry(inode.path.clone())
                        .or_default()
                        .push(e.path.clone());
                }
            }
        }
        index.inodes = inodes;
        index
    }

    fn get(&self, path: &RelPath) -> Option<&Entry> {
        self.by_path.get(path).and_then(|&i| self.entries.get(i))
    }

    /// The entry holding the inode `e` names: `e` itself unless it is a hardlink.
    fn inode_of<'b>(&'b self, e: &'b Entry) -> Option<&'b Entry> {
        let mut cur = e;
        for _ in 0..=self.entries.len() {
            match &cur.kind {
                EntryKind::Hardlink { target } => cur = self.get(target)?,
                _ => return Some(cur),
            }
        }
        None
    }

    /// All names of the inode whose first entry is at `inode`.
    fn names(&self, inode: &RelPath) -> &[RelPath] {
        self.inodes.get(inode).map(Vec::as_slice).unwrap_or(&[])
    }

    fn kind_at(&self, comps: &[Vec<u8>]) -> Option<&EntryKind> {
        let path = RelPath::new(comps.join(&b'/')).ok()?;
        let e = self.get(&path)?;
        Some(&self.inode_of(e)?.kind)
    }

    fn is_dir(&self, comps: &[Vec<u8>]) -> bool {
        comps.is_empty() || matches!(self.kind_at(comps), Some(EntryKind::Dir))
    }

    /// Resolve the symlink at `link` with target `target` the way the kernel would (every
    /// symlink on the way followed, the final one too), on the spec instead of the disk.
    fn resolve(&self, link: &RelPath, target: &[u8]) -> Resolution {
        let mut stack: Vec<Vec<u8>> = parent_components(link)
            .into_iter()
            .map(<[u8]>::to_vec)
            .collect();
        let mut pending: VecDeque<Vec<u8>> = VecDeque::new();
        let mut hops = 0;
        if !self.start(target, &mut stack, &mut pending) {
            return Resolution::Outside;
        }
        while let Some(comp) = pending.pop_front() {
            match comp.as_slice() {
                b"" | b"." => continue,
                b".." => {
                    if stack.pop().is_none() {
                        return Resolution::Outside;
                    }
                    continue;
                }
                _ => stack.push(comp),
            }
            match self.kind_at(&stack) {
                None => return Resolution::Dangling,
                Some(EntryKind::Dir) => {}
                Some(EntryKind::Symlink { target }) => {
                    hops += 1;
                    if hops > MAX_HOPS {
                        return Resolution::Loop;
                    }
                    stack.pop();
                    let mut more = VecDeque::new();
                    if !self.start(target.as_bytes(), &mut stack, &mut more) {
                        return Resolution::Outside;
                    }
                    more.extend(pending);
                    pending = more;
                }
                Some(_) => {
                    if pending.iter().any(|c| !c.is_empty() && c != b".") {
                        return Resolution::Dangling;
                    }
                }
            }
        }
        Resolution::Inside(stack)
    }

    /// Queue `target`'s components; an absolute `{root}/...` target restarts at the root.
    /// `false` if the target is absolute and not under `{root}`.
    fn start(
        &self,
        target: &[u8],
        stack: &mut Vec<Vec<u8>>,
        pending: &mut VecDeque<Vec<u8>>,
    ) -> bool {
        let rel = if let Some(rest) = target.strip_prefix(b"{root}") {
            if !rest.is_empty() && !rest.starts_with(b"/") {
                return false; // `{root}x` names a sibling of the root
            }
            stack.clear();
            rest
        } else if target.starts_with(b"/") || target.starts_with(b"{out}") {
            return false;
        } else {
            target
        };
        pending.extend(rel.split(|&b| b == b'/').map(<[u8]>::to_vec));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::MtimeRule;

    fn p(s: &str) -> RelPath {
        RelPath::new(s).expect("valid test path")
    }
    fn pb(b: &[u8]) -> RelPath {
        RelPath::new(b.to_vec()).expect("valid test path")
    }
    fn entry(path: RelPath, kind: EntryKind, mode: Option<u32>) -> Entry {
        Entry { path, kind, mode }
    }
    fn file(path: &str, content: &str) -> Entry {
        entry(
            p(path),
            EntryKind::File {
                content: content.into(),
            },
            None,
        )
    }
    fn dir(path: &str, mode: u32) -> Entry {
        entry(p(path), EntryKind::Dir, Some(mode))
    }
    fn hardlink(path: &str, target: &str) -> Entry {
        entry(p(path), EntryKind::Hardlink { target: p(target) }, None)
    }
    fn symlink(path: &str, target: &str) -> Entry {
        entry(
            p(path),
            EntryKind::Symlink {
                target: target.into(),
            },
            None,
        )
    }
    fn special(path: &str, kind: EntryKind) -> Entry {
        entry(p(path), kind, None)
    }
    fn spec(entries: Vec<Entry>, exclusions: &[&str]) -> WorkspaceSpec {
        WorkspaceSpec {
            entries,
            exclusions: exclusions.iter().map(|s| p(s)).collect(),
        }
    }
    /// The strictest profile: everything kept and compared.
    fn exact() -> Profile {
        Profile {
            name: "test-exact".into(),
            hardlinks: HardlinkRule::Preserve,
            special_files: SpecialRule::Drop,
            absolute_symlinks: AbsoluteRule::Keep,
            escaping_symlinks: EscapingRule::Keep,
            modes: ModeRule::Exact,
            mtimes: MtimeRule::Ignore,
        }
    }
    fn ph() -> Placeholders {
        Placeholders {
            root: b"/jail/root".to_vec(),
            out: b"/jail/out".to_vec(),
        }
    }
    fn file_node(content: &str, mode: u32) -> Node {
        Node {
            kind: NodeKind::File {
                size: content.len() as u64,
                sha256: sha256_hex(content.as_bytes()),
            },
            mode,
        }
    }
    fn link_node(target: &[u8]) -> Node {
        Node {
            kind: NodeKind::Symlink {
                target: RawBytes(target.to_vec()),
            },
            mode: 0,
        }
    }
    fn dir_node(mode: u32) -> Node {
        Node {
            kind: NodeKind::Dir,
            mode,
        }
    }
    fn escape_bytes(b: &[u8]) -> String {
        crate::model::bytes::escape(b)
    }
    fn names(tree: &Tree) -> Vec<String> {
        tree.nodes.keys().map(RelPath::escaped).collect()
    }

    fn h1() -> WorkspaceSpec {
        spec(
            vec![
                file("cache/mod.py", "VALUE = 1\n"),
                hardlink("venv/mod.py", "cache/mod.py"),
            ],
            &[],
        )
    }

    /// H1: both names of a shared inode come back with the full content; sharing is
    /// compared only under `preserve`; `refuse-at-capture` makes both names refusable.
    #[test]
    fn h1_shared_inode_under_every_hardlink_rule() {
        let content = file_node("VALUE = 1\n", 0o644);
        for rule in [
            HardlinkRule::Copy,
            HardlinkRule::Preserve,
            HardlinkRule::RefuseAtCapture,
            HardlinkRule::RefuseExcludedAlias,
        ] {
            let profile = Profile {
                hardlinks: rule,
                ..exact()
            };
            let e = expected(&h1(), &profile, &ph());
            assert_eq!(
                names(&e.tree),
                ["cache", "cache/mod.py", "venv", "venv/mod.py"],
                "{rule:?}"
            );
            assert_eq!(e.tree.nodes[&p("cache/mod.py")], content, "{rule:?}");
            assert_eq!(e.tree.nodes[&p("venv/mod.py")], content, "{rule:?}");
            assert_eq!(
                e.tree.nodes[&p("venv")],
                dir_node(0o755),
                "implicit parent is 0755"
            );
            let groups = if rule == HardlinkRule::Preserve {
                vec![vec![p("cache/mod.py"), p("venv/mod.py")]]
            } else {
                vec![]
            };
            assert_eq!(e.tree.shared_inodes, groups, "{rule:?}");
            let refusable = match rule {
                HardlinkRule::RefuseAtCapture => vec![
                    (p("cache/mod.py"), Feature::SharedInode),
                    (p("venv/mod.py"), Feature::SharedInode),
                ],
                _ => vec![],
            };
            assert_eq!(e.refusable, refusable, "{rule:?}");
        }
    }

    /// H2: with the first name excluded, the second name still has the full content, the
    /// excluded file is gone but its (implicit) directory stays.
    #[test]
    fn h2_excluded_first_name_keeps_full_content() {
        let mut s = h1();
        s.exclusions = vec![p("cache/mod.py")];
        for rule in [
            HardlinkRule::Copy,
            HardlinkRule::Preserve,
            HardlinkRule::RefuseAtCapture,
            HardlinkRule::RefuseExcludedAlias,
        ] {
            let e = expected(
                &s,
                &Profile {
                    hardlinks: rule,
                    ..exact()
                },
                &ph(),
            );
            assert_eq!(names(&e.tree), ["cache", "venv", "venv/mod.py"], "{rule:?}");
            assert_eq!(
                e.tree.nodes[&p("venv/mod.py")],
                file_node("VALUE = 1\n", 0o644)
            );
            assert!(
                e.tree.shared_inodes.is_empty(),
                "one kept name is no group ({rule:?})"
            );
            let refusable = match rule {
                HardlinkRule::RefuseAtCapture => vec![(p("venv/mod.py"), Feature::SharedInode)],
                HardlinkRule::RefuseExcludedAlias => {
                    vec![(p("venv/mod.py"), Feature::ExcludedAlias)]
                }
                _ => vec![],
            };
            assert_eq!(e.refusable, refusable, "{rule:?}");
        }
        // Excluding the whole directory leaves no trace of it.
        s.exclusions = vec![p("cache")];
        let e = expected(&s, &exact(), &ph());
        assert_eq!(names(&e.tree), ["venv", "venv/mod.py"]);
        assert!(features(&s).contains(&Feature::ExcludedAlias));
    }

    fn h3() -> WorkspaceSpec {
        spec(
            vec![
                symlink(".venv/bin/python", "/usr/local/bin/python"),
                symlink(".venv/bin/python3", "python"),
                symlink(".venv/bin/inside", "{root}/.venv/lib/x"),
                symlink("top", "{root}"),
                symlink("deep/a/b/root", "{root}/"),
                symlink("climb", "{root}/../etc"),
                symlink("sibling", "{root}x/y"),
            ],
            &[],
        )
    }

    /// H3 and rebasing: each absolute-symlink rule; relative links are never touched.
    #[test]
    fn h3_absolute_symlinks_under_every_rule() {
        let s = h3();
        let target = |e: &Expected, path: &str| {
            e.tree.nodes.get(&p(path)).map(|n| match &n.kind {
                NodeKind::Symlink { target } => target.escaped(),
                other => panic!("`{path}` is not a symlink: {other:?}"),
            })
        };
        let keep = expected(&s, &exact(), &ph());
        assert_eq!(
            target(&keep, ".venv/bin/python").as_deref(),
            Some("/usr/local/bin/python")
        );
        assert_eq!(
            target(&keep, ".venv/bin/python3").as_deref(),
            Some("python")
        );
        assert_eq!(
            target(&keep, ".venv/bin/inside").as_deref(),
            Some("/jail/root/.venv/lib/x")
        );
        assert!(keep.refusable.is_empty());

        let rebase = expected(
            &s,
            &Profile {
                absolute_symlinks: AbsoluteRule::RebaseInsideRoot,
                ..exact()
            },
            &ph(),
        );
        assert_eq!(
            target(&rebase, ".venv/bin/python").as_deref(),
            Some("/usr/local/bin/python"),
            "outside the root: verbatim"
        );
        assert_eq!(
            target(&rebase, ".venv/bin/python3").as_deref(),
            Some("python")
        );
        assert_eq!(
            target(&rebase, ".venv/bin/inside").as_deref(),
            Some("../../.venv/lib/x")
        );
        assert_eq!(
            target(&rebase, "top").as_deref(),
            Some("."),
            "top-level link to the root"
        );
        assert_eq!(
            target(&rebase, "deep/a/b/root").as_deref(),
            Some("../../..")
        );
        assert_eq!(
            target(&rebase, "climb").as_deref(),
            Some("/jail/root/../etc"),
            "climbs out: verbatim"
        );
        assert_eq!(
            target(&rebase, "sibling").as_deref(),
            Some("/jail/rootx/y"),
            "a sibling of the root is outside"
        );

        let drop = expected(
            &s,
            &Profile {
                absolute_symlinks: AbsoluteRule::Drop,
                ..exact()
            },
            &ph(),
        );
        assert_eq!(
            names(&drop.tree),
            [
                ".venv",
                ".venv/bin",
                ".venv/bin/python3",
                "deep",
                "deep/a",
                "deep/a/b"
            ]
        );

        let refuse = expected(
            &s,
            &Profile {
                absolute_symlinks: AbsoluteRule::RefuseAtCapture,
                ..exact()
            },
            &ph(),
        );
        assert_eq!(
            refuse.tree, keep.tree,
            "refusable entries are expected as if kept"
        );
        let refused: Vec<String> = refuse
            .refusable
            .iter()
            .map(|(p, f)| format!("{p} {f}"))
            .collect();
        assert_eq!(
            refused,
            [
                ".venv/bin/python absolute-symlink",
                ".venv/bin/inside absolute-symlink",
                "top absolute-symlink",
                "deep/a/b/root absolute-symlink",
                "climb absolute-symlink",
                "sibling absolute-symlink",
            ]
        );
    }

    /// Escaping relative links are kept under both rules; `refuse-at-capture` lists them.
    #[test]
    fn escaping_symlinks_under_every_rule() {
        let s = spec(
            vec![symlink("a/up", "../../etc"), symlink("a/ok", "../a/x/..")],
            &[],
        );
        for rule in [EscapingRule::Keep, EscapingRule::RefuseAtCapture] {
            let e = expected(
                &s,
                &Profile {
                    escaping_symlinks: rule,
                    ..exact()
                },
                &ph(),
            );
            assert_eq!(e.tree.nodes[&p("a/up")], link_node(b"../../etc"));
            assert_eq!(e.tree.nodes[&p("a/ok")], link_node(b"../a/x/.."));
            let want = if rule == EscapingRule::RefuseAtCapture {
                vec![(p("a/up"), Feature::EscapingSymlink)]
            } else {
                vec![]
            };
            assert_eq!(e.refusable, want, "{rule:?}");
        }
        let f = features(&s);
        assert!(f.contains(&Feature::EscapingSymlink));
        assert!(
            f.contains(&Feature::DanglingSymlink),
            "`a/ok` resolves to the missing `a/x`"
        );
    }

    /// H4 and other specials: FIFOs and char devices follow `special-files`; sockets are
    /// always dropped.
    #[test]
    fn h4_special_files_under_every_rule() {
        let s = spec(
            vec![
                file("a", "x"),
                special("pipe", EntryKind::Fifo),
                special("sock", EntryKind::Socket),
                special("dev/null", EntryKind::CharDevice { major: 1, minor: 3 }),
            ],
            &[],
        );
        let drop = expected(&s, &exact(), &ph());
        assert_eq!(names(&drop.tree), ["a", "dev"]);
        assert!(drop.refusable.is_empty());
        let refuse = expected(
            &s,
            &Profile {
                special_files: SpecialRule::RefuseAtCapture,
                ..exact()
            },
            &ph(),
        );
        assert_eq!(names(&refuse.tree), ["a", "dev", "dev/null", "pipe"]);
        assert_eq!(
            refuse.tree.nodes[&p("pipe")],
            Node {
                kind: NodeKind::Fifo,
                mode: 0o644
            }
        );
        assert_eq!(
            refuse.refusable,
            [
                (p("pipe"), Feature::Fifo),
                (p("sock"), Feature::Socket),
                (p("dev/null"), Feature::CharDevice)
            ]
        );
        let f = features(&s);
        for want in [Feature::Fifo, Feature::Socket, Feature::CharDevice] {
            assert!(f.contains(&want), "{want} missing from {f:?}");
        }
    }

    /// H5: `self -> .` is kept verbatim and detected as a loop; so are `up -> ..` and a
    /// two-link cycle; a link to a sibling directory is not a loop.
    #[test]
    fn h5_loop_links_are_kept_and_detected() {
        let s = spec(vec![symlink("self", ".")], &[]);
        let e = expected(&s, &exact(), &ph());
        assert_eq!(e.tree.nodes[&p("self")], link_node(b"."));
        assert!(features(&s).contains(&Feature::SymlinkLoop));
        for entries in [
            vec![symlink("d/up", "..")],
            vec![symlink("a", "b"), symlink("b", "a")],
            vec![symlink("d/abs", "{root}/d")],
        ] {
            let s = spec(entries, &[]);
            assert!(features(&s).contains(&Feature::SymlinkLoop), "{s:?}");
        }
        let s = spec(vec![dir("x", 0o755), symlink("d/x", "../x")], &[]);
        let f = features(&s);
        assert!(
            !f.contains(&Feature::SymlinkLoop) && !f.contains(&Feature::DanglingSymlink),
            "{f:?}"
        );
    }

    /// H6: long, non-UTF-8 and newline names are kept byte-exact.
    #[test]
    fn h6_odd_names_are_kept_byte_exact() {
        let long_path = format!("{}/{}", "d".repeat(59), "f".repeat(60)); // 120 bytes
        let component = "c".repeat(255);
        let s = spec(
            vec![
                file(&long_path, "x"),
                file(&component, "y"),
                entry(
                    pb(b"\xff\xfe"),
                    EntryKind::File {
                        content: "z".into(),
                    },
                    None,
                ),
                entry(
                    pb(b"new\nline"),
                    EntryKind::File {
                        content: "w".into(),
                    },
                    None,
                ),
            ],
            &[],
        );
        let e = expected(&s, &exact(), &ph());
        for path in [
            p(&long_path),
            p(&component),
            pb(b"\xff\xfe"),
            pb(b"new\nline"),
        ] {
            assert!(e.tree.nodes.contains_key(&path), "`{path}` missing");
        }
        let f = features(&s);
        for want in [
            Feature::LongName,
            Feature::NonUtf8Name,
            Feature::ControlCharName,
        ] {
            assert!(f.contains(&want), "{want} missing from {f:?}");
        }
    }

    /// H7: a 0555 directory keeps its mode and its child under `exact`.
    #[test]
    fn h7_read_only_dir() {
        let s = spec(vec![dir("ro", 0o555), file("ro/foo", "x")], &[]);
        let e = expected(&s, &exact(), &ph());
        assert_eq!(e.tree.nodes[&p("ro")], dir_node(0o555));
        assert_eq!(e.tree.nodes[&p("ro/foo")], file_node("x", 0o644));
        let f = features(&s);
        assert!(
            f.contains(&Feature::ReadOnlyDir) && !f.contains(&Feature::EmptyDir),
            "{f:?}"
        );
    }

    /// H8: both names of a symlink inode come back as symlinks to `foo`; grouped under
    /// `preserve`, dropped together when the target is absolute and the rule is `drop`.
    #[test]
    fn h8_hardlink_to_symlink() {
        let s = spec(vec![symlink("s", "foo"), hardlink("s2", "s")], &[]);
        let e = expected(&s, &exact(), &ph());
        assert_eq!(e.tree.nodes[&p("s")], link_node(b"foo"));
        assert_eq!(e.tree.nodes[&p("s2")], link_node(b"foo"));
        assert_eq!(e.tree.shared_inodes, [vec![p("s"), p("s2")]]);
        let copy = expected(
            &s,
            &Profile {
                hardlinks: HardlinkRule::Copy,
                ..exact()
            },
            &ph(),
        );
        assert_eq!(copy.tree.nodes, e.tree.nodes);
        assert!(copy.tree.shared_inodes.is_empty());
        assert!(features(&s).contains(&Feature::HardlinkToSymlink));

        let abs = spec(vec![symlink("s", "/abs"), hardlink("d/s2", "s")], &[]);
        let dropped = expected(
            &abs,
            &Profile {
                absolute_symlinks: AbsoluteRule::Drop,
                ..exact()
            },
            &ph(),
        );
        assert_eq!(names(&dropped.tree), ["d"]);
        // Rebased per name: targets differ, so the names cannot share an inode.
        let abs = spec(vec![symlink("s", "{root}/t"), hardlink("d/s2", "s")], &[]);
        let rebased = expected(
            &abs,
            &Profile {
                absolute_symlinks: AbsoluteRule::RebaseInsideRoot,
                ..exact()
            },
            &ph(),
        );
        assert_eq!(rebased.tree.nodes[&p("s")], link_node(b"t"));
        assert_eq!(rebased.tree.nodes[&p("d/s2")], link_node(b"../t"));
        assert!(rebased.tree.shared_inodes.is_empty());
    }

    /// Every mode rule, on a setuid file, an exec file, a sticky 0777 dir and a 0000 dir.
    #[test]
    fn modes_under_every_rule() {
        let s = spec(
            vec![
                entry(
                    p("suid"),
                    EntryKind::File {
                        content: "x".into(),
                    },
                    Some(0o4755),
                ),
                entry(
                    p("plain"),
                    EntryKind::File {
                        content: "x".into(),
                    },
                    Some(0o664),
                ),
                dir("tmp", 0o1777),
                dir("none", 0o000),
                symlink("l", "plain"),
                special("pipe", EntryKind::Fifo),
            ],
            &[],
        );
        let base = Profile {
            special_files: SpecialRule::RefuseAtCapture,
            ..exact()
        };
        let modes = |rule: ModeRule| -> Vec<u32> {
            let e = expected(
                &s,
                &Profile {
                    modes: rule,
                    ..base.clone()
                },
                &ph(),
            );
            ["suid", "plain", "tmp", "none", "l", "pipe"]
                .iter()
                .map(|n| e.tree.nodes[&p(n)].mode)
                .collect()
        };
        assert_eq!(modes(ModeRule::Exact), [0o4755, 0o664, 0o1777, 0, 0, 0o644]);
        assert_eq!(modes(ModeRule::ExecBit), [0o100, 0, 0, 0, 0, 0]);
        assert_eq!(
            modes(ModeRule::DataFilter),
            [0o755, 0o644, 0o755, 0, 0, 0o644]
        );
        assert_eq!(modes(ModeRule::Ignore), [0, 0, 0, 0, 0, 0]);
        let f = features(&s);
        assert!(
            f.contains(&Feature::SpecialMode) && f.contains(&Feature::ReadOnlyDir),
            "{f:?}"
        );
        assert!(f.contains(&Feature::EmptyDir), "{f:?}");
    }

    /// `normalise` drops inode groups unless `preserve`, and is idempotent.
    #[test]
    fn normalise_drops_groups_unless_preserve_and_is_idempotent() {
        let e = expected(&h1(), &exact(), &ph());
        assert_eq!(e.tree.shared_inodes.len(), 1);
        for rule in [
            HardlinkRule::Copy,
            HardlinkRule::RefuseAtCapture,
            HardlinkRule::RefuseExcludedAlias,
        ] {
            let profile = Profile {
                hardlinks: rule,
                modes: ModeRule::ExecBit,
                ..exact()
            };
            let n = normalise(&e.tree, &profile);
            assert!(n.shared_inodes.is_empty(), "{rule:?}");
            assert_eq!(normalise(&n, &profile), n, "normalise must be idempotent");
        }
    }

    /// The embedded default profile: copy, drop, keep, keep, exec-bit.
    #[test]
    fn default_profile_on_a_mixed_spec() {
        let mut s = h1();
        s.entries.push(entry(
            p("run.sh"),
            EntryKind::File {
                content: "#!/bin/sh\n".into(),
            },
            Some(0o755),
        ));
        s.entries.push(special("pipe", EntryKind::Fifo));
        s.entries.push(symlink("abs", "/etc/passwd"));
        let e = expected(&s, &Profile::default_profile(), &ph());
        assert_eq!(
            names(&e.tree),
            [
                "abs",
                "cache",
                "cache/mod.py",
                "run.sh",
                "venv",
                "venv/mod.py"
            ]
        );
        assert_eq!(e.tree.nodes[&p("run.sh")].mode, 0o100);
        assert_eq!(e.tree.nodes[&p("cache/mod.py")].mode, 0);
        assert_eq!(e.tree.nodes[&p("cache")].mode, 0);
        assert!(e.tree.shared_inodes.is_empty() && e.refusable.is_empty());
    }

    /// Feature names are the same in JSON and `Display`, and `ALL` lists each once.
    #[test]
    fn feature_names_match_serde() {
        let all: BTreeSet<Feature> = Feature::ALL.into_iter().collect();
        assert_eq!(all.len(), Feature::ALL.len());
        for f in Feature::ALL {
            let json = serde_json::to_string(&f).expect("serialise");
            assert_eq!(json, format!("\"{f}\""));
            let back: Feature = serde_json::from_str(&json).expect("deserialise");
            assert_eq!(back, f);
        }
    }

    /// `rebase` edge cases: trailing slashes on the root, `//` after it, the root `/`, an
    /// empty root (no rebasing), and a target that climbs back out.
    #[test]
    fn rebase_edges() {
        let link = p("a/l");
        let r = |target: &str, root: &str| {
            escape_bytes(&rebase(&link, target.as_bytes(), root.as_bytes()))
        };
        assert_eq!(r("/j/root/x", "/j/root/"), "../x");
        assert_eq!(r("/j/root//x/", "/j/root"), "../x/");
        assert_eq!(r("/j/root", "/j/root//"), "..");
        assert_eq!(r("/etc/x", "/"), "../etc/x");
        assert_eq!(r("/j/root/x", ""), "/j/root/x");
        assert_eq!(r("/j/root/x/../../y", "/j/root"), "/j/root/x/../../y");
        assert_eq!(r("/j/root/x/../y", "/j/root"), "../x/../y");
    }

    /// `escapes` reads `..` lexically from the link's directory.
    #[test]
    fn escapes_is_lexical() {
        let at = |dir: &[&str], t: &str| {
            let comps: Vec<&[u8]> = dir.iter().map(|c| c.as_bytes()).collect();
            escapes(&comps, t.as_bytes())
        };
        assert!(at(&[], ".."));
        assert!(!at(&["a"], ".."));
        assert!(at(&["a"], "../.."));
        assert!(
            at(&["a"], "x/../../../a"),
            "leaves and comes back: still escaping"
        );
        assert!(!at(&[], "./a//b/."));
    }

    /// A plain spec has no features; a non-empty dir, 0644 files and a resolving link none.
    #[test]
    fn plain_spec_has_no_features() {
        let s = spec(vec![file("a/b", "x"), symlink("l", "a/b")], &[]);
        assert_eq!(features(&s), BTreeSet::new());
        assert_eq!(features(&WorkspaceSpec::default()), BTreeSet::new());
    }
}

/// A small spec strategy for this module's property tests (the real generators live in
/// `gen/`): few names so that paths collide, nest and get excluded often, every entry kind,
/// odd names and modes, link targets that loop, dangle, escape and use placeholders.
#[cfg(test)]
pub(crate) mod arb {
    use super::*;
    use crate::model::bytes::RawBytes;
    use proptest::prelude::*;

    const NAMES: [&[u8]; 6] = [b"a", b"b", b".c", b"\xff\xfe", b"n\nl", &[b'L'; 100]];
    const TARGETS: [&str; 10] = [
        ".",
        "..",
        "a",
        "b/a",
        "../a",
        "../../x",
        "/usr/bin/python",
        "{root}/a",
        "{root}",
        "{out}/d",
    ];
    const MODES: [Option<u32>; 8] = [
        None,
        None,
        Some(0o755),
        Some(0o555),
        Some(0o000),
        Some(0o4755),
        Some(0o1777),
        Some(0o600),
    ];

    fn path(comps: &[usize]) -> Option<RelPath> {
        let parts: Vec<&[u8]> = comps.iter().map(|&i| NAMES[i % NAMES.len()]).collect();
        RelPath::new(parts.join(&b'/')).ok()
    }

    /// Specs that pass `check()`: raw entries are added one by one, and an entry that would
    /// make the spec invalid is left out.
    pub(crate) fn spec() -> impl Strategy<Value = WorkspaceSpec> {
        let entry = (
            prop::collection::vec(0usize..NAMES.len(), 1..=3),
            0u8..9,
            0usize..MODES.len(),
            any::<usize>(),
            prop::collection::vec(any::<u8>(), 0..8),
        );
        (
            prop::collection::vec(entry, 0..12),
            prop::collection::vec(prop::collection::vec(0usize..NAMES.len(), 1..=2), 0..3),
        )
            .prop_map(|(raw, exclusions)| {
                let mut spec = WorkspaceSpec::default();
                for (comps, kind, mode, pick, content) in raw {
                    let Some(path) = path(&comps) else { continue };
                    let links: Vec<RelPath> = spec
                        .entries
                        .iter()
                        .filter(|e| {
                            matches!(e.kind, EntryKind::File { .. } | EntryKind::Symlink { .. })
                        })
                        .map(|e| e.path.clone())
                        .collect();
                    let kind = match kind {
                        0 | 1 => EntryKind::Dir,
                        2 | 3 => EntryKind::File {
                            content: RawBytes(content),
                        },
                        4 if !links.is_empty() => EntryKind::Hardlink {
                            target: links[pick % links.len()].clone(),
                        },
                        4 | 5 => EntryKind::Symlink {
                            target: TARGETS[pick % TARGETS.len()].into(),
                        },
                        6 => EntryKind::Fifo,
                        7 => EntryKind::Socket,
                        _ => EntryKind::CharDevice { major: 1, minor: 3 },
                    };
                    // A listed parent after its child passes `check()` but cannot be
                    // materialised in order; leave such entries out.
                    let is_late_parent = spec.entries.iter().any(|e| e.path.starts_with(&path));
                    spec.entries.push(Entry {
                        path,
                        kind,
                        mode: MODES[mode],
                    });
                    if is_late_parent || spec.check().is_err() {
                        spec.entries.pop();
                    }
                }
                spec.exclusions = exclusions.iter().filter_map(|c| path(c)).collect();
                spec
            })
    }

    /// Every combination of profile values.
    pub(crate) fn profile() -> impl Strategy<Value = Profile> {
        use crate::model::profile::MtimeRule;
        (
            prop::sample::select(vec![
                HardlinkRule::Copy,
                HardlinkRule::Preserve,
                HardlinkRule::RefuseAtCapture,
                HardlinkRule::RefuseExcludedAlias,
            ]),
            prop::sample::select(vec![SpecialRule::Drop, SpecialRule::RefuseAtCapture]),
            prop::sample::select(vec![
                AbsoluteRule::Keep,
                AbsoluteRule::RebaseInsideRoot,
                AbsoluteRule::Drop,
                AbsoluteRule::RefuseAtCapture,
            ]),
            prop::sample::select(vec![EscapingRule::Keep, EscapingRule::RefuseAtCapture]),
            prop::sample::select(vec![
                ModeRule::Exact,
                ModeRule::ExecBit,
                ModeRule::DataFilter,
                ModeRule::Ignore,
            ]),
        )
            .prop_map(
                |(hardlinks, special_files, absolute_symlinks, escaping_symlinks, modes)| Profile {
                    name: "arb".into(),
                    hardlinks,
                    special_files,
                    absolute_symlinks,
                    escaping_symlinks,
                    modes,
                    mtimes: MtimeRule::Ignore,
                },
            )
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::workspace::diff::{diff_trees, listing};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// For every spec and profile, the expected tree is well formed: nothing at or
        /// under an exclusion, no socket, no FIFO or device under `drop`, every parent a
        /// directory in the tree, modes already normalised, groups of two or more present
        /// names (none unless `preserve`), refusable paths are kept spec paths, and the
        /// listing has one line per node and group.
        #[test]
        fn expected_tree_is_well_formed(spec in arb::spec(), profile in arb::profile()) {
            let ph = Placeholders { root: b"/j/root".to_vec(), out: b"/j/out".to_vec() };
            let e = expected(&spec, &profile, &ph);
            for (path, node) in &e.tree.nodes {
                prop_assert!(!spec.is_excluded(path), "excluded `{}` is expected", path);
                prop_assert!(!matches!(node.kind, NodeKind::Socket), "socket `{}` expected", path);
                if profile.special_files == SpecialRule::Drop {
                    prop_assert!(
                        !matches!(node.kind, NodeKind::Fifo | NodeKind::CharDevice { .. }),
                        "special `{}` expected under drop", path
                    );
                }
                if let Some(parent) = path.parent() {
                    let kind = e.tree.nodes.get(&parent).map(|n| &n.kind);
                    prop_assert_eq!(kind, Some(&NodeKind::Dir), "parent of `{}` is not a dir", path);
                }
            }
            prop_assert_eq!(&normalise(&e.tree, &profile), &e.tree, "normalise is not idempotent");
            if profile.hardlinks != HardlinkRule::Preserve {
                prop_assert!(e.tree.shared_inodes.is_empty(), "groups outside preserve");
            }
            for group in &e.tree.shared_inodes {
                prop_assert!(group.len() >= 2, "group of one: {:?}", group);
                prop_assert!(group.windows(2).all(|w| w[0] < w[1]), "unsorted group {:?}", group);
                prop_assert!(group.iter().all(|p| e.tree.nodes.contains_key(p)), "absent name in {:?}", group);
            }
            let known: BTreeSet<RelPath> = spec.with_parents().into_iter().map(|e| e.path).collect();
            for (path, feature) in &e.refusable {
                prop_assert!(known.contains(path) && !spec.is_excluded(path), "refusable `{}` ({})", path, feature);
            }
            let lines = listing(&e.tree).lines().count();
            prop_assert_eq!(lines, e.tree.nodes.len() + e.tree.shared_inodes.len(), "one listing line each");
            let same = diff_trees(&e.tree, &e.tree);
            prop_assert!(same.is_empty() && same.to_string().is_empty(), "a tree differs from itself");
        }

        /// `features` agrees with `expected`: a spec whose expected tree under the strictest
        /// refusing profile lists a refusal for a feature also reports that feature.
        #[test]
        fn refusals_imply_features(spec in arb::spec()) {
            let profile = Profile {
                name: "refuse-all".into(),
                hardlinks: HardlinkRule::RefuseAtCapture,
                special_files: SpecialRule::RefuseAtCapture,
                absolute_symlinks: AbsoluteRule::RefuseAtCapture,
                escaping_symlinks: EscapingRule::RefuseAtCapture,
                modes: ModeRule::Exact,
                mtimes: crate::model::profile::MtimeRule::Ignore,
            };
            let found = features(&spec);
            for (path, feature) in expected(&spec, &profile, &Placeholders::default()).refusable {
                prop_assert!(found.contains(&feature), "`{}` refusable for {} but features {:?}", path, feature, found);
            }
        }
    }
}
