//! What the reference parser reports: member kinds, listings and hydration reports.

/// The kind of a listed member, from its ustar type flag (POSIX.1-2017 `pax`, "ustar Interchange
/// Format"; GNU tar manual, "Basic Tar Format").
///
/// Extension headers (PAX `x`/`g`, GNU `L`/`K`) are folded into the member they describe and
/// never appear as a kind of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemberKind {
    /// A regular file: type `0`, `\0` (old V7) or `7` (contiguous file, restored as regular).
    File,
    /// A directory: type `5`, or type `\0` with a name ending in `/` (V7 convention).
    Dir,
    /// A symbolic link: type `2`.
    Symlink,
    /// A hard link, a second name for an earlier member: type `1`.
    Hardlink,
    /// A FIFO: type `6`.
    Fifo,
    /// A character device: type `3`.
    CharDevice,
    /// A block device: type `4`.
    BlockDevice,
    /// Any other type flag, kept as the raw byte (never collapsed; validation refuses it).
    Other(u8),
}

impl MemberKind {
    /// The kind of a ustar type flag byte. Extension flags (`x`, `g`, `L`, `K`) map to `Other`.
    pub fn from_flag(flag: u8) -> MemberKind {
        match flag {
            b'0' | b'\0' | b'7' => MemberKind::File,
            b'1' => MemberKind::Hardlink,
            b'2' => MemberKind::Symlink,
            b'3' => MemberKind::CharDevice,
            b'4' => MemberKind::BlockDevice,
            b'5' => MemberKind::Dir,
            b'6' => MemberKind::Fifo,
            other => MemberKind::Other(other),
        }
    }

    /// The kind of a member with type flag `flag` and name `name` (after PAX and GNU
    /// long-name resolution): [`MemberKind::from_flag`], except that an old V7 member (type
    /// `\0`) whose name ends in `/` is a directory, as GNU tar reads it.
    pub fn from_header(flag: u8, name: &[u8]) -> MemberKind {
        match MemberKind::from_flag(flag) {
            MemberKind::File if flag == b'\0' && name.ends_with(b"/") => MemberKind::Dir,
            kind => kind,
        }
    }

    /// The ustar type flag that writes this kind: `0` for a file, `5` for a directory and so
    /// on; [`MemberKind::Other`] gives its own byte back.
    pub fn flag(self) -> u8 {
        match self {
            MemberKind::File => b'0',
            MemberKind::Hardlink => b'1',
            MemberKind::Symlink => b'2',
            MemberKind::CharDevice => b'3',
            MemberKind::BlockDevice => b'4',
            MemberKind::Dir => b'5',
            MemberKind::Fifo => b'6',
            MemberKind::Other(flag) => flag,
        }
    }

    /// The kind's name for messages, listings and JSON: `file`, `dir`, `symlink`,
    /// `hardlink`, `fifo`, `char`, `block` or `other` (tar-rs `EntryType` says `Char` and
    /// `Block` too). Every string form of a kind comes from here;
    /// [`Display`](std::fmt::Display) adds the raw byte of an `other` kind.
    pub fn name(self) -> &'static str {
        match self {
            MemberKind::File => "file",
            MemberKind::Dir => "dir",
            MemberKind::Symlink => "symlink",
            MemberKind::Hardlink => "hardlink",
            MemberKind::Fifo => "fifo",
            MemberKind::CharDevice => "char",
            MemberKind::BlockDevice => "block",
            MemberKind::Other(_) => "other",
        }
    }
}

/// [`MemberKind::name`]; an unknown type flag is shown with its byte (`other (0x5a)`), so
/// two different unknown flags never read alike.
impl std::fmt::Display for MemberKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemberKind::Other(flag) => write!(f, "{} ({flag:#04x})", self.name()),
            kind => f.write_str(kind.name()),
        }
    }
}

/// One member as the reference parser reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedMember {
    /// The member name as raw bytes, after PAX `path` / GNU long-name resolution and before any
    /// normalisation (a leading `./` is still there). Not necessarily UTF-8.
    pub name: Vec<u8>,
    /// The member's kind.
    pub kind: MemberKind,
    /// The link target as raw bytes (PAX `linkpath` / GNU long link resolved) for symlink and
    /// hardlink members; `None` for every other kind.
    pub link_target: Option<Vec<u8>>,
    /// Payload size in bytes as the header (or PAX `size`, which wins) declares it; normally 0
    /// for non-regular members, whose payload, if any, is skipped.
    pub size: u64,
    /// The header's permission bits as stored (`0o7777` mask), before any policy filter.
    pub mode: u32,
}

/// The members of an accepted archive, in archive order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// Every member, including the ones the policy drops.
    pub members: Vec<ListedMember>,
}

/// What a successful hydration did.
#[derive(Clone, Debug, Default)]
pub struct HydrateReport {
    /// Number of members read (extension headers not counted).
    pub members: u64,
    /// Payload bytes written to regular files, in bytes (hardlink copies count again).
    pub bytes: u64,
    /// Names (raw bytes, as in the archive) of members left out: dropped by the policy
    /// (special files, absolute symlinks under `Drop`) or no-ops (a hardlink to itself, H12).
    pub dropped: Vec<Vec<u8>>,
    /// Set when the new tree is in place but the old one could not be removed from beside
    /// the root (say a mount point or an entry this user may not delete inside it): why,
    /// naming the entry. The old tree stays under `.<root>.snapconf-stage-<16 hex>`, and the
    /// next [`crate::hydrate`] or [`crate::recover`] of this root tries again and fails
    /// until it can be removed.
    pub leftover: Option<String>,
}
