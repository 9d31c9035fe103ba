//! The tests' writer of the four sparse encodings (from the GNU tar manual's description,
//! "Storing Sparse Files"): a file with holes as an old GNU, PAX 0.0, 0.1 or 1.0 member.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::common::{header, set_checksum, Raw};

/// The four encodings of a sparse member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    OldGnu,
    Pax00,
    Pax01,
    Pax10,
}

pub(crate) const FORMATS: [Format; 4] =
    [Format::OldGnu, Format::Pax00, Format::Pax01, Format::Pax10];

/// A sparse file: its size, its map (offset, length) and the bytes of its regions in
/// map order.
#[derive(Clone, Debug)]
pub(crate) struct Sparse {
    pub(crate) real: u64,
    pub(crate) map: Vec<(u64, u64)>,
    pub(crate) data: Vec<u8>,
}

impl Sparse {
    /// A file whose regions hold a byte pattern.
    pub(crate) fn new(real: u64, map: &[(u64, u64)]) -> Sparse {
        let total: u64 = map.iter().map(|r| r.1).sum();
        let data = (0..total).map(|i| b'a' + (i % 26) as u8).collect();
        Sparse {
            real,
            map: map.to_vec(),
            data,
        }
    }

    /// The file's bytes: zeros, with each region's data at its offset.
    pub(crate) fn expected(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.real as usize];
        let mut at = 0usize;
        for &(off, len) in &self.map {
            let (off, len) = (off as usize, len as usize);
            out[off..off + len].copy_from_slice(&self.data[at..at + len]);
            at += len;
        }
        out
    }
}

/// 12-byte numeric field: octal, or base-256 when it does not fit.
pub(crate) fn num12(v: u64) -> [u8; 12] {
    let mut f = [0u8; 12];
    if v < 1 << 33 {
        f[..11].copy_from_slice(format!("{v:011o}").as_bytes());
    } else {
        f[0] = 0x80;
        f[4..].copy_from_slice(&v.to_be_bytes());
    }
    f
}

pub(crate) fn entry(off: u64, len: u64) -> Vec<u8> {
    [num12(off), num12(len)].concat()
}

/// The map lines of a PAX 1.0 member, padded to a block.
pub(crate) fn map_lines(map: &[(u64, u64)]) -> Vec<u8> {
    let mut t = format!("{}\n", map.len());
    for (o, l) in map {
        t.push_str(&format!("{o}\n{l}\n"));
    }
    let mut b = t.into_bytes();
    b.resize(b.len().div_ceil(512) * 512, 0);
    b
}

/// Appends `s` as a member named `name` in `format`.
pub(crate) fn push_sparse(raw: &mut Raw, format: Format, name: &str, s: &Sparse) {
    let real = s.real.to_string();
    let n = s.map.len().to_string();
    let placeholder = format!("GNUSparseFile.0/{name}");
    match format {
        Format::OldGnu => {
            let mut h = header(b'S', name.as_bytes(), b"", s.data.len() as u64, 0o644);
            h[257..265].copy_from_slice(b"ustar  \0");
            let (head, rest) = s.map.split_at(s.map.len().min(4));
            for (i, &(o, l)) in head.iter().enumerate() {
                h[386 + 24 * i..410 + 24 * i].copy_from_slice(&entry(o, l));
            }
            h[482] = u8::from(!rest.is_empty());
            h[483..495].copy_from_slice(&num12(s.real));
            set_checksum(&mut h);
            raw.bytes.extend_from_slice(&h);
            let chunks: Vec<_> = rest.chunks(21).collect();
            for (i, chunk) in chunks.iter().enumerate() {
                let mut b = [0u8; 512];
                for (j, &(o, l)) in chunk.iter().enumerate() {
                    b[24 * j..24 * j + 24].copy_from_slice(&entry(o, l));
                }
                b[504] = u8::from(i + 1 < chunks.len());
                raw.bytes.extend_from_slice(&b);
            }
            raw.data(&s.data);
        }
        Format::Pax00 => {
            let pairs: Vec<(String, String)> = s
                .map
                .iter()
                .map(|(o, l)| (o.to_string(), l.to_string()))
                .collect();
            let mut records: Vec<(&str, &[u8])> = vec![
                ("GNU.sparse.size", real.as_bytes()),
                ("GNU.sparse.numblocks", n.as_bytes()),
            ];
            for (o, l) in &pairs {
                records.push(("GNU.sparse.offset", o.as_bytes()));
                records.push(("GNU.sparse.numbytes", l.as_bytes()));
            }
            raw.pax(&records).file(name, &s.data);
        }
        Format::Pax01 => {
            let map = s
                .map
                .iter()
                .flat_map(|(o, l)| [o.to_string(), l.to_string()])
                .collect::<Vec<_>>()
                .join(",");
            raw.pax(&[
                ("GNU.sparse.size", real.as_bytes()),
                ("GNU.sparse.numblocks", n.as_bytes()),
                ("GNU.sparse.name", name.as_bytes()),
                ("GNU.sparse.map", map.as_bytes()),
            ])
            .file(&placeholder, &s.data);
        }
        Format::Pax10 => {
            let mut data = map_lines(&s.map);
            data.extend_from_slice(&s.data);
            raw.pax(&[
                ("GNU.sparse.major", b"1"),
                ("GNU.sparse.minor", b"0"),
                ("GNU.sparse.name", name.as_bytes()),
                ("GNU.sparse.realsize", real.as_bytes()),
            ])
            .file(&placeholder, &data);
        }
    }
}

/// An archive of the sparse file `f` in `format`, then a plain file `after`.
pub(crate) fn archive(format: Format, s: &Sparse) -> Vec<u8> {
    let mut raw = Raw::new();
    push_sparse(&mut raw, format, "f", s);
    raw.file("after", b"after\n");
    raw.finish()
}

/// Whether `path` has fewer blocks than its size needs (a hole).
pub(crate) fn has_holes(path: &Path) -> bool {
    let m = fs::metadata(path).expect("stat");
    m.blocks() * 512 < m.size()
}
