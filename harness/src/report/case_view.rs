//! A reproducer's shrunk case as people read it: `ls -l`-style trees of its workspaces
//! (names escaped, `new\nline`, `bad\xff`), never the raw JSON of `spec.json`. The case
//! of each mode's reproducer: a run's `spec.json` and `prior.json`, a lifecycle
//! sequence's `sequence.json` (its initial workspace and its turns), a fuzz finding's
//! `archive.tar` (its records, as the fuzzer reads them).

use crate::model::bytes::RawBytes;
use crate::model::diff::listing;
use crate::model::spec::WorkspaceSpec;
use crate::workspace::describe::spec_tree;
use snapconf_producers::input::{read_file, read_text, ARCHIVE_LIMIT, CONFIG_LIMIT};
use std::fmt::Write;
use std::path::Path;

/// Most lines of a cause's case shown in `summary.md` and `index.html` (an audit's case can
/// have thousands of entries; its reproducer has all of them).
pub const CASE_LINES: usize = 60;

/// The case of the reproducer in `case_dir` as text: `workspace (W1):` and its tree (the
/// entries as created, every mode bit shown), the excluded paths if any, then `prior
/// workspace (W0):` and its tree when the case hydrates over one. A file that cannot be
/// read is named in the text instead of its tree.
pub fn case_tree(case_dir: &Path) -> String {
    match case_file(case_dir) {
        SEQUENCE => return sequence_tree(case_dir),
        ARCHIVE => return archive_records(case_dir),
        _ => {}
    }
    let mut s = String::new();
    match read_spec(case_dir, "spec.json") {
        Ok(spec) => {
            let _ = writeln!(s, "workspace (W1):");
            s.push_str(&indented(&spec_listing(&spec)));
            if !spec.exclusions.is_empty() {
                let names: Vec<String> = spec.exclusions.iter().map(|p| p.escaped()).collect();
                let _ = writeln!(s, "excluded from capture: {}", names.join(", "));
            }
        }
        Err(e) => {
            let _ = writeln!(s, "{e}");
        }
    }
    match read_spec(case_dir, "prior.json") {
        Ok(prior) if !prior.entries.is_empty() => {
            let _ = writeln!(s, "prior workspace (W0), hydrated over:");
            s.push_str(&indented(&spec_listing(&prior)));
        }
        Ok(_) => {}
        Err(e) => {
            let _ = writeln!(s, "{e}");
        }
    }
    s
}

/// [`case_tree`] cut to its first `most` lines; a cut tree ends with a line saying how many
/// more there are and where the whole case is.
pub fn case_tree_at_most(case_dir: &Path, most: usize) -> String {
    let tree = case_tree(case_dir);
    let lines: Vec<&str> = tree.lines().collect();
    if lines.len() <= most {
        return tree;
    }
    let mut s: String = lines[..most].iter().map(|l| format!("{l}\n")).collect();
    let _ = writeln!(
        s,
        "… {} more line(s); the whole case: {}",
        lines.len() - most,
        case_dir.join(case_file(case_dir)).display()
    );
    s
}

/// A lifecycle reproducer's case file.
const SEQUENCE: &str = "sequence.json";
/// A fuzz reproducer's case file.
const ARCHIVE: &str = "archive.tar";

/// The file that holds the case of the reproducer in `case_dir`: `sequence.json` (a
/// lifecycle finding), `archive.tar` without `spec.json` (a fuzz finding), else
/// `spec.json`.
fn case_file(case_dir: &Path) -> &'static str {
    if case_dir.join(SEQUENCE).is_file() {
        SEQUENCE
    } else if !case_dir.join("spec.json").exists() && case_dir.join(ARCHIVE).is_file() {
        ARCHIVE
    } else {
        "spec.json"
    }
}

