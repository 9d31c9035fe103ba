//! An observed (or expected) directory tree: what `lstat` sees under a root.

use crate::model::bytes::{RawBytes, RelPath};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// What a node is, with the facts compared for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum NodeKind {
    /// A directory.
    Dir,
    /// A regular file: size in bytes and the SHA-256 of its content (lower-case hex).
    File {
        /// Length of the content in bytes.
        size: u64,
        /// SHA-256 of the content, lower-case hex (see [`sha256_hex`]).
        sha256: String,
    },
    /// A symlink and its target bytes (never followed).
    Symlink {
        /// The target string, verbatim.
        target: RawBytes,
    },
    /// A named pipe (FIFO).
    Fifo,
    /// A Unix domain socket.
    Socket,
    /// A character device node.
    CharDevice {
        /// Major device number.
        major: u32,
        /// Minor device number.
        minor: u32,
    },
    /// A block device node.
    BlockDevice {
        /// Major device number.
        major: u32,
        /// Minor device number.
        minor: u32,
    },
}

/// One path in a tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// What the path is (serialised flat: `kind` and its facts beside `mode`).
    #[serde(flatten)]
    pub kind: NodeKind,
    /// Permission bits, `mode & 0o7777` (0 for symlinks).
    pub mode: u32,
}

/// A tree: every path under the root (the root itself excluded), and the groups of paths
/// that share one inode (each group sorted, two or more names; groups sorted).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tree {
    /// Every path under the root, in path order.
    pub nodes: BTreeMap<RelPath, Node>,
    /// The groups of paths sharing one inode (each sorted, two or more names; groups
    /// sorted).
    pub shared_inodes: Vec<Vec<RelPath>>,
}

/// SHA-256 of `bytes`, lower-case hex (the form [`NodeKind::File`] holds).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
