//! GNU sparse members (GNU tar manual, "Storing Sparse Files" and "GNU Sparse Formats"): a
//! file stored as its data regions only, with a map of where each region lies; the rest
//! (the holes) reads as zeros. Four encodings are read:
//!
//! - **old GNU**: type `S` in a header with the old GNU magic `ustar  \0`; four map entries
//!   (12-byte octal offset, 12-byte octal size) at byte 386, an `isextended` flag at 482,
//!   the file's size (`realsize`) at 483, and while `isextended` is set, extension blocks
//!   of 21 entries each (flag at byte 504) between the header and the data;
//! - **PAX 0.0**: `GNU.sparse.size` (the file's size), `GNU.sparse.numblocks`, and one
//!   `GNU.sparse.offset` / `GNU.sparse.numbytes` pair per region;
//! - **PAX 0.1**: `GNU.sparse.size`, `GNU.sparse.numblocks`, `GNU.sparse.map` (a comma
//!   list: offset, size, offset, size, ...) and `GNU.sparse.name`;
//! - **PAX 1.0**: `GNU.sparse.major=1`, `GNU.sparse.minor=0`, `GNU.sparse.name`,
//!   `GNU.sparse.realsize`, and the map as decimal lines (count, then offset and size per
//!   region) at the start of the member's data, padded with NULs to a whole block.
//!
//! Whatever the encoding, the map is judged the same way ([`check`]): regions in ascending
//! order, none overlapping the one before, each inside the file's size, their sizes adding
//! up to the data the member stores, the file's size within [`Limits::sparse_size`] and the
//! regions of the whole archive within [`Limits::sparse_regions`]. Anything a reader could
//! take two ways is refused, never guessed (see `docs/design.md`, "Sparse members").

use crate::pax::SparseKeys;
use crate::{Limits, Reason};

/// A refusal without its member name: the reason and its detail.
pub(crate) type Refusal = (Reason, String);

/// Bytes of a tar block.
const BLOCK: usize = 512;

/// The magic and version of an old GNU header (`ustar  \0`): only there do bytes 345..500
/// hold the sparse map; in a POSIX header they are the `prefix` of the name.
pub(crate) const OLD_GNU_MAGIC: &[u8] = b"ustar  \0";

/// One data region: `len` bytes of the member's data belong at `offset` in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    /// Where the region starts in the restored file, in bytes.
    pub(crate) offset: u64,
    /// Its length in bytes.
    pub(crate) len: u64,
}

/// A checked sparse map: the data regions in file order, and the file's size.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SparseMap {
    /// The restored file's size in bytes (`realsize`).
    pub(crate) real_size: u64,
    /// The data regions, ascending, non-overlapping, inside `real_size`.
    pub(crate) regions: Vec<Region>,
}

/// The encoding a sparse member came in, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    OldGnu,
    Pax00,
    Pax01,
    Pax10,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::OldGnu => "old GNU sparse map",
            Format::Pax00 => "PAX 0.0 sparse map",
            Format::Pax01 => "PAX 0.1 sparse map",
            Format::Pax10 => "PAX 1.0 sparse map",
        }
    }
}

/// How many map entries the rest of the archive may still hold ([`Limits::sparse_regions`]
/// counts the regions of every sparse member together: the plan keeps them all).
#[derive(Debug)]
pub(crate) struct Budget {
    left: u64,
    limit: u64,
}

impl Budget {
    /// The whole budget of `limits`.
    pub(crate) fn new(limits: &Limits) -> Self {
        Budget {
            left: limits.sparse_regions,
            limit: limits.sparse_regions,
        }
    }

    /// Takes `n` entries, or refuses with `limit-exceeded`.
    fn take(&mut self, n: u64) -> Result<(), Refusal> {
        if n > self.left {
            return Err((
                Reason::LimitExceeded,
                format!("more than {} sparse map entries in the archive", self.limit),
            ));
        }
        self.left -= n;
        Ok(())
    }
}

fn malformed(detail: impl Into<String>) -> Refusal {
    (Reason::Malformed, detail.into())
}

