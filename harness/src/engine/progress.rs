//! Progress on stderr: the phase (cases, then shrinking; or a fuzz session's time), done/total
//! of it, an estimate of the time left and the shrink budget left. An indicatif bar when
//! stderr is a terminal that can redraw; otherwise (not a terminal, or `TERM=dumb`) one
//! plain line every few seconds ([`Output::progress_every`]) and at each change of phase, so
//! a CI log shows the run moving without filling up. `-q` shows none, `-v` adds a line per
//! finding and per shrink; with `--message-format json` each event is also written on
//! stdout as a [`JsonEvent`].

use crate::checks::Check;
use crate::engine::events::{emit, style, term_redraws, JsonEvent, Output};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// A finding as it is found: the first of a failing cell (`run`, `audit`, `lifecycle`), or a
/// cause written (`fuzz`).
#[derive(Clone, Debug)]
pub struct FindingEvent {
    /// The check violated.
    pub check: Check,
    /// The producer (`None` for `fuzz`).
    pub producer: Option<String>,
    /// The extractor (`None` for a capture-side finding).
    pub extractor: Option<String>,
    /// The case's or sequence's index (`None` for `fuzz`).
    pub case: Option<u64>,
    /// The reproducer directory, relative to the report directory, when already written.
    pub case_dir: Option<String>,
    /// Whether the baseline knows it, when that is known as it is found (`fuzz`).
    pub known: Option<bool>,
    /// What happened.
    pub message: String,
}

/// Progress events; one stream feeds every reporter. They reach the caller's thread in the
/// order the work finishes.
#[derive(Clone, Debug)]
pub enum Event {
    /// Case (or sequence) `index` starts on a worker, through `producer` and every
    /// extractor (`extractor` `None`) or one (`lifecycle`).
    CaseStarted {
        /// The case's or sequence's index.
        index: u64,
        /// The producer.
        producer: String,
        /// The extractor, when the unit runs through one.
        extractor: Option<String>,
    },
    /// Case `index` through `producer` (and `extractor`) ended, in case order; it is the
    /// first to hit `new_findings` cells (each told by a [`Event::Finding`] right after).
    CaseFinished {
        /// The case's or sequence's index.
        index: u64,
        /// The producer.
        producer: String,
        /// The extractor, when the unit runs through one.
        extractor: Option<String>,
        /// Cells this unit is the first to hit.
        new_findings: usize,
    },
    /// A new failing cell, or a fuzz cause written.
    Finding(Box<FindingEvent>),
    /// A fuzz session's tick: `executions` so far, `findings` (causes written) so far,
    /// `elapsed` of the session's `time`.
    Executions {
        /// Archives run so far.
        executions: u64,
        /// Causes written so far.
        findings: usize,
        /// Since the session started.
        elapsed: Duration,
        /// The session's length (`--time`).
        time: Duration,
    },
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

/// How often a plain progress line is printed at most by default (stderr not a terminal
/// that redraws); `--progress-every` / `SNAPCONF_PROGRESS_EVERY` change it.
pub const LINE_EVERY: Duration = Duration::from_secs(5);

/// How progress reaches stderr.
enum Display {
    /// A redrawn bar (stderr a terminal, `TERM` not `dumb`).
    Bar(ProgressBar),
    /// Plain lines, at most one per [`Output::progress_every`] but at changes of phase.
    Lines,
    /// Nothing (`-q`).
    Silent,
}

/// Consumes runner events: shows progress on stderr and, with `--message-format json`,
/// writes each as a [`JsonEvent`] on stdout.
pub struct Progress {
    display: Display,
    out: Output,
    /// When the phase shown started, and when the last plain line was printed.
    phase_started: Instant,
    last_line: Option<Instant>,
    findings: usize,
    /// The shrink phase's wall-time budget and what it is doing now.
    shrink_budget: Option<Duration>,
    current: String,
    /// What the first phase counts: `cases` (run), `sequences` (lifecycle), `fuzz` (a
    /// fuzz session's seconds).
    unit: &'static str,
}

impl Progress {
    /// Progress of `total` items of the first phase, named `unit` in the plural
    /// (`sequences` for `snapconf lifecycle`, whose items are sequences × pairs; `fuzz`
    /// for a fuzz session, whose items are its seconds), shown as `out` asks.
    pub fn counting(total: u64, unit: &'static str, out: Output) -> Self {
        let display = if out.quiet() {
            Display::Silent
        } else if std::io::stderr().is_terminal() && term_redraws() {
            let b = ProgressBar::new(total);
            if let Ok(style) =
                ProgressStyle::with_template("{prefix:9} [{bar:30}] {pos}/{len}  ETA {eta}  {msg}")
            {
                b.set_style(style.progress_chars("=> "));
            }
            b.set_prefix(unit);
            Display::Bar(b)
        } else {
            Display::Lines
        };
        Progress {
            display,
            out,
            phase_started: Instant::now(),
            last_line: None,
            findings: 0,
            shrink_budget: None,
            current: String::new(),
            unit,
        }
    }

