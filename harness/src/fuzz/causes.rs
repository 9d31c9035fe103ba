//! The causes a session keeps, shared by its workers: which hits are shrunk (only one whose
//! cause is new), how often each cause was hit, when it was first seen, and how much each
//! attack class's draw weight is lowered by the causes it has found.
//!
//! A hit's cause is first estimated from the unshrunk archive ([`super::effect::fuzz_cause`]
//! of the hit as drawn). A hit whose estimate is already known is counted, not shrunk; a
//! new estimate is shrunk once, and the shrunk archive's cause decides: a cause kept before
//! takes the estimate's hits (and every later hit with that estimate), a new one is kept.
//! Each cause takes a slot: at most `cap` new causes per check and attack class (one
//! `hang` in all), and at most [`MAX_SHRINKS_PER_CHECK`] shrinks per check and class.
//! Known causes (the baseline's) take no slot, and the shrinks that led to one are given
//! back, up to [`MAX_SHRINKS_PER_CHECK`] per check and class.
//!
//! A `hang` takes no class's slot, but every execution that hangs lowers the draw weight of
//! what drew it ([`Causes::hung`]): its attack class, or the base archive of a mutant. A
//! class that keeps drawing hangs (node-tar spins on PATH_MAX chains) is drawn less and
//! less, but never not at all (`AttackClass::draw_by` keeps every weight above zero).

use super::attack::AttackClass;
use super::options::MAX_SHRINKS_PER_CHECK;
use crate::checks::Check;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// When a cause was first seen: seconds into the session and the session's execution
/// number (1 for the first archive run, counted over every worker).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct FirstSeen {
    /// Seconds since the session began.
    pub secs: f64,
    /// The execution (1-based, over all workers).
    pub execution: u64,
}

/// One cause kept, with its hits.
#[derive(Clone, Debug)]
pub(super) struct Kept {
    /// The check.
    pub(super) check: Check,
    /// The cause ([`super::effect::fuzz_cause`] of the shrunk archive).
    pub(super) cause: String,
    /// The class it is charged to (its budget and weight), `None` for `hang` and classless
    /// causes.
    pub(super) class: Option<AttackClass>,
    /// The baseline lists it.
    pub(super) known: bool,
    /// Executions with a hit of it (the one shrunk included).
    pub(super) hits: u64,
    /// Its first hit.
    pub(super) first: FirstSeen,
    /// Where its hits came from: the generating attack class's id, or `mutant` for a mutant
    /// of a seed archive.
    pub(super) origins: BTreeSet<String>,
}

/// What became of an estimate.
enum Estimate {
    /// Being shrunk: the hits counted meanwhile.
    Shrinking {
        hits: u64,
        first: FirstSeen,
        origins: BTreeSet<String>,
    },
    /// Resolved to the kept cause at this index.
    Cause(usize),
    /// Shrunk to a new cause past its slots: hits of it are not kept.
    Dropped,
}

/// What to do with a hit ([`Causes::hit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum HitIs {
    /// Its cause (or its estimate, being shrunk) is known: counted.
    Counted,
    /// Its estimate is new and has a slot: the caller shrinks it (and reports the outcome
    /// with [`Causes::resolve`] or [`Causes::abandon`]).
    New,
    /// Its estimate is new but its check and class have no slot or shrink left.
    Ignored,
}

/// The causes a session has kept and the shrinks it has spent; shared by its workers.
pub(super) struct Causes {
    cap: usize,
    kept: Vec<Kept>,
    estimates: BTreeMap<(Check, String), Estimate>,
    tried: BTreeMap<(Check, Option<AttackClass>), usize>,
    refunded: BTreeMap<(Check, Option<AttackClass>), usize>,
    lowered: BTreeMap<AttackClass, u32>,
    /// Executions that hung, per attack class that drew them.
    hung: BTreeMap<AttackClass, u32>,
    /// Executions that hung, per base archive (by label) of a mutant that drew them.
    hung_bases: BTreeMap<String, u32>,
}

impl Causes {
    /// No cause kept yet; at most `cap` new causes per check and class (at least 1).
    pub(super) fn new(cap: usize) -> Causes {
        Causes {
            cap: cap.max(1),
            kept: Vec::new(),
            estimates: BTreeMap::new(),
            tried: BTreeMap::new(),
            refunded: BTreeMap::new(),
            lowered: BTreeMap::new(),
            hung: BTreeMap::new(),
            hung_bases: BTreeMap::new(),
        }
    }

