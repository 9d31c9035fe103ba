//! A tar writer that can express hostile forms: absolute names, `..`, NUL bytes, unknown type
//! flags, bad checksums, PAX and GNU long-name headers, truncation. Unlike the `tar` crate's
//! `Builder` it never sanitises a name. Header layout: POSIX.1-2017 `pax`, "ustar Interchange
//! Format"; GNU tar manual, "Basic Tar Format" (`L`/`K` long names).

/// A 512-byte ustar header with the given fields and a correct checksum. `name` and `link`
/// are cut at 100 bytes; `size` in octal (11 digits); mtime fixed at 1,700,000,000 s.
pub fn header(flag: u8, name: &[u8], link: &[u8], size: u64, mode: u32) -> [u8; 512] {
    let mut h = [0u8; 512];
    let n = name.len().min(100);
    h[..n].copy_from_slice(&name[..n]);
    put_octal(&mut h[100..108], u64::from(mode & 0o7777));
    put_octal(&mut h[108..116], 0);
    put_octal(&mut h[116..124], 0);
    put_octal(&mut h[124..136], size);
    put_octal(&mut h[136..148], 1_700_000_000);
    h[156] = flag;
    let l = link.len().min(100);
    h[157..157 + l].copy_from_slice(&link[..l]);
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    set_checksum(&mut h);
    h
}

/// Recompute the checksum of the header block at the start of `h` (bytes 148..156: the
/// unsigned sum of the 512 bytes with the field taken as spaces, as six octal digits, NUL,
/// space; POSIX ustar). A slice shorter than a block is left alone.
pub fn set_checksum(h: &mut [u8]) {
    if h.len() < 512 {
        return;
    }
    h[148..156].copy_from_slice(b"        ");
    let sum: u64 = h[..512].iter().map(|&b| u64::from(b)).sum();
    let s = format!("{sum:06o}\0 ");
    h[148..156].copy_from_slice(s.as_bytes());
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
    let w = field.len() - 1;
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
        let mut ours = *h.as_bytes();
        ours[148..156].fill(b'9');
        set_checksum(&mut ours);
        assert_eq!(
            parse_octal(&ours[148..156]),
            parse_octal(&h.as_bytes()[148..156])
        );
        let mut short = [1u8; 100];
        set_checksum(&mut short);
        assert_eq!(short, [1u8; 100]);
    }
}
