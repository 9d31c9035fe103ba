//! The worker pool of a run (`-j N`): independent items (a case through one producer, a
//! shrink) on `N` threads, each with jails of its own.
//!
//! Items are handed out in order, one at a time, from a shared counter, and each result
//! reaches the caller's thread as soon as it is ready, with the item's index; the caller
//! puts them in order where order matters, so a run's results never depend on `N`. The
//! external tools a step runs are each under a reaper of their own
//! ([`snapconf_producers::process::reaper`]), so workers never see each other's
//! stragglers; a stop request (SIGINT, SIGTERM) ends the pool after the items running.

use crate::engine::case::Env;
use crate::error::HarnessError;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// The number of workers `-j` asks for by default: the cores this process may use
/// (`std::thread::available_parallelism`, which honours the CPU affinity mask and cgroup
/// quotas), or 1 when that is unknown.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The work of a pool: one item, under a worker's own `Env`, with a way to send notes.
pub type Work<'a, T, R, M> = dyn Fn(&T, &Env, &dyn Fn(M)) -> Result<R, HarnessError> + Sync + 'a;

/// What a pool hands the caller's thread: an item's result, or a note a worker sent while
/// it worked (progress).
pub enum Delivered<R, M> {
    /// Item `index` is done.
    Done(usize, R),
    /// A worker's note.
    Note(M),
}

/// Runs `work` on every item of `items` on `jobs` threads (at least one, at most one per
/// item) and calls `on` on the calling thread with each result, in the order they finish,
/// and with each note a worker sends through the `&dyn Fn(M)` it is given. Each worker
/// gets an `Env` of its own (`env` with an empty spare-jail pool), so no two workers share
/// a jail.
///
/// Items not started when an item returned `Err` are skipped, and so are those not started
/// when a stop is requested ([`crate::jail::cleanup::stop_requested`]) if `Until::Stop`
/// says so.
///
/// # Errors
/// The error of the lowest-indexed item that failed; `on` has been called for every item
/// that succeeded.
pub fn run_pool<T, R, M>(
    jobs: usize,
    until: Until,
    env: &Env,
    items: &[T],
    work: &Work<'_, T, R, M>,
    on: &mut dyn FnMut(Delivered<R, M>),
) -> Result<(), HarnessError>
where
    T: Sync,
    R: Send,
    M: Send,
{
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let workers = jobs.clamp(1, items.len().max(1));
    let mut first_error: Option<(usize, HarnessError)> = None;
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<Msg<R, M>>();
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, failed) = (&next, &failed);
            let env = Env {
                jails: Default::default(),
                ..env.clone()
            };
            scope.spawn(move || {
                let note = |m: M| {
                    let _ = tx.send(Msg::Note(m));
                };
                loop {
                    let stop = until == Until::Stop && crate::jail::cleanup::stop_requested();
                    if stop || failed.load(Ordering::SeqCst) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(item) = items.get(i) else { break };
                    let r = work(item, &env, &note);
                    if r.is_err() {
                        failed.store(true, Ordering::SeqCst);
                    }
                    if tx.send(Msg::Done(i, r)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for msg in rx {
            match msg {
                Msg::Note(m) => on(Delivered::Note(m)),
                Msg::Done(i, Ok(r)) => on(Delivered::Done(i, r)),
                Msg::Done(i, Err(e)) => {
                    if first_error.as_ref().is_none_or(|(j, _)| i < *j) {
                        first_error = Some((i, e));
                    }
                }
            }
        }
    });
    match first_error {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// Whether a pool ends early on a stop request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    /// Items not started when a stop is requested are skipped (cases).
    Stop,
    /// Every item runs; the work itself sees the stop and ends quickly (shrinks, which
    /// still write what they found).
    AllDone,
}

enum Msg<R, M> {
    Done(usize, Result<R, HarnessError>),
    Note(M),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        Env {
            profile: crate::model::profile::Profile::default_profile(),
            timeout: std::time::Duration::from_secs(1),
            jail_base: None,
            faults: Default::default(),
            jails: Default::default(),
            checks: Vec::new(),
        }
    }

    #[test]
    fn every_item_is_done_once_whatever_the_number_of_workers() {
        let items: Vec<u64> = (0..50).collect();
        for jobs in [1, 2, 7, 100] {
            let mut seen = Vec::new();
            let mut notes = 0;
            run_pool(
                jobs,
                Until::Stop,
                &env(),
                &items,
                &|x, _, note: &dyn Fn(())| {
                    note(());
                    Ok(x * 2)
                },
                &mut |d| match d {
                    Delivered::Done(i, r) => seen.push((i, r)),
                    Delivered::Note(()) => notes += 1,
                },
            )
            .expect("no error");
            assert_eq!(notes, items.len(), "-j {jobs}");
            seen.sort();
            let want: Vec<(usize, u64)> = items.iter().map(|&x| (x as usize, x * 2)).collect();
            assert_eq!(seen, want, "-j {jobs}");
        }
    }

    #[test]
    fn the_lowest_failing_item_is_the_error() {
        let items: Vec<u64> = (0..20).collect();
        let err = run_pool(
            2,
            Until::Stop,
            &env(),
            &items,
            &|x, _, _: &dyn Fn(())| {
                if *x >= 3 {
                    Err(HarnessError::Other(format!("item {x}")))
                } else {
                    Ok(())
                }
            },
            &mut |_| {},
        )
        .expect_err("fails");
        // Item 3 is always started before any later one fails the pool… unless a worker
        // already holds a later item; either way the lowest failure seen is reported.
        let text = err.to_string();
        assert!(text.starts_with("item "), "{text}");
        let n: u64 = text["item ".len()..].parse().expect("a number");
        assert!((3..=4).contains(&n), "{text}");
    }
}
