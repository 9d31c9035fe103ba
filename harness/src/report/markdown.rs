//! The Markdown summary: the producer × extractor × check matrix and the first finding of
//! each cell with a link to its reproducer. Fit for `$GITHUB_STEP_SUMMARY`.

use super::RunReport;
use std::fmt::Write;

/// Render `summary.md` for `report`. Links are relative to the report directory.
pub fn summary_markdown(report: &RunReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# {}: {} cases, seed {}, profile `{}`\n",
        report.title(),
        report.cases,
        report.seed,
        report.profile
    );
    let known = report.findings.iter().filter(|f| f.known).count();
    let verdict = if report.has_findings() {
        format!(
            "**{} new finding(s)**, {known} known from the baseline",
            report.findings.len() - known
        )
    } else {
        "every pair conforms".to_string()
    };
    let _ = writeln!(s, "Result: {verdict}.\n");
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
                "- **{}** `{}` × `{}` (fingerprint `{}`) no longer found",
                k.check.id(),
                k.producer,
                k.extractor,
                k.fingerprint
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

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
