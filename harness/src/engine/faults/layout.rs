//! Where the headers and payloads of a tar archive lie, read from the raw 512-byte blocks
//! (no parser of ours or the `tar` crate's: a fault must be placed even in an archive those
//! would refuse).

use snapconf_extract::MemberKind;
use snapconf_tarbytes::raw::RawHeader;

/// One header block and its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberSpan {
    /// Byte offset of the 512-byte header.
    pub header: u64,
    /// Payload size in bytes (the header's size field; 0 when unreadable).
    pub size: u64,
    /// The member's kind from its type flag; an extension header (PAX `x`, GNU `L`, ...) is
    /// [`MemberKind::Other`] with that byte.
    pub kind: MemberKind,
}

impl MemberSpan {
    /// Byte offset of the payload (right after the header).
    pub fn data(&self) -> u64 {
        self.header + 512
    }

    /// True for a regular-file member (`0`, NUL, `7`).
    pub fn is_regular(&self) -> bool {
        self.kind == MemberKind::File
    }
}

/// The layout of a whole archive.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TarLayout {
    /// Every header (PAX and GNU long-name records included), in order.
    pub members: Vec<MemberSpan>,
    /// Offset of the first end-of-archive zero block, or the archive length if none.
    pub end: u64,
    /// Archive length in bytes.
    pub len: u64,
}

/// Read the layout of `bytes`. Stops at the first all-zero block, at a header whose payload
/// runs past the end, or at a short block.
pub fn layout(bytes: &[u8]) -> TarLayout {
    let len = bytes.len() as u64;
    let mut members = Vec::new();
    let mut at: u64 = 0;
    let end = loop {
        let Some(block) = usize::try_from(at)
            .ok()
            .and_then(|a| bytes.get(a..a.checked_add(512)?))
        else {
            break at.min(len);
        };
        if block.iter().all(|b| *b == 0) {
            break at;
        }
        let block = RawHeader(block);
        let size = block.size().unwrap_or(0);
        members.push(MemberSpan {
            header: at,
            size,
            kind: MemberKind::from_flag(block.typeflag()),
        });
        let next = at
            .saturating_add(512)
            .saturating_add(size.div_ceil(512).saturating_mul(512));
        if next > len {
            break len;
        }
        at = next;
    };
    TarLayout { members, end, len }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use snapconf_tarbytes::raw::CHKSUM;

    /// A GNU archive of regular files `f0`, `f1`, ... of `sizes` bytes of `a`.
    pub(in crate::engine::faults) fn archive(sizes: &[usize]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (i, s) in sizes.iter().enumerate() {
            let mut h = tar::Header::new_gnu();
            h.set_size(*s as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, format!("f{i}"), &vec![b'a'; *s][..])
                .expect("append");
        }
        b.into_inner().expect("finish")
    }

    #[test]
    fn headers_payloads_and_end_are_found() {
        let a = archive(&[3, 0, 600]);
        let l = layout(&a);
        let at: Vec<(u64, u64)> = l.members.iter().map(|m| (m.header, m.size)).collect();
        assert_eq!(at, [(0, 3), (1024, 0), (1536, 600)]);
        assert_eq!(l.end, 1536 + 512 + 1024);
        assert!(l.members.iter().all(MemberSpan::is_regular));
        let cut = layout(&a[..2100]);
        assert_eq!(cut.members.len(), 3);
        assert_eq!(cut.end, 2100);
    }

    #[test]
    fn a_fixed_checksum_matches_the_crate() {
        let a = archive(&[5]);
        let mut h = RawHeader(a[..512].to_vec());
        let want = RawHeader(&a[..512]).chksum();
        h.field_mut(CHKSUM).fill(b'0');
        h.set_checksum();
        assert_eq!(h.chksum(), want, "checksum differs");
    }
}
