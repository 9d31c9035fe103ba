//! `index.html`: one self-contained page (inline CSS, no script, no network): the causes,
//! most severe first, each with its reproducer and shrunk case as a tree; the matrix with
//! coloured cells; and each finding expandable with its case, archive listing and tree diff.

use super::case_view::{case_tree, case_tree_at_most, CASE_LINES};
use super::markdown::{repro_command, verdict};
use super::{Cause, ReportFile};
use crate::archive::listing::list_members;
use crate::model::bytes::escape;
use std::fmt::Write;
use std::path::Path;

pub(super) fn h(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Member listing of `archive.tar` in a reproducer directory, one `kind name [-> target]
/// [(size)]` line per member (the kind as [`snapconf_extract::MemberKind`] displays it, the
/// size of regular files), or why it cannot be read.
pub fn archive_listing(case_dir: &Path) -> String {
    let path = case_dir.join("archive.tar");
    let file = match snapconf_producers::input::open_file(&path) {
        Ok(f) => f,
        Err(snapconf_producers::input::InputError::Open { source, .. }) => {
            return format!("(no archive: {source})")
        }
        Err(e) => return format!("(no archive: {e})"),
    };
    match list_members(std::io::BufReader::new(file)) {
        Ok(ms) => {
            let mut s = String::new();
            for m in ms {
                let t = m.kind.to_string();
                let name = if m.name.is_empty() {
                    ".".to_string()
                } else {
                    escape(&m.name)
                };
                let _ = write!(s, "{t:<8} {name}");
                if let Some(l) = &m.link_target {
                    let _ = write!(s, " -> {}", escape(l));
                }
                if let Some(size) = m.size {
                    let _ = write!(s, " ({size})");
                }
                let _ = writeln!(s);
            }
            s
        }
        Err(e) => format!("(archive unreadable: {e})"),
    }
}

fn cause_html(s: &mut String, c: &Cause, dir: &Path) {
    let _ = writeln!(
        s,
        "<li class=\"cause\"><p><strong>{}</strong> <span class=\"check\">{}</span> ({} side): {}</p>",
        if c.known { "known" } else { "NEW" },
        c.check.id(),
        c.side,
        h(&c.message)
    );
    let _ = writeln!(
        s,
        "<p>{}. Pairs: {} ({}).<br>Reproducer: <a href=\"{}/\"><code>{}/</code></a>, run <code>{}</code> ({}).</p>",
        h(c.check.explain()),
        h(&c.pairs_text(6)),
        h(&c.counts_text()),
        h(&c.case_dir),
        h(&c.case_dir),
        h(&repro_command(c)),
        h(&c.shrink.describe(c.entries))
    );
    if let Some(also) = c.symptoms_text() {
        let _ = writeln!(s, "<p>Also shows as: {}.</p>", h(&also));
    }
    let _ = writeln!(
        s,
        "<pre>{}</pre></li>",
        h(&case_tree_at_most(&dir.join(&c.case_dir), CASE_LINES))
    );
}

/// Render `index.html`; `dir` is the report directory (reproducers are read from it).
pub fn index_html(file: &ReportFile, dir: &Path) -> String {
    let report = &file.run;
    let mut s = String::new();
    s.push_str("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    let _ = writeln!(
        s,
        "<title>snapconf: {} {}, seed {}</title>",
        report.cases,
        report.mode.unit(),
        report.seed
    );
    s.push_str(
        "<style>\n\
         body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}\n\
         table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}\n\
         th{background:#f4f4f4}td.pair{text-align:left;font-family:monospace}\n\
         td.ok{background:#dff5df}td.bad{background:#f8d0d0;font-weight:bold}td.skip{background:#eee;color:#888}\n\
         pre{background:#f7f7f7;padding:8px;overflow-x:auto;font-size:12px}\n\
         details{margin:0.5em 0;border:1px solid #ddd;padding:4px 8px}summary{cursor:pointer}\n\
         .check{font-family:monospace;color:#a00}\n\
         </style></head><body>\n",
    );
    let _ = writeln!(
        s,
        "<h1>{}</h1>\n<p>{} {}, seed {}, profile <code>{}</code>: <strong>{}</strong></p>",
        h(&report.title()),
        report.cases,
        report.mode.unit(),
        report.seed,
        h(&report.profile),
        h(&verdict(file))
    );
    if !file.causes.is_empty() {
        s.push_str("<h2>Causes, most severe first</h2>\n<p>Findings grouped by behaviour (check, side, the refusal or difference, and the features of the shrunk workspace), across pairs; symptoms of a producer's fault are folded into it, root first. Cases are <code>ls -l</code> style; in a message a <code>?</code> in a mode is a permission bit the profile does not compare.</p>\n<ol id=\"causes\">\n");
        for c in &file.causes {
            cause_html(&mut s, c, dir);
        }
        s.push_str("</ol>\n<h2>Matrix</h2>\n");
    }
    s.push_str("<table id=\"matrix\"><tr><th>producer × extractor</th><th>cases</th><th>passed</th><th>skipped</th>");
    for c in report.columns() {
        let _ = write!(s, "<th title=\"{}\">{}</th>", h(c.explain()), c.id());
    }
    s.push_str("</tr>\n");
    for p in &report.pairs {
        let _ = write!(
            s,
            "<tr><td class=\"pair\">{} × {}</td><td>{}</td><td>{}</td><td>{}</td>",
            h(&p.producer),
            h(&p.extractor),
            p.cases,
            p.passed,
            p.skipped
        );
        for c in report.columns() {
            let n = p.findings.get(c.id()).copied().unwrap_or(0);
            if n > 0 {
                let anchor = format!("{}__{}__{}", c.id(), p.producer, p.extractor);
                let _ = write!(
                    s,
                    "<td class=\"bad\"><a href=\"#{}\">{n}</a></td>",
                    h(&anchor)
                );
            } else if p.cases > 0 && p.skipped == p.cases {
                s.push_str("<td class=\"skip\">–</td>");
            } else {
                s.push_str("<td class=\"ok\">0</td>");
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s.push_str(&super::fault_rows::faults_html(report));
    if !report.findings.is_empty() {
        s.push_str("<h2>Findings</h2>\n");
    }
    for f in &report.findings {
        let case_dir = dir.join(&f.case_dir);
        let read = |name: &str| {
            snapconf_producers::input::read_text(
                &case_dir.join(name),
                snapconf_producers::input::CONFIG_LIMIT,
            )
            .unwrap_or_default()
        };
        let anchor = format!("{}__{}__{}", f.check.id(), f.producer, f.extractor);
        let _ = writeln!(
            s,
            "<details id=\"{}\"><summary><span class=\"check\">{}</span> {} × {}: {} ({} case(s), {})</summary>",
            h(&anchor),
            f.check.id(),
            h(&f.producer),
            h(&f.extractor),
            h(&f.message),
            f.count,
            h(&f.shrink.describe(f.entries))
        );
        let _ = writeln!(
            s,
            "<p>{}. Reproducer: <code>{}/repro.sh</code></p>",
            h(f.check.explain()),
            h(&f.case_dir)
        );
        let _ = writeln!(s, "<h4>case</h4><pre>{}</pre>", h(&case_tree(&case_dir)));
        let _ = writeln!(
            s,
            "<h4>archive members</h4><pre>{}</pre>",
            h(&archive_listing(&case_dir))
        );
        let _ = writeln!(
            s,
            "<h4>expected (a <code>?</code> in a mode: not compared by the profile)</h4><pre>{}</pre>",
            h(&read("expected.txt"))
        );
        let _ = writeln!(
            s,
            "<h4>observed and diff</h4><pre>{}</pre>",
            h(&read("observed.txt"))
        );
        s.push_str("</details>\n");
    }
    if !report.skipped_adapters.is_empty() {
        s.push_str("<h2>Skipped adapters</h2><ul>\n");
        for a in &report.skipped_adapters {
            let _ = writeln!(
                s,
                "<li><code>{}</code>: {} (install: <code>{}</code>)</li>",
                h(&a.name),
                h(&a.reason),
                h(&a.install_hint)
            );
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</body></html>\n");
    s
}
