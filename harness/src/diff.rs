//! Print trees `ls -l` style and compare an expected tree with an observed one.
//!
//! Line format (two spaces between fields; names escaped with [`crate::bytes::escape`]):
//! ```text
//! drwxr-xr-x  dir/
//! -rwxr-xr-x  12  sha256:ab12cd34  dir/file
//! lrwxrwxrwx  link -> target
//! prw-r--r--  pipe
//! srw-r--r--  sock
//! crw-r--r--  1,3  dev
//! brw-r--r--  8,0  disk
//! hardlinks: a = b = c
//! ```
//! Files show the size in bytes and the first 8 hex digits of the SHA-256.

use crate::bytes::{escape, RelPath};
use crate::tree::{Node, NodeKind, Tree};
use std::fmt;

/// One `ls -l`-style line for `node` at `path`, without a newline.
pub fn node_line(path: &RelPath, node: &Node) -> String {
    let name = path.escaped();
    let perms = mode_string(node);
    match &node.kind {
        NodeKind::Dir => format!("{perms}  {name}/"),
        NodeKind::File { size, sha256 } => {
            let short = sha256.get(..8).unwrap_or(sha256);
            format!("{perms}  {size}  sha256:{short}  {name}")
        }
        NodeKind::Symlink { target } => format!("{perms}  {name} -> {}", target.escaped()),
        NodeKind::Fifo | NodeKind::Socket => format!("{perms}  {name}"),
        NodeKind::CharDevice { major, minor } | NodeKind::BlockDevice { major, minor } => {
            format!("{perms}  {major},{minor}  {name}")
        }
    }
}

/// The `hardlinks: a = b = c` line for one inode group, without a newline.
pub fn group_line(group: &[RelPath]) -> String {
    let names: Vec<String> = group.iter().map(|p| escape(p.as_bytes())).collect();
    format!("hardlinks: {}", names.join(" = "))
}

/// The whole tree, one line per node in path order, then one `hardlinks:` line per
/// shared-inode group; every line ends with a newline (empty tree: empty string).
pub fn listing(tree: &Tree) -> String {
    let mut out = String::new();
    for (path, node) in &tree.nodes {
        out.push_str(&node_line(path, node));
        out.push('\n');
    }
    for group in &tree.shared_inodes {
        out.push_str(&group_line(group));
        out.push('\n');
    }
    out
}

/// `drwxr-xr-x`: type letter, then rwx triplets with `s`/`S` (setuid, setgid) and `t`/`T`
/// (sticky). Symlinks always print `lrwxrwxrwx`, since their mode is not compared.
fn mode_string(node: &Node) -> String {
    let (letter, mode) = match node.kind {
        NodeKind::Dir => ('d', node.mode),
        NodeKind::File { .. } => ('-', node.mode),
        NodeKind::Symlink { .. } => ('l', 0o777),
        NodeKind::Fifo => ('p', node.mode),
        NodeKind::Socket => ('s', node.mode),
        NodeKind::CharDevice { .. } => ('c', node.mode),
        NodeKind::BlockDevice { .. } => ('b', node.mode),
    };
    let mut s = String::with_capacity(10);
    s.push(letter);
    let special = [(0o4000, 's'), (0o2000, 's'), (0o1000, 't')];
    for (i, (bit, letter)) in special.iter().enumerate() {
        let shift = 6 - 3 * i;
        let triplet = (mode >> shift) & 0o7;
        s.push(if triplet & 4 != 0 { 'r' } else { '-' });
        s.push(if triplet & 2 != 0 { 'w' } else { '-' });
        let x = triplet & 1 != 0;
        s.push(match (mode & bit != 0, x) {
            (true, true) => *letter,
            (true, false) => letter.to_ascii_uppercase(),
            (false, true) => 'x',
            (false, false) => '-',
        });
    }
    s
}

/// How an observed tree differs from the expected one. Each list is sorted by path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeDiff {
    /// In the expected tree only.
    pub missing: Vec<(RelPath, Node)>,
    /// In the observed tree only (including stale paths from a prior workspace).
    pub extra: Vec<(RelPath, Node)>,
    /// At the same path in both but different: `(path, expected, observed)`.
    pub changed: Vec<(RelPath, Node, Node)>,
    /// `Some((expected, observed))` groups when the shared-inode groups differ.
    pub shared_inodes: Option<(Vec<Vec<RelPath>>, Vec<Vec<RelPath>>)>,
}

impl TreeDiff {
    /// True if the trees are equal.
    pub fn is_empty(&self) -> bool {
        self.missing.is_empty()
            && self.extra.is_empty()
            && self.changed.is_empty()
            && self.shared_inodes.is_none()
    }
}

/// Compare every node and the shared-inode groups exactly. Normalise both sides with the
/// same profile first (`expected::normalise`) to compare only what the profile promises.
pub fn diff_trees(expected: &Tree, observed: &Tree) -> TreeDiff {
    let mut d = TreeDiff::default();
    for (path, e) in &expected.nodes {
        match observed.nodes.get(path) {
            None => d.missing.push((path.clone(), e.clone())),
            Some(o) if o != e => d.changed.push((path.clone(), e.clone(), o.clone())),
            Some(_) => {}
        }
    }
    for (path, o) in &observed.nodes {
        if !expected.nodes.contains_key(path) {
            d.extra.push((path.clone(), o.clone()));
        }
    }
    if expected.shared_inodes != observed.shared_inodes {
        d.shared_inodes = Some((
            expected.shared_inodes.clone(),
            observed.shared_inodes.clone(),
        ));
    }
    d
}

/// Unified-style: `- ` lines are expected only, `+ ` lines observed only; a changed node is
/// a `-` line then a `+` line. Node lines are sorted by path; differing `hardlinks:` groups
/// follow. Ends with a newline; prints nothing when empty.
impl fmt::Display for TreeDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut lines: Vec<(&RelPath, String)> = Vec::new();
        for (path, node) in &self.missing {
            lines.push((path, format!("- {}", node_line(path, node))));
        }
        for (path, node) in &self.extra {
            lines.push((path, format!("+ {}", node_line(path, node))));
        }
        for (path, e, o) in &self.changed {
            lines.push((
                path,
                format!("- {}\n+ {}", node_line(path, e), node_line(path, o)),
            ));
        }
        lines.sort_by(|a, b| a.0.cmp(b.0));
        for (_, line) in lines {
            writeln!(f, "{line}")?;
        }
        if let Some((exp, obs)) = &self.shared_inodes {
            for g in exp.iter().filter(|g| !obs.contains(g)) {
                writeln!(f, "- {}", group_line(g))?;
            }
            for g in obs.iter().filter(|g| !exp.contains(g)) {
                writeln!(f, "+ {}", group_line(g))?;
            }
        }
        Ok(())
    }
}
