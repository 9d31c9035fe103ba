//! Tar bytes at the block level, shared by every driver of the snapconf suite: the harness
//! (its archive generators, fuzz mutators and case views), the reference extractor's tests
//! and benchmark, and the fuzz targets. One concept, one place:
//!
//! - [`raw`]: the one raw header and member writer ([`raw::RawHeader`], [`raw::RawTar`],
//!   [`raw::header`], [`raw::pax_records`]). It writes hostile bytes on request (absolute
//!   names, `..`, NUL, unknown type flags, bad checksums, cut fields) and never sanitises.
//!   Header layout: POSIX.1-2017 `pax`, "ustar Interchange Format"; PAX extended headers:
//!   the same page, "pax Extended Header"; GNU `L`/`K` long names and base-256 numbers: GNU
//!   tar manual, "Basic Tar Format".
//! - [`records`]: the one record iterator, an archive as a list of 512-byte header blocks
//!   with their padded payloads ([`records::Records`]), read tolerantly so that damaged
//!   archives can still be mutated and shrunk.
//! - [`rng`]: the one seeded generator ([`Rng`], SplitMix64), for what proptest does not draw.
//!
//! Nothing here reads or writes a file, and nothing panics on input bytes.

pub mod raw;
pub mod records;
pub mod rng;

pub use records::{Record, Records};
pub use rng::Rng;
