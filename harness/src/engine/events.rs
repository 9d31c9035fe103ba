//! How `run`, `audit`, `lifecycle` and `fuzz` talk while they work: how much
//! ([`Verbosity`], `-q`/`-v`), in which form ([`MessageFormat`], `--message-format`), and
//! the machine-readable events of `--message-format json` ([`JsonEvent`]: one JSON object
//! per line on stdout, each with a `type` field; the schema is documented in
//! `docs/events.md`). Colour (`--color`) is decided by `anstream` per stream; files of the
//! report directory are written with `std::fs` and are never coloured.

use serde::Serialize;
use std::io::Write as _;
use std::time::Duration;

/// How much a command says besides its result (`-q`, `-v`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verbosity {
    /// `-q`: no progress and no notes; the final summary and errors only.
    Quiet,
    /// The default: progress on stderr, and the summary on stdout.
    #[default]
    Normal,
    /// `-v`: also each finding as it is found and each shrink as it starts and ends, one
    /// line each on stderr.
    Verbose,
}

/// The form of stdout (`--message-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MessageFormat {
    /// Text for people: the summary, coloured when colour is on.
    #[default]
    Human,
    /// One [`JsonEvent`] per line, nothing else on stdout (progress stays on stderr).
    Json,
}

/// What the user asked of a command's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Output {
    /// `-q` / `-v`.
    pub verbosity: Verbosity,
    /// `--message-format`.
    pub format: MessageFormat,
    /// Most one plain progress line per this interval (stderr not a terminal, or
    /// `TERM=dumb`); zero prints one per event.
    pub progress_every: Duration,
}

impl Default for Output {
    fn default() -> Self {
        Output {
            verbosity: Verbosity::Normal,
            format: MessageFormat::Human,
            progress_every: Duration::from_secs(5),
        }
    }
}

impl Output {
    /// Whether stdout carries JSON events.
    pub fn json(&self) -> bool {
        self.format == MessageFormat::Json
    }

    /// Whether progress and notes on stderr are left out (`-q`).
    pub fn quiet(&self) -> bool {
        self.verbosity == Verbosity::Quiet
    }

    /// Whether each finding and shrink gets a line of its own (`-v`).
    pub fn verbose(&self) -> bool {
        self.verbosity == Verbosity::Verbose
    }
}

