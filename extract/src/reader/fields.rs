//! The header fields the reader checks: numeric fields, the PAX `size` beside the ustar one,
//! old GNU bytes and the checksum.

use super::BLOCK;

/// Offset of the `size` header field.
pub(super) const SIZE_FIELD: usize = 124;
/// Offset of the `mode` header field.
pub(super) const MODE_FIELD: usize = 100;

/// A numeric header field at `offset` (`size`, `mode`): 0 when its first byte is NUL, else
/// `parse`'s reading (the `tar` crate's: octal, or GNU base-256).
///
/// A field is a C string: GNU tar 1.34, bsdtar 3.6.2, BusyBox 1.35 and Python 3.11's
/// `tarfile` all read a field that starts with NUL as 0 (*observed*: an all-NUL `mode` and
/// `size`, and a `size` of six NULs, a space, `0016` and a NUL,
/// `corpora/fields/size-nul-digits.tar`), whatever follows the NUL. Go's `archive/tar`
/// trims NULs and spaces on both sides and reads the latter as 0o16, and the `tar` crate
/// refuses both; the reference follows the four extractors snapconf drives.
pub(super) fn number_field(
    block: &[u8; BLOCK as usize],
    offset: usize,
    parse: impl FnOnce() -> std::io::Result<u64>,
) -> std::io::Result<u64> {
    if block[offset] == 0 {
        Ok(0)
    } else {
        parse()
    }
}

/// Largest size the 11 octal digits of a ustar `size` field hold (8 GiB - 1); writers put
/// a larger size in a PAX `size` record, the field 0 (*observed*: GNU tar 1.34
/// `--format=posix` and Python 3.11's `PAX_FORMAT` on a 9 GiB file).
const USTAR_SIZE_MAX: u64 = 0o77_777_777_777;

/// Whether a PAX `size` of `pax` may stand beside a ustar `size` field read as `ustar`.
///
/// BusyBox 1.35 ignores the PAX `size` (*observed*: a PAX `size` of 6 over a field of 0 made
/// an empty file and "invalid tar magic" from the data read as a header;
/// `corpora/fields/pax-size-ustar-zero.tar`) while GNU tar, bsdtar, Python and the `tar`
/// crate take it: where the next header starts depends on the reader, the PAX `size`
/// desynchronisation class (CVE-2025-62518). So the two must agree, but for the one form
/// writers use, a size that the field cannot hold, with the field 0: BusyBox cannot read
/// such a member at all, and refusing it would refuse every file of 8 GiB or more GNU tar
/// writes in the `posix` format (documented in `docs/design.md`, "Header fields").
pub(super) fn pax_size_agrees(pax: u64, ustar: u64) -> Result<(), String> {
    if pax == ustar || (ustar == 0 && pax > USTAR_SIZE_MAX) {
        Ok(())
    } else {
        Err(format!(
            "a PAX `size` of {pax} beside a ustar size field of {ustar} (BusyBox reads the \
             field, other tools the PAX record)"
        ))
    }
}

/// Checks the bytes an old GNU header (magic `ustar  \0`) keeps for other uses on a member
/// that is not sparse (not type `S`): they must be NUL where tools read them differently.
///
/// - Bytes 345-499 are the old GNU access and change times (and the sparse map), but POSIX
///   ustar's `prefix`: BusyBox 1.35 and Python 3.11 (which joins `prefix/name` under any
///   magic) read a prefix there, GNU tar 1.34 and bsdtar 3.6.2 do not (*observed*:
///   `aaa…/foo` against `foo`, `corpora/fields/gnu-magic-prefix.tar`; Go's
///   `invalid-go17.tar` has this shape, written by Go 1.7's writer, and Go reads the prefix).
/// - Bytes 483-494 are the old GNU `realsize` of a sparse file: bsdtar 3.6.2 sizes the file
///   by it on any member, GNU tar, BusyBox and Python ignore it (*observed*: a 64-byte file
///   against a 6-byte one, `corpora/fields/gnu-realsize.tar`).
pub(super) fn old_gnu_fields(block: &[u8; BLOCK as usize]) -> Result<(), String> {
    if block[483..495].iter().any(|&b| b != 0) {
        return Err(
            "a GNU `realsize` (byte 483) on a member that is not sparse (bsdtar sizes the file \
             by it, other tools ignore it)"
                .into(),
        );
    }
    if block[345] != 0 {
        return Err(
            "bytes at 345 under the old GNU magic (BusyBox and Python read a ustar `prefix` \
             there, GNU tar and bsdtar an access time)"
                .into(),
        );
    }
    Ok(())
}

/// Verifies the header checksum: the sum of all bytes with the checksum field read as spaces.
/// Both the unsigned sum (POSIX) and the signed sum (old Sun and GNU tars) are accepted, as
/// GNU tar does.
pub(crate) fn check_checksum(block: &[u8; BLOCK as usize]) -> Result<(), String> {
    let field = &block[148..156];
    let text: Vec<u8> = field
        .iter()
        .copied()
        .take_while(|&b| b != 0)
        .filter(|&b| b != b' ')
        .collect();
    if text.is_empty() || !text.iter().all(|b| (b'0'..=b'7').contains(b)) {
        return Err("checksum field is not octal".into());
    }
    let stored = text
        .iter()
        .try_fold(0u64, |acc, &b| {
            acc.checked_mul(8)?.checked_add(u64::from(b - b'0'))
        })
        .ok_or("checksum field overflows")?;
    let mut unsigned: u64 = 0;
    let mut signed: i64 = 0;
    for (i, &b) in block.iter().enumerate() {
        let b = if (148..156).contains(&i) { b' ' } else { b };
        unsigned += u64::from(b);
        signed += i64::from(b as i8);
    }
    if stored == unsigned || i64::try_from(stored).ok() == Some(signed) {
        Ok(())
    } else {
        Err(format!(
            "header checksum mismatch (stored {stored}, computed {unsigned})"
        ))
    }
}
