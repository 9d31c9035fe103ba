//! The summary printed on stdout at the end of a run: the verdict, the causes most severe
//! first (what happened, which pairs, how many cases, the reproducer and its shrunk case),
//! and where the report is. The matrix is left to `summary.md`.

use super::case_view::case_tree_at_most;
use super::markdown::verdict;
use super::ReportFile;
use std::fmt::Write;
use std::path::Path;

/// Most lines of a cause's case tree printed on stdout.
const TREE_LINES: usize = 16;

/// Render the stdout summary of `file`, whose report directory is `dir`.
pub fn summary_text(file: &ReportFile, dir: &Path) -> String {
    let report = &file.run;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} {}, seed {}, profile `{}`: {}",
        report.title(),
        report.cases,
        report.mode.unit(),
        report.seed,
        report.profile,
        verdict(file)
    );
    for (i, c) in file.causes.iter().enumerate() {
        let _ = writeln!(
            s,
            "\n{}. {} {} ({} side): {}",
            i + 1,
            if c.known { "known" } else { "NEW" },
            c.check.id(),
            c.side,
            one_line(&c.message)
        );
        let _ = writeln!(s, "   pairs: {} ({})", c.pairs_text(4), c.counts_text());
        if let Some(also) = c.symptoms_text() {
            let _ = writeln!(s, "   also shows as: {also}");
        }
        let _ = writeln!(
            s,
            "   reproducer: sh {} ({})",
            dir.join(&c.case_dir).join("repro.sh").display(),
            c.shrink.describe(c.entries)
        );
        for l in case_tree_at_most(&dir.join(&c.case_dir), TREE_LINES).lines() {
            let _ = writeln!(s, "   {l}");
        }
    }
    if !file.run.fixed.is_empty() {
        let _ = writeln!(
            s,
            "\nfixed since the baseline ({} cause(s) it lists were not found):",
            file.run.fixed.len()
        );
        for f in &file.run.fixed {
            let _ = writeln!(s, "   {} ({} side): {}", f.check.id(), f.side, f.behaviour);
        }
    }
    // A fuzz session's notes: per cause, when it was first seen, its hits and classes.
    if report.mode == super::Mode::Fuzz && !report.notes.is_empty() {
        let _ = writeln!(s);
        for n in &report.notes {
            let _ = writeln!(s, "note: {n}");
        }
    }
    if report.has_findings() {
        let _ = writeln!(
            s,
            "\nthe matrix and every cell: {}",
            dir.join("summary.md").display()
        );
    }
    let _ = writeln!(s, "report: {}", dir.display());
    s
}

/// `text` on one line: a control character a tool printed (a raw newline of a member name
/// in its error) is shown escaped (`\n`, `\x1b`), so a cause's headline never breaks.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// A tool's message with a raw newline or escape in a name stays one line.
    #[test]
    fn a_headline_is_one_line() {
        let m = "tar-rs: failed to unpack `$JAIL/h-2/new\nline\u{1b}[31m`";
        let l = super::one_line(m);
        assert_eq!(
            l,
            "tar-rs: failed to unpack `$JAIL/h-2/new\\nline\\x1b[31m`"
        );
        assert!(!l.chars().any(char::is_control));
    }
}
