//! A tar writer that can express hostile forms: absolute names, `..`, NUL bytes, unknown type
//! flags, bad checksums, PAX and GNU long-name headers, truncation. Unlike the `tar` crate's
//! `Builder` it never sanitises a name. Header layout: POSIX.1-2017 `pax`, "ustar Interchange
//! Format"; GNU tar manual, "Basic Tar Format" (`L`/`K` long names).
//!
//! PAX extended header records: POSIX.1-2017 `pax`, "pax Extended Header File Format".
//!
//! [`RawHeader`] is the one view of a header block's fields that the suite reads and writes
//! hostile bytes through; no other code indexes a header by byte offset. [`RawTar`] is the
//! one member writer.

use std::ops::Range;

/// One field of a ustar header block: where it lies in the 512 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Offset of the field's first byte in the block.
    pub offset: usize,
    /// Width of the field in bytes.
    pub len: usize,
}

impl Field {
    /// The field's byte range in the block.
    pub const fn range(self) -> Range<usize> {
        self.offset..self.offset + self.len
    }
}

// The ustar header block, POSIX.1-2017 `pax`, "ustar Interchange Format", table "ustar
// Header Block" (offsets in bytes; GNU tar's `struct posix_header` in `src/tar.h` is the
// same, and its old GNU format reuses `magic` + `version` as `"ustar  \0"`). Bytes 500..512
// are padding.
/// `name`: the member name, NUL-terminated unless it fills the field.
pub const NAME: Field = Field {
    offset: 0,
    len: 100,
};
/// `mode`: permission bits, octal.
pub const MODE: Field = Field {
    offset: 100,
    len: 8,
};
/// `uid`: owner id, octal (GNU: base-256 when large).
pub const UID: Field = Field {
    offset: 108,
    len: 8,
};
/// `gid`: group id, octal (GNU: base-256 when large).
pub const GID: Field = Field {
    offset: 116,
    len: 8,
};
/// `size`: payload size in bytes, octal (GNU: base-256 when large).
pub const SIZE: Field = Field {
    offset: 124,
    len: 12,
};
/// `mtime`: modification time in seconds since the epoch, octal.
pub const MTIME: Field = Field {
    offset: 136,
    len: 12,
};
/// `chksum`: the unsigned byte sum of the block with this field read as spaces; six octal
/// digits, NUL, space.
pub const CHKSUM: Field = Field {
    offset: 148,
    len: 8,
};
/// `typeflag`: the member type (`0` file, `1` hardlink, `2` symlink, `5` directory, `x` PAX,
/// `L` GNU long name, ...).
pub const TYPEFLAG: Field = Field {
    offset: 156,
    len: 1,
};
/// `linkname`: a link's target, NUL-terminated unless it fills the field.
pub const LINKNAME: Field = Field {
    offset: 157,
    len: 100,
};
/// `magic`: `"ustar\0"` (POSIX) or `"ustar "` (old GNU).
pub const MAGIC: Field = Field {
    offset: 257,
    len: 6,
};
/// `version`: `"00"` (POSIX) or `" \0"` (old GNU).
pub const VERSION: Field = Field {
    offset: 263,
    len: 2,
};
/// `uname`: owner name, NUL-terminated.
pub const UNAME: Field = Field {
    offset: 265,
    len: 32,
};
/// `gname`: group name, NUL-terminated.
pub const GNAME: Field = Field {
    offset: 297,
    len: 32,
};
/// `devmajor`: a device member's major number, octal.
pub const DEVMAJOR: Field = Field {
    offset: 329,
    len: 8,
};
/// `devminor`: a device member's minor number, octal.
pub const DEVMINOR: Field = Field {
    offset: 337,
    len: 8,
};
/// `prefix`: the part of a long name before its last `/` (the name is `prefix/name`).
pub const PREFIX: Field = Field {
    offset: 345,
    len: 155,
};

