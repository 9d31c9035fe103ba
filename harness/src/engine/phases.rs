//! The two phases of a driver's run, shared by `run` (a unit is a case through a
//! producer) and `lifecycle` (a unit is a sequence through a pair): the unit phase, every
//! unit on the `-j` pool with the results handed over in unit order (so the first finding
//! of each cell never depends on `-j`), and the shrink phase, the first findings shrunk
//! and written on the pool under one wall-time deadline (`--shrink-total`), with the
//! progress events of both.

use crate::engine::case::Env;
use crate::engine::pool::{run_pool, Delivered, Until, Work};
use crate::engine::progress::Event;
use crate::engine::shard::Shard;
use crate::engine::shrink::ShrinkBudget;
use crate::error::HarnessError;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One unit of the unit phase: the unit at `index` of the run (a case index or a sequence
/// index, `0..count` of this shard) with the `part` numbered `part` (a producer, or a
/// producer × extractor pair).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The drawn case's or sequence's index.
    pub index: u64,
    /// What it runs through, by number (the driver's meaning).
    pub part: usize,
}

/// The units of indices `0..count` in `shard`, each through parts `0..parts`, index by
/// index.
pub fn units(count: u64, shard: Shard, parts: usize) -> Vec<Unit> {
    (0..count)
        .filter(|i| shard.contains(*i))
        .flat_map(|index| (0..parts).map(move |part| Unit { index, part }))
        .collect()
}

/// What the unit phase hands the driver.
pub enum InOrder<R> {
    /// The result of unit number `.0` (in the list given), every unit before it already
    /// handed over.
    Next(usize, R),
    /// A unit finished (on any worker), after the results it freed were handed over.
    Arrived,
    /// A worker's note ([`Event::CaseStarted`]), as it is sent.
    Note(Event),
}

/// Runs `work` on every unit on `jobs` workers (a stop request skips the units not yet
/// started) and calls `on` on the calling thread with each result in unit order, with
/// [`InOrder::Arrived`] each time a unit finishes, and with each note a worker sends.
///
/// # Errors
/// The error of the lowest-numbered unit that failed (see [`run_pool`]).
pub fn run_in_order<T, R>(
    jobs: usize,
    env: &Env,
    units: &[T],
    work: &Work<'_, T, R, Event>,
    on: &mut dyn FnMut(InOrder<R>),
) -> Result<(), HarnessError>
where
    T: Sync,
    R: Send,
{
    // Results that finish early wait here for those before them.
    let mut waiting: BTreeMap<usize, R> = BTreeMap::new();
    let mut next = 0;
    run_pool(jobs, Until::Stop, env, units, work, &mut |d| {
        let (i, r) = match d {
            Delivered::Done(i, r) => (i, r),
            Delivered::Note(ev) => return on(InOrder::Note(ev)),
        };
        waiting.insert(i, r);
        while let Some(r) = waiting.remove(&next) {
            on(InOrder::Next(next, r));
            next += 1;
        }
        on(InOrder::Arrived);
    })
}

/// When every shrink of a run must have ended: `--shrink-total` of wall time from the
/// start of the shrink phase, however many shrinks run at once.
#[derive(Clone, Copy, Debug)]
pub struct ShrinkDeadline {
    at: Instant,
}

impl ShrinkDeadline {
    /// The shrink phase starts now and may take `total`.
    pub fn starting_now(total: Duration) -> ShrinkDeadline {
        let now = Instant::now();
        ShrinkDeadline {
            at: now.checked_add(total).unwrap_or(now),
        }
    }

    /// The budget of a shrink starting now: `per` (`--shrink-time`, `--shrink-steps`),
    /// with no more time than is left.
    pub fn budget(&self, per: ShrinkBudget) -> ShrinkBudget {
        let left = self.at.saturating_duration_since(Instant::now());
        ShrinkBudget {
            time: per.time.min(left),
            ..per
        }
    }

    /// True once no time is left.
    pub fn spent(&self) -> bool {
        Instant::now() >= self.at
    }
}

/// The size and the budget of a shrink phase.
#[derive(Clone, Copy, Debug)]
pub struct ShrinkPhase {
    /// Workers (`-j`).
    pub jobs: usize,
    /// Findings to shrink (the records returned).
    pub total: usize,
    /// `--shrink-total`.
    pub budget: Duration,
}

/// Counts the shrinks started, for [`Event::Shrinking`]'s `done`.
#[derive(Debug, Default)]
pub struct Started(AtomicUsize);

impl Started {
    /// The number of shrinks started before this one.
    pub fn next(&self) -> usize {
        self.0.fetch_add(1, Ordering::SeqCst)
    }
}

/// Runs the shrink phase: tells `on_event` of it ([`Event::ShrinkPhase`]), runs `work` on
/// every group on the pool (every group runs; the work sees a stop itself), each giving
/// the records of findings by number `0..phase.total`, forwards the workers' notes, and
/// tells of each record ([`Event::ShrinkDone`]). Returns the records by finding number.
///
/// # Errors
/// The error of the lowest-numbered group that failed.
pub fn shrink_in_groups<G, R>(
    phase: ShrinkPhase,
    env: &Env,
    groups: &[G],
    work: &Work<'_, G, Vec<(usize, R)>, Event>,
    on_event: &mut dyn FnMut(Event),
) -> Result<Vec<Option<R>>, HarnessError>
where
    G: Sync,
    R: Send + Clone,
{
    let total = phase.total;
    on_event(Event::ShrinkPhase {
        total,
        budget: phase.budget,
    });
    let mut records = vec![None; total];
    let mut ended = 0;
    run_pool(
        phase.jobs,
        Until::AllDone,
        env,
        groups,
        work,
        &mut |d| match d {
            Delivered::Note(ev) => on_event(ev),
            Delivered::Done(_, rs) => {
                for (j, r) in rs {
                    if let Some(slot) = records.get_mut(j) {
                        *slot = Some(r);
                    }
                    ended += 1;
                    on_event(Event::ShrinkDone { done: ended, total });
                }
            }
        },
    )?;
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        Env {
            profile: crate::model::profile::Profile::default_profile(),
            timeout: Duration::from_secs(1),
            jail_base: None,
            faults: Default::default(),
            jails: Default::default(),
            checks: Vec::new(),
        }
    }

    #[test]
    fn units_are_index_by_index_within_the_shard() {
        let shard = Shard::new(2, 3).expect("a shard");
        let got: Vec<(u64, usize)> = units(7, shard, 2)
            .into_iter()
            .map(|u| (u.index, u.part))
            .collect();
        assert_eq!(got, vec![(1, 0), (1, 1), (4, 0), (4, 1)]);
    }

    #[test]
    fn results_come_in_unit_order_whatever_the_workers() {
        let items: Vec<u64> = (0..40).collect();
        for jobs in [1, 3] {
            let mut seen = Vec::new();
            let mut arrived = 0;
            run_in_order(jobs, &env(), &items, &|x, _, _| Ok(*x), &mut |o| match o {
                InOrder::Next(i, r) => seen.push((i, r)),
                InOrder::Arrived => arrived += 1,
                InOrder::Note(_) => {}
            })
            .expect("no error");
            let want: Vec<(usize, u64)> = items.iter().map(|&x| (x as usize, x)).collect();
            assert_eq!(seen, want);
            assert_eq!(arrived, items.len());
        }
    }

    #[test]
    fn a_spent_deadline_leaves_no_time() {
        let d = ShrinkDeadline::starting_now(Duration::ZERO);
        assert!(d.spent());
        assert!(d.budget(ShrinkBudget::default()).time.is_zero());
    }
}
