//! Print trees `ls -l` style and compare an expected tree with an observed one.
//!
//! Line format (two spaces between fields; names escaped with [`crate::model::bytes::escape`]):
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
//! Files show the size in bytes and the first 8 hex digits of the SHA-256. A listing of a
//! tree normalised by a profile ([`ModeShown::Compared`]) prints the permission bits the
//! profile does not compare as `?` (`c?????????  1,3  dev`), never as a mode of `000`.

use crate::model::bytes::{escape, RelPath};
use crate::model::expected::compared_mode_bits;
use crate::model::profile::ModeRule;
use crate::model::tree::{Node, NodeKind, Tree};
use std::fmt;

/// Which permission bits a listing shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeShown {
    /// Every bit, as the tree has it (a real directory, a spec).
    All,
    /// Only the bits this mode rule compares (see [`compared_mode_bits`]); the others print
    /// as `?`. For trees passed through `normalise` with that rule.
    Compared(ModeRule),
}

impl ModeShown {
    fn mask(self, kind: &NodeKind) -> u32 {
        match self {
            ModeShown::All => 0o7777,
            ModeShown::Compared(rule) => compared_mode_bits(kind, rule),
        }
    }
}

/// One `ls -l`-style line for `node` at `path`, without a newline, every mode bit shown.
pub fn node_line(path: &RelPath, node: &Node) -> String {
    node_line_shown(path, node, ModeShown::All)
}

/// One `ls -l`-style line for `node` at `path`, without a newline, showing the mode bits
/// `shown` says.
pub fn node_line_shown(path: &RelPath, node: &Node, shown: ModeShown) -> String {
    let name = path.escaped();
    let perms = mode_string(node, shown.mask(&node.kind));
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
    listing_shown(tree, ModeShown::All)
}

/// [`listing`] showing the mode bits `shown` says.
pub fn listing_shown(tree: &Tree, shown: ModeShown) -> String {
    let mut out = String::new();
    for (path, node) in &tree.nodes {
        out.push_str(&node_line_shown(path, node, shown));
        out.push('\n');
    }
    for group in &tree.shared_inodes {
        out.push_str(&group_line(group));
        out.push('\n');
    }
    out
}

/// `drwxr-xr-x`: type letter, then rwx triplets with `s`/`S` (setuid, setgid) and `t`/`T`
/// (sticky); a bit outside `mask` prints `?` (a triplet's execute and special bit print one
/// `?` only when neither is in `mask`). Symlinks always print `lrwxrwxrwx`, since their mode
/// is not compared.
fn mode_string(node: &Node, mask: u32) -> String {
    let (letter, mode, mask) = match node.kind {
        NodeKind::Dir => ('d', node.mode, mask),
        NodeKind::File { .. } => ('-', node.mode, mask),
        NodeKind::Symlink { .. } => ('l', 0o777, 0o7777),
        NodeKind::Fifo => ('p', node.mode, mask),
        NodeKind::Socket => ('s', node.mode, mask),
        NodeKind::CharDevice { .. } => ('c', node.mode, mask),
        NodeKind::BlockDevice { .. } => ('b', node.mode, mask),
    };
    let mut s = String::with_capacity(10);
    s.push(letter);
    let special = [(0o4000, 's'), (0o2000, 's'), (0o1000, 't')];
    for (i, (bit, letter)) in special.iter().enumerate() {
        let shift = 6 - 3 * i;
        let (r, w, x) = (4 << shift, 2 << shift, 1 << shift);
        let plain = |b: u32, on: char| match (mask & b != 0, mode & b != 0) {
            (false, _) => '?',
            (true, true) => on,
            (true, false) => '-',
        };
        s.push(plain(r, 'r'));
        s.push(plain(w, 'w'));
        s.push(if mask & (bit | x) == 0 {
            '?'
        } else {
            match (mode & bit != 0, mode & x != 0) {
                (true, true) => *letter,
                (true, false) => letter.to_ascii_uppercase(),
                (false, true) => 'x',
                (false, false) => '-',
            }
        });
    }
    s
}

/// Shared-inode groups as in [`Tree::shared_inodes`]: each sorted, two or more names.
pub type InodeGroups = Vec<Vec<RelPath>>;