/// `realsize`: an old-GNU sparse member's full size, base-256 or octal (GNU tar manual,
/// "GNU tar and POSIX tar", `struct oldgnu_header`: `realsize[12]` at 483). It overlaps
/// [`PREFIX`]: a reader takes one or the other by the magic.
pub const GNU_REALSIZE: Field = Field {
    offset: 483,
    len: 12,
};

/// The bytes of a header field up to its first NUL (a C string in a fixed field).
fn c_field(f: &[u8]) -> &[u8] {
    let end = f.iter().position(|&b| b == 0).unwrap_or(f.len());
    &f[..end]
}

/// A header block seen through its named fields: `RawHeader(&block)` to read,
/// `RawHeader(&mut block)` or `RawHeader([0; 512])` to write. Nothing is validated: a
/// field holds whatever bytes were put there. A buffer shorter than a block (a cut header)
/// reads as empty fields past its end, and writes to those fields are dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawHeader<B>(pub B);

impl<B: AsRef<[u8]>> RawHeader<B> {
    /// The bytes of `field` as stored (empty if the buffer ends before it).
    pub fn field(&self, field: Field) -> &[u8] {
        self.0.as_ref().get(field.range()).unwrap_or_default()
    }

    /// The bytes of `field` that the buffer holds: all of them, or those before the end of
    /// a cut header (where [`RawHeader::field`] gives nothing).
    pub fn field_cut(&self, field: Field) -> &[u8] {
        let b = self.0.as_ref();
        let end = field.range().end.min(b.len());
        b.get(field.offset.min(end)..end).unwrap_or_default()
    }

