//! What the reference extractor accepts and how it restores it.

/// How hardlink (LNK, type `1`) members are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Hardlinks {
    /// Refuse any LNK member (`hardlink-not-allowed`).
    #[default]
    Reject,
    /// Restore the second name as an independent regular file with the target's content.
    /// The target must be an earlier regular member of the same archive.
    Copy,
    /// Restore as a real hardlink to the earlier regular member.
    Link,
}

/// How symlinks with an absolute target are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AbsoluteSymlinks {
    /// Refuse (`symlink-escape`).
    Reject,
    /// Restore the target string verbatim; the link is never followed.
    #[default]
    Keep,
    /// A target under the original root (see [`Policy::original_root`]) becomes relative.
    Rebase,
    /// Leave the member out.
    Drop,
}

/// How relative symlinks whose target leaves the root (`../..`) are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EscapingSymlinks {
    /// Refuse (`symlink-escape`).
    Reject,
    /// Restore the target string verbatim; the link is never followed.
    #[default]
    Keep,
}

/// How FIFO, character and block device members are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SpecialFiles {
    /// Refuse (`special-file`).
    Reject,
    /// Leave the member out.
    #[default]
    Drop,
}

/// How two members with the same name are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Duplicates {
    /// Refuse (`duplicate`).
    #[default]
    Reject,
    /// The last member of that name wins (tar's own behaviour).
    LastWins,
}

/// How permission bits are restored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Modes {
    /// The member's permission bits, setuid/setgid/sticky included.
    Exact,
    /// Python's `tarfile` `data` filter: no setuid/setgid/sticky, no group/other write.
    #[default]
    DataFilter,
}

/// Resource limits; exceeding one refuses the archive with `limit-exceeded`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Maximum number of members (PAX and GNU long-name headers not counted).
    pub members: u64,
    /// Maximum total payload bytes of regular members.
    pub total_bytes: u64,
    /// Maximum length of a member name or link target, in bytes.
    pub name_len: usize,
    /// Maximum size of one PAX extended header, in bytes.
    pub pax_record: u64,
    /// Maximum directory depth of a member name, in components.
    pub link_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            members: 1_000_000,
            total_bytes: 64 << 30,
            name_len: 4096,
            pax_record: 1 << 20,
            link_depth: 256,
        }
    }
}

/// The reference extractor's policy. `Policy::default()` is the strictest setting that still
/// round-trips snapconf's default profile.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Policy {
    pub hardlinks: Hardlinks,
    pub absolute_symlinks: AbsoluteSymlinks,
    pub escaping_symlinks: EscapingSymlinks,
    pub special_files: SpecialFiles,
    pub duplicates: Duplicates,
    pub modes: Modes,
    pub limits: Limits,
    /// The root the archive was captured from, as bytes; used by [`AbsoluteSymlinks::Rebase`].
    pub original_root: Option<Vec<u8>>,
}
