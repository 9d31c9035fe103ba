//! An archive as a list of records (one 512-byte header and its padded payload each), read
//! tolerantly so that damaged archives can still be mutated and shrunk. Blocks and padding:
//! POSIX.1-2017 `pax`, "ustar Interchange Format" (a header block, then `size` bytes of
//! payload padded with NUL to a 512-byte boundary; two zero blocks end the archive).

use crate::raw::RawHeader;

/// One header block and the payload blocks that follow it (padded to 512 bytes). Extension
/// headers (PAX `x`/`g`, GNU `L`/`K`) are records of their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The header block.
    pub header: [u8; 512],
    /// The payload as stored (a multiple of 512 bytes unless the archive was cut).
    pub payload: Vec<u8>,
}

/// A parsed archive: records in order and whatever followed the last one (end-of-archive
/// zero blocks, garbage, a cut header).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Records {
    /// The records.
    pub records: Vec<Record>,
    /// Bytes after the last record.
    pub tail: Vec<u8>,
}

impl Records {
    /// Split `bytes` into records; stops at the first all-zero block, an unreadable size
    /// ([`RawHeader::size`]: octal or GNU base-256, `None` on overflow) or the end of input,
    /// leaving the rest in `tail`. Never fails: a payload cut by the end of input is kept as
    /// it is, so `parse(b).to_bytes() == b` for any `b`.
    pub fn parse(bytes: &[u8]) -> Records {
        let mut out = Records::default();
        let mut at = 0;
        while at + 512 <= bytes.len() {
            let mut header = [0u8; 512];
            header.copy_from_slice(&bytes[at..at + 512]);
            if header.iter().all(|&b| b == 0) {
                break;
            }
            let Some(size) = RawHeader(&header).size() else {
                break;
            };
            let padded =
                usize::try_from(size.div_ceil(512).saturating_mul(512)).unwrap_or(usize::MAX);
            let end = (at + 512).saturating_add(padded).min(bytes.len());
            out.records.push(Record {
                header,
                payload: bytes[at + 512..end].to_vec(),
            });
            at = end;
        }
        out.tail = bytes[at.min(bytes.len())..].to_vec();
        out
    }

    /// The archive bytes: every record, then the tail.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::new();
        for r in &self.records {
            v.extend_from_slice(&r.header);
            v.extend_from_slice(&r.payload);
        }
        v.extend_from_slice(&self.tail);
        v
    }
}

impl Record {
    /// The header's fields, to read.
    pub fn fields(&self) -> RawHeader<&[u8; 512]> {
        RawHeader(&self.header)
    }

    /// The header's fields, to write (the checksum is the caller's to fix).
    pub fn fields_mut(&mut self) -> RawHeader<&mut [u8; 512]> {
        RawHeader(&mut self.header)
    }

    /// The name field up to its first NUL.
    pub fn name(&self) -> Vec<u8> {
        self.fields().name().to_vec()
    }

    /// The link name field up to its first NUL.
    pub fn link(&self) -> Vec<u8> {
        self.fields().linkname().to_vec()
    }

    /// The type flag.
    pub fn flag(&self) -> u8 {
        self.fields().typeflag()
    }

    /// Overwrite the name field (cut at 100 bytes) and fix the checksum.
    pub fn set_name(&mut self, name: &[u8]) {
        self.fields_mut().set_name(name).set_checksum();
    }

    /// Overwrite the link name field (cut at 100 bytes) and fix the checksum.
    pub fn set_link(&mut self, link: &[u8]) {
        self.fields_mut().set_linkname(link).set_checksum();
    }

    /// Set the type flag and fix the checksum.
    pub fn set_flag(&mut self, flag: u8) {
        self.fields_mut().set_typeflag(flag).set_checksum();
    }

    /// True for PAX and GNU extension headers (`x`, `g`, `L`, `K`).
    pub fn is_extension(&self) -> bool {
        matches!(self.flag(), b'x' | b'g' | b'L' | b'K')
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::RawTar;

    #[test]
    fn records_round_trip_to_the_same_bytes() {
        let mut t = RawTar::new();
        t.file("a", b"hello").dir("d/").symlink("l", "a");
        let bytes = t.finish();
        let r = Records::parse(&bytes);
        assert_eq!(r.records.len(), 3, "three members parse as three records");
        assert_eq!(
            r.to_bytes(),
            bytes,
            "parse then serialise gives the input back"
        );
        assert_eq!(r.records[2].link(), b"a");
    }

    /// Damaged input: a payload cut by the end is kept, an unreadable size stops the
    /// records, and every input serialises back to itself.
    #[test]
    fn damaged_archives_round_trip_too() {
        let mut t = RawTar::new();
        t.file("a", &[1; 700]).file("b", b"x");
        let bytes = t.finish();
        let cut = Records::parse(&bytes[..900]);
        assert_eq!((cut.records.len(), cut.records[0].payload.len()), (1, 388));
        let mut bad = bytes.clone();
        bad[1536 + 124..1536 + 136].fill(0xff);
        let r = Records::parse(&bad);
        assert_eq!((r.records.len(), r.tail.len()), (1, bad.len() - 1536));
        for b in [&bytes[..900], &bad[..], &bytes[..100], &[][..]] {
            assert_eq!(Records::parse(b).to_bytes(), b);
        }
    }
}
