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
//!
//! The parts: [`Field`] and its constants (the layout), [`RawHeader`] and [`header`] (one
//! block), [`checksum_sum`] and [`set_checksum`], the numeric fields ([`parse_octal`],
//! [`parse_numeric`], [`put_octal`]) and the writer ([`RawTar`], [`pax_records`]). All of
//! them are reached as `raw::X`.

mod checksum;
mod field;
mod header;
mod number;
mod writer;

#[cfg(test)]
mod tests;

pub use checksum::{checksum_sum, set_checksum};
pub use field::*;
pub use header::{header, RawHeader};
pub use number::{parse_numeric, parse_octal, put_octal};
pub use writer::{pax_records, RawTar};

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
