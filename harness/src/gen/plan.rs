//! Plans: small, shrinkable descriptions of entries, exclusions and prior entries. A plan
//! never names a path; it names parents and targets by [`Index`] into what exists so far,
//! so every plan list resolves to a valid spec (see `resolve.rs`).

use proptest::sample::Index;

/// How one entry (or a small group of entries) is made.
#[derive(Clone, Debug)]
pub struct EntryPlan {
    /// Parent: an index (modulo) into the directories created so far, the root included.
    pub parent: Index,
    /// Base name, deduplicated by suffixing when taken.
    pub name: NamePlan,
    /// What to create.
    pub kind: KindPlan,
}

/// A base name.
#[derive(Clone, Debug)]
pub enum NamePlan {
    /// One of a short list of plain ASCII names; `0` is `a`.
    Plain(u8),
    /// A component of exactly `LONG_LENGTHS[i % 4]` bytes.
    Long(u8),
    /// Contains the bytes `\xff\xfe`.
    NonUtf8,
    /// Contains a newline.
    Newline,
}

/// Plain names; the first is what shrinking reaches.
pub const PLAIN_NAMES: &[&str] = &[
    "a",
    "b",
    "c",
    "mod.py",
    "data.bin",
    "notes.txt",
    "lib",
    "pkg",
    "node_modules",
    "x y",
    ".hidden",
    "README",
];

/// Names of the directories a shared inode's extra names are put in.
pub const STORE_DIRS: &[&str] = &["venv", "cache", "node_modules", ".pnpm-store", "store"];

/// Component lengths for [`NamePlan::Long`]: ustar name field (100), one less, ustar prefix
/// field (155), and `NAME_MAX` (255).
pub const LONG_LENGTHS: [usize; 4] = [100, 99, 155, 255];

/// Whole-path lengths for [`KindPlan::LongPath`]: just over the ustar name field, H6's 120,
/// just over 255, and 300.
pub const LONG_PATH_TOTALS: [usize; 4] = [101, 120, 256, 300];

impl NamePlan {
    /// The name's bytes (never empty, no `/`, no NUL, never `.` or `..`).
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            NamePlan::Plain(i) => PLAIN_NAMES[usize::from(*i) % PLAIN_NAMES.len()]
                .as_bytes()
                .to_vec(),
            NamePlan::Long(i) => {
                let len = LONG_LENGTHS[usize::from(*i) % LONG_LENGTHS.len()];
                let mut v = format!("long{len}_").into_bytes();
                v.resize(len, b'n');
                v
            }
            NamePlan::NonUtf8 => b"bad\xff\xfename".to_vec(),
            NamePlan::Newline => b"new\nline".to_vec(),
        }
    }
}

/// File content.
#[derive(Clone, Debug)]
pub enum ContentPlan {
    Empty,
    /// Printable text.
    Text(Vec<u8>),
    /// Arbitrary bytes; always holds a NUL and a `0xff`.
    Binary(Vec<u8>),
}

impl ContentPlan {
    /// The content bytes.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            ContentPlan::Empty => Vec::new(),
            ContentPlan::Text(t) => t.clone(),
            ContentPlan::Binary(b) => {
                let mut v = vec![0u8, 0xff];
                v.extend_from_slice(b);
                v
            }
        }
    }
}

/// File permission bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModePlan {
    /// `None` in the spec: `0644`.
    Default,
    Exec,
    Zero,
    Setuid,
    Setgid,
}

impl ModePlan {
    /// The spec's `mode` field.
    pub fn mode(self) -> Option<u32> {
        match self {
            ModePlan::Default => None,
            ModePlan::Exec => Some(0o755),
            ModePlan::Zero => Some(0o000),
            ModePlan::Setuid => Some(0o4755),
            ModePlan::Setgid => Some(0o2755),
        }
    }
}

/// What an [`EntryPlan`] creates. Variants are ordered simplest first; the strategy keeps
/// that order so that shrinking (which moves to earlier alternatives) makes cases smaller.
#[derive(Clone, Debug)]
pub enum KindPlan {
    File {
        content: ContentPlan,
        mode: ModePlan,
    },
    /// A directory later plans may pick as parent.
    Dir,
    /// A directory no plan puts anything in.
    EmptyDir,
    /// Hardlink to an earlier file or symlink (index modulo); a file when there is none.
    Hardlink {
        target: Index,
        content: ContentPlan,
    },
    Symlink(LinkPlan),
    Fifo,
    Socket,
    /// `1,3` (`/dev/null`).
    CharDevice,
    /// A directory with `mode` (`0555` or `0000`) holding one file; later plans may add more
    /// children.
    LockedDir {
        mode: u32,
        child: ContentPlan,
    },
    /// `name -> foo` and a hardlink to that symlink in the directory `alias_parent` (H8).
    HardlinkToSymlink {
        alias_parent: Index,
    },
    /// `name -> name-peer` and `name-peer -> name`.
    LoopPair,
    /// A file and 1–3 more names for it, each in a new directory (named from
    /// [`STORE_DIRS`]) under the given parent, with the same base name.
    SharedInode {
        content: ContentPlan,
        aliases: Vec<(Index, u8)>,
    },
    /// Nested directories of 50-byte components and a file, so that the file's whole path
    /// is at least `LONG_PATH_TOTALS[total % 4]` bytes.
    LongPath {
        total: u8,
    },
}

