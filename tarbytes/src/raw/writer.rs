//! The member writer: [`RawTar`] appends headers and padded payloads member by member, and
//! [`pax_records`] encodes a PAX extended header's body.

use super::header::header;

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
