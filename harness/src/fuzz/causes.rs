//! Causes: what tells a campaign's findings of one check apart, and the slots and shrinks
//! each check has, shared by the workers (known causes of the baseline take none).

use super::options::MAX_SHRINKS_PER_CHECK;
use super::signature::signature;
use crate::checks::Check;
use std::collections::BTreeMap;

/// The cause of a shrunk finding: for `atomic-hydration`, what the failure did to the prior
/// (its message: any refused archive shows the extractor's one way of failing, so archives
/// of every shape would otherwise fill the check's slots with one behaviour); for every
/// other check, the archive's [`signature`].
pub(super) fn cause_of(check: Check, min: &[u8], message: &str) -> String {
    if check == Check::ATOMIC_HYDRATION {
        format!("prior: {message}")
    } else {
        signature(min)
    }
}

/// The causes a session has kept and the shrinks it has spent, per check; shared by its
/// workers. Known causes (the baseline's) are kept apart: they take no slot, and the
/// shrinks that led to one are given back, up to `MAX_SHRINKS_PER_CHECK` per check.
pub(super) struct Causes {
    cap: usize,
    kept: BTreeMap<Check, Vec<String>>,
    tried: BTreeMap<Check, usize>,
    known: BTreeMap<Check, Vec<String>>,
    refunded: BTreeMap<Check, usize>,
}

impl Causes {
    /// No cause kept yet; at most `cap` new causes per check (at least 1).
    pub(super) fn new(cap: usize) -> Causes {
        Causes {
            cap: cap.max(1),
            kept: BTreeMap::new(),
            tried: BTreeMap::new(),
            known: BTreeMap::new(),
            refunded: BTreeMap::new(),
        }
    }

    /// Whether a hit of `check` may be shrunk now (its check has room for another cause and
    /// shrinks left); counts the shrink if so.
    pub(super) fn may_shrink(&mut self, check: Check) -> bool {
        if !self.room(check) {
            return false;
        }
        *self.tried.entry(check).or_default() += 1;
        true
    }

    /// Whether a hit of `check` could still become a finding: its check has room for
    /// another cause and shrinks left.
    pub(super) fn room(&self, check: Check) -> bool {
        // A hang costs a timeout per shrink step, and its causes rarely differ: one, and
        // one shrink (two workers would otherwise shrink one each at the same time).
        let cap = self.cap_of(check);
        let shrinks = if check == Check::HANG {
            1
        } else {
            MAX_SHRINKS_PER_CHECK
        };
        self.kept.get(&check).map_or(0, Vec::len) < cap
            && self.tried.get(&check).copied().unwrap_or(0) < shrinks
    }

    /// Keeps `cause` of `check` if it was not kept before: its number among the check's
    /// new causes (1 for the first) or, when `known`, among its known causes; `None` for a
    /// cause kept already. A known cause gives the shrink that found it back.
    pub(super) fn keep(&mut self, check: Check, cause: &str, known: bool) -> Option<usize> {
        if known {
            let refunded = self.refunded.entry(check).or_default();
            if *refunded < MAX_SHRINKS_PER_CHECK {
                *refunded += 1;
                if let Some(t) = self.tried.get_mut(&check) {
                    *t = t.saturating_sub(1);
                }
            }
        }
        let cap = self.cap_of(check);
        let list = if known {
            self.known.entry(check).or_default()
        } else {
            self.kept.entry(check).or_default()
        };
        // A new cause past the cap is dropped: two workers' shrinks that were both allowed
        // when they began cannot both fill the last slot.
        if list.iter().any(|c| c == cause) || (!known && list.len() >= cap) {
            return None;
        }
        list.push(cause.to_owned());
        Some(list.len())
    }

    /// The most causes of `check` a session keeps: one `hang`, else the session's cap.
    fn cap_of(&self, check: Check) -> usize {
        if check == Check::HANG {
            1
        } else {
            self.cap
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use snapconf_tarbytes::raw::RawTar;

    /// Shrinks allowed at the same time cannot keep more new causes than the cap (two
    /// workers each kept a sixth `containment`), nor more than one `hang`; known causes
    /// take no slot.
    #[test]
    fn no_check_keeps_more_causes_than_its_cap() {
        let mut c = Causes::new(2);
        assert!(c.may_shrink(Check::CONTAINMENT) && c.may_shrink(Check::CONTAINMENT));
        assert!(c.may_shrink(Check::CONTAINMENT), "a third shrink may start");
        assert_eq!(c.keep(Check::CONTAINMENT, "a", false), Some(1));
        assert_eq!(c.keep(Check::CONTAINMENT, "b", false), Some(2));
        assert_eq!(c.keep(Check::CONTAINMENT, "c", false), None, "past the cap");
        assert_eq!(
            c.keep(Check::CONTAINMENT, "k", true),
            Some(1),
            "known: no slot"
        );
        assert!(!c.may_shrink(Check::CONTAINMENT), "full");
        assert!(c.may_shrink(Check::HANG));
        assert!(!c.may_shrink(Check::HANG), "one hang shrink at a time");
        assert_eq!(c.keep(Check::HANG, "h", false), Some(1));
        assert_eq!(c.keep(Check::HANG, "h2", false), None);
    }

    /// `atomic-hydration` findings are one cause per way the prior was damaged, whatever
    /// the archive; every other check's causes are told apart by the archive's shape.
    #[test]
    fn causes_are_keyed_by_what_tells_them_apart() {
        let a = {
            let mut t = RawTar::new();
            t.file("x", b"1");
            t.finish()
        };
        let b = {
            let mut t = RawTar::new();
            t.symlink("l", "/etc").file("l/passwd", b"2");
            t.finish()
        };
        let damaged = "refused hydration changed the prior workspace: - a";
        assert_eq!(
            cause_of(Check::ATOMIC_HYDRATION, &a, damaged),
            cause_of(Check::ATOMIC_HYDRATION, &b, damaged)
        );
        assert_ne!(
            cause_of(Check::ATOMIC_HYDRATION, &a, damaged),
            cause_of(
                Check::ATOMIC_HYDRATION,
                &a,
                "refused hydration changed the prior workspace: + b"
            )
        );
        assert_ne!(
            cause_of(Check::CONTAINMENT, &a, "changed out/target"),
            cause_of(Check::CONTAINMENT, &b, "changed out/target")
        );
    }
}
