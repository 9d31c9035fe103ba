//! The output settings of the command running (`-q`, `-v`, `--color`,
//! `--message-format`: [`OutputArgs`]), set once when a command that runs cases starts,
//! and what reads them outside the progress display: notes on stderr, the `run-started`
//! event and the final summary (coloured text, or the `summary` event).

use super::args::{ColorWhen, MessageFormatArg, OutputArgs};
use super::Usage;
use snapconf_harness::engine::events::{emit, style, JsonEvent, MessageFormat, Output, Verbosity};
use snapconf_harness::report::{summary_text, ReportFile};
use std::io::Write as _;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

static OUTPUT: OnceLock<Output> = OnceLock::new();

/// Take `a` as this process's output settings (the first call wins) and set `anstream`'s
/// colour choice from `--color`; the settings.
///
/// # Errors
/// [`Usage`] for `-q` with `-v` (flags or `SNAPCONF_QUIET`/`SNAPCONF_VERBOSE`), as cargo.
pub fn set(a: &OutputArgs) -> Result<Output, Usage> {
    if a.quiet && a.verbose {
        return Err(Usage(
            "-q/--quiet and -v/--verbose cannot be used together".into(),
        ));
    }
    let choice = match a.color {
        ColorWhen::Auto => anstream::ColorChoice::Auto,
        ColorWhen::Always => anstream::ColorChoice::Always,
        ColorWhen::Never => anstream::ColorChoice::Never,
    };
    choice.write_global();
    let out = Output {
        verbosity: match (a.quiet, a.verbose) {
            (true, _) => Verbosity::Quiet,
            (false, true) => Verbosity::Verbose,
            (false, false) => Verbosity::Normal,
        },
        format: match a.message_format {
            MessageFormatArg::Human => MessageFormat::Human,
            MessageFormatArg::Json => MessageFormat::Json,
        },
        progress_every: Duration::from_secs(a.progress_every),
    };
    Ok(*OUTPUT.get_or_init(|| out))
}

/// The settings [`set`] took (the defaults when no command set them: `report merge`).
pub fn get() -> Output {
    OUTPUT.get().copied().unwrap_or_default()
}

/// A note on stderr (what runs, with which seed), left out with `-q`.
pub fn note(text: &str) {
    if !get().quiet() {
        let _ = writeln!(anstream::stderr().lock(), "{text}");
    }
}

/// An event of the command itself (`run-started`, `fuzz-finished`), written with
/// `--message-format json` only.
pub fn event(ev: JsonEvent) {
    if get().json() {
        emit(&ev);
    }
}

/// The end of a command on stdout: the summary of `file` (report directory `dir`), its
/// verdict and causes coloured (new red, known yellow, conforming green); or, with
/// `--message-format json`, the `summary` event.
pub fn summary(file: &ReportFile, dir: &Path) {
    let run = &file.run;
    let new = file.causes.iter().filter(|c| !c.known).count();
    if get().json() {
        emit(&JsonEvent::Summary {
            mode: run.mode.command().to_string(),
            cases: run.cases,
            seed: run.seed,
            findings: run.findings.len(),
            new_causes: new,
            known_causes: file.causes.len() - new,
            verdict: snapconf_harness::report::verdict(file),
            exit_code: file.exit_code(),
            report_dir: dir.display().to_string(),
        });
        return;
    }
    let text = summary_text(file, dir);
    let mut stdout = anstream::stdout().lock();
    for (i, line) in text.trim_end().lines().enumerate() {
        let painted = if i == 0 {
            let s = if new > 0 {
                style::NEW
            } else if !file.causes.is_empty() {
                style::KNOWN
            } else if run.has_findings() || run.nothing_ran() {
                anstyle::Style::new()
            } else {
                style::OK
            };
            style::paint(s, line)
        } else {
            // A cause's first line: `N. NEW check ...` or `N. known check ...`.
            let cause = line
                .split_once(". ")
                .and_then(|(n, _)| n.parse::<usize>().ok())
                .and_then(|n| file.causes.get(n.checked_sub(1)?));
            match cause {
                Some(c) if c.known => style::paint(style::KNOWN, line),
                Some(_) => style::paint(style::NEW, line),
                None => line.to_string(),
            }
        };
        let _ = writeln!(stdout, "{painted}");
    }
}