/// A symlink's target.
#[derive(Clone, Debug)]
pub enum LinkPlan {
    /// Relative path to an existing entry (index modulo); dangling when there is none.
    ToEntry(Index),
    /// A name that does not exist, next to the link.
    Dangling,
    /// `{root}/<entry>` (absolute, into the root).
    AbsIntoRoot(Index),
    /// `{out}/target` or `{out}/decoy/file` (absolute, out of the root).
    AbsOut(bool),
    /// `../` once more than the link's depth, plus `extra` more, then `x`.
    Escaping(u8),
    /// `.`: the link's own directory.
    LoopSelf,
}

/// One exclusion, naming entries by index (modulo) into the resolved entries.
#[derive(Clone, Debug)]
pub enum ExclusionPlan {
    /// The entry's own path (a file or a directory).
    Entry(Index),
    /// The entry's parent directory (the entry itself at top level).
    ParentOf(Index),
    /// In a shared inode (index modulo the inodes with two or more names), the name first in
    /// `order`; its parent directory when `as_dir`. Falls back to `Entry` without shared inodes.
    AliasFirst {
        inode: Index,
        order: Order,
        as_dir: bool,
    },
}

/// A traversal order of the names of one inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Creation order: the original file first (Python `os.walk` over a fresh tree often).
    Creation,
    /// Byte-sorted (GNU tar `--sort=name`).
    Sorted,
    /// Reverse byte-sorted.
    Reverse,
}

/// The realistic Python-venv template: which parts, and what is excluded.
#[derive(Clone, Debug)]
pub struct VenvPlan {
    pub parts: Vec<VenvPart>,
    pub exclusion: VenvExclusion,
}

/// One part of the venv template; each adds its parents explicitly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VenvPart {
    /// `.venv/pyvenv.cfg`.
    PyvenvCfg,
    /// `.venv/bin/python -> /usr/local/bin/python` (absolute, H3).
    Python,
    /// `.venv/bin/python3 -> python`.
    Python3,
    /// `cache/uv/pkg/__init__.py` (the package cache copy).
    CacheFile,
    /// `.venv/lib/python3.11/site-packages/pkg/__init__.py`, a hardlink to the cache copy
    /// (a file when the cache part is absent).
    SitePackage,
    /// `.venv/bin/pkg-cli`, mode `0755`.
    BinScript,
    /// `.venv/lib/python3.11/site-packages/pkg/__pycache__`, empty.
    Pycache,
    /// `src/main.py`.
    Source,
}

/// All template parts in creation order.
pub const VENV_PARTS: [VenvPart; 8] = [
    VenvPart::PyvenvCfg,
    VenvPart::Python,
    VenvPart::Python3,
    VenvPart::CacheFile,
    VenvPart::SitePackage,
    VenvPart::BinScript,
    VenvPart::Pycache,
    VenvPart::Source,
];

/// What the template excludes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VenvExclusion {
    None,
    /// The whole `cache` directory.
    CacheDir,
    /// Only `cache/uv/pkg/__init__.py` (the H2 shape).
    CacheFile,
}

/// A whole W1 plan.
#[derive(Clone, Debug)]
pub struct SpecPlan {
    /// Keep exclusions whose path contains a newline (`GenConfig::newline_exclusions`).
    pub newline_exclusions: bool,
    pub venv: Option<VenvPlan>,
    pub entries: Vec<EntryPlan>,
    pub exclusions: Vec<ExclusionPlan>,
}

/// One prior-workspace (W0) plan, naming W1 paths by index (modulo).
#[derive(Clone, Debug)]
pub enum PriorPlan {
    /// A random entry, as in W1.
    Random(EntryPlan),
    /// At a W1 directory: a symlink to `{out}` (`to_out`) or to `..` (H9-style).
    SymlinkAtDir { dir: Index, to_out: bool },
    /// At a W1 regular file: a FIFO.
    FifoAtFile { file: Index },
    /// At a W1 directory: a directory with mode `0555` (or `0000` when `zero`) holding a
    /// file `old`.
    ReadOnlyDir { dir: Index, zero: bool },
    /// At a W1 regular file: a directory holding a file `old`.
    DirAtFile { file: Index },
    /// At a W1 regular file: a file with different content (H14).
    StaleFile { file: Index, content: ContentPlan },
    /// At a W1 regular file: a hardlink to the jail file `{out}/linked`, outside the root.
    HardlinkOut { file: Index },
    /// The whole of W1 (without its exclusions) moved on by these edits: a diverged
    /// workspace. The first such plan of a prior is its base; the other plans add what
    /// still fits, and later `Edited` plans are ignored.
    Edited { edits: Vec<super::edit::Edit> },
}
