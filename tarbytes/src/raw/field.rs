//! The ustar header block's field layout: [`Field`] (an offset and a width in the 512
//! bytes) and one constant a field, POSIX.1-2017 `pax`, "ustar Interchange Format", plus the
//! old-GNU sparse [`GNU_REALSIZE`]. A table: nothing else in the suite indexes a header by
//! byte offset.

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
