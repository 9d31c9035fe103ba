//! `tar-rs`: the Rust `tar` crate, in process, as a producer (and, below, an extractor).
//!
//! The producer walks the tree itself with `lstat` (`symlink_metadata`) in sorted byte order
//! and writes GNU-format headers it fills in; it never follows a symlink and never opens
//! anything but a regular file (opening a FIFO for reading blocks until a writer appears;
//! opening a device can have side effects). Member names are root-relative without a `./`
//! prefix (`a/b`, directories `a/`); names longer than 100 bytes use the crate's GNU `L`
//! long-name records, and symlink targets are stored byte for byte (a GNU `K` record we
//! write ourselves when longer than 100 bytes, because `Header::set_link_name` normalises
//! `a//b` and `a/./b`).
//!
//! Kinds: regular files → REG (every name of a hardlinked inode is a full REG member, as the
//! crate's own `append_dir_all` does), directories → DIR, symlinks → SYM (absolute targets
//! kept), FIFOs → FIFO, character/block devices → CHR/BLK with their device numbers,
//! sockets → left out (tar cannot represent them).
//!
//! The extractor clears the root (see [`crate::clear`]) and calls `tar::Archive::unpack(root)`
//! with the crate's defaults (overwrite on, `preserve_permissions` off, so modes are masked by
//! the umask; `preserve_mtime` on; ownership and xattrs not restored): what a Rust backend
//! writes when it reaches for the crate. Any error is a refusal.
//!
//! The in-process adapters cannot be killed, so `timeout` is not enforced; they never block
//! on a FIFO, which is what a timeout would guard against.

use crate::adapter::{
    open_archive, Availability, CaptureRequest, Extractor, HydrateRequest, Outcome, Producer,
    ToolError,
};
use crate::clear::clear_root;
use crate::exclusion::{kept_entries, KeptEntry};
use rustix::fs::{major, minor, Mode, OFlags};
use std::ffi::OsStr;
use std::fs::{self, File, Metadata};
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use tar::{Builder, EntryType, Header, HeaderMode};

/// The version string of the `tar` crate this adapter is built with (pinned in `Cargo.toml`;
/// a unit test checks it against `Cargo.lock`).
pub const TAR_CRATE_VERSION: &str = "tar crate 0.4.46";

/// The `tar-rs` producer: the `tar` crate's `Builder`, driven by our own `lstat` walk.
#[derive(Clone, Copy, Debug, Default)]
pub struct TarRsProducer;

impl Producer for TarRsProducer {
    fn name(&self) -> &str {
        "tar-rs"
    }

    fn availability(&self) -> Availability {
        tar_rs_availability()
    }

    /// Capture `req.root` into `req.archive`. A workspace entry that cannot be read (or a
    /// name the crate rejects) is a capture refusal naming the path; failing to create the
    /// archive file is a [`ToolError::Io`].
    fn capture(&self, req: &CaptureRequest<'_>) -> Result<Outcome, ToolError> {
        let file = File::create(req.archive).map_err(|source| ToolError::Io {
            context: format!("creating the archive `{}`", req.archive.display()),
            source,
        })?;
        let mut builder = Builder::new(BufWriter::new(file));
        let result = walk(&mut builder, req.root, &[], req.exclusions).and_then(|()| {
            builder.finish()?;
            builder.get_mut().flush()
        });
        Ok(tar_rs_outcome(result))
    }

    fn limitations(&self) -> Option<&str> {
        Some(IN_PROCESS_LIMITATION)
    }

    fn in_process(&self) -> bool {
        true
    }
}

/// The `tar-rs` extractor: clear the root, then `tar::Archive::new(file).unpack(root)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct TarRsExtractor;

impl Extractor for TarRsExtractor {
    fn name(&self) -> &str {
        "tar-rs"
    }

    fn clears_root(&self) -> bool {
        true
    }

    fn availability(&self) -> Availability {
        tar_rs_availability()
    }

    /// Failing to open the archive or to clear the root is a [`ToolError::Io`]; an error from
    /// `unpack` is a refusal (`tar-rs: …`), with whatever it wrote before left in place.
    fn hydrate(&self, req: &HydrateRequest<'_>) -> Result<Outcome, ToolError> {
        let file = open_archive(req.archive)?;
        clear_root(req.root)?;
        Ok(tar_rs_outcome(
            tar::Archive::new(io::BufReader::new(file)).unpack(req.root),
        ))
    }

    fn limitations(&self) -> Option<&str> {
        Some(IN_PROCESS_LIMITATION)
    }

    fn in_process(&self) -> bool {
        true
    }
}

/// Both roles' availability: always, with the crate's version ([`TAR_CRATE_VERSION`]).
fn tar_rs_availability() -> Availability {
    Availability::Available {
        version: TAR_CRATE_VERSION.to_owned(),
    }
}

/// Both roles' outcome: success, or a refusal `tar-rs: ERROR` (the crate's error, with
/// the member it names where it names one).
fn tar_rs_outcome(result: io::Result<()>) -> Outcome {
    match result {
        Ok(()) => Outcome::Success,
        Err(e) => Outcome::Refused {
            message: format!("tar-rs: {e}"),
        },
    }
}

