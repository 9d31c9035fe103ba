//! Coverage feedback (`snapconf fuzz --coverage`): an extractor whose persistent worker
//! reports the code each execution ran ([`snapconf_producers::coverage`]: the built-in
//! Python servers, a backend on `snapconf_worker.py` or `snapconf_worker.js`) lets each fuzz
//! worker keep a corpus of the inputs that reached code the session had not seen, and draw
//! later inputs by mutating them ([`Corpus`]).

use super::attack::AttackClass;
use super::execute::execute;
use super::options::FuzzOptions;
use super::persist::Persist;
use crate::error::HarnessError;
use snapconf_producers::Extractor;
use snapconf_tarbytes::{Records, Rng};
use std::collections::{HashSet, VecDeque};

/// Whether a session uses coverage feedback (`--coverage`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CoverageMode {
    /// Where the extractor reports coverage ([`coverage_available`]), else blind.
    #[default]
    Auto,
    /// Always; an extractor that reports none is a usage error before the session
    /// (`snapconf fuzz` checks with [`coverage_available`] and exits 2).
    On,
    /// Never: blind fuzzing (the worker is not asked for coverage).
    Off,
}

/// Most inputs one worker's corpus keeps; the oldest goes first.
pub const MAX_CORPUS_ENTRIES: usize = 512;
/// Most bytes of archives one worker's corpus keeps; the oldest go first.
pub const MAX_CORPUS_BYTES: usize = 32 << 20;
/// One draw in this many mutates a corpus entry, once the corpus has one.
pub const CORPUS_SHARE: usize = 3;

/// Whether `ex` reports coverage in a session of `opts`: it runs through a persistent
/// worker there ([`FuzzOptions::server`], in a view) and the answer to one execution of
/// the session's first base archive (a seed: nothing hostile) carries coverage ids.
/// `false` without base archives.
///
/// # Errors
/// A fault of snapconf itself while running that execution (as the session's would be).
pub fn coverage_available(ex: &dyn Extractor, opts: &FuzzOptions) -> Result<bool, HarnessError> {
    let mut persist = Persist::new(ex, opts);
    let Some((_, base)) = opts.bases.first() else {
        return Ok(false);
    };
    if !persist.enabled() {
        return Ok(false);
    }
    persist.coverage = true;
    execute(base, ex, opts, &mut persist)?;
    Ok(persist.covered.is_some())
}

/// Whether a session of `opts` against `ex` runs with coverage feedback: `Auto` asks
/// [`coverage_available`], `On` is taken as checked by the caller, `Off` is never.
///
/// # Errors
/// As [`coverage_available`].
pub(super) fn guided(ex: &dyn Extractor, opts: &FuzzOptions) -> Result<bool, HarnessError> {
    match opts.coverage {
        CoverageMode::Off => Ok(false),
        CoverageMode::On => Ok(true),
        CoverageMode::Auto => coverage_available(ex, opts),
    }
}

/// One input kept in a corpus: its records (to mutate), the label of what it came from
/// and its attack class.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    /// The archive's records.
    pub(super) records: Records,
    /// Its length in bytes, as drawn.
    pub(super) len: usize,
    /// The label it was drawn with (a base's, or the attack class's).
    pub(super) label: String,
    /// The attack class that generated it, if any.
    pub(super) class: Option<AttackClass>,
}

/// A fuzz worker's corpus: the coverage ids seen so far and the inputs that brought new
/// ones, bounded by [`MAX_CORPUS_ENTRIES`] and [`MAX_CORPUS_BYTES`] (the oldest go), held
/// in memory for the session.
#[derive(Debug, Default)]
pub(super) struct Corpus {
    seen: HashSet<u32>,
    entries: VecDeque<Entry>,
    bytes: usize,
    /// Inputs kept over the session, those dropped for room included.
    pub(super) kept: u64,
}

