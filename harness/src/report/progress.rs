//! Progress display: an indicatif bar when stdout is a terminal, a plain counter otherwise.

use crate::run::runner::Event;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// Consumes runner events and shows progress on stderr.
pub struct Progress {
    bar: Option<ProgressBar>,
    last_percent: u64,
}

impl Progress {
    /// A bar when stdout is a terminal, else a counter line every 10 % of the cases.
    pub fn new(total: u64) -> Self {
        let bar = std::io::stdout().is_terminal().then(|| {
            let b = ProgressBar::new(total);
            if let Ok(style) = ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {pos}/{len} cases  {msg}",
            ) {
                b.set_style(style.progress_chars("=> "));
            }
            b
        });
        Progress {
            bar,
            last_percent: 0,
        }
    }

    /// Show one event.
    pub fn event(&mut self, ev: &Event) {
        match (ev, &self.bar) {
            (
                Event::CaseDone {
                    index, findings, ..
                },
                Some(b),
            ) => {
                b.set_position(index + 1);
                b.set_message(format!("{findings} failing cell(s)"));
            }
            (
                Event::CaseDone {
                    index,
                    total,
                    findings,
                },
                None,
            ) => {
                let pct = (index + 1) * 100 / (*total).max(1);
                if pct / 10 > self.last_percent / 10 || index + 1 == *total {
                    self.last_percent = pct;
                    eprintln!(
                        "[{}/{}] cases done, {findings} failing cell(s)",
                        index + 1,
                        total
                    );
                }
            }
            (
                Event::Shrinking {
                    check,
                    producer,
                    extractor,
                },
                Some(b),
            ) => {
                b.set_message(format!("shrinking {check} for {producer} x {extractor}"));
            }
            (
                Event::Shrinking {
                    check,
                    producer,
                    extractor,
                },
                None,
            ) => {
                eprintln!("shrinking {check} for {producer} x {extractor}");
            }
        }
    }

    /// Remove the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
