//! A concrete fault for one case (`fault.json` in a reproducer), drawn deterministically
//! from the case itself, so a replay or a shrinking step re-applies the same kind of fault.

use super::layout::TarLayout;
use crate::model::fault::FaultKind;
use crate::model::spec::Case;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use snapconf_tarbytes::raw::{RawHeader, CHKSUM, SIZE};
use snapconf_tarbytes::Rng;
use std::fmt;
use std::time::Duration;

/// One fault, with where and how it was applied. Only the fields of its kind are set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultPlan {
    /// The fault.
    pub kind: FaultKind,
    /// `truncate`: `header`, `payload` or `end` (cut before the end blocks, at a member
    /// boundary); `corrupt`: `checksum` or `size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    /// Index of the damaged or cut member (0-based, counting every header block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<usize>,
    /// `truncate`: the new archive length in bytes; `corrupt`: offset of the damaged field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// `efbig`: `RLIMIT_FSIZE` in bytes; `enospc`: the tmpfs size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// `kill`: milliseconds after the tool started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kill_after_ms: Option<u64>,
    /// Length of the archive the fault was drawn for, in bytes.
    pub archive_len: u64,
}

/// The seed of `kind` for `case`: SHA-256 of the W1 and W0 JSON and the fault id. The same
/// case gets the same fault in a run, a shrinking step and a replay.
pub fn fault_seed(case: &Case, kind: FaultKind) -> u64 {
    let mut h = Sha256::new();
    h.update(case.spec.to_json().as_bytes());
    h.update([0]);
    h.update(case.prior.to_json().as_bytes());
    h.update([0]);
    h.update(kind.id().as_bytes());
    let d = h.finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_le_bytes(b)
}

impl FaultPlan {
    fn new(kind: FaultKind, len: u64) -> FaultPlan {
        FaultPlan {
            kind,
            site: None,
            member: None,
            offset: None,
            limit: None,
            kill_after_ms: None,
            archive_len: len,
        }
    }

    /// Draw a `truncate` plan: one of three sites, chosen by `seed`. `None` for an archive
    /// without members.
    pub fn truncate(l: &TarLayout, seed: u64) -> Option<FaultPlan> {
        if l.members.is_empty() {
            return None;
        }
        let mut r = Rng::new(seed);
        let mut p = FaultPlan::new(FaultKind::Truncate, l.len);
        let with_payload: Vec<usize> = (0..l.members.len())
            .filter(|i| l.members[*i].size > 1)
            .collect();
        let site = r.range(0, 3);
        let (site, member, offset) = if site == 1 && !with_payload.is_empty() {
            let k = with_payload[r.range(0, with_payload.len() as u64) as usize];
            let m = l.members[k];
            ("payload", k, m.data() + r.range(1, m.size))
        } else if site == 2 && l.end < l.len {
            ("end", l.members.len() - 1, l.end)
        } else {
            let k = r.range(0, l.members.len() as u64) as usize;
            ("header", k, l.members[k].header + r.range(1, 512))
        };
        p.site = Some(site.into());
        p.member = Some(member);
        p.offset = Some(offset.min(l.len));
        Some(p)
    }

    /// Draw a `corrupt` plan: the checksum or the size field of member k. `None` for an
    /// archive without members.
    pub fn corrupt(l: &TarLayout, seed: u64) -> Option<FaultPlan> {
        if l.members.is_empty() {
            return None;
        }
        let mut r = Rng::new(seed);
        let mut p = FaultPlan::new(FaultKind::Corrupt, l.len);
        let k = r.range(0, l.members.len() as u64) as usize;
        let (site, field) = if r.range(0, 2) == 0 {
            ("checksum", CHKSUM)
        } else {
            ("size", SIZE)
        };
        p.site = Some(site.into());
        p.member = Some(k);
        p.offset = Some(l.members[k].header + field.offset as u64);
        Some(p)
    }

    /// An `efbig` plan: `RLIMIT_FSIZE` at half the largest regular member. `None` when no
    /// regular member has more than 16 bytes.
    pub fn efbig(l: &TarLayout) -> Option<FaultPlan> {
        let largest = l
            .members
            .iter()
            .filter(|m| m.is_regular())
            .map(|m| m.size)
            .max()?;
        if largest <= 16 {
            return None;
        }
        let mut p = FaultPlan::new(FaultKind::Efbig, l.len);
        p.limit = Some(largest / 2);
        Some(p)
    }

    /// An `enospc` plan; the tmpfs size is filled in when the prior is in place.
    pub fn enospc(l: &TarLayout) -> FaultPlan {
        FaultPlan::new(FaultKind::Enospc, l.len)
    }

