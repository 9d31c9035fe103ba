//! Listing an archive's members as the reference parser reads them, without judging them.

use std::io::{BufReader, Read};

use crate::input::StreamInput;
use crate::listing::{ListedMember, Listing};
use crate::reader::Reader;
use crate::{HydrateError, Limits};

/// Every member of `archive`, in archive order, as the reference parser reads it: PAX
/// `path`/`linkpath`/`size` (records split by their length prefix, so values may hold a
/// newline) and GNU long names folded in. No policy is applied: absolute names, `..`,
/// hardlinks to absent members and special files are all listed. Writes nothing; memory grows
/// with the number of members, not with payload sizes.
///
/// # Errors
/// [`HydrateError::Refused`] only for structural faults (`truncated`, `malformed`, a
/// [`Limits::default`] breach); [`HydrateError::Io`] if reading fails.
///
/// A compressed archive is listed through its decoder ([`crate::compression::tar_stream`],
/// under the default limits).
pub fn list(archive: impl Read) -> Result<Listing, HydrateError> {
    let (_, stream) = crate::compression::tar_stream(
        BufReader::with_capacity(64 * 1024, archive),
        &Limits::default(),
    )?;
    list_tar(stream)
}

/// [`list`] of a tar stream that is already decompressed (what
/// [`crate::compression::tar_stream`] gives): no compression is looked for.
///
/// # Errors
/// As [`list`].
pub fn list_tar(tar: impl Read) -> Result<Listing, HydrateError> {
    let mut input = StreamInput::new(BufReader::with_capacity(64 * 1024, tar));
    let mut reader = Reader::new(&mut input, 0, Limits::default());
    let mut members = Vec::new();
    while let Some(m) = reader.next_member()? {
        members.push(ListedMember {
            size: m.file_size(),
            name: m.name,
            kind: m.kind,
            link_target: m.link,
            mode: m.mode,
        });
    }
    Ok(Listing { members })
}
