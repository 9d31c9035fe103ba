//! The header checksum (POSIX ustar `chksum`): [`checksum_sum`] computes it, [`set_checksum`]
//! writes it. [`RawHeader::checksum_matches`](super::RawHeader::checksum_matches) judges a
//! stored one.

use super::field::CHKSUM;

/// Recompute the checksum of the header block at the start of `h` ([`CHKSUM`]: the
/// unsigned sum of the 512 bytes with the field taken as spaces, as six octal digits, NUL,
/// space; POSIX ustar). A slice shorter than a block is left alone.
pub fn set_checksum(h: &mut [u8]) {
    let Some(sum) = checksum_sum(h) else {
        return;
    };
    let s = format!("{sum:06o}\0 ");
    h[CHKSUM.range()].copy_from_slice(s.as_bytes());
}

/// The POSIX ustar checksum of the header block at the start of `h`: the unsigned sum of its
/// 512 bytes with the [`CHKSUM`] field taken as eight spaces (at most 512 x 255 = 130,560,
/// six octal digits). `None` if `h` is shorter than a block. For writing the field in a
/// form of one's own (a lenient reader's, a damaged one) with [`RawHeader::set_raw`](super::RawHeader::set_raw).
pub fn checksum_sum(h: &[u8]) -> Option<u64> {
    let block = h.get(..512)?;
    Some(
        block
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                if CHKSUM.range().contains(&i) {
                    32
                } else {
                    u64::from(b)
                }
            })
            .sum(),
    )
}
