//! The Markdown summary: the causes, most severe first, each with its reproducer and its
//! shrunk case as a tree; then the producer × extractor × check matrix and the first finding
//! of each cell with a link to its reproducer. Fit for `$GITHUB_STEP_SUMMARY`.

use super::case_view::{case_tree_at_most, CASE_LINES};
use super::{Cause, ReportFile};
use std::fmt::Write;
use std::path::Path;

/// The one-line verdict of a report: `3 new cause(s) in 14 failing cell(s), 1 known from
/// the baseline`, or `every pair conforms`; pairs that ran no case (every capture
/// refused) are named instead of counted as conforming.
pub fn verdict(file: &ReportFile) -> String {
    let shortfall = file.run.shortfall();
    let v = findings_verdict(file);
    if shortfall.is_empty() {
        return v;
    }
    format!("INCOMPLETE ({}); {v}", shortfall.join("; "))
}

/// [`verdict`] without what the report lacks.
fn findings_verdict(file: &ReportFile) -> String {
    let report = &file.run;
    if !report.has_findings() {
        let idle = report.idle_pairs();
        if report.nothing_ran() && report.pairs.iter().all(|p| p.cases == 0) {
            return format!("nothing ran: 0 {}", report.mode.unit());
        }
        if report.nothing_ran() {
            return "no pair ran a case: every capture was refused (see the capture refusals)"
                .to_string();
        }
        if !idle.is_empty() {
            let names: Vec<String> = idle
                .iter()
                .map(|p| format!("{} × {}", p.producer, p.extractor))
                .collect();
            return format!(
                "every pair that ran conforms; {} pair(s) ran no case, every capture refused: {}",
                idle.len(),
                names.join(", ")
            );
        }
        return "every pair conforms".to_string();
    }
    let new = file.causes.iter().filter(|c| !c.known).count();
    let known = file.causes.len() - new;
    format!(
        "{new} new cause(s) in {} failing cell(s), {known} known from the baseline",
        report.findings.len()
    )
}

/// How to run a cause's reproducer from the report directory.
pub fn repro_command(c: &Cause) -> String {
    format!("sh {}/repro.sh", c.case_dir)
}

/// Render `summary.md` for `file`; `dir` is the report directory (the reproducers' cases
/// are read from it). Links are relative to it.
pub fn summary_markdown(file: &ReportFile, dir: &Path) -> String {
    let report = &file.run;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# {}: {} {}, seed {}, profile `{}`\n",
        report.title(),
        report.cases,
        report.mode.unit(),
        report.seed,
        report.profile
    );
    let v = verdict(file);
    if report.has_new_findings() {
        let _ = writeln!(s, "Result: **{v}**.\n");
    } else {
        let _ = writeln!(s, "Result: {v}.\n");
    }
    if !file.causes.is_empty() {
        let _ = writeln!(s, "## Causes, most severe first\n");
        let _ = writeln!(
            s,
            "Findings grouped by behaviour (check, side, the refusal or difference, and the \
             features of the shrunk workspace), across pairs; symptoms of a producer's fault \
             are folded into it, root first. Cases are `ls -l` style; in a message a `?` in a mode is a permission bit the \
             profile does not compare.\n"
        );
        for (i, c) in file.causes.iter().enumerate() {
            cause_markdown(&mut s, i + 1, c, dir);
        }
        let _ = writeln!(s, "## Matrix\n");
    }
    let _ = write!(s, "| producer | extractor | cases | passed | skipped |");
    for c in report.columns() {
        let _ = write!(s, " {} |", c.id());
    }
    let _ = write!(s, "\n|---|---|---:|---:|---:|");
    for _ in report.columns() {
        let _ = write!(s, "---:|");
    }
    s.push('\n');
    for p in &report.pairs {
        let _ = write!(
            s,
            "| {} | {} | {} | {} | {} |",
            p.producer, p.extractor, p.cases, p.passed, p.skipped
        );
        for c in report.columns() {
            let n = p.findings.get(c.id()).copied().unwrap_or(0);
            if n == 0 {
                s.push_str(" 0 |");
            } else {
                let link = report
                    .findings
                    .iter()
                    .find(|f| {
                        f.producer == p.producer && f.extractor == p.extractor && f.check == c
                    })
                    .map(|f| format!(" [repro]({}/)", f.case_dir))
                    .unwrap_or_default();
                let _ = write!(s, " **{n}**{link} |");
            }
        }
        s.push('\n');
    }
    if !report.findings.is_empty() {
        let _ = writeln!(s, "\n## First finding per cell\n");
        for f in &report.findings {
            let _ = writeln!(
                s,
                "- {} **{}** `{}` × `{}` ({} case(s); {}): {}  \n  {} [reproducer]({}/)",
                if f.known { "known" } else { "NEW" },
                f.check.id(),
                f.producer,
                f.extractor,
                f.count,
                f.shrink.describe(f.entries),
                f.check.explain(),
                md_escape(&f.message),
                f.case_dir
            );
        }
    }
    s.push_str(&super::faults_markdown(report));
    if !report.notes.is_empty() {
        let _ = writeln!(s, "\n## Notes\n");
        for n in &report.notes {
            let _ = writeln!(s, "- {}", md_escape(n));
        }
    }
    if !report.fixed.is_empty() {
        let _ = writeln!(s, "\n## Fixed since the baseline\n");
        for k in &report.fixed {
            let _ = writeln!(
                s,
                "- **{}** ({} side, fingerprint `{}`{}) no longer found{}",
                k.check.id(),
                k.side,
                k.fingerprint,
                if k.pairs.is_empty() {
                    String::new()
                } else {
                    format!("; recorded in {}", k.pairs.join(", "))
                },
                if k.note.is_empty() {
                    String::new()
                } else {
                    format!(": {}", md_escape(&k.note))
                }
            );
        }
    }
    if !report.capture_refusals.is_empty() {
        let _ = writeln!(s, "\n## Capture refusals by workspace feature\n");
        let _ = writeln!(s, "| producer | feature | refusals |\n|---|---|---:|");
        for r in &report.capture_refusals {
            let _ = writeln!(s, "| {} | {} | {} |", r.producer, r.feature, r.count);
        }
    }
    if !report.skipped_adapters.is_empty() {
        let _ = writeln!(s, "\n## Skipped adapters\n");
        for a in &report.skipped_adapters {
            let _ = writeln!(
                s,
                "- `{}`: {} (install: `{}`)",
                a.name, a.reason, a.install_hint
            );
        }
    }
    if report.skipped_entries > 0 {
        let _ = writeln!(
            s,
            "\n{} generated entries could not be created on this machine (char devices need root) and were left out.",
            report.skipped_entries
        );
    }
    s
}