    /// The budget a hit of `check` from `class` is charged to: `hang` has one in all.
    fn slot(check: Check, class: Option<AttackClass>) -> (Check, Option<AttackClass>) {
        (check, if check == Check::HANG { None } else { class })
    }

    /// Whether a hit of `check` from `class` with a new cause could still become a finding:
    /// its check and class have room for another cause and shrinks left.
    pub(super) fn room(&self, check: Check, class: Option<AttackClass>) -> bool {
        let slot = Causes::slot(check, class);
        // A hang costs a timeout per shrink step, and its causes rarely differ: one, and
        // one shrink (two workers would otherwise shrink one each at the same time).
        let (cap, shrinks) = if check == Check::HANG {
            (1, 1)
        } else {
            (self.cap, MAX_SHRINKS_PER_CHECK)
        };
        let kept = self
            .kept
            .iter()
            .filter(|k| !k.known && Causes::slot(k.check, k.class) == slot)
            .count();
        kept < cap && self.tried.get(&slot).copied().unwrap_or(0) < shrinks
    }

    /// A hit of `check` whose cause is estimated `estimate`, from an input of `class`
    /// (origin `origin`: the class id or `mutant`) first seen `at`: counted if its estimate
    /// is known, else [`HitIs::New`] (a shrink is counted) when `may_queue` and its check
    /// and class have room.
    pub(super) fn hit(
        &mut self,
        check: Check,
        estimate: &str,
        class: Option<AttackClass>,
        origin: &str,
        at: FirstSeen,
        may_queue: bool,
    ) -> HitIs {
        let room = may_queue && self.room(check, class);
        match self.estimates.get_mut(&(check, estimate.to_owned())) {
            Some(Estimate::Cause(i)) => {
                let k = &mut self.kept[*i];
                k.hits += 1;
                k.origins.insert(origin.to_owned());
                HitIs::Counted
            }
            Some(Estimate::Shrinking { hits, origins, .. }) => {
                *hits += 1;
                origins.insert(origin.to_owned());
                HitIs::Counted
            }
            Some(Estimate::Dropped) => HitIs::Ignored,
            None if room => {
                *self.tried.entry(Causes::slot(check, class)).or_default() += 1;
                self.estimates.insert(
                    (check, estimate.to_owned()),
                    Estimate::Shrinking {
                        hits: 1,
                        first: at,
                        origins: BTreeSet::from([origin.to_owned()]),
                    },
                );
                HitIs::New
            }
            None => HitIs::Ignored,
        }
    }

    /// The shrink of `estimate` (of `check`, charged to `class`) ended without a finding:
    /// forgotten, so a later hit may try again.
    pub(super) fn abandon(&mut self, check: Check, estimate: &str) {
        self.estimates.remove(&(check, estimate.to_owned()));
    }

    /// The shrink of `estimate` of `check` gave `cause` (of `class`; `known` when the
    /// baseline lists it): its number among the check's new causes (1 for the first) or,
    /// when `known`, among its known causes, if it is kept now; `None` for a cause kept
    /// already (which takes the estimate's hits) or past its slots. A known cause gives the
    /// shrink that found it back. Every kept cause charged to a class (not a `hang`) halves
    /// that class's draw weight.
    pub(super) fn resolve(
        &mut self,
        check: Check,
        estimate: &str,
        cause: &str,
        class: Option<AttackClass>,
        known: bool,
    ) -> Option<usize> {
        let (hits, first, origins) = match self.estimates.remove(&(check, estimate.to_owned())) {
            Some(Estimate::Shrinking {
                hits,
                first,
                origins,
            }) => (hits, first, origins),
            _ => (1, FirstSeen::default(), BTreeSet::new()),
        };
        let slot = Causes::slot(check, class);
        if known {
            let refunded = self.refunded.entry(slot).or_default();
            if *refunded < MAX_SHRINKS_PER_CHECK {
                *refunded += 1;
                if let Some(t) = self.tried.get_mut(&slot) {
                    *t = t.saturating_sub(1);
                }
            }
        }
        if let Some(i) = self
            .kept
            .iter()
            .position(|k| k.check == check && k.cause == cause)
        {
            let k = &mut self.kept[i];
            k.hits += hits;
            k.origins.extend(origins);
            if first.execution < k.first.execution {
                k.first = first;
            }
            self.estimates
                .insert((check, estimate.to_owned()), Estimate::Cause(i));
            return None;
        }
        // A new cause past the cap is dropped: two workers' shrinks that were both allowed
        // when they began cannot both fill the last slot.
        let cap = if check == Check::HANG { 1 } else { self.cap };
        let same_slot = self
            .kept
            .iter()
            .filter(|k| !k.known && Causes::slot(k.check, k.class) == slot)
            .count();
        if !known && same_slot >= cap {
            self.estimates
                .insert((check, estimate.to_owned()), Estimate::Dropped);
            return None;
        }
        let number = self
            .kept
            .iter()
            .filter(|k| k.check == check && k.known == known)
            .count()
            + 1;
        self.kept.push(Kept {
            check,
            cause: cause.to_owned(),
            class: slot.1,
            known,
            hits,
            first,
            origins,
        });
        let i = self.kept.len() - 1;
        self.estimates
            .insert((check, estimate.to_owned()), Estimate::Cause(i));
        self.estimates
            .entry((check, cause.to_owned()))
            .or_insert(Estimate::Cause(i));
        if let Some(c) = slot.1 {
            *self.lowered.entry(c).or_default() += 1;
        }
        Some(number)
    }

