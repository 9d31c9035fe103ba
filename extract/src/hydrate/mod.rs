//! The entry points: [`validate`], [`hydrate`] and [`hydrate_file`].
//!
//! The steps behind them, one file a concern: `staged` (the staging directory beside the
//! root and the single pass that fills it from a stream), `decode` (a compressed regular
//! file decompressed by a second thread) and `commit` (the root's state, the exchange that
//! puts the staged tree in place, and the write pass of a file validated in place).

mod commit;
mod decode;
mod staged;

use std::fs::File;
use std::io::{self, BufReader, Read, Seek};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::compression::{self, Compression};
use crate::error::io_err;
use crate::input::{FileInput, Input, StreamInput};
use crate::plan;
use crate::reader::BLOCK;
use crate::recover::recover_in;
use crate::sibling::Sibling;
use crate::{HydrateError, HydrateReport, Listing, Policy};

use commit::{apply, commit_staged};
use decode::hydrate_compressed_file;
use staged::stage_stream;

/// Buffer size for reading a stream, in bytes.
const STREAM_BUF: usize = 256 * 1024;

/// The most bytes read (and dropped) after the end-of-archive marker of a stream, in bytes
/// (see [`Input::discard`]): GNU tar pads an archive to a 10 KiB record, and a compressed
/// stream's trailer follows. A stream that goes on longer is not read to its end.
const TRAILER_MAX: u64 = 1 << 20;

/// Reads and checks every member of `archive` under `policy` without writing anything.
///
/// `archive` is a tar stream, plain or compressed (gzip, zstd or xz, told by its magic
/// number; see [`crate::compression`]), read up to its end-of-archive marker and at most
/// 1 MiB past it (read and dropped).
///
/// Returns the members in archive order (see [`Listing`]) if [`hydrate`] would accept the
/// archive, except for faults of the target filesystem (`ENOSPC`, `EFBIG`, a bad root). The
/// same parser and the same checks run in both, so the verdicts cannot disagree.
///
/// Reads `archive` once, sequentially; memory grows with the number of members (their names),
/// not with payload sizes.
///
/// # Errors
/// [`HydrateError::Refused`] with the first offending member and its [`crate::Reason`];
/// [`HydrateError::Io`] if reading `archive` fails.
///
/// # Example
/// A symlink member followed by a member "below" it (H9) is refused, whatever the policy;
/// the same archive without that member is listed.
///
/// ```rust
/// use snapconf_extract::{validate, MemberKind, Policy, Reason};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // `l -> /etc`, then `l/passwd`: a naive extractor writes through the link.
/// let archive = |with_member_below: bool| -> std::io::Result<Vec<u8>> {
///     let mut tar = tar::Builder::new(Vec::new());
///     let mut link = tar::Header::new_ustar();
///     link.set_entry_type(tar::EntryType::Symlink);
///     link.set_mode(0o777);
///     link.set_size(0);
///     tar.append_link(&mut link, "l", "/etc")?;
///     if with_member_below {
///         let mut file = tar::Header::new_ustar();
///         file.set_mode(0o644);
///         file.set_size(4);
///         tar.append_data(&mut file, "l/passwd", &b"x:0\n"[..])?;
///     }
///     tar.into_inner()
/// };
///
/// let err = validate(archive(true)?.as_slice(), &Policy::default()).unwrap_err();
/// assert_eq!(err.reason(), Some(Reason::ThroughSymlink));
///
/// let listing = validate(archive(false)?.as_slice(), &Policy::default())?;
/// assert_eq!(listing.members.len(), 1);
/// assert_eq!(listing.members[0].name, b"l");
/// assert_eq!(listing.members[0].kind, MemberKind::Symlink);
/// assert_eq!(listing.members[0].link_target.as_deref(), Some(&b"/etc"[..]));
/// # Ok(())
/// # }
/// ```
pub fn validate(archive: impl Read, policy: &Policy) -> Result<Listing, HydrateError> {
    let (_, stream) = compression::tar_stream(
        BufReader::with_capacity(STREAM_BUF, archive),
        &policy.limits,
    )?;
    let mut input = StreamInput::new(stream);
    let (_, listing) = plan::build(&mut input, 0, policy, true)?;
    discard_trailer(&mut input)?;
    Ok(listing.unwrap_or_default())
}

/// [`validate`] of a decompressed tar stream, without the listing.
pub(super) fn validate_tar(tar: impl Read, policy: &Policy) -> Result<(), HydrateError> {
    let mut input = StreamInput::new(tar);
    plan::build(&mut input, 0, policy, false)?;
    discard_trailer(&mut input)
}