/// A lifecycle case: the initial workspace as a tree, then each turn's edits and restores
/// one a line (edits as their JSON, which names entries by number).
fn sequence_tree(case_dir: &Path) -> String {
    let path = case_dir.join(SEQUENCE);
    let seq: crate::gen::Sequence = match read_text(&path, CONFIG_LIMIT)
        .map_err(|e| e.to_string())
        .and_then(|t| {
            serde_json::from_str(&t)
                .map_err(|e| format!("`{}` is not a sequence: {e}", path.display()))
        }) {
        Ok(seq) => seq,
        Err(e) => return format!("({e})\n"),
    };
    let mut s = String::new();
    let _ = writeln!(s, "initial workspace:");
    s.push_str(&indented(&spec_listing(&seq.initial)));
    for (i, t) in seq.turns.iter().enumerate() {
        let _ = writeln!(
            s,
            "turn {}: {} edit(s), then a capture",
            i + 1,
            t.edits.len()
        );
        for e in &t.edits {
            let _ = writeln!(s, "  {}", serde_json::to_string(e).unwrap_or_default());
        }
        for r in &t.restores {
            let _ = writeln!(
                s,
                "  restore the checkpoint {} back {}",
                r.back,
                if r.warm {
                    "over the live workspace"
                } else {
                    "into an empty root"
                }
            );
        }
    }
    s
}

/// A fuzz case: the records of `archive.tar` one a line, type flag, name and link target
/// escaped, as the fuzzer parses them (the archive may be one no tar reader accepts).
fn archive_records(case_dir: &Path) -> String {
    let path = case_dir.join(ARCHIVE);
    let bytes = match read_file(&path, ARCHIVE_LIMIT) {
        Ok(b) => b,
        Err(e) => return format!("({e})\n"),
    };
    let recs = snapconf_tarbytes::Records::parse(&bytes);
    let mut s = format!("archive.tar, {} record(s):\n", recs.records.len());
    for r in &recs.records {
        let flag = match r.flag() {
            0 => '0',
            f => char::from(f),
        };
        if r.is_extension() {
            let _ = writeln!(s, "  {flag} (extension header)");
            continue;
        }
        let name = RawBytes(r.name()).escaped();
        let _ = match r.flag() {
            b'1' | b'2' => writeln!(s, "  {flag} {name} -> {}", RawBytes(r.link()).escaped()),
            _ => writeln!(s, "  {flag} {name}"),
        };
    }
    s
}

/// The `ls -l`-style listing of a spec (`(empty)` for no entries).
pub fn spec_listing(spec: &WorkspaceSpec) -> String {
    let text = listing(&spec_tree(spec));
    if text.is_empty() {
        "(empty)\n".into()
    } else {
        text
    }
}

fn indented(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

fn read_spec(case_dir: &Path, name: &str) -> Result<WorkspaceSpec, String> {
    let path = case_dir.join(name);
    let text = read_text(&path, CONFIG_LIMIT).map_err(|e| format!("({e})"))?;
    WorkspaceSpec::from_json(&text)
        .map_err(|e| format!("(`{}` is not a workspace spec: {e})", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_reads_as_trees_and_a_missing_file_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("spec.json"),
            r#"{"entries":[{"path":{"hex":"626164ff"},"kind":"file","content":"x"}],"exclusions":[]}"#,
        )
        .expect("write");
        let text = case_tree(dir.path());
        assert!(
            text.starts_with("workspace (W1):\n  -rw-r--r--  1  sha256:"),
            "{text}"
        );
        assert!(text.contains("bad\\xff\n"), "{text}");
        assert!(
            text.contains("prior.json"),
            "the missing W0 is named: {text}"
        );
        assert!(!text.contains("\"entries\""), "no raw JSON: {text}");
        let cut = case_tree_at_most(dir.path(), 1);
        assert_eq!(cut.lines().count(), 2, "{cut}");
        assert!(
            cut.ends_with("spec.json\n") && cut.contains("… 2 more line(s)"),
            "{cut}"
        );
    }
}
