//! One header block through its named fields: [`RawHeader`] (reading and writing each
//! field, hostile bytes included) and [`header`], a well-formed block in one call.

use super::checksum::{checksum_sum, set_checksum};
use super::field::*;
use super::number::{parse_numeric, parse_octal, put_octal};

/// The bytes of a header field up to its first NUL (a C string in a fixed field).
fn c_field(f: &[u8]) -> &[u8] {
    let end = f.iter().position(|&b| b == 0).unwrap_or(f.len());
    &f[..end]
}

/// One setter a field, `NAME(arg: T) => how(FIELD);` for `pub fn NAME(&mut self, arg: T) ->
/// &mut Self { self.how(FIELD, arg) }`: the same two lines for every named field.
macro_rules! field_setters {
    ($($(#[$doc:meta])* $name:ident($arg:ident: $ty:ty) => $how:ident($field:ident);)*) => {
        $(
            $(#[$doc])*
            pub fn $name(&mut self, $arg: $ty) -> &mut Self {
                self.$how($field, $arg)
            }
        )*
    };
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

    field_setters! {
        /// Set the `name` field (cut at 100 bytes).
        set_name(name: &[u8]) => set_raw(NAME);
        /// Set the `linkname` field (cut at 100 bytes).
        set_linkname(link: &[u8]) => set_raw(LINKNAME);
        /// Set the `prefix` field (cut at 155 bytes).
        set_prefix(prefix: &[u8]) => set_raw(PREFIX);
        /// Set the `uname` field (cut at 32 bytes).
        set_uname(uname: &[u8]) => set_raw(UNAME);
        /// Set the `gname` field (cut at 32 bytes).
        set_gname(gname: &[u8]) => set_raw(GNAME);
        /// Set the `magic` field (cut at 6 bytes).
        set_magic(magic: &[u8]) => set_raw(MAGIC);
        /// Set the `version` field (cut at 2 bytes).
        set_version(version: &[u8]) => set_raw(VERSION);
        /// Set the `mode` field (octal; bits past the field's width are cut).
        set_mode(mode: u64) => set_octal(MODE);
        /// Set the `uid` field (octal).
        set_uid(uid: u64) => set_octal(UID);
        /// Set the `gid` field (octal).
        set_gid(gid: u64) => set_octal(GID);
        /// Set the `size` field (octal, 11 digits).
        set_size(size: u64) => set_octal(SIZE);
        /// Set the `mtime` field (octal, 11 digits).
        set_mtime(mtime: u64) => set_octal(MTIME);
    }
    /// Set the type flag.
    pub fn set_typeflag(&mut self, flag: u8) -> &mut Self {
        self.set_raw(TYPEFLAG, &[flag])
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