/// Why an in-process adapter's timeout is not enforced.
const IN_PROCESS_LIMITATION: &str =
    "in process: the timeout is not enforced (the adapter never opens FIFOs or devices)";

/// Append the entries of the directory `dir` (whose root-relative name is `rel`, empty for
/// the root) in sorted byte order, recursing into subdirectories.
fn walk<W: Write>(
    builder: &mut Builder<W>,
    dir: &Path,
    rel: &[u8],
    exclusions: &[Vec<u8>],
) -> io::Result<()> {
    let kept = kept_entries(dir, rel, exclusions).map_err(|e| context(e, "reading", rel))?;
    for KeptEntry {
        path,
        rel: child_rel,
    } in kept
    {
        let meta = fs::symlink_metadata(&path).map_err(|e| context(e, "inspecting", &child_rel))?;
        append_entry(builder, &path, &child_rel, &meta)
            .map_err(|e| context(e, "archiving", &child_rel))?;
        if meta.file_type().is_dir() {
            walk(builder, &path, &child_rel, exclusions)?;
        }
    }
    Ok(())
}

/// Append one entry (not its children).
fn append_entry<W: Write>(
    builder: &mut Builder<W>,
    path: &Path,
    rel: &[u8],
    meta: &Metadata,
) -> io::Result<()> {
    let kind = meta.file_type();
    if kind.is_socket() {
        return Ok(());
    }
    let mut header = Header::new_gnu();
    header.set_metadata_in_mode(meta, HeaderMode::Complete);
    header.set_mode(meta.mode() & 0o7777);
    header.set_size(0);
    let name = Path::new(OsStr::from_bytes(rel));
    if kind.is_file() {
        // O_NOFOLLOW | O_NONBLOCK: if the entry was swapped for a link or a FIFO since the
        // lstat, the open fails or returns at once instead of following or blocking.
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let file = File::from(fd);
        let now = file.metadata()?;
        if !now.file_type().is_file() {
            return Err(io::Error::other("changed kind while being archived"));
        }
        let size = now.len();
        header.set_size(size);
        // A file that shrinks while read is padded with zeros (as GNU tar does) so the
        // archive stays well-formed; one that grows is cut at the size in the header.
        let data = file.take(size).chain(io::repeat(0)).take(size);
        builder.append_data(&mut header, name, data)
    } else if kind.is_dir() {
        let mut dir_name = rel.to_vec();
        dir_name.push(b'/');
        builder.append_data(
            &mut header,
            Path::new(OsStr::from_bytes(&dir_name)),
            io::empty(),
        )
    } else if kind.is_symlink() {
        let target = fs::read_link(path)?;
        append_symlink(builder, &mut header, name, target.as_os_str().as_bytes())
    } else if kind.is_fifo() {
        header.set_entry_type(EntryType::Fifo);
        builder.append_data(&mut header, name, io::empty())
    } else if kind.is_char_device() || kind.is_block_device() {
        header.set_entry_type(if kind.is_char_device() {
            EntryType::Char
        } else {
            EntryType::Block
        });
        header.set_device_major(major(meta.rdev()))?;
        header.set_device_minor(minor(meta.rdev()))?;
        builder.append_data(&mut header, name, io::empty())
    } else {
        Err(io::Error::other("unknown file kind"))
    }
}

/// Append a SYM member whose link target is `target` byte for byte.
fn append_symlink<W: Write>(
    builder: &mut Builder<W>,
    header: &mut Header,
    name: &Path,
    target: &[u8],
) -> io::Result<()> {
    const LINKNAME_FIELD: usize = 100;
    header.set_entry_type(EntryType::Symlink);
    if target.len() > LINKNAME_FIELD {
        // GNU long link name: a `K` member named `././@LongLink` whose payload is the target
        // plus a NUL, followed by the real header (GNU tar manual, "GNU tar format").
        let mut long = Header::new_gnu();
        long.as_gnu_mut()
            .ok_or_else(|| io::Error::other("not a GNU header"))?
            .name[..13]
            .copy_from_slice(b"././@LongLink");
        long.set_mode(0o644);
        long.set_uid(0);
        long.set_gid(0);
        long.set_mtime(0);
        long.set_entry_type(EntryType::GNULongLink);
        long.set_size(target.len() as u64 + 1);
        long.set_cksum();
        builder.append(&long, target.chain(&[0u8][..]))?;
        header.set_link_name_literal(&target[..LINKNAME_FIELD])?;
    } else {
        header.set_link_name_literal(target)?;
    }
    builder.append_data(header, name, io::empty())
}

/// Prefix an I/O error with what we were doing and the member name.
fn context(e: io::Error, verb: &str, rel: &[u8]) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("{verb} `{}`: {e}", String::from_utf8_lossy(rel)),
    )
}

#[cfg(test)]
mod tests {
    use super::TAR_CRATE_VERSION;

    #[test]
    fn version_string_matches_the_lock_file() {
        let lock = include_str!("../../../Cargo.lock");
        let version = TAR_CRATE_VERSION.trim_start_matches("tar crate ");
        let entry = format!("name = \"tar\"\nversion = \"{version}\"\n");
        assert!(
            lock.contains(&entry),
            "Cargo.lock does not pin tar {version}; update TAR_CRATE_VERSION"
        );
    }
}
