//! Progress on stderr: the phase (cases, then shrinking), done/total of it, an estimate of
//! the time left and the shrink budget left. An indicatif bar when stderr is a terminal;
//! otherwise one plain line every few seconds and at each change of phase, so a CI log
//! shows the run moving without filling up.

use crate::checks::Check;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Progress events; one stream feeds every reporter. They reach the caller's thread in the
/// order the work finishes.
#[derive(Clone, Debug)]
pub enum Event {
    /// `done` of the run's `total` cases are done (this shard's); `findings` is the
    /// running total of cells hit, in case order.
    CaseDone {
        /// Cases done.
        done: u64,
        /// Cases of the run (this shard's).
        total: u64,
        /// Cells hit so far.
        findings: usize,
    },
    /// The cases are done and `total` shrinks follow, most severe first, with `budget` of
    /// wall time for all of them (`--shrink-total`).
    ShrinkPhase {
        /// Shrinks to come.
        total: usize,
        /// Wall time all of them may take.
        budget: std::time::Duration,
    },
    /// The shrink of a new (pair, check) cell starts; `done` of `total` have ended.
    Shrinking {
        /// The finding's check.
        check: Check,
        /// The producer of the cell.
        producer: String,
        /// The extractor of the cell.
        extractor: String,
        /// Shrinks started before this one.
        done: usize,
        /// Shrinks of the run.
        total: usize,
    },
    /// One more shrink has ended: `done` of `total`.
    ShrinkDone {
        /// Shrinks ended.
        done: usize,
        /// Shrinks of the run.
        total: usize,
    },
}

/// How often a plain progress line is printed at most (stderr not a terminal).
pub const LINE_EVERY: Duration = Duration::from_secs(5);

/// Consumes runner events and shows progress on stderr.
pub struct Progress {
    bar: Option<ProgressBar>,
    /// When the phase shown started, and when the last plain line was printed.
    phase_started: Instant,
    last_line: Option<Instant>,
    findings: usize,
    /// The shrink phase's wall-time budget and what it is doing now.
    shrink_budget: Option<Duration>,
    current: String,
    /// What the first phase counts: `cases` (run), `sequences` (lifecycle).
    unit: &'static str,
}

impl Progress {
    /// Progress of a run of `total` cases.
    pub fn new(total: u64) -> Self {
        Progress::counting(total, "cases")
    }

    /// Progress of `total` items of the first phase, named `unit` in the plural
    /// (`sequences` for `snapconf lifecycle`, whose items are sequences × pairs).
    pub fn counting(total: u64, unit: &'static str) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(total);
            if let Ok(style) =
                ProgressStyle::with_template("{prefix:9} [{bar:30}] {pos}/{len}  ETA {eta}  {msg}")
            {
                b.set_style(style.progress_chars("=> "));
            }
            b.set_prefix(unit);
            b
        });
        Progress {
            bar,
            phase_started: Instant::now(),
            last_line: None,
            findings: 0,
            shrink_budget: None,
            current: String::new(),
            unit,
        }
    }

    /// Show one event.
    pub fn event(&mut self, ev: &Event) {
        match ev {
            Event::CaseDone {
                done,
                total,
                findings,
            } => {
                self.findings = *findings;
                let msg = format!("{findings} failing cell(s)");
                let unit = self.unit;
                self.show(unit, *done, *total, &msg, done == total);
            }
            Event::ShrinkPhase { total, budget } => {
                self.phase_started = Instant::now();
                self.shrink_budget = Some(*budget);
                if let Some(b) = &self.bar {
                    b.set_prefix("shrinking");
                    b.set_length(*total as u64);
                    b.set_position(0);
                    b.reset_eta();
                }
                if *total > 0 {
                    self.last_line = None;
                    let msg = format!("most severe first, {} budget", clock(*budget));
                    self.show("shrinking", 0, *total as u64, &msg, true);
                }
            }
            Event::Shrinking {
                check,
                producer,
                extractor,
                done,
                total,
            } => {
                self.current = format!("{check} for {producer} x {extractor}");
                let msg = self.shrink_message();
                self.show("shrinking", *done as u64, *total as u64, &msg, false);
            }
            Event::ShrinkDone { done, total } => {
                let msg = self.shrink_message();
                self.show(
                    "shrinking",
                    *done as u64,
                    *total as u64,
                    &msg,
                    done == total,
                );
            }
        }
    }

    /// What the shrink phase is doing and the budget it has left.
    fn shrink_message(&self) -> String {
        let left = self
            .shrink_budget
            .map(|b| b.saturating_sub(self.phase_started.elapsed()));
        match left {
            Some(l) => format!("{} budget left; {}", clock(l), self.current),
            None => self.current.clone(),
        }
    }

    /// Moves the bar, or prints a plain line when `force` or [`LINE_EVERY`] has passed.
    fn show(&mut self, phase: &str, done: u64, total: u64, msg: &str, force: bool) {
        if let Some(b) = &self.bar {
            b.set_position(done);
            b.set_message(msg.to_owned());
            return;
        }
        let due = self.last_line.is_none_or(|t| t.elapsed() >= LINE_EVERY);
        if !(force || due) {
            return;
        }
        self.last_line = Some(Instant::now());
        let eta = eta(self.phase_started.elapsed(), done, total)
            .map(|d| format!(", ETA {}", clock(d)))
            .unwrap_or_default();
        eprintln!("[{phase} {done}/{total}{eta}] {msg}");
    }

    /// Remove the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// The time left if the `total - done` items left take as long as the `done` ones did in
/// `elapsed`; `None` before the first is done.
fn eta(elapsed: Duration, done: u64, total: u64) -> Option<Duration> {
    if done == 0 || done >= total {
        return None;
    }
    let per = elapsed.as_secs_f64() / done as f64;
    Some(Duration::from_secs_f64(per * (total - done) as f64))
}

/// `1h02m`, `3m05s` or `12s`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_scales_what_is_done_to_what_is_left() {
        assert_eq!(eta(Duration::from_secs(10), 0, 10), None);
        assert_eq!(eta(Duration::from_secs(10), 10, 10), None);
        assert_eq!(
            eta(Duration::from_secs(10), 5, 20),
            Some(Duration::from_secs(30))
        );
        assert_eq!(clock(Duration::from_secs(7)), "7s");
        assert_eq!(clock(Duration::from_secs(185)), "3m05s");
        assert_eq!(clock(Duration::from_secs(3720)), "1h02m");
    }
}
