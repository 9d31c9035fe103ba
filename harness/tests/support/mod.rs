//! Test support: a raw tar writer for hostile archives the `tar` crate will not write, and
//! the built-in extractors that can run here.
#![allow(dead_code)]

use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::model::profile::Profile;
use snapconf_producers::{Availability, Extractor};

/// One member of a hand-built archive: type flag, name, link target, payload.
pub struct RawMember<'a> {
    pub flag: u8,
    pub name: &'a [u8],
    pub link: &'a [u8],
    pub data: &'a [u8],
}

/// A 512-byte ustar header block (mode `0644`/`0755`, uid/gid 0, a fixed mtime) whose
/// checksum is correct. Names and link targets over 100 bytes are cut (not needed here).
pub fn ustar_header(flag: u8, name: &[u8], link: &[u8], size: u64) -> [u8; 512] {
    let mut h = [0u8; 512];
    let field = |h: &mut [u8; 512], at: usize, width: usize, v: u64| {
        let text = format!("{v:0w$o}\0", w = width - 1);
        h[at..at + width].copy_from_slice(text.as_bytes());
    };
    h[..name.len().min(100)].copy_from_slice(&name[..name.len().min(100)]);
    field(&mut h, 100, 8, if flag == b'5' { 0o755 } else { 0o644 });
    field(&mut h, 108, 8, 0);
    field(&mut h, 116, 8, 0);
    field(&mut h, 124, 12, size);
    field(&mut h, 136, 12, 1_700_000_000);
    h[156] = flag;
    h[157..157 + link.len().min(100)].copy_from_slice(&link[..link.len().min(100)]);
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].fill(b' ');
    let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

/// The archive bytes of `members` with payloads padded to 512 and two zero end blocks.
pub fn raw_archive(members: &[RawMember<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in members {
        out.extend_from_slice(&ustar_header(m.flag, m.name, m.link, m.data.len() as u64));
        out.extend_from_slice(m.data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

/// Every built-in extractor that can run here (the reference with the default profile's
/// policy); a missing tool is skipped with a message naming the install hint.
pub fn available_extractors() -> Vec<Box<dyn Extractor>> {
    let policy = reference_policy(&Profile::default_profile(), None);
    snapconf_producers::extractors(policy)
        .into_iter()
        .filter(|e| match e.availability() {
            Availability::Available { .. } => true,
            Availability::Unavailable {
                reason,
                install_hint,
            } => {
                eprintln!(
                    "skipping `{}`: {reason} (install: {install_hint})",
                    e.name()
                );
                false
            }
        })
        .collect()
}
