//! The workspace model: a serialisable description of a directory tree (`WorkspaceSpec`).
//!
//! JSON shape (see `bytes.rs` for how non-UTF-8 bytes are written):
//! ```json
//! {"entries": [
//!    {"path": "cache", "kind": "dir", "mode": 493},
//!    {"path": "cache/mod.py", "kind": "file", "content": "VALUE = 1\n"},
//!    {"path": "venv/mod.py", "kind": "hardlink", "target": "cache/mod.py"},
//!    {"path": ".venv/bin/python", "kind": "symlink", "target": "/usr/local/bin/python"},
//!    {"path": "pipe", "kind": "fifo"}],
//!  "exclusions": ["cache/mod.py"]}
//! ```
//! Parent directories that are not listed are created with mode `0755`.

use crate::model::bytes::{RawBytes, RelPath};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What an entry is. Hardlinks name an earlier entry (file or symlink) whose inode they share,
/// or (in prior workspaces) a jail file outside the root, `{out}/NAME`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum EntryKind {
    /// A directory.
    Dir,
    /// A regular file with this content.
    File {
        /// The bytes the file holds (empty when left out of the JSON).
        #[serde(default)]
        content: RawBytes,
    },
    /// A second (third, ...) name for the inode of the entry at `target`.
    Hardlink {
        /// The earlier entry (or `{out}/NAME` in a prior) whose inode this name shares.
        target: RelPath,
    },
    /// A symbolic link whose target string is `target` (never followed).
    Symlink {
        /// The target string, verbatim.
        target: RawBytes,
    },
    /// A named pipe (FIFO).
    Fifo,
    /// A Unix domain socket (bound, then the listener closed).
    Socket,
    /// A character device (needs root to create).
    CharDevice {
        /// Major device number.
        major: u32,
        /// Minor device number.
        minor: u32,
    },
}

impl EntryKind {
    /// Short name used in listings: `dir`, `file`, `hardlink`, `symlink`, `fifo`, `socket`, `chardev`.
    pub fn label(&self) -> &'static str {
        match self {
            EntryKind::Dir => "dir",
            EntryKind::File { .. } => "file",
            EntryKind::Hardlink { .. } => "hardlink",
            EntryKind::Symlink { .. } => "symlink",
            EntryKind::Fifo => "fifo",
            EntryKind::Socket => "socket",
            EntryKind::CharDevice { .. } => "chardev",
        }
    }
}

/// One entry of a workspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Root-relative path.
    pub path: RelPath,
    /// What the entry is (serialised flat: `kind` and its fields beside `path`).
    #[serde(flatten)]
    pub kind: EntryKind,
    /// Permission bits (`0o7777` mask, setuid/setgid/sticky included); `None` means the
    /// kind's default: `0o755` for directories, `0o644` for others. Ignored for symlinks
    /// and hardlinks (a hardlink shares its target's mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
}

impl Entry {
    /// The permission bits this entry is created with.
    pub fn effective_mode(&self) -> u32 {
        match (self.mode, &self.kind) {
            (Some(m), _) => m & 0o7777,
            (None, EntryKind::Dir) => 0o755,
            (None, _) => 0o644,
        }
    }
}

/// A workspace: its entries in creation order, and the exclusions a producer must honour.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceSpec {
    /// The entries, in creation order (a directory before what lies under it).
    pub entries: Vec<Entry>,
    /// Root-relative paths left out of capture, with everything under them.
    #[serde(default)]
    pub exclusions: Vec<RelPath>,
}

/// Why a spec cannot be materialised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// This path is listed twice.
    #[error("entry `{0}` appears twice")]
    Duplicate(RelPath),
    /// The entry (first) lies under a listed entry (second) that is not a directory.
    #[error("entry `{0}` lies under `{1}`, which is not a directory")]
    UnderNonDir(RelPath, RelPath),
    /// The hardlink (first) names a target (second) that is not an earlier file or
    /// symlink entry.
    #[error("hardlink `{0}` names `{1}`, which is not an earlier file or symlink entry")]
    BadHardlink(RelPath, RelPath),
    /// The directory (first) is listed after an entry (second) under it.
    #[error("directory `{0}` is listed after `{1}`, which lies under it")]
    ParentAfterChild(RelPath, RelPath),
}