fn cause_markdown(s: &mut String, n: usize, c: &Cause, dir: &Path) {
    let _ = writeln!(
        s,
        "### {n}. {} `{}`: {}\n",
        if c.known { "known" } else { "NEW" },
        c.check.id(),
        c.check.explain()
    );
    let _ = writeln!(s, "{}\n", md_escape(&c.message));
    let _ = writeln!(s, "- side: {} ({})", c.side, c.side.explain());
    if !c.behaviour.is_empty() {
        let _ = writeln!(s, "- behaviour: {}", md_escape(&c.behaviour));
    }
    if let Some(also) = c.symptoms_text() {
        let _ = writeln!(s, "- also shows as: {}", md_escape(&also));
    }
    let _ = writeln!(
        s,
        "- pairs: {} ({})",
        md_escape(&c.pairs_text(6)),
        c.counts_text()
    );
    let _ = writeln!(
        s,
        "- reproducer: [`{}/`]({}/), run `{}` ({})",
        c.case_dir,
        c.case_dir,
        repro_command(c),
        c.shrink.describe(c.entries)
    );
    let _ = writeln!(s, "- case:\n");
    let tree = case_tree_at_most(&dir.join(&c.case_dir), CASE_LINES);
    let fence = fence_for(&tree);
    let _ = writeln!(s, "{fence}text\n{tree}{fence}\n");
}

/// A code fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Mode, PairReport, RunReport};

    fn pair(producer: &str, cases: u64, passed: u64) -> PairReport {
        let mut p = PairReport::new(producer, "reference");
        p.cases = cases;
        p.passed = passed;
        p.skipped = cases - passed;
        p
    }

    /// A pair that ran no case is named in the verdict, and a run where no pair ran one
    /// says so and exits 3; a pair with some cases run conforms as ever.
    #[test]
    fn pairs_that_ran_no_case_are_not_counted_as_conforming() {
        let mut run = RunReport::empty(Mode::Run, 1, 6, "default");
        run.pairs = vec![pair("a", 6, 2), pair("b", 6, 0)];
        let file = ReportFile::new(run.clone());
        assert_eq!(
            verdict(&file),
            "every pair that ran conforms; 1 pair(s) ran no case, every capture refused: b × reference"
        );
        assert_eq!(file.exit_code(), crate::exit::OK);
        run.pairs = vec![pair("b", 6, 0)];
        let file = ReportFile::new(run.clone());
        assert!(
            verdict(&file).starts_with("no pair ran a case"),
            "{}",
            verdict(&file)
        );
        assert_eq!(file.exit_code(), crate::exit::NOTHING_RAN);
        run.pairs = vec![pair("a", 6, 6)];
        let file = ReportFile::new(run);
        assert_eq!(verdict(&file), "every pair conforms");
        assert_eq!(file.exit_code(), crate::exit::OK);
    }
}