/// Replaces the workspace at `root` with the tree of the tar `archive`, or leaves `root`
/// exactly as it was.
///
/// `archive` is a tar stream, plain or compressed (gzip, zstd or xz, told by its magic
/// number; see [`crate::compression`]), read once, sequentially, in a single pass: each
/// member is checked as it is read, and once it has passed, written into a private staging
/// directory beside the root (`.<root>.snapconf-stage-<16 hex>`, mode `0700`), a regular
/// file's payload straight from the stream into its file. What needs the whole archive
/// known comes after the last member: hardlinks under [`crate::Hardlinks::Link`], symlinks,
/// and directory modes and times. Then the staging tree is swapped in. Reading stops at the
/// end-of-archive marker (and at most 1 MiB past it), at the first bad header and at the
/// first limit, judged from a member's header before its payload is read (a stream of
/// zeros is refused as `empty-archive` after one block, random bytes as `malformed`). A
/// refusal found late (a bad header, a limit, a duplicate, a member below a symlink) removes
/// the staging tree: nothing of it outlives the call, and the verdict is [`validate`]'s.
/// Use [`hydrate_file`] when the archive is an uncompressed regular file: it validates in
/// place and writes nothing for a refused archive.
///
/// The validation pass does not hold the parent's lock (a stalled stream does not block
/// hydrations of other roots in the parent): the staging directory is created under that
/// lock and then held by its own `flock`, which [`crate::recover`] respects, so a
/// concurrent hydration of this root or of a sibling root, or a recovery, leaves it alone.
/// The lock on the parent is taken again for the exchange.
///
/// `root` may hold a prior workspace (a directory, not a symlink to one) or not exist (its
/// parent must). On success `root` holds exactly the archive's tree: nothing of the prior
/// workspace survives (replace, not merge). The root directory itself keeps what the prior
/// root had: its mode (setgid and sticky bits included; a `.` member's mode does not
/// replace it), its owner when the caller may give it (root) and its group when the caller
/// may (root, or a member of that group); see *Security*. A new root (none existed) takes
/// the mode of a `.` member if the archive has one, else `0755`. The root's modification
/// time becomes that of a `.` member if there is one, else the hydration's. Ownership of
/// everything below the root is not restored (it belongs to the caller); file and directory
/// modification times are restored to the second; symlink times are not.
///
/// # Errors
/// - [`HydrateError::Refused`]: the archive breaks the policy, is malformed or truncated;
///   detected before anything is written for the offending member (what was staged for the
///   members before it is removed, and the root is never touched). A refusal wins over a
///   fault of the target filesystem met earlier in the pass.
/// - [`HydrateError::Io`]: `root` is a symlink or not a directory, its parent is missing,
///   or writing failed (`ENOSPC`, `EFBIG`, `EACCES`, ...).
///
/// On every error `root` is unchanged, and no staging directory is left behind (unless the
/// clean-up itself fails; the next call or [`crate::recover`] removes it).
///
/// # Security
/// What is guaranteed, for any archive bytes:
/// - **Nothing is written outside `root`'s parent, and in the parent only one sibling
///   name** (`.<root>.snapconf-stage-<16 hex>`), gone on return. Every write is relative to a directory handle inside the private staging tree,
///   opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` or a component-wise
///   `O_NOFOLLOW` walk; files are created `O_CREAT | O_EXCL | O_NOFOLLOW`. No archive path is
///   ever resolved against the live root, so a planted link in the prior workspace, or a
///   symlink member followed by members "below" it (H9-H11; CVE-2001-1267, CVE-2007-4131,
///   CVE-2025-4517 and the tar-rs `unpack_in` symlink issues), cannot redirect a write.
/// - **Everything is checked before it is written, and nothing reaches the root before the
///   whole archive is checked.** Absolute names, `..` components, members below a symlink
///   or non-directory member, duplicates (per policy), hardlinks to anything but an earlier
///   regular member, unknown type flags, malformed or ambiguous sparse maps, bad checksums, truncation and
///   limit breaches are refused before that member is written, and the staging tree of a
///   refused archive is removed (H13: a truncated archive never touches the prior
///   workspace). The staging tree is private: created `0700` by us, holding no symlink
///   until every member is read (so no write of the pass can meet one), written only
///   through handles on its own directories; the live root is never written.
/// - **Atomic.** The tree is built beside the root and swapped in with one
///   `renameat2(RENAME_EXCHANGE)`; after a `SIGKILL` at any moment followed by
///   [`crate::recover`] (or the next `hydrate`), `root` is exactly the prior or exactly the
///   new tree.
/// - **The root keeps its owner, group and mode.** The staged tree that replaces an
///   existing root is given, before the exchange, the prior root's mode (including setgid
///   and sticky), and its owner and group through `fchown` as far as the caller is
///   allowed: run as root, a user's `ROOT` (say `1000:1000`, mode `2770`) stays theirs
///   rather than becoming a root-owned directory that locks them out; run as an ordinary
///   user, the mode is kept and the group too when the user is a member of it. An archive
///   cannot change who may enter the root: a `.` member's mode applies to a new root only.
/// - **No special files, no privilege bits under the default policy:** FIFOs and devices are
///   never created; [`crate::Modes::DataFilter`] clears setuid/setgid/sticky and
///   group/other write.
///
/// What is *not* guaranteed:
/// - Durability across power loss: nothing is `fsync`ed (a crash of the machine right after
///   return may lose the new tree or leave it partly written). Process death is covered.
/// - Kept symlinks (`AbsoluteSymlinks::Keep`, `EscapingSymlinks::Keep`, the defaults) are
///   restored verbatim and may point outside the root; *we* never follow them, a later
///   consumer might. Escape checks are lexical plus resolution through the archive's own
///   links (see [`crate::EscapingSymlinks`]); links to paths outside the archive's tree
///   (which may be links on the consumer's disk) cannot be judged.
/// - A leftover that cannot be removed (a mount point or an immutable file inside the old
///   tree) makes `recover`, and so every later `hydrate` of that root, fail until a human
///   removes it: fail closed.
/// - Concurrent writers inside the *parent* directory are not defended against beyond the
///   handle-relative operations (another process can still delete our staging tree).
/// - Processes whose working directory is inside the old root keep seeing the old tree.
/// - `root` must not be a mount point (the exchange fails with `EBUSY`) and its filesystem
///   must support `RENAME_EXCHANGE` (ext4, xfs, btrfs, tmpfs do); otherwise hydration fails
///   with [`HydrateError::Io`] and `root` is unchanged. Hydrations of roots in the same
///   parent directory wait for each other (`flock` on the parent) to create a staging
///   directory and from the exchange to the old tree's removal; [`hydrate_file`] of a plain
///   file holds that lock for its whole write pass.
/// - The `tar` crate decodes header fields; its bugs in octal/base-256 parsing are ours.
///
/// # Example
/// A prior workspace is replaced by the archive's tree; a refused archive (two members
/// named `notes.txt`, under the default [`crate::Duplicates::Reject`]) leaves it as it was.
///
/// ```rust
/// use snapconf_extract::{hydrate, Policy, Reason};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // An archive of `notes.txt` (6 bytes), `times` members of that name.
/// let archive = |times: usize| -> std::io::Result<Vec<u8>> {
///     let mut tar = tar::Builder::new(Vec::new());
///     for _ in 0..times {
///         let mut header = tar::Header::new_ustar();
///         header.set_mode(0o644);
///         header.set_size(6);
///         tar.append_data(&mut header, "notes.txt", &b"hello\n"[..])?;
///     }
///     tar.into_inner()
/// };
///
/// let dir = tempfile::tempdir()?;
/// let root = dir.path().join("ws");
/// std::fs::create_dir(&root)?;
/// std::fs::write(root.join("old.txt"), "prior workspace")?;
///
/// let report = hydrate(archive(1)?.as_slice(), &root, &Policy::default())?;
/// assert_eq!((report.members, report.bytes), (1, 6));
/// assert_eq!(std::fs::read(root.join("notes.txt"))?, b"hello\n");
/// assert!(!root.join("old.txt").exists(), "replace, not merge");
///
/// std::fs::write(root.join("notes.txt"), "edited")?;
/// let err = hydrate(archive(2)?.as_slice(), &root, &Policy::default()).unwrap_err();
/// assert_eq!(err.reason(), Some(Reason::Duplicate));
/// assert_eq!(std::fs::read(root.join("notes.txt"))?, b"edited", "root unchanged");
/// # Ok(())
/// # }
/// ```
pub fn hydrate(
    archive: impl Read,
    root: &Path,
    policy: &Policy,
) -> Result<HydrateReport, HydrateError> {
    // The validation pass runs without the parent's lock: a stalled stream must not block
    // hydrations of other roots in the same parent (found by a hostile-input review). It
    // writes only into its own staging directory, which its flock keeps from recoveries.
    let sib = Sibling::open_unlocked(root)?;
    let staged = compression::tar_stream(
        BufReader::with_capacity(STREAM_BUF, archive),
        &policy.limits,
    )
    .and_then(|(_, stream)| stage_stream(&sib, root, stream, policy));
    commit_staged(&sib, staged, root)
}