/// Checks the file's size against [`Limits::sparse_size`], before any map is read.
pub(crate) fn check_real_size(real_size: u64, limits: &Limits) -> Result<(), Refusal> {
    if real_size > limits.sparse_size {
        return Err((
            Reason::LimitExceeded,
            format!(
                "sparse file of {real_size} bytes (limit {})",
                limits.sparse_size
            ),
        ));
    }
    Ok(())
}

/// Judges a map read in `format` against the `stored` data bytes the member holds (after a
/// 1.0 map's blocks); `stored_from` names where that size came from, for the message.
pub(crate) fn check(
    map: &SparseMap,
    stored: u64,
    stored_from: &str,
    format: Format,
) -> Result<(), Refusal> {
    let what = format.name();
    let mut end = 0u64;
    let mut sum = 0u64;
    for (i, r) in map.regions.iter().enumerate() {
        // GNU tar reads each region's data from a block boundary (a region that does not
        // fill its last block leaves the rest of it unread); other readers (libarchive,
        // Python) take the regions back to back. They agree only if every region but the
        // last with data fills whole blocks, which is what GNU tar writes.
        if r.len > 0 && !sum.is_multiple_of(BLOCK as u64) {
            return Err(malformed(format!(
                "{what}: region {i} follows data that does not fill whole 512-byte blocks \
                 (GNU tar reads each region from a block boundary, other readers do not)"
            )));
        }
        if r.offset < end {
            return Err(malformed(format!(
                "{what}: region {i} at {} starts before the end of the one before ({end}): \
                 out of order or overlapping",
                r.offset
            )));
        }
        end = r
            .offset
            .checked_add(r.len)
            .filter(|&e| e <= map.real_size)
            .ok_or_else(|| {
                malformed(format!(
                    "{what}: region {i} ({} bytes at {}) ends past the file's size {}",
                    r.len, r.offset, map.real_size
                ))
            })?;
        sum = sum
            .checked_add(r.len)
            .ok_or_else(|| malformed(format!("{what}: region sizes overflow")))?;
    }
    // GNU tar leaves the file at the end of its last region (it writes a last entry
    // `realsize,0` to give it its size); other readers give it `realsize`.
    if end != map.real_size {
        return Err(malformed(format!(
            "{what}: the last region ends at {end}, not at the file's size {} (GNU tar \
             restores a file that ends with the last region, other readers one of the \
             file's size)",
            map.real_size
        )));
    }
    if sum != stored {
        return Err(malformed(format!(
            "{what}: regions hold {sum} bytes, but the member stores {stored} ({stored_from})"
        )));
    }
    Ok(())
}

/// Reads a numeric field of an old GNU header: octal digits (leading spaces allowed,
/// then NULs or spaces to the end), or base-256 (first byte `0x80`, big-endian). An empty
/// field, a negative base-256 number and anything over `u64` are refused.
fn header_number(field: &[u8], what: &str) -> Result<u64, Refusal> {
    let bad = || malformed(format!("old GNU sparse header: {what} is not a number"));
    match field.first() {
        Some(0x80) => field[1..].iter().try_fold(0u64, |acc, &b| {
            acc.checked_mul(256)
                .map(|v| v | u64::from(b))
                .ok_or_else(bad)
        }),
        Some(b) if b & 0x80 != 0 => Err(bad()),
        _ => {
            let text = field
                .iter()
                .position(|&b| b != b' ')
                .map_or(&[][..], |i| &field[i..]);
            let digits = text
                .iter()
                .take_while(|b| (b'0'..=b'7').contains(b))
                .count();
            if digits == 0 || text[digits..].iter().any(|&b| b != 0 && b != b' ') {
                return Err(bad());
            }
            text[..digits].iter().try_fold(0u64, |acc, &b| {
                acc.checked_mul(8)
                    .map(|v| v | u64::from(b - b'0'))
                    .ok_or_else(bad)
            })
        }
    }
}

/// Reads the 24-byte entries of an old GNU map area into `out`. An all-NUL entry ends the
/// map (`*ended`); an entry after it must be empty too.
fn old_gnu_entries(area: &[u8], out: &mut Vec<Region>, ended: &mut bool) -> Result<(), Refusal> {
    for entry in area.chunks_exact(24) {
        if entry.iter().all(|&b| b == 0) {
            *ended = true;
            continue;
        }
        if *ended {
            return Err(malformed(
                "old GNU sparse header: a map entry after an empty one",
            ));
        }
        out.push(Region {
            offset: header_number(&entry[..12], "a region's offset")?,
            len: header_number(&entry[12..], "a region's size")?,
        });
    }
    Ok(())
}