impl WorkspaceSpec {
    /// Parse the JSON form; the error names what is wrong.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Pretty JSON form.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The entries with every unlisted parent directory added (mode `0755`) before its first
    /// child, in an order in which they can be created.
    pub fn with_parents(&self) -> Vec<Entry> {
        let listed: BTreeMap<&RelPath, ()> = self.entries.iter().map(|e| (&e.path, ())).collect();
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::with_capacity(self.entries.len());
        for e in &self.entries {
            let mut parents = Vec::new();
            let mut p = e.path.parent();
            while let Some(dir) = p {
                if listed.contains_key(&dir) || seen.contains(&dir) {
                    break;
                }
                p = dir.parent();
                parents.push(dir);
            }
            for dir in parents.into_iter().rev() {
                seen.insert(dir.clone());
                out.push(Entry {
                    path: dir,
                    kind: EntryKind::Dir,
                    mode: None,
                });
            }
            out.push(e.clone());
        }
        out
    }

    /// Check that the spec can be materialised: unique paths, parents are directories
    /// (listed or implicit), hardlinks name an earlier file or symlink.
    pub fn check(&self) -> Result<(), SpecError> {
        let mut kinds: BTreeMap<&RelPath, &EntryKind> = BTreeMap::new();
        // Directories created implicitly so far, with the first child that needed them.
        let mut implicit: BTreeMap<RelPath, &RelPath> = BTreeMap::new();
        for e in &self.entries {
            if kinds.contains_key(&e.path) {
                return Err(SpecError::Duplicate(e.path.clone()));
            }
            if let Some(child) = implicit.get(&e.path) {
                return Err(SpecError::ParentAfterChild(
                    e.path.clone(),
                    (*child).clone(),
                ));
            }
            let mut up = e.path.parent();
            while let Some(dir) = up {
                if !kinds.contains_key(&dir) {
                    implicit.entry(dir.clone()).or_insert(&e.path);
                }
                up = dir.parent();
            }
            let mut p = e.path.parent();
            while let Some(dir) = p {
                if let Some(k) = kinds.get(&dir) {
                    if !matches!(k, EntryKind::Dir) {
                        return Err(SpecError::UnderNonDir(e.path.clone(), dir));
                    }
                }
                p = dir.parent();
            }
            if let EntryKind::Hardlink { target } = &e.kind {
                // `{out}/...`: a jail file outside the root (hostile priors only).
                let outside = target.as_bytes().starts_with(b"{out}/");
                match kinds.get(target) {
                    _ if outside => {}
                    Some(EntryKind::File { .. }) | Some(EntryKind::Symlink { .. }) => {}
                    _ => return Err(SpecError::BadHardlink(e.path.clone(), target.clone())),
                }
            }
            kinds.insert(&e.path, &e.kind);
        }
        // A later entry must not turn an earlier implicit parent into a non-directory.
        for e in &self.entries {
            if let Some(parent) = e.path.parent() {
                let mut p = Some(parent);
                while let Some(dir) = p {
                    if let Some(k) = kinds.get(&dir) {
                        if !matches!(k, EntryKind::Dir) {
                            return Err(SpecError::UnderNonDir(e.path.clone(), dir));
                        }
                    }
                    p = dir.parent();
                }
            }
        }
        Ok(())
    }

    /// True if `path` is excluded (equal to or under an exclusion).
    pub fn is_excluded(&self, path: &RelPath) -> bool {
        self.exclusions.iter().any(|x| path.starts_with(x))
    }
}

