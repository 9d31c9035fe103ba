//! What the reference extractor accepts and how it restores it.

/// How hardlink (LNK, type `1`) members are handled.
///
/// Whatever the setting, a hardlink target is looked up among the *earlier members of the
/// same archive*, never on disk: a target that is absent (H2), later, a directory, dropped,
/// absolute or outside the root is refused with `dangling-hardlink`. A hardlink to an earlier
/// symlink member (H8) is restored as a second symlink with the same archived target, judged
/// for its own directory as a symlink member there would be: rebased per name under
/// [`AbsoluteSymlinks::Rebase`] (`a/b/s -> /orig/ws/v` is `../../v`, its hardlink `s2` at
/// the root is `v`), refused if it escapes from there under [`EscapingSymlinks::Reject`]. A link to itself
/// (`LNK x -> x` after `REG x`, H12; GNU tar writes it when a file is named twice) is a no-op
/// that keeps `x`'s data and is reported in [`crate::HydrateReport::dropped`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Hardlinks {
    /// Refuse any LNK member (`hardlink-not-allowed`).
    Reject,
    /// Restore the second name as an independent regular file with the target's content.
    /// The target must be an earlier regular member of the same archive.
    #[default]
    Copy,
    /// Restore as a real hardlink to the earlier regular member. If that member's name was
    /// replaced later in the archive ([`Duplicates::LastWins`]), the link is written as an
    /// independent copy of the data the target had at that point (what GNU tar leaves).
    Link,
}

/// How symlinks with an absolute target are handled. The extractor never follows any symlink
/// it creates, whatever the setting; this is about what the restored tree contains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AbsoluteSymlinks {
    /// Refuse (`symlink-escape`).
    Reject,
    /// Restore the target string verbatim; the link is never followed.
    #[default]
    Keep,
    /// A target under the original root (see [`Policy::original_root`]) becomes relative to
    /// the link's directory (`/orig/ws/b/c` in `a/l` becomes `../b/c`; the root itself becomes
    /// `.` or `..`-only). A target *not* under the original root (or any target when
    /// `original_root` is `None`) points outside the workspace and is decided by
    /// [`EscapingSymlinks`]: kept verbatim under `Keep`, refused under `Reject`.
    Rebase,
    /// Leave the member out.
    Drop,
}

/// How relative symlinks whose target leaves the root (`../..`) are handled.
///
/// Escape is decided lexically from the link's directory (as Python's `tarfile` `data`
/// filter does) and, under `Reject`, also by resolving the target through the archive's own
/// other symlinks (`x -> d/up/..` with `d/up -> ..` escapes).
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
    /// Like Python's `tarfile` `data` filter (PEP 706): no setuid/setgid/sticky, no
    /// group/other write (`mode & 0o755`). Unlike Python, owner read/write is not added.
    #[default]
    DataFilter,
}

/// Resource limits; exceeding one refuses the archive with `limit-exceeded` (the two
/// decompression limits with `decompression-limit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Maximum number of members (PAX and GNU long-name headers not counted).
    pub members: u64,
    /// Maximum total payload bytes of regular members, in bytes (a hardlink restored as a
    /// copy counts again).
    pub total_bytes: u64,
    /// Maximum length of a member name or link target, in bytes.
    pub name_len: usize,
    /// Maximum size of one PAX extended header, in bytes.
    pub pax_record: u64,
    /// Maximum depth of a member name, in components (the name says "link" for historical
    /// reasons; symlink chains are followed at most 40 hops, as Linux's `MAXSYMLINKS`).
    pub link_depth: usize,
    /// Maximum size of the tar stream inside a compressed archive, in bytes (decompressed
    /// bytes, headers and padding included); over it the archive is refused with
    /// `decompression-limit` as soon as the decoder has produced that much.
    pub decompressed_bytes: u64,
    /// Maximum ratio of decompressed to compressed bytes, applied once more than
    /// [`crate::compression::RATIO_FLOOR`] bytes have come out (`decompression-limit`). A
    /// workspace of source and binaries compresses 2-20:1; over 1,000:1 the stream is
    /// almost all zeros (a decompression bomb, or a workspace dominated by zero-filled files,
    /// which then needs a higher value).
    pub compression_ratio: u64,
    /// Maximum size of one restored sparse file (GNU `realsize`), in bytes, and of the holes
    /// of all the archive's sparse files together (a hardlink restored as a copy counts
    /// again): their data counts toward [`Limits::total_bytes`] as any payload does, their
    /// holes do not, so a small archive could otherwise ask for a file of 2^64 bytes, or a
    /// million files of this size (as holes where the filesystem keeps them, as written
    /// zeros where it does not).
    pub sparse_size: u64,
    /// Maximum number of sparse map entries (regions) in the whole archive, all sparse
    /// members together: the plan keeps every map (16 bytes an entry) until the write.
    pub sparse_regions: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            members: 1_000_000,
            total_bytes: 64 << 30,
            name_len: 4096,
            pax_record: 1 << 20,
            link_depth: 256,
            // The payload limit plus room for headers and padding.
            decompressed_bytes: (64 << 30) + (1 << 30),
            compression_ratio: 1000,
            // The payload limit: no sparse file bigger than the largest plain one.
            sparse_size: 64 << 30,
            // 16 MiB of maps in the plan.
            sparse_regions: 1 << 20,
        }
    }
}

