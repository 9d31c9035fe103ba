//! An archive as a list of records (one 512-byte header and its padded payload each), read
//! tolerantly so that damaged archives can still be mutated and shrunk.

use crate::archive::raw::{parse_numeric, set_checksum};

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

/// The size field (bytes 124..136), as [`parse_numeric`] reads it.
pub fn header_size(h: &[u8; 512]) -> Option<u64> {
    parse_numeric(&h[124..136])
}

impl Records {
    /// Split `bytes` into records; stops at the first all-zero block, an unreadable size or
    /// the end of input, leaving the rest in `tail`.
    pub fn parse(bytes: &[u8]) -> Records {
        let mut out = Records::default();
        let mut at = 0;
        while at + 512 <= bytes.len() {
            let mut header = [0u8; 512];
            header.copy_from_slice(&bytes[at..at + 512]);
            if header.iter().all(|&b| b == 0) {
                break;
            }
            let Some(size) = header_size(&header) else {
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
    /// The name field (bytes 0..100) up to its first NUL.
    pub fn name(&self) -> Vec<u8> {
        field(&self.header[..100])
    }

    /// The link name field (bytes 157..257) up to its first NUL.
    pub fn link(&self) -> Vec<u8> {
        field(&self.header[157..257])
    }

    /// The type flag.
    pub fn flag(&self) -> u8 {
        self.header[156]
    }

    /// Overwrite the name field (cut at 100 bytes) and fix the checksum.
    pub fn set_name(&mut self, name: &[u8]) {
        put_field(&mut self.header[..100], name);
        set_checksum(&mut self.header);
    }

    /// Overwrite the link name field (cut at 100 bytes) and fix the checksum.
    pub fn set_link(&mut self, link: &[u8]) {
        put_field(&mut self.header[157..257], link);
        set_checksum(&mut self.header);
    }

    /// Set the type flag and fix the checksum.
    pub fn set_flag(&mut self, flag: u8) {
        self.header[156] = flag;
        set_checksum(&mut self.header);
    }

    /// True for PAX and GNU extension headers (`x`, `g`, `L`, `K`).
    pub fn is_extension(&self) -> bool {
        matches!(self.flag(), b'x' | b'g' | b'L' | b'K')
    }
}

fn field(f: &[u8]) -> Vec<u8> {
    let end = f.iter().position(|&b| b == 0).unwrap_or(f.len());
    f[..end].to_vec()
}

fn put_field(f: &mut [u8], v: &[u8]) {
    f.fill(0);
    let n = v.len().min(f.len());
    f[..n].copy_from_slice(&v[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::raw::RawTar;

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
}