/// Placeholders allowed at the start of a symlink target in a spec, resolved when the spec is
/// materialised: `{root}` becomes the absolute path of the root being materialised (so a spec
/// can hold an absolute link *into* its root), `{out}` the absolute path of the jail's
/// out-of-root decoy directory (a link *out of* the root that never names a real host path).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placeholders {
    /// Absolute path of the capture root, as bytes.
    pub root: Vec<u8>,
    /// Absolute path of the decoy directory outside the root, as bytes.
    pub out: Vec<u8>,
}

impl Placeholders {
    /// The target with a leading `{root}` or `{out}` replaced; other targets unchanged.
    pub fn resolve(&self, target: &[u8]) -> Vec<u8> {
        for (token, value) in [(&b"{root}"[..], &self.root), (&b"{out}"[..], &self.out)] {
            if let Some(rest) = target.strip_prefix(token) {
                let mut v = value.clone();
                v.extend_from_slice(rest);
                return v;
            }
        }
        target.to_vec()
    }
}

/// One replayable case: the workspace to capture (W1, with its exclusions), and the prior
/// workspace (W0) found at the root when hydrating.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    /// W1: the workspace captured, with its exclusions.
    pub spec: WorkspaceSpec,
    /// W0: what the root holds when the archive is hydrated onto it.
    pub prior: WorkspaceSpec,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> RelPath {
        RelPath::new(s).expect("valid test path")
    }

    #[test]
    fn implicit_parents_come_before_children() {
        let spec = WorkspaceSpec {
            entries: vec![Entry {
                path: p("a/b/c"),
                kind: EntryKind::File {
                    content: "x".into(),
                },
                mode: None,
            }],
            exclusions: vec![],
        };
        let names: Vec<String> = spec
            .with_parents()
            .iter()
            .map(|e| e.path.escaped())
            .collect();
        assert_eq!(names, ["a", "a/b", "a/b/c"]);
    }

    #[test]
    fn check_refuses_bad_hardlinks_and_children_of_files() {
        let file = |s: &str| Entry {
            path: p(s),
            kind: EntryKind::File {
                content: "x".into(),
            },
            mode: None,
        };
        let link = |s: &str, t: &str| Entry {
            path: p(s),
            kind: EntryKind::Hardlink { target: p(t) },
            mode: None,
        };
        let dir = |s: &str| Entry {
            path: p(s),
            kind: EntryKind::Dir,
            mode: None,
        };
        let refused = |entries: Vec<Entry>| {
            WorkspaceSpec {
                entries,
                exclusions: vec![],
            }
            .check()
            .err()
        };
        assert_eq!(refused(vec![file("a"), link("b", "a")]), None);
        assert!(matches!(
            refused(vec![link("b", "a"), file("a")]),
            Some(SpecError::BadHardlink(..))
        ));
        assert!(matches!(
            refused(vec![file("a"), file("a/b")]),
            Some(SpecError::UnderNonDir(..))
        ));
        assert!(matches!(
            refused(vec![file("a"), file("a")]),
            Some(SpecError::Duplicate(..))
        ));
        assert!(matches!(
            refused(vec![file("a/b"), dir("a")]),
            Some(SpecError::ParentAfterChild(..))
        ));
        assert_eq!(refused(vec![dir("a"), file("a/b")]), None);
    }

    #[test]
    fn spec_json_round_trips_with_non_utf8() {
        let spec = WorkspaceSpec {
            entries: vec![
                Entry {
                    path: p("d"),
                    kind: EntryKind::Dir,
                    mode: Some(0o555),
                },
                Entry {
                    path: RelPath::new(b"d/\xff\xfe".to_vec()).expect("valid"),
                    kind: EntryKind::File {
                        content: RawBytes(vec![0, 1, 255]),
                    },
                    mode: Some(0o4755),
                },
                Entry {
                    path: p("s"),
                    kind: EntryKind::Symlink {
                        target: "/abs".into(),
                    },
                    mode: None,
                },
                Entry {
                    path: p("f"),
                    kind: EntryKind::Fifo,
                    mode: None,
                },
            ],
            exclusions: vec![p("d")],
        };
        let back = WorkspaceSpec::from_json(&spec.to_json()).expect("parse back");
        assert_eq!(back, spec);
    }
}