/// The reference extractor's policy.
///
/// # Defaults
/// `Policy::default()` is the one set of defaults: the library's, and `snapconf hydrate`'s
/// and `snapconf check-archive`'s (their flags default to it). It restores what snapconf's
/// default profile (`harness/src/model/default-profile.toml`) promises, refusing no more:
///
/// | field | default | default profile key it serves |
/// | --- | --- | --- |
/// | [`Policy::hardlinks`] | [`Hardlinks::Copy`] | `hardlinks = "copy"`: every name comes back as a file with the full content (a plain `tar -cf` of a workspace with a hardlink is restored) |
/// | [`Policy::absolute_symlinks`] | [`AbsoluteSymlinks::Keep`] | `absolute-symlinks = "keep"` |
/// | [`Policy::escaping_symlinks`] | [`EscapingSymlinks::Keep`] | `escaping-symlinks = "keep"` |
/// | [`Policy::special_files`] | [`SpecialFiles::Drop`] | `special-files = "drop"` |
/// | [`Policy::duplicates`] | [`Duplicates::Reject`] | none: a capture never names a path twice |
/// | [`Policy::modes`] | [`Modes::DataFilter`] | `modes = "exec-bit"`: the owner's execute bit is kept (as every mode is, but setuid/setgid/sticky and group/other write) |
/// | [`Policy::limits`] | [`Limits::default`] | none |
/// | [`Policy::original_root`] | `None` | used only by `rebase-inside-root` |
/// | [`Policy::allow_empty`] | `false` | none: an empty upload is refused, not restored |
///
/// The harness's matrix runs the reference under a stricter mapping of each profile
/// (`snapconf_harness::model::policy_map::reference_policy`: under `hardlinks = "copy"` it
/// refuses LNK members, so that a producer writing them is found, case H1); that is a
/// checker's policy, not a default.
///
/// # Example
/// A stricter policy is the default with some fields changed: here hardlink members are
/// refused rather than restored as copies.
///
/// ```rust
/// use snapconf_extract::{validate, Hardlinks, Policy, Reason};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut tar = tar::Builder::new(Vec::new());
/// let mut file = tar::Header::new_ustar();
/// file.set_mode(0o644);
/// file.set_size(3);
/// tar.append_data(&mut file, "a", &b"abc"[..])?;
/// let mut link = tar::Header::new_ustar();
/// link.set_entry_type(tar::EntryType::Link);
/// link.set_mode(0o644);
/// link.set_size(0);
/// tar.append_link(&mut link, "b", "a")?;
/// let archive = tar.into_inner()?;
///
/// assert!(validate(archive.as_slice(), &Policy::default()).is_ok());
///
/// let strict = Policy {
///     hardlinks: Hardlinks::Reject,
///     ..Policy::default()
/// };
/// let err = validate(archive.as_slice(), &strict).unwrap_err();
/// assert_eq!(err.reason(), Some(Reason::HardlinkNotAllowed));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Policy {
    /// Hardlink members (type `1`).
    pub hardlinks: Hardlinks,
    /// Symlinks with an absolute target.
    pub absolute_symlinks: AbsoluteSymlinks,
    /// Relative symlinks whose target leaves the root.
    pub escaping_symlinks: EscapingSymlinks,
    /// FIFO, character and block device members.
    pub special_files: SpecialFiles,
    /// Two members with the same normalised name.
    pub duplicates: Duplicates,
    /// Permission bits of files and directories (ownership is never restored).
    pub modes: Modes,
    /// Resource limits.
    pub limits: Limits,
    /// The root the archive was captured from, as bytes; used by [`AbsoluteSymlinks::Rebase`].
    pub original_root: Option<Vec<u8>>,
    /// Accept an archive with no member (an empty workspace is meant). `false` by default:
    /// such an archive is refused with `empty-archive`, since hydrating it empties the root.
    pub allow_empty: bool,
}