/// How an observed tree differs from the expected one. Each list is sorted by path.
/// Serialises (for JSON reports) with the node shape of [`Tree`].
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TreeDiff {
    /// In the expected tree only.
    pub missing: Vec<(RelPath, Node)>,
    /// In the observed tree only (including stale paths from a prior workspace).
    pub extra: Vec<(RelPath, Node)>,
    /// At the same path in both but different: `(path, expected, observed)`.
    pub changed: Vec<(RelPath, Node, Node)>,
    /// `Some((expected, observed))` groups when the shared-inode groups differ.
    pub shared_inodes: Option<(InodeGroups, InodeGroups)>,
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

impl TreeDiff {
    /// The diff as [`fmt::Display`] prints it, showing the mode bits `shown` says.
    pub fn shown(&self, shown: ModeShown) -> String {
        let mut out = String::new();
        let _ = self.write(&mut out, shown);
        out
    }

    fn write(&self, f: &mut impl fmt::Write, shown: ModeShown) -> fmt::Result {
        let line = |path: &RelPath, node: &Node| node_line_shown(path, node, shown);
        let mut lines: Vec<(&RelPath, String)> = Vec::new();
        for (path, node) in &self.missing {
            lines.push((path, format!("- {}", line(path, node))));
        }
        for (path, node) in &self.extra {
            lines.push((path, format!("+ {}", line(path, node))));
        }
        for (path, e, o) in &self.changed {
            lines.push((path, format!("- {}\n+ {}", line(path, e), line(path, o))));
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

/// Unified-style: `- ` lines are expected only, `+ ` lines observed only; a changed node is
/// a `-` line then a `+` line. Node lines are sorted by path; differing `hardlinks:` groups
/// follow. Ends with a newline; prints nothing when empty. Every mode bit is shown (see
/// [`TreeDiff::shown`]).
impl fmt::Display for TreeDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, ModeShown::All)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bytes::RawBytes;

    fn p(b: impl Into<Vec<u8>>) -> RelPath {
        RelPath::new(b).expect("valid test path")
    }
    fn n(kind: NodeKind, mode: u32) -> Node {
        Node { kind, mode }
    }
    fn f(size: u64, sha: &str, mode: u32) -> Node {
        n(
            NodeKind::File {
                size,
                sha256: sha.repeat(64 / sha.len()),
            },
            mode,
        )
    }
    fn tree(nodes: Vec<(RelPath, Node)>, groups: Vec<Vec<RelPath>>) -> Tree {
        Tree {
            nodes: nodes.into_iter().collect(),
            shared_inodes: groups,
        }
    }

    fn sample() -> Tree {
        tree(
            vec![
                (p("dir"), n(NodeKind::Dir, 0o755)),
                (p("dir/file"), f(12, "ab12cd34", 0o755)),
                (
                    p("link"),
                    n(
                        NodeKind::Symlink {
                            target: RawBytes(b"tar\xffget".to_vec()),
                        },
                        0,
                    ),
                ),
                (p("pipe"), n(NodeKind::Fifo, 0o644)),
                (p("sock"), n(NodeKind::Socket, 0o644)),
                (
                    p("dev"),
                    n(NodeKind::CharDevice { major: 1, minor: 3 }, 0o644),
                ),
                (
                    p("disk"),
                    n(NodeKind::BlockDevice { major: 8, minor: 0 }, 0o660),
                ),
                (p("suid"), f(0, "e3", 0o4754)),
                (p("sgid"), f(0, "e3", 0o2644)),
                (p("tmp"), n(NodeKind::Dir, 0o1777)),
                (p("sticky"), n(NodeKind::Dir, 0o1700)),
                (p(b"new\nline".to_vec()), f(0, "e3", 0)),
                (p("hard"), f(12, "ab12cd34", 0o755)),
            ],
            vec![vec![p("dir/file"), p("hard")]],
        )
    }

    /// The listing format is pinned: type letter and permission triplets with s/S/t/T,
    /// size + short hash for files, escaped names and targets, `hardlinks:` lines last.
    #[test]
    fn listing_is_ls_like() {
        let want = "\
crw-r--r--  1,3  dev
drwxr-xr-x  dir/
-rwxr-xr-x  12  sha256:ab12cd34  dir/file
brw-rw----  8,0  disk
-rwxr-xr-x  12  sha256:ab12cd34  hard
lrwxrwxrwx  link -> tar\\xffget
----------  0  sha256:e3e3e3e3  new\\nline
prw-r--r--  pipe
-rw-r-Sr--  0  sha256:e3e3e3e3  sgid
srw-r--r--  sock
drwx-----T  sticky/
-rwsr-xr--  0  sha256:e3e3e3e3  suid
drwxrwxrwt  tmp/
hardlinks: dir/file = hard
";
        assert_eq!(listing(&sample()), want);
        assert_eq!(listing(&Tree::default()), "");
    }

    #[test]
    fn equal_trees_have_an_empty_diff() {
        let d = diff_trees(&sample(), &sample());
        assert!(d.is_empty());
        assert_eq!(d.to_string(), "");
    }

    /// Missing, extra and changed nodes print as `-`/`+` lines sorted by path; differing
    /// inode groups follow.
    #[test]
    fn diff_prints_unified_style() {
        let expected = tree(
            vec![
                (p("a"), f(1, "aa", 0o644)),
                (p("b"), n(NodeKind::Dir, 0o755)),
                (p("c"), n(NodeKind::Symlink { target: "x".into() }, 0)),
                (p("d"), f(1, "aa", 0o644)),
            ],
            vec![vec![p("a"), p("d")]],
        );
        let observed = tree(
            vec![
                (p("a"), f(1, "aa", 0o644)),
                (p("b"), n(NodeKind::Dir, 0o555)),
                (p("bb"), n(NodeKind::Fifo, 0o644)),
                (p("d"), f(0, "e3", 0o644)),
                (p("stale"), f(3, "cc", 0o600)),
            ],
            vec![],
        );
        let d = diff_trees(&expected, &observed);
        assert_eq!(d.missing.len(), 1);
        assert_eq!(d.extra.len(), 2);
        assert_eq!(d.changed.len(), 2);
        assert!(!d.is_empty());
        let want = "\
- drwxr-xr-x  b/
+ dr-xr-xr-x  b/
+ prw-r--r--  bb
- lrwxrwxrwx  c -> x
- -rw-r--r--  1  sha256:aaaaaaaa  d
+ -rw-r--r--  0  sha256:e3e3e3e3  d
+ -rw-------  3  sha256:cccccccc  stale
- hardlinks: a = d
";
        assert_eq!(d.to_string(), want);
        let only_groups = diff_trees(
            &observed,
            &tree(
                observed.nodes.clone().into_iter().collect(),
                vec![vec![p("a"), p("d")]],
            ),
        );
        assert_eq!(only_groups.to_string(), "+ hardlinks: a = d\n");
    }
}