    /// An execution hung (at the full timeout or the cut): charged to `class`, the attack
    /// class that drew it, or when `None` to `base`, the label of the base archive it is a
    /// mutant of. Each lowers that class's or base's draw weight once more
    /// ([`Causes::halvings`], [`Causes::base_halvings`]).
    pub(super) fn hung(&mut self, class: Option<AttackClass>, base: &str) {
        match class {
            Some(c) => *self.hung.entry(c).or_default() += 1,
            None => *self.hung_bases.entry(base.to_owned()).or_default() += 1,
        }
    }

    /// How many times `class`'s draw weight has been halved: once per cause kept of it and
    /// once per execution of it that hung.
    pub(super) fn halvings(&self, class: AttackClass) -> u32 {
        let of = |m: &BTreeMap<AttackClass, u32>| m.get(&class).copied().unwrap_or(0);
        of(&self.lowered).saturating_add(of(&self.hung))
    }

    /// How many times the draw weight of the base archive labelled `base` has been halved:
    /// once per execution of a mutant of it that hung.
    pub(super) fn base_halvings(&self, base: &str) -> u32 {
        self.hung_bases.get(base).copied().unwrap_or(0)
    }

    /// The causes kept, in the order they were kept.
    pub(super) fn kept(&self) -> &[Kept] {
        &self.kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AttackClass as C;

    fn at(execution: u64) -> FirstSeen {
        FirstSeen {
            secs: execution as f64,
            execution,
        }
    }

    /// Shrinks allowed at the same time cannot keep more new causes than the cap per
    /// check and class (two workers each kept a sixth `containment`), nor more than one
    /// `hang`; known causes take no slot; another class has slots of its own.
    #[test]
    fn no_check_and_class_keeps_more_causes_than_its_cap() {
        let mut c = Causes::new(2);
        let k = Check::CONTAINMENT;
        let p = Some(C::PathMaxChain);
        for e in ["a", "b", "c"] {
            assert_eq!(c.hit(k, e, p, "path-max-chain", at(1), true), HitIs::New);
        }
        assert_eq!(c.resolve(k, "a", "A", p, false), Some(1));
        assert_eq!(c.resolve(k, "b", "B", p, false), Some(2));
        assert_eq!(c.resolve(k, "c", "C", p, false), None, "past the cap");
        assert_eq!(
            c.hit(k, "d", p, "path-max-chain", at(2), true),
            HitIs::Ignored
        );
        let h = Some(C::HardlinkToSymlink);
        assert_eq!(
            c.hit(k, "e", h, "hardlink-to-symlink", at(3), true),
            HitIs::New
        );
        assert_eq!(c.resolve(k, "e", "E", h, true), Some(1), "known: no slot");
        assert_eq!(
            c.hit(k, "f", h, "hardlink-to-symlink", at(4), true),
            HitIs::New
        );
        assert_eq!(
            c.resolve(k, "f", "F", h, false),
            Some(3),
            "another class's slot"
        );
        assert_eq!(c.hit(Check::HANG, "h1", p, "x", at(5), true), HitIs::New);
        assert_eq!(
            c.hit(Check::HANG, "h2", h, "x", at(5), true),
            HitIs::Ignored
        );
        assert_eq!(c.resolve(Check::HANG, "h1", "H", p, false), Some(1));
        assert!(!c.room(Check::HANG, h));
    }

    /// Repeat hits of a kept cause are counted, not shrunk, from its first sight on; an
    /// estimate that shrinks to a cause kept before is counted into it from then on.
    #[test]
    fn repeat_hits_are_counted_not_shrunk() {
        let mut c = Causes::new(5);
        let k = Check::ESCAPING_LINK;
        let p = Some(C::PathMaxChain);
        assert_eq!(
            c.hit(k, "est", p, "path-max-chain", at(7), true),
            HitIs::New
        );
        assert_eq!(
            c.hit(k, "est", p, "path-max-chain", at(8), true),
            HitIs::Counted
        );
        assert_eq!(c.resolve(k, "est", "cause", p, false), Some(1));
        assert_eq!(
            c.hit(k, "est", p, "path-max-chain", at(9), true),
            HitIs::Counted
        );
        assert_eq!(c.hit(k, "cause", p, "mutant", at(10), true), HitIs::Counted);
        assert_eq!(c.hit(k, "other", p, "mutant", at(11), true), HitIs::New);
        assert_eq!(
            c.resolve(k, "other", "cause", p, false),
            None,
            "kept already"
        );
        assert_eq!(c.hit(k, "other", p, "mutant", at(12), true), HitIs::Counted);
        let kept = &c.kept()[0];
        assert_eq!(kept.hits, 6);
        assert_eq!(kept.first.execution, 7);
        assert_eq!(
            kept.origins.iter().map(String::as_str).collect::<Vec<_>>(),
            ["mutant", "path-max-chain"]
        );
        assert_eq!(c.kept().len(), 1);
    }

    /// A kept cause halves its class's weight, once per cause; other classes keep theirs.
    #[test]
    fn a_kept_cause_lowers_its_class() {
        let mut c = Causes::new(5);
        let p = Some(C::PathMaxChain);
        assert_eq!(c.halvings(C::PathMaxChain), 0);
        for (e, cause) in [("a", "A"), ("b", "B")] {
            c.hit(Check::CONTAINMENT, e, p, "path-max-chain", at(1), true);
            c.resolve(Check::CONTAINMENT, e, cause, p, false);
        }
        assert_eq!(c.halvings(C::PathMaxChain), 2);
        assert_eq!(c.halvings(C::LinkChain), 0);
        // In the draw: the class comes up about a quarter as often, and still comes up.
        let (before, after) = (share(0), share(c.halvings(C::PathMaxChain)));
        assert!(after > 0.0 && after < before / 3.0, "{before} -> {after}");
    }

    /// A hang takes no class's slot, but each execution that hung lowers what drew it: its
    /// class, or the base of a mutant; nothing else.
    #[test]
    fn each_hang_lowers_the_class_or_base_that_drew_it() {
        let mut c = Causes::new(5);
        c.hung(Some(C::PathMaxChain), "ignored");
        c.hung(Some(C::PathMaxChain), "ignored");
        c.hung(None, "seeds/deep.tar");
        assert_eq!(c.halvings(C::PathMaxChain), 2);
        assert_eq!(c.halvings(C::LinkChain), 0);
        assert_eq!(c.base_halvings("seeds/deep.tar"), 1);
        assert_eq!(c.base_halvings("ignored"), 0);
        assert!(
            c.room(Check::HANG, None),
            "no hang kept by a hang hit alone"
        );
        // In the draw: two hangs and the class comes up about a quarter as often, and
        // still comes up (`AttackClass::draw_by` keeps every weight at 1 or more).
        let (before, after) = (share(0), share(c.halvings(C::PathMaxChain)));
        assert!(after > 0.0 && after < before / 3.0, "{before} -> {after}");
    }

    /// The share of 4000 draws (seed 4) that come up `PathMaxChain` when it alone is
    /// halved `halvings` times.
    fn share(halvings: u32) -> f64 {
        let mut rng = snapconf_tarbytes::Rng::new(4);
        let n = (0..4000)
            .filter(|_| {
                let lowered = |k: AttackClass| if k == C::PathMaxChain { halvings } else { 0 };
                crate::fuzz::attack::attack_lowered(&mut rng, lowered).1 == C::PathMaxChain
            })
            .count();
        n as f64 / 4000.0
    }
}