    /// Show one event (and write it on stdout with `--message-format json`).
    pub fn event(&mut self, ev: &Event) {
        if self.out.json() {
            if let Some(j) = json_event(ev) {
                emit(&j);
            }
        }
        match ev {
            Event::CaseStarted { .. } | Event::CaseFinished { .. } => {}
            Event::Finding(f) => {
                if self.out.verbose() || (f.producer.is_none() && !self.out.quiet()) {
                    self.line(&found_line(f));
                }
            }
            Event::Executions {
                executions,
                findings,
                elapsed,
                time,
            } => {
                let secs = elapsed.as_secs_f64().max(1e-3);
                let left = time.saturating_sub(*elapsed);
                let msg = format!(
                    "{executions} executions ({:.0}/s), {findings} finding(s), {} left",
                    *executions as f64 / secs,
                    clock(left)
                );
                let unit = self.unit;
                if let Display::Bar(b) = &self.display {
                    b.set_length(time.as_secs().max(1));
                }
                self.findings = *findings;
                self.show(unit, elapsed.as_secs(), time.as_secs(), &msg, false);
            }
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
                if let Display::Bar(b) = &self.display {
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
                if self.out.verbose() {
                    let l = format!("shrinking {} ({}/{total})", self.current, done + 1);
                    self.line(&l);
                }
                let msg = self.shrink_message();
                self.show("shrinking", *done as u64, *total as u64, &msg, false);
            }
            Event::ShrinkDone { done, total } => {
                if self.out.verbose() {
                    self.line(&format!("shrink ended ({done}/{total})"));
                }
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

    /// A line of its own on stderr (above the bar, when there is one); none with `-q`.
    fn line(&self, text: &str) {
        match &self.display {
            Display::Silent => {}
            Display::Bar(b) => b.suspend(|| say(text)),
            Display::Lines => say(text),
        }
    }

    /// Moves the bar, or prints a plain line when `force` or the interval has passed.
    fn show(&mut self, phase: &str, done: u64, total: u64, msg: &str, force: bool) {
        match &self.display {
            Display::Silent => return,
            Display::Bar(b) => {
                b.set_position(done);
                b.set_message(msg.to_owned());
                return;
            }
            Display::Lines => {}
        }
        let every = self.out.progress_every;
        let due = self.last_line.is_none_or(|t| t.elapsed() >= every);
        if !(force || due) {
            return;
        }
        self.last_line = Some(Instant::now());
        let eta = eta(self.phase_started.elapsed(), done, total)
            .filter(|_| self.unit != "fuzz")
            .map(|d| format!(", ETA {}", clock(d)))
            .unwrap_or_default();
        let count = if self.unit == "fuzz" {
            let secs = |n: u64| clock(Duration::from_secs(n));
            format!("{} of {}", secs(done), secs(total))
        } else {
            format!("{done}/{total}")
        };
        say(&format!("[{phase} {count}{eta}] {msg}"));
    }

    /// Remove the bar.
    pub fn finish(&self) {
        if let Display::Bar(b) = &self.display {
            b.finish_and_clear();
        }
    }
}

/// `text` as a line on stderr, through `anstream` (which strips the styles when colour is
/// off for stderr); a closed stderr drops it.
fn say(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(anstream::stderr().lock(), "{text}");
}

/// The `-v` (and fuzz) line of a finding: `found CHECK (P x E, case N): MESSAGE`, the
/// check in the findings' colour.
fn found_line(f: &FindingEvent) -> String {
    let mut at = Vec::new();
    match (&f.producer, &f.extractor) {
        (Some(p), Some(e)) => at.push(format!("{p} x {e}")),
        (Some(p), None) => at.push(format!("{p}, capture side")),
        (None, Some(e)) => at.push(e.clone()),
        (None, None) => {}
    }
    if let Some(c) = f.case {
        at.push(format!("case {c}"));
    }
    if let Some(d) = &f.case_dir {
        at.push(d.clone());
    }
    let check = match f.known {
        Some(true) => style::paint(
            style::KNOWN,
            &format!("{} (known: in the baseline)", f.check),
        ),
        _ => style::paint(style::NEW, f.check.id()),
    };
    format!("found {check} ({}): {}", at.join(", "), f.message)
}

/// The JSON event of `ev` (`None` for the ones that are not part of the stream: the start
/// of the shrink phase, the per-case progress count).
fn json_event(ev: &Event) -> Option<JsonEvent> {
    Some(match ev {
        Event::CaseStarted {
            index,
            producer,
            extractor,
        } => JsonEvent::CaseStarted {
            case: *index,
            producer: producer.clone(),
            extractor: extractor.clone(),
        },
        Event::CaseFinished {
            index,
            producer,
            extractor,
            new_findings,
        } => JsonEvent::CaseFinished {
            case: *index,
            producer: producer.clone(),
            extractor: extractor.clone(),
            new_findings: *new_findings,
        },
        Event::Finding(f) => JsonEvent::Finding {
            check: f.check.id().to_string(),
            producer: f.producer.clone(),
            extractor: f.extractor.clone(),
            case: f.case,
            case_dir: f.case_dir.clone(),
            known: f.known,
            message: f.message.clone(),
        },
        Event::Executions {
            executions,
            findings,
            elapsed,
            time,
        } => {
            let secs = elapsed.as_secs_f64();
            JsonEvent::Progress {
                executions: *executions,
                rate: if secs > 0.0 {
                    *executions as f64 / secs
                } else {
                    0.0
                },
                findings: *findings,
                elapsed: secs,
                left: time.saturating_sub(*elapsed).as_secs_f64(),
            }
        }
        Event::Shrinking {
            check,
            producer,
            extractor,
            done,
            total,
        } => JsonEvent::ShrinkStarted {
            check: check.id().to_string(),
            producer: producer.clone(),
            extractor: extractor.clone(),
            done: *done,
            total: *total,
        },
        Event::ShrinkDone { done, total } => JsonEvent::ShrinkFinished {
            done: *done,
            total: *total,
        },
        Event::CaseDone { .. } | Event::ShrinkPhase { .. } => return None,
    })
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

    #[test]
    fn a_finding_line_names_where_it_was_found() {
        let f = FindingEvent {
            check: Check::CONTAINMENT,
            producer: Some("gnu-tar".into()),
            extractor: Some("bsdtar".into()),
            case: Some(7),
            case_dir: None,
            known: None,
            message: "wrote outside".into(),
        };
        let line = found_line(&f);
        assert!(line.starts_with("found "), "{line}");
        assert!(line.contains("containment"), "{line}");
        assert!(
            line.ends_with("(gnu-tar x bsdtar, case 7): wrote outside"),
            "{line}"
        );
        let fuzz = FindingEvent {
            producer: None,
            case: None,
            case_dir: Some("cases/x".into()),
            known: Some(true),
            ..f
        };
        let line = found_line(&fuzz);
        assert!(line.contains("(known: in the baseline)"), "{line}");
        assert!(line.ends_with("(bsdtar, cases/x): wrote outside"), "{line}");
    }

    #[test]
    fn the_json_stream_leaves_out_the_display_only_events() {
        let done = Event::CaseDone {
            done: 1,
            total: 2,
            findings: 0,
        };
        assert!(json_event(&done).is_none());
        let tick = Event::Executions {
            executions: 30,
            findings: 1,
            elapsed: Duration::from_secs(3),
            time: Duration::from_secs(10),
        };
        let v = serde_json::to_value(json_event(&tick).expect("an event")).expect("json");
        assert_eq!(v["type"], "progress");
        assert_eq!(v["rate"], 10.0);
        assert_eq!(v["left"], 7.0);
    }
}