impl Corpus {
    /// Count `ids`, the coverage of the execution of `bytes` (drawn as `label`, `class`),
    /// and keep the input when one of them is new; the ids that were new.
    pub(super) fn offer(
        &mut self,
        ids: &[u32],
        bytes: &[u8],
        label: &str,
        class: Option<AttackClass>,
    ) -> Vec<u32> {
        let new: Vec<u32> = ids
            .iter()
            .copied()
            .filter(|&id| self.seen.insert(id))
            .collect();
        if !new.is_empty() && bytes.len() <= MAX_CORPUS_BYTES {
            while self.entries.len() >= MAX_CORPUS_ENTRIES
                || self.bytes + bytes.len() > MAX_CORPUS_BYTES
            {
                match self.entries.pop_front() {
                    Some(old) => self.bytes -= old.len,
                    None => break,
                }
            }
            self.bytes += bytes.len();
            self.kept += 1;
            self.entries.push_back(Entry {
                records: Records::parse(bytes),
                len: bytes.len(),
                label: label.to_owned(),
                class,
            });
        }
        new
    }

    /// A base for the next draw: a corpus entry in one draw of [`CORPUS_SHARE`] once there
    /// is one (drawn uniformly), else `None` and `rng` untouched, so a session with an
    /// empty corpus draws what a blind one draws.
    pub(super) fn pick(&self, rng: &mut Rng) -> Option<&Entry> {
        if self.entries.is_empty() || rng.below(CORPUS_SHARE) != 0 {
            return None;
        }
        self.entries.get(rng.below(self.entries.len()))
    }

    /// Coverage ids seen.
    pub(super) fn ids(&self) -> usize {
        self.seen.len()
    }

    /// Inputs held now, and their bytes.
    pub(super) fn size(&self) -> (usize, usize) {
        (self.entries.len(), self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use snapconf_tarbytes::raw::RawTar;

    /// An input is kept when it brings an id not seen before, and only then; the corpus
    /// stays within its bounds, dropping the oldest.
    #[test]
    fn inputs_reaching_new_code_are_kept_within_bounds() {
        let mut c = Corpus::default();
        let a = RawTar::new().file("a", b"x").finish();
        assert_eq!(c.offer(&[1, 2], &a, "seeds/a", None), vec![1, 2]);
        assert_eq!(c.offer(&[2, 1], &a, "seeds/a", None), Vec::<u32>::new());
        assert_eq!(c.size().0, 1, "nothing new: not kept");
        assert_eq!(c.offer(&[2, 3], &a, "seeds/b", None), vec![3]);
        assert_eq!((c.size(), c.ids(), c.kept), ((2, 2 * a.len()), 3, 2));
        for id in 10..(10 + MAX_CORPUS_ENTRIES as u32 + 5) {
            c.offer(&[id], &a, "x", None);
        }
        assert_eq!(c.size().0, MAX_CORPUS_ENTRIES);
        assert_eq!(c.size().1, MAX_CORPUS_ENTRIES * a.len());
        assert_eq!(c.kept, 2 + MAX_CORPUS_ENTRIES as u64 + 5);
        assert!(
            c.entries.iter().all(|e| e.label == "x"),
            "the oldest went first"
        );
    }

    /// An empty corpus gives no base and leaves the generator alone; a full one gives
    /// an entry about one draw in [`CORPUS_SHARE`].
    #[test]
    fn picks_leave_the_generator_alone_until_there_is_an_entry() {
        let c = Corpus::default();
        let mut r = Rng::new(7);
        assert!(c.pick(&mut r).is_none());
        assert_eq!(r.next_u64(), Rng::new(7).next_u64());
        let mut c = Corpus::default();
        c.offer(&[1], &RawTar::new().file("a", b"x").finish(), "a", None);
        let picked = (0..3000).filter(|_| c.pick(&mut r).is_some()).count();
        assert!((800..1200).contains(&picked), "{picked}");
    }
}