/// [`hydrate`] for an archive that is an open file: an uncompressed regular file is read in
/// place by offset (from its current position): validated whole first, under the parent's
/// lock, then written with `copy_file_range` from the file (a refused archive costs no
/// write); a compressed regular file takes [`hydrate`]'s single pass, decompressed by a
/// second thread while this one validates and writes; anything else (a pipe, a socket, a
/// device) is read as in [`hydrate`]. Same guarantees and errors as [`hydrate`]; the file must not
/// change while the call runs (a shrinking file gives an [`HydrateError::Io`], root
/// unchanged).
///
/// # Example
/// An archive file with a directory, a file in it and a hardlink to that file, hydrated
/// into a new root under the default [`crate::Hardlinks::Copy`] (the second name becomes an
/// independent copy).
///
/// ```rust
/// use snapconf_extract::{hydrate_file, Policy};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("snapshot.tar");
/// let mut tar = tar::Builder::new(std::fs::File::create(&path)?);
/// let mut src = tar::Header::new_ustar();
/// src.set_entry_type(tar::EntryType::Directory);
/// src.set_mode(0o755);
/// src.set_size(0);
/// tar.append_data(&mut src, "src/", std::io::empty())?;
/// let mut main = tar::Header::new_ustar();
/// main.set_mode(0o644);
/// main.set_size(13);
/// tar.append_data(&mut main, "src/main.rs", &b"fn main() {}\n"[..])?;
/// let mut link = tar::Header::new_ustar();
/// link.set_entry_type(tar::EntryType::Link);
/// link.set_mode(0o644);
/// link.set_size(0);
/// tar.append_link(&mut link, "src/copy.rs", "src/main.rs")?;
/// tar.into_inner()?.sync_all()?;
///
/// let root = dir.path().join("ws");
/// let archive = std::fs::File::open(&path)?;
/// let report = hydrate_file(&archive, &root, &Policy::default())?;
/// assert_eq!(report.members, 3);
/// assert_eq!(report.bytes, 26, "the copy counts again");
/// assert_eq!(std::fs::read(root.join("src/copy.rs"))?, b"fn main() {}\n");
/// # Ok(())
/// # }
/// ```
pub fn hydrate_file(
    archive: &File,
    root: &Path,
    policy: &Policy,
) -> Result<HydrateReport, HydrateError> {
    let meta = archive
        .metadata()
        .map_err(|e| io_err("reading the archive's metadata", e))?;
    if !meta.file_type().is_file() {
        return hydrate(archive, root, policy);
    }
    let start = (&*archive)
        .stream_position()
        .map_err(|e| io_err("reading the archive's position", e))?;
    let kind = first_block_compression(archive, start)?;
    if kind != Compression::None {
        return hydrate_compressed_file(archive, kind, root, policy);
    }
    let sib = Sibling::open(root)?;
    // What a crash left is resolved first, whatever the verdict on this archive.
    recover_in(&sib)?;
    let mut input = FileInput::new(archive, start, meta.len());
    let (plan, _) = plan::build(&mut input, start, policy, false)?;
    apply(&sib, plan, archive, root)
}

/// The compression of the archive file whose tar stream starts at `start`
/// ([`compression::detect`] on its first block).
fn first_block_compression(archive: &File, start: u64) -> Result<Compression, HydrateError> {
    let mut head = [0u8; BLOCK as usize];
    let mut got = 0;
    while got < head.len() {
        match archive.read_at(&mut head[got..], start + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err("reading the archive's first block", e)),
        }
    }
    compression::detect(&head[..got])
}

/// Reads and drops what follows the end-of-archive marker of a stream, at most
/// [`TRAILER_MAX`] bytes (see [`Input::discard`]).
fn discard_trailer(input: &mut StreamInput<impl Read>) -> Result<(), HydrateError> {
    input
        .discard(TRAILER_MAX)
        .map_err(|e| io_err("reading past the end of the archive", e))
}