    /// The `name` field up to its first NUL.
    pub fn name(&self) -> &[u8] {
        c_field(self.field(NAME))
    }
    /// The `linkname` field up to its first NUL.
    pub fn linkname(&self) -> &[u8] {
        c_field(self.field(LINKNAME))
    }
    /// The `prefix` field up to its first NUL.
    pub fn prefix(&self) -> &[u8] {
        c_field(self.field(PREFIX))
    }
    /// The `uname` field up to its first NUL.
    pub fn uname(&self) -> &[u8] {
        c_field(self.field(UNAME))
    }
    /// The `gname` field up to its first NUL.
    pub fn gname(&self) -> &[u8] {
        c_field(self.field(GNAME))
    }
    /// The `magic` field as stored.
    pub fn magic(&self) -> &[u8] {
        self.field(MAGIC)
    }
    /// The `version` field as stored.
    pub fn version(&self) -> &[u8] {
        self.field(VERSION)
    }
    /// The type flag (NUL for a cut header that ends before it).
    pub fn typeflag(&self) -> u8 {
        self.field(TYPEFLAG).first().copied().unwrap_or(0)
    }
    /// The `mode` field, octal only ([`parse_octal`]), as the `tar` crate's
    /// `Header::mode` and so the reference read it.
    pub fn mode(&self) -> Option<u64> {
        parse_octal(self.field(MODE))
    }
    /// The `size` field as a lenient reader takes it ([`parse_numeric`]: octal or GNU
    /// base-256).
    pub fn size(&self) -> Option<u64> {
        parse_numeric(self.field(SIZE))
    }
    /// The `mtime` field ([`parse_numeric`]).
    pub fn mtime(&self) -> Option<u64> {
        parse_numeric(self.field(MTIME))
    }
    /// The `chksum` field's octal digits ([`parse_octal`]).
    pub fn chksum(&self) -> Option<u64> {
        parse_octal(self.field(CHKSUM))
    }
    /// True if some reading of the `chksum` field equals the block's unsigned or signed
    /// byte sum (the field taken as spaces): POSIX sums unsigned bytes; GNU tar, libarchive,
    /// Python `tarfile` and Go also accept the signed sum old BSD, Solaris and HP-UX tars
    /// wrote. Readings: [`parse_octal`], [`parse_numeric`] (libarchive's `tar_atol` takes
    /// base-256 here too) and Python's `int(field, 8)` after the first NUL is cut and
    /// whitespace stripped (which also takes `+`, `0o` and `_`). False for a cut block.
    pub fn checksum_matches(&self) -> bool {
        let (Some(block), Some(unsigned)) = (
            self.0.as_ref().get(..512),
            checksum_sum(self.0.as_ref()).and_then(|s| i64::try_from(s).ok()),
        ) else {
            return false;
        };
        let signed: i64 = block
            .iter()
            .enumerate()
            .map(|(i, &b)| if CHKSUM.range().contains(&i) { b' ' } else { b })
            .map(|b| i64::from(b as i8))
            .sum();
        let field = self.field(CHKSUM);
        let python = {
            let text = c_field(field).trim_ascii();
            let text = text.strip_prefix(b"+").unwrap_or(text);
            let text = text
                .strip_prefix(b"0o")
                .or_else(|| text.strip_prefix(b"0O"))
                .unwrap_or(text);
            let digits: Vec<u8> = text.iter().copied().filter(|&b| b != b'_').collect();
            parse_octal(&digits).filter(|_| digits.iter().all(|b| (b'0'..=b'7').contains(b)))
        };
        [parse_octal(field), parse_numeric(field), python]
            .into_iter()
            .flatten()
            .filter_map(|v| i64::try_from(v).ok())
            .any(|v| v == unsigned || v == signed)
    }
    /// The `devmajor` field ([`parse_numeric`]).
    pub fn devmajor(&self) -> Option<u64> {
        parse_numeric(self.field(DEVMAJOR))
    }
    /// The `devminor` field ([`parse_numeric`]).
    pub fn devminor(&self) -> Option<u64> {
        parse_numeric(self.field(DEVMINOR))
    }
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> RawHeader<B> {
    /// The bytes of `field`, to damage at will (empty if the buffer ends before it). The
    /// checksum is not fixed: call [`RawHeader::set_checksum`] after.
    pub fn field_mut(&mut self, field: Field) -> &mut [u8] {
        self.0.as_mut().get_mut(field.range()).unwrap_or_default()
    }

    /// Store `value` in `field`: cut at the field's width, the rest of it NUL. The checksum
    /// is not fixed (here and in every setter below).
    pub fn set_raw(&mut self, field: Field, value: &[u8]) -> &mut Self {
        let f = self.field_mut(field);
        f.fill(0);
        let n = value.len().min(f.len());
        f[..n].copy_from_slice(&value[..n]);
        self
    }

    /// Store `v` in `field` as zero-padded octal and a NUL ([`put_octal`]).
    pub fn set_octal(&mut self, field: Field, v: u64) -> &mut Self {
        put_octal(self.field_mut(field), v);
        self
    }

    /// Set the `name` field (cut at 100 bytes).
    pub fn set_name(&mut self, name: &[u8]) -> &mut Self {
        self.set_raw(NAME, name)
    }
    /// Set the `linkname` field (cut at 100 bytes).
    pub fn set_linkname(&mut self, link: &[u8]) -> &mut Self {
        self.set_raw(LINKNAME, link)
    }
    /// Set the `prefix` field (cut at 155 bytes).
    pub fn set_prefix(&mut self, prefix: &[u8]) -> &mut Self {
        self.set_raw(PREFIX, prefix)
    }
    /// Set the `uname` field (cut at 32 bytes).
    pub fn set_uname(&mut self, uname: &[u8]) -> &mut Self {
        self.set_raw(UNAME, uname)
    }
    /// Set the `gname` field (cut at 32 bytes).
    pub fn set_gname(&mut self, gname: &[u8]) -> &mut Self {
        self.set_raw(GNAME, gname)
    }
    /// Set the `magic` field (cut at 6 bytes).
    pub fn set_magic(&mut self, magic: &[u8]) -> &mut Self {
        self.set_raw(MAGIC, magic)
    }
    /// Set the `version` field (cut at 2 bytes).
    pub fn set_version(&mut self, version: &[u8]) -> &mut Self {
        self.set_raw(VERSION, version)
    }
    /// Set the type flag.
    pub fn set_typeflag(&mut self, flag: u8) -> &mut Self {
        self.set_raw(TYPEFLAG, &[flag])
    }
    /// Set the `mode` field (octal; bits past the field's width are cut).
    pub fn set_mode(&mut self, mode: u64) -> &mut Self {
        self.set_octal(MODE, mode)
    }
    /// Set the `uid` field (octal).
    pub fn set_uid(&mut self, uid: u64) -> &mut Self {
        self.set_octal(UID, uid)
    }
    /// Set the `gid` field (octal).
    pub fn set_gid(&mut self, gid: u64) -> &mut Self {
        self.set_octal(GID, gid)
    }
    /// Set the `size` field (octal, 11 digits).
    pub fn set_size(&mut self, size: u64) -> &mut Self {
        self.set_octal(SIZE, size)
    }
    /// Set the `mtime` field (octal, 11 digits).
    pub fn set_mtime(&mut self, mtime: u64) -> &mut Self {
        self.set_octal(MTIME, mtime)
    }
    /// Set the `devmajor` and `devminor` fields (octal).
    pub fn set_device(&mut self, major: u64, minor: u64) -> &mut Self {
        self.set_octal(DEVMAJOR, major).set_octal(DEVMINOR, minor)
    }
    /// Recompute the checksum ([`set_checksum`]).
    pub fn set_checksum(&mut self) -> &mut Self {
        set_checksum(self.0.as_mut());
        self
    }
}

/// A 512-byte ustar header with the given fields and a correct checksum. `name` and `link`
/// are cut at 100 bytes; `size` in octal (11 digits); uid and gid 0; mtime fixed at
/// 1,700,000,000 s; POSIX magic `ustar\0` and version `00`.
pub fn header(flag: u8, name: &[u8], link: &[u8], size: u64, mode: u32) -> [u8; 512] {
    let mut h = RawHeader([0u8; 512]);
    h.set_name(name)
        .set_mode(u64::from(mode & 0o7777))
        .set_uid(0)
        .set_gid(0)
        .set_size(size)
        .set_mtime(1_700_000_000)
        .set_typeflag(flag)
        .set_linkname(link)
        .set_magic(b"ustar\0")
        .set_version(b"00")
        .set_checksum();
    h.0
}

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
/// form of one's own (a lenient reader's, a damaged one) with [`RawHeader::set_raw`].
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

/// An octal header field (mode, uid, size, ...) as a number: leading spaces skipped, then
/// octal digits up to the first other byte (NUL or space); `None` if there is no digit.
pub fn parse_octal(field: &[u8]) -> Option<u64> {
    let digits: Vec<u8> = field
        .iter()
        .copied()
        .skip_while(|b| *b == b' ')
        .take_while(|b| (b'0'..=b'7').contains(b))
        .collect();
    if digits.is_empty() {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(&digits).ok()?, 8).ok()
}

/// A numeric header field as a lenient reader takes it: GNU base-256 (big-endian, the first
/// byte's high bit set and the rest of it part of the number) or octal as in
/// [`parse_octal`], a field without an octal digit being 0. `None` if it overflows `u64`.
pub fn parse_numeric(field: &[u8]) -> Option<u64> {
    if let Some((&first, rest)) = field.split_first() {
        if first & 0x80 != 0 {
            let mut v = u64::from(first & 0x7f);
            for &b in rest {
                v = v.checked_mul(256)?.checked_add(u64::from(b))?;
            }
            return Some(v);
        }
    }
    let digits = field
        .iter()
        .skip_while(|b| **b == b' ')
        .take_while(|b| (b'0'..=b'7').contains(*b))
        .count();
    if digits == 0 {
        return Some(0);
    }
    parse_octal(field)
}

/// Write `v` as zero-padded octal with a trailing NUL into `field`; values too large for the
/// field are cut to its width (the caller wanted a damaged field then).
pub fn put_octal(field: &mut [u8], v: u64) {
    // An empty field (of a short buffer) takes nothing.
    let Some(w) = field.len().checked_sub(1) else {
        return;
    };
    let s = format!("{v:0w$o}");
    let s = &s.as_bytes()[s.len().saturating_sub(w)..];
    field[..w].copy_from_slice(s);
    field[w] = 0;
}

/// PAX extended header records (`"<len> <key>=<value>\n"`, the length counting itself).
pub fn pax_records(records: &[(&str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (k, v) in records {
        let base = k.len() + v.len() + 3; // space, `=`, newline
        let mut len = base + 1;
        while base + len.to_string().len() != len {
            len = base + len.to_string().len();
        }
        body.extend_from_slice(format!("{len} {k}=").as_bytes());
        body.extend_from_slice(v);
        body.push(b'\n');
    }
    body
}

/// Tar bytes built member by member.
#[derive(Clone, Debug, Default)]
pub struct RawTar {
    /// The bytes so far (no end-of-archive marker until [`RawTar::finish`]).
    pub bytes: Vec<u8>,
}

impl RawTar {
    /// An empty archive.
    pub fn new() -> RawTar {
        RawTar::default()
    }

    /// Append a header (its size field says `data.len()`) and the padded payload.
    pub fn push(
        &mut self,
        flag: u8,
        name: &[u8],
        link: &[u8],
        data: &[u8],
        mode: u32,
    ) -> &mut Self {
        let h = header(flag, name, link, data.len() as u64, mode);
        self.bytes.extend_from_slice(&h);
        self.data(data)
    }

    /// Append a prepared header block as is.
    pub fn block(&mut self, h: &[u8; 512]) -> &mut Self {
        self.bytes.extend_from_slice(h);
        self
    }

    /// Append raw payload bytes, padded to a 512-byte boundary.
    pub fn data(&mut self, data: &[u8]) -> &mut Self {
        self.bytes.extend_from_slice(data);
        let pad = (512 - data.len() % 512) % 512;
        self.bytes.extend(std::iter::repeat_n(0u8, pad));
        self
    }

    /// A regular file `0644`.
    pub fn file(&mut self, name: &str, data: &[u8]) -> &mut Self {
        self.push(b'0', name.as_bytes(), b"", data, 0o644)
    }
    /// A regular file with `mode`.
    pub fn file_mode(&mut self, name: &str, data: &[u8], mode: u32) -> &mut Self {
        self.push(b'0', name.as_bytes(), b"", data, mode)
    }
    /// A directory `0755`.
    pub fn dir(&mut self, name: &str) -> &mut Self {
        self.push(b'5', name.as_bytes(), b"", b"", 0o755)
    }
    /// A directory with `mode`.
    pub fn dir_mode(&mut self, name: &str, mode: u32) -> &mut Self {
        self.push(b'5', name.as_bytes(), b"", b"", mode)
    }
    /// A symlink.
    pub fn symlink(&mut self, name: &str, target: &str) -> &mut Self {
        self.push(b'2', name.as_bytes(), target.as_bytes(), b"", 0o777)
    }
    /// A hardlink to an earlier member.
    pub fn hardlink(&mut self, name: &str, target: &str) -> &mut Self {
        self.push(b'1', name.as_bytes(), target.as_bytes(), b"", 0o644)
    }
    /// A PAX `x` header applying `records` to the next member.
    pub fn pax(&mut self, records: &[(&str, &[u8])]) -> &mut Self {
        let body = pax_records(records);
        self.push(b'x', b"PaxHeaders/x", b"", &body, 0o644)
    }
    /// A GNU long name (`L`) header for the next member.
    pub fn long_name(&mut self, name: &[u8]) -> &mut Self {
        let mut d = name.to_vec();
        d.push(0);
        self.push(b'L', b"././@LongLink", b"", &d, 0o644)
    }
    /// A GNU long link target (`K`) header for the next member.
    pub fn long_link(&mut self, target: &[u8]) -> &mut Self {
        let mut d = target.to_vec();
        d.push(0);
        self.push(b'K', b"././@LongLink", b"", &d, 0o644)
    }
    /// The bytes with the end-of-archive marker (two zero blocks).
    pub fn finish(&self) -> Vec<u8> {
        let mut b = self.bytes.clone();
        b.extend(std::iter::repeat_n(0u8, 1024));
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numeric fields as GNU tar writes them (octal with NUL or space, base-256 for large
    /// values) read back; damaged fields give 0 or `None` as documented.
    #[test]
    fn numeric_fields_read_back() {
        let mut f = [0u8; 12];
        put_octal(&mut f, 0o755);
        assert_eq!(
            (parse_octal(&f), parse_numeric(&f)),
            (Some(0o755), Some(0o755))
        );
        assert_eq!(parse_numeric(b"  644 \0"), Some(0o644));
        let big = 1u64 << 40;
        let mut b = [0u8; 12];
        b[0] = 0x80;
        b[4..].copy_from_slice(&big.to_be_bytes());
        assert_eq!(parse_numeric(&b), Some(big));
        assert_eq!(parse_numeric(&[0xff; 12]), None, "base-256 overflow");
        assert_eq!(
            (parse_octal(b"xyz"), parse_numeric(b"xyz")),
            (None, Some(0))
        );
        assert_eq!(
            (parse_octal(&[0; 8]), parse_numeric(&[0; 8])),
            (None, Some(0))
        );
        assert_eq!(parse_numeric(&[b'7'; 40]), None, "octal overflow");
    }

    /// The checksum agrees with the `tar` crate's, and a short slice is left alone.
    #[test]
    fn checksum_matches_the_tar_crate() {
        let mut h = tar::Header::new_ustar();
        h.set_path("some/file").expect("path");
        h.set_size(1234);
        h.set_cksum();
        let mut ours = RawHeader(*h.as_bytes());
        ours.field_mut(CHKSUM).fill(b'9');
        ours.set_checksum();
        assert_eq!(ours.chksum(), RawHeader(h.as_bytes()).chksum());
        let mut short = [1u8; 100];
        set_checksum(&mut short);
        assert_eq!(short, [1u8; 100]);
    }

    /// The sum is what [`set_checksum`] writes, counts the field as spaces whatever it holds,
    /// and needs a whole block.
    #[test]
    fn checksum_sum_is_the_written_checksum() {
        let h = header(b'0', b"f", b"", 3, 0o644);
        assert_eq!(checksum_sum(&h), RawHeader(&h).chksum());
        let mut damaged = h;
        damaged[CHKSUM.range()].fill(0xff);
        assert_eq!(checksum_sum(&damaged), checksum_sum(&h));
        assert_eq!(checksum_sum(&h[..511]), None);
        assert_eq!(checksum_sum(&[0xff; 600]), Some(255 * 504 + 8 * 32));
        let (mut a, mut b) = (RawTar::new(), RawTar::new());
        a.dir_mode("d/", 0o755);
        b.dir("d/");
        assert_eq!(a.bytes, b.bytes, "dir is dir_mode 0755");
    }

    /// A written checksum matches; so does the signed sum old tars wrote and Python's
    /// `0o`-prefixed reading; a changed digit or a cut block does not.
    #[test]
    fn checksum_matches_takes_the_documented_readings() {
        let mut h = RawHeader(header(b'0', &[0xe9; 20], b"", 3, 0o644));
        assert!(h.checksum_matches());
        let unsigned = checksum_sum(&h.0).expect("block");
        let signed = unsigned - 20 * 256;
        h.set_raw(CHKSUM, format!("{signed:06o}\0 ").as_bytes());
        assert!(h.checksum_matches(), "the signed sum");
        h.set_raw(CHKSUM, format!(" 0o{unsigned:o}\0").as_bytes());
        assert!(h.checksum_matches(), "Python's reading");
        h.set_checksum().field_mut(CHKSUM)[5] ^= 1;
        assert!(!h.checksum_matches(), "a changed digit");
        assert!(!RawHeader(&h.0[..511]).checksum_matches(), "a cut block");
    }

    /// Every named field lies where POSIX puts it: a header the `tar` crate writes reads
    /// back field by field, and ours reads back in the `tar` crate.
    #[test]
    fn fields_agree_with_the_tar_crate() {
        let mut t = tar::Header::new_ustar();
        t.set_path("d/some-name").expect("path");
        t.set_link_name("target").expect("link");
        t.set_mode(0o4755);
        t.set_size(1234);
        t.set_mtime(99);
        t.set_entry_type(tar::EntryType::Symlink);
        t.set_username("me").expect("uname");
        t.set_groupname("us").expect("gname");
        t.set_device_major(1).expect("major");
        t.set_device_minor(3).expect("minor");
        t.set_cksum();
        let h = RawHeader(t.as_bytes());
        assert_eq!(h.name(), b"d/some-name");
        assert_eq!(h.linkname(), b"target");
        assert_eq!(
            (h.mode(), h.size(), h.mtime()),
            (Some(0o4755), Some(1234), Some(99))
        );
        assert_eq!(
            (h.typeflag(), h.uname(), h.gname()),
            (b'2', &b"me"[..], &b"us"[..])
        );
        assert_eq!((h.devmajor(), h.devminor()), (Some(1), Some(3)));
        assert_eq!((h.magic(), h.version()), (&b"ustar\0"[..], &b"00"[..]));

        let mut ours = RawHeader(header(b'0', b"name", b"", 7, 0o644));
        ours.set_prefix(b"pre/fix").set_checksum();
        let back = tar::Header::from_byte_slice(&ours.0);
        assert_eq!(back.path_bytes().as_ref(), b"pre/fix/name");
        assert_eq!(back.size().expect("size"), 7);
        assert_eq!(
            back.cksum().expect("cksum"),
            ours.chksum().expect("ours") as u32
        );
        let cut = RawHeader(&ours.0[..120]);
        assert_eq!(
            (cut.name(), cut.size(), cut.typeflag()),
            (&b"name"[..], Some(0), 0)
        );
    }
}

#[cfg(test)]
mod pinned {
    use super::*;

    /// FNV-1a over `bytes` (a short pin for a whole archive).
    fn fnv(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    /// Pinned bytes: archives written for a given seed must not change.
    #[test]
    fn written_bytes_are_pinned() {
        let h = header(b'2', b"some/name", b"target", 1234, 0o104755);
        assert_eq!(&h[100..108], b"0004755\0", "mode masked to 0o7777");
        assert_eq!(&h[124..136], b"00000002322\0");
        assert_eq!(&h[136..148], b"14524770400\0");
        assert_eq!(&h[148..156], b"011034\0 ");
        assert_eq!((h[156], &h[257..265]), (b'2', &b"ustar\x0000"[..]));
        let mut t = RawTar::new();
        t.file("a", b"hello")
            .file_mode("m", &[7; 600], 0o4755)
            .dir("d/")
            .symlink("l", "a")
            .hardlink("h", "a")
            .pax(&[("path", b"pax/name"), ("size", b"3")])
            .long_name(&[b'n'; 150])
            .long_link(&[b'k'; 120])
            .push(b'6', b"fifo", b"", b"", 0o644)
            .block(&h)
            .data(b"xyz");
        let bytes = t.finish();
        assert_eq!((bytes.len(), fnv(&bytes)), (9728, 0xb3ec_d6bc_13f2_2553));
    }
}