    /// A `kill` plan: a delay spread over three scales (0-2 ms, 2-10 ms, 10-60 ms), since
    /// tools differ by orders of magnitude in start-up time.
    pub fn kill(l: &TarLayout, seed: u64) -> FaultPlan {
        let mut r = Rng::new(seed);
        let ms = match r.range(0, 3) {
            0 => r.range(0, 2),
            1 => r.range(2, 10),
            _ => r.range(10, 60),
        };
        let mut p = FaultPlan::new(FaultKind::Kill, l.len);
        p.kill_after_ms = Some(ms);
        p
    }

    /// The kill delay, if any.
    pub fn kill_after(&self) -> Option<Duration> {
        self.kill_after_ms.map(Duration::from_millis)
    }

    /// The faulted archive bytes for `truncate` and `corrupt`; `None` for the other kinds
    /// (they use the archive as it is).
    pub fn apply(&self, archive: &[u8]) -> Option<Vec<u8>> {
        match self.kind {
            FaultKind::Truncate => {
                let cut = usize::try_from(self.offset?).ok()?.min(archive.len());
                Some(archive[..cut].to_vec())
            }
            FaultKind::Corrupt => {
                let at = usize::try_from(self.offset?).ok()?;
                let header = at - at % 512;
                let mut out = archive.to_vec();
                let mut h = RawHeader(out.get_mut(header..header.checked_add(512)?)?);
                if self.site.as_deref() == Some("size") {
                    // Claim far more payload than there is (with a valid checksum, so the
                    // header itself is believed): the reader runs into the next headers
                    // and then off the end.
                    let size = h.size().unwrap_or(0);
                    h.set_size(size.saturating_add(512 * 1024 + 7))
                        .set_checksum();
                } else {
                    // A checksum that cannot match: every digit changed.
                    for b in h.field_mut(CHKSUM).iter_mut().take(6) {
                        *b = if *b == b'7' { b'1' } else { b'7' };
                    }
                }
                Some(out)
            }
            _ => None,
        }
    }
}

impl fmt::Display for FaultPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        let mut parts = Vec::new();
        if let Some(s) = &self.site {
            parts.push(s.clone());
        }
        if let Some(m) = self.member {
            parts.push(format!("member {m}"));
        }
        match (self.kind, self.offset) {
            (FaultKind::Truncate, Some(o)) => {
                parts.push(format!("cut at byte {o} of {}", self.archive_len))
            }
            (_, Some(o)) => parts.push(format!("byte {o}")),
            _ => {}
        }
        match (self.kind, self.limit) {
            (FaultKind::Efbig, Some(n)) => parts.push(format!("RLIMIT_FSIZE {n} bytes")),
            (_, Some(n)) => parts.push(format!("tmpfs of {n} bytes")),
            _ => {}
        }
        if let Some(ms) = self.kill_after_ms {
            parts.push(format!("SIGKILL after {ms} ms"));
        }
        if !parts.is_empty() {
            write!(f, " ({})", parts.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::layout;
    use super::*;

    /// Three members across one, one and two blocks.
    fn archive() -> Vec<u8> {
        super::super::layout::tests::archive(&[40, 3, 700])
    }

    /// Every truncation lands strictly inside the archive, at the site it names.
    #[test]
    fn truncations_land_where_they_say() {
        let a = archive();
        let l = layout(&a);
        let mut sites = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let p = FaultPlan::truncate(&l, seed).expect("members");
            let cut = p.offset.expect("offset");
            assert!(cut > 0 && cut < a.len() as u64, "{p}");
            let m = l.members[p.member.expect("member")];
            match p.site.as_deref() {
                Some("header") => assert!(cut > m.header && cut < m.data(), "{p}"),
                Some("payload") => assert!(cut > m.data() && cut < m.data() + m.size, "{p}"),
                Some("end") => assert_eq!(cut, l.end, "{p}"),
                other => panic!("bad site {other:?}"),
            }
            assert_eq!(p.apply(&a).map(|b| b.len() as u64), Some(cut));
            sites.insert(p.site.clone());
        }
        assert_eq!(sites.len(), 3, "all three sites are drawn");
    }

    /// A corrupt size keeps a valid checksum; a corrupt checksum changes only that field.
    #[test]
    fn corruptions_damage_one_field() {
        let a = archive();
        let l = layout(&a);
        for seed in 0..50 {
            let p = FaultPlan::corrupt(&l, seed).expect("members");
            let b = p.apply(&a).expect("bytes");
            assert_eq!(a.len(), b.len());
            let diff: Vec<usize> = (0..a.len()).filter(|i| a[*i] != b[*i]).collect();
            assert!(!diff.is_empty(), "{p}");
            let h = p.offset.expect("offset") as usize / 512 * 512;
            assert!(diff.iter().all(|i| (h..h + 512).contains(i)), "{p}");
        }
    }

    #[test]
    fn efbig_limits_below_the_largest_file() {
        let l = layout(&archive());
        assert_eq!(FaultPlan::efbig(&l).and_then(|p| p.limit), Some(350));
    }
}