/// The events of `--message-format json`, one JSON object per line on stdout, tagged by
/// `type` (kebab-case). Optional fields are left out when they do not apply. The order:
/// `run-started` first, `summary` last; in between `case-started`/`case-finished` (and a
/// `finding` for each new failing cell right after its case's `case-finished`), then
/// `shrink-started`/`shrink-finished`; `fuzz` has `progress` ticks, `finding` and
/// `fuzz-finished` instead of cases and shrinks.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum JsonEvent {
    /// The command starts its cases.
    RunStarted {
        /// `run`, `audit`, `lifecycle` or `fuzz`.
        mode: String,
        /// The seed.
        seed: u64,
        /// The profile's name.
        profile: String,
        /// The producers (empty for `fuzz`).
        producers: Vec<String>,
        /// The extractors.
        extractors: Vec<String>,
        /// Workers (`-j`).
        jobs: usize,
        /// Units of the first phase: cases (`run`, `audit`), sequences × pairs
        /// (`lifecycle`); absent for `fuzz`.
        #[serde(skip_serializing_if = "Option::is_none")]
        total: Option<u64>,
        /// The session's length in seconds (`fuzz` only).
        #[serde(skip_serializing_if = "Option::is_none")]
        seconds: Option<u64>,
        /// The report directory.
        report_dir: String,
    },
    /// A case (through one producer and every extractor) or a sequence (through one
    /// pair) starts on a worker; with `-j` above 1 several run at once.
    CaseStarted {
        /// The case's or sequence's index (0-based, of the whole run, not the shard).
        case: u64,
        /// The producer.
        producer: String,
        /// The extractor (`lifecycle`); absent when the case runs through every one.
        #[serde(skip_serializing_if = "Option::is_none")]
        extractor: Option<String>,
    },
    /// A case ended; these come in case order whatever `-j`.
    CaseFinished {
        /// The case's index.
        case: u64,
        /// The producer.
        producer: String,
        /// The extractor (`lifecycle`).
        #[serde(skip_serializing_if = "Option::is_none")]
        extractor: Option<String>,
        /// Failing cells this case is the first to hit (one `finding` event each).
        new_findings: usize,
    },
    /// The first finding of a failing cell (`run`, `audit`, `lifecycle`: producer ×
    /// extractor × check), or a cause written (`fuzz`).
    Finding {
        /// The check's id (`containment`, `late-failure`, ...).
        check: String,
        /// The producer (absent for `fuzz`).
        #[serde(skip_serializing_if = "Option::is_none")]
        producer: Option<String>,
        /// The extractor.
        #[serde(skip_serializing_if = "Option::is_none")]
        extractor: Option<String>,
        /// The case's index (absent for `fuzz`).
        #[serde(skip_serializing_if = "Option::is_none")]
        case: Option<u64>,
        /// The reproducer directory, relative to the report directory (`fuzz`; the other
        /// modes write it when the shrink ends: see the report).
        #[serde(skip_serializing_if = "Option::is_none")]
        case_dir: Option<String>,
        /// Whether the baseline knows the cause (`fuzz`; the other modes apply the
        /// baseline at the end: see `summary`).
        #[serde(skip_serializing_if = "Option::is_none")]
        known: Option<bool>,
        /// What happened, in one line or a few.
        message: String,
    },
    /// The shrink of a finding starts.
    ShrinkStarted {
        /// The check's id.
        check: String,
        /// The producer.
        producer: String,
        /// The extractor.
        extractor: String,
        /// Shrinks started before this one.
        done: usize,
        /// Shrinks of the run.
        total: usize,
    },
    /// One more shrink ended.
    ShrinkFinished {
        /// Shrinks ended.
        done: usize,
        /// Shrinks of the run.
        total: usize,
    },
    /// A `fuzz` tick, about once a second.
    Progress {
        /// Archives run through the extractor so far (shrinking not counted).
        executions: u64,
        /// Executions per second so far.
        rate: f64,
        /// Causes written so far.
        findings: usize,
        /// Seconds since the session started.
        elapsed: f64,
        /// Seconds of the session left.
        left: f64,
    },
    /// The counts of a `fuzz` session, before its `summary`.
    FuzzFinished {
        /// Archives run through the extractor.
        executions: u64,
        /// Executions per second.
        rate: f64,
        /// Executions the extractor accepted.
        accepted: u64,
        /// Executions the extractor refused.
        refused: u64,
        /// Mutants skipped as unsafe for the host.
        skipped_unsafe_for_host: u64,
    },
    /// The end: what the report says; last on stdout.
    Summary {
        /// `run`, `audit`, `lifecycle`, `fuzz`.
        mode: String,
        /// Cases (or sequences, executions) run.
        cases: u64,
        /// The seed.
        seed: u64,
        /// Failing cells (`report.json`'s `findings`).
        findings: usize,
        /// Causes the baseline does not know.
        new_causes: usize,
        /// Causes the baseline knows.
        known_causes: usize,
        /// The verdict line of the summary.
        verdict: String,
        /// The command's exit code.
        exit_code: i32,
        /// The report directory.
        report_dir: String,
    },
}

/// Write `ev` as one line of JSON on stdout. A closed stdout drops it (the command goes
/// on to its exit code, as `outln!` does).
pub fn emit(ev: &JsonEvent) {
    if let Ok(line) = serde_json::to_string(ev) {
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    }
}

/// Styles of the terminal output: findings and new causes red, known causes yellow, a
/// clean verdict green.
pub mod style {
    use anstyle::{AnsiColor, Style};

    /// A new cause, a finding.
    pub const NEW: Style = AnsiColor::Red.on_default().bold();
    /// A cause the baseline knows.
    pub const KNOWN: Style = AnsiColor::Yellow.on_default();
    /// Every pair conforms.
    pub const OK: Style = AnsiColor::Green.on_default().bold();

    /// `text` in `style` (escape codes that `anstream` strips when colour is off).
    pub fn paint(style: Style, text: &str) -> String {
        format!("{style}{text}{style:#}")
    }
}

/// Whether a terminal can show a redrawn progress bar: `TERM` is set and not `dumb` (a
/// dumb terminal, an editor's shell, gets plain lines instead).
pub fn term_redraws() -> bool {
    std::env::var_os("TERM").is_some_and(|t| !t.is_empty() && t != "dumb")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_tagged_kebab_case_and_leave_out_what_does_not_apply() {
        let ev = JsonEvent::CaseStarted {
            case: 3,
            producer: "gnu-tar".into(),
            extractor: None,
        };
        let v: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&ev).expect("serialises")).expect("parses");
        assert_eq!(v["type"], "case-started");
        assert_eq!(v["case"], 3);
        assert!(v.get("extractor").is_none());
    }
}
