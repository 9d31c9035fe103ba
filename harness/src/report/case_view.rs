//! A reproducer's shrunk case as people read it: `ls -l`-style trees of its workspaces
//! (names escaped, `new\nline`, `bad\xff`), never the raw JSON of `spec.json`.

use crate::model::spec::WorkspaceSpec;
use crate::workspace::describe::spec_tree;
use crate::workspace::diff::listing;
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
        case_dir.join("spec.json").display()
    );
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
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("(cannot read `{}`: {e})", path.display()))?;
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