/// The `isextended` byte at `at`: 0 or 1.
fn extended(block: &[u8; BLOCK], at: usize) -> Result<bool, Refusal> {
    match block[at] {
        0 => Ok(false),
        1 => Ok(true),
        b => Err(malformed(format!(
            "old GNU sparse header: `isextended` is {b}, not 0 or 1"
        ))),
    }
}

/// The map of an old GNU sparse member whose header is `header`; `next_block` reads the
/// extension blocks that follow it. Not yet [`check`]ed against the stored size.
pub(crate) fn old_gnu<E>(
    header: &[u8; BLOCK],
    limits: &Limits,
    budget: &mut Budget,
    next_block: &mut dyn FnMut() -> Result<[u8; BLOCK], E>,
) -> Result<Result<SparseMap, Refusal>, E> {
    let real_size = match header_number(&header[483..495], "`realsize`")
        .and_then(|r| check_real_size(r, limits).map(|()| r))
    {
        Ok(r) => r,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let mut regions = Vec::new();
    let mut ended = false;
    let first = old_gnu_entries(&header[386..482], &mut regions, &mut ended)
        .and_then(|()| extended(header, 482));
    let mut more = match first {
        Ok(more) => more,
        Err(refusal) => return Ok(Err(refusal)),
    };
    if more && ended {
        // GNU tar stops at the empty entry and never reads the extension blocks; a
        // reader that honours the flag reads them as the map and then the data later.
        return Ok(Err(malformed(
            "old GNU sparse header: `isextended` set after an empty map entry \
             (GNU tar does not read the extension blocks then, other readers do)",
        )));
    }
    if let Err(refusal) = budget.take(regions.len() as u64) {
        return Ok(Err(refusal));
    }
    while more {
        let block = next_block()?;
        let before = regions.len();
        let step = old_gnu_entries(&block[..504], &mut regions, &mut ended)
            .and_then(|()| extended(&block, 504))
            .and_then(|m| {
                if m && ended {
                    Err(malformed(
                        "old GNU sparse extension: `isextended` set after an empty map entry",
                    ))
                } else {
                    Ok(m)
                }
            })
            .and_then(|m| budget.take((regions.len() - before) as u64).map(|()| m));
        more = match step {
            Ok(m) => m,
            Err(refusal) => return Ok(Err(refusal)),
        };
    }
    Ok(Ok(SparseMap { real_size, regions }))
}

/// What a member's `GNU.sparse.*` keywords say.
#[derive(Debug)]
pub(crate) enum PaxSparse {
    /// Format 0.0 or 0.1: the map is in the header.
    Map(Format, SparseMap),
    /// Format 1.0: the map starts the member's data; the file is `real_size` bytes.
    InData { real_size: u64 },
}

/// Decides the format of a member's PAX sparse keywords and reads a 0.x map. Keywords of
/// two formats together, an unknown keyword or version, and a map with an odd count or a
/// count other than `GNU.sparse.numblocks` are refused.
pub(crate) fn from_pax(
    keys: &SparseKeys,
    limits: &Limits,
    budget: &mut Budget,
) -> Result<PaxSparse, Refusal> {
    if let Some(key) = &keys.unknown {
        return Err((
            Reason::Unsupported,
            format!("unknown PAX sparse keyword `{key}`"),
        ));
    }
    let v1 = keys.major.is_some() || keys.minor.is_some() || keys.realsize.is_some();
    let v0 = keys.size.is_some()
        || keys.numblocks.is_some()
        || keys.map.is_some()
        || !keys.pairs.is_empty();
    if v1 && v0 {
        return Err(malformed(
            "PAX sparse keywords of format 1.0 (`GNU.sparse.major`, `minor`, `realsize`) and \
             of format 0.x (`GNU.sparse.size`, `numblocks`, `map`, `offset`) in one member",
        ));
    }
    if v1 {
        return match (keys.major, keys.minor) {
            (Some(1), Some(0)) => {
                let real_size = keys.realsize.ok_or_else(|| {
                    malformed("PAX 1.0 sparse member without `GNU.sparse.realsize`")
                })?;
                check_real_size(real_size, limits)?;
                Ok(PaxSparse::InData { real_size })
            }
            (major, minor) => {
                let shown = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
                Err((
                    Reason::Unsupported,
                    format!(
                        "PAX sparse format version {}.{} (only 1.0 has `GNU.sparse.major`)",
                        shown(major),
                        shown(minor)
                    ),
                ))
            }
        };
    }
    let real_size = keys
        .size
        .ok_or_else(|| malformed("PAX 0.x sparse member without `GNU.sparse.size`"))?;
    check_real_size(real_size, limits)?;
    let (format, regions) = match (&keys.map, keys.pairs.is_empty()) {
        (Some(_), false) => {
            return Err(malformed(
                "PAX sparse map given both as `GNU.sparse.map` (0.1) and as \
                 `GNU.sparse.offset`/`numbytes` (0.0)",
            ))
        }
        (Some(numbers), true) => {
            if numbers.len() % 2 != 0 {
                return Err(malformed("`GNU.sparse.map` holds an odd count of numbers"));
            }
            budget.take(numbers.len() as u64 / 2)?;
            let regions = numbers
                .chunks_exact(2)
                .map(|p| Region {
                    offset: p[0],
                    len: p[1],
                })
                .collect::<Vec<_>>();
            (Format::Pax01, regions)
        }
        (None, false) => {
            budget.take(keys.pairs.len() as u64)?;
            let regions = keys
                .pairs
                .iter()
                .map(|&(offset, len)| {
                    len.map(|len| Region { offset, len }).ok_or_else(|| {
                        malformed("`GNU.sparse.offset` without its `GNU.sparse.numbytes`")
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            (Format::Pax00, regions)
        }
        (None, true) => {
            return Err(malformed("PAX sparse keywords without a sparse map"));
        }
    };
    if let Some(n) = keys.numblocks {
        if n != regions.len() as u64 {
            return Err(malformed(format!(
                "`GNU.sparse.numblocks` is {n}, the map has {} entries",
                regions.len()
            )));
        }
    }
    Ok(PaxSparse::Map(format, SparseMap { real_size, regions }))
}

/// Reads a PAX 1.0 map from the start of a member's data, block by block (`next_block`),
/// where `stored` bytes of data follow the header. Returns the map (not yet [`check`]ed)
/// and the bytes its blocks take.
pub(crate) fn pax10_map<E>(
    real_size: u64,
    stored: u64,
    budget: &mut Budget,
    next_block: &mut dyn FnMut() -> Result<[u8; BLOCK], E>,
) -> Result<Result<(SparseMap, u64), Refusal>, E> {
    let mut text = MapText::default();
    let mut used = 0u64;
    loop {
        if used + BLOCK as u64 > stored {
            return Ok(Err(malformed(format!(
                "PAX 1.0 sparse map runs past the member's {stored} bytes"
            ))));
        }
        let block = next_block()?;
        used += BLOCK as u64;
        match text.feed(&block, budget) {
            Ok(false) => {}
            Ok(true) => {
                let map = SparseMap {
                    real_size,
                    regions: text.regions,
                };
                return Ok(Ok((map, used)));
            }
            Err(refusal) => return Ok(Err(refusal)),
        }
    }
}

/// The parser of a PAX 1.0 map: decimal numbers, one per line.
#[derive(Default)]
struct MapText {
    /// The entry count, once read.
    count: Option<u64>,
    /// The number being read and its digit count.
    digits: usize,
    value: u64,
    /// An offset waiting for its size.
    offset: Option<u64>,
    regions: Vec<Region>,
}

impl MapText {
    /// Feeds one block; `true` once the map is complete (the rest of that block must be
    /// NUL padding).
    fn feed(&mut self, block: &[u8], budget: &mut Budget) -> Result<bool, Refusal> {
        for (i, &b) in block.iter().enumerate() {
            match b {
                b'0'..=b'9' => {
                    self.digits += 1;
                    self.value = self
                        .value
                        .checked_mul(10)
                        .and_then(|v| v.checked_add(u64::from(b - b'0')))
                        .filter(|_| self.digits <= 20)
                        .ok_or_else(|| malformed("PAX 1.0 sparse map: a number over 2^64"))?;
                }
                b'\n' if self.digits > 0 => {
                    let n = std::mem::take(&mut self.value);
                    self.digits = 0;
                    if self.number(n, budget)? {
                        if block[i + 1..].iter().any(|&b| b != 0) {
                            return Err(malformed(
                                "PAX 1.0 sparse map: bytes other than NUL after the map",
                            ));
                        }
                        return Ok(true);
                    }
                }
                _ => {
                    return Err(malformed(format!(
                        "PAX 1.0 sparse map: byte {b:#04x} where a decimal line was expected"
                    )))
                }
            }
        }
        Ok(false)
    }

    /// Takes one complete number; `true` once the map is complete.
    fn number(&mut self, n: u64, budget: &mut Budget) -> Result<bool, Refusal> {
        let Some(count) = self.count else {
            budget.take(n)?;
            self.count = Some(n);
            return Ok(n == 0);
        };
        match self.offset.take() {
            None => self.offset = Some(n),
            Some(offset) => self.regions.push(Region { offset, len: n }),
        }
        Ok(self.regions.len() as u64 == count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget() -> Budget {
        Budget::new(&Limits::default())
    }

    #[test]
    fn header_numbers() {
        assert_eq!(header_number(b"00000000017\0", "x"), Ok(15));
        assert_eq!(header_number(b"   17 \0\0\0\0\0\0", "x"), Ok(15));
        let mut b256 = [0u8; 12];
        b256[0] = 0x80;
        b256[11] = 1;
        b256[10] = 1;
        assert_eq!(header_number(&b256, "x"), Ok(257));
        assert!(header_number(&[0u8; 12], "x").is_err());
        assert!(header_number(b"0000000008\0\0", "x").is_err());
        assert!(header_number(b"12 3\0\0\0\0\0\0\0\0", "x").is_err());
        let mut over = [0xffu8; 12];
        over[0] = 0x80;
        assert!(header_number(&over, "x").is_err());
        assert!(header_number(&[0xff; 12], "x").is_err());
    }

    #[test]
    fn map_text_reads_lines_and_padding() {
        let mut block = [0u8; 512];
        block[..7].copy_from_slice(b"1\n5\n10\n");
        let mut t = MapText::default();
        assert_eq!(t.feed(&block, &mut budget()), Ok(true));
        assert_eq!(t.regions, vec![Region { offset: 5, len: 10 }]);
        block[20] = 1;
        assert!(MapText::default().feed(&block, &mut budget()).is_err());
        let mut t = MapText::default();
        assert!(t.feed(b"1\n\n", &mut budget()).is_err());
        let mut t = MapText::default();
        assert!(t.feed(b"123456789012345678901\n", &mut budget()).is_err());
    }

    #[test]
    fn checks() {
        let map = |regions: &[(u64, u64)]| SparseMap {
            real_size: 100,
            regions: regions
                .iter()
                .map(|&(offset, len)| Region { offset, len })
                .collect(),
        };
        let ok = map(&[(0, 0), (10, 0), (50, 50), (100, 0)]);
        assert_eq!(check(&ok, 50, "x", Format::Pax00), Ok(()));
        assert!(check(&ok, 49, "x", Format::Pax00).is_err());
        let mut big = map(&[(0, 512), (512, 512), (2000, 7)]);
        big.real_size = 2007;
        assert_eq!(check(&big, 1031, "x", Format::Pax00), Ok(()));
        big.real_size = 3000;
        assert!(
            check(&big, 1031, "x", Format::Pax00).is_err(),
            "short of realsize"
        );
        let mut unaligned = map(&[(0, 10), (50, 50)]);
        unaligned.real_size = 100;
        assert!(check(&unaligned, 60, "x", Format::Pax00).is_err());
        assert!(check(&map(&[(10, 0), (5, 100)]), 100, "x", Format::Pax00).is_err());
        assert!(check(&map(&[(0, 0), (95, 10)]), 10, "x", Format::Pax00).is_err());
        assert!(check(&map(&[(u64::MAX, 10)]), 10, "x", Format::Pax00).is_err());
    }
}
