//! The folders of `harness/src` are the pipeline: no module imports one above it, nor a
//! peer of its own rank. [`RANKS`] is the one table of that order (docs/design.md, "Module
//! map"); the scanner reads every `.rs` file of the library (not `cmd/` and `main.rs`, the
//! binary), finds its references to other top-level modules (`crate::X`, `crate::{X, ..}`
//! and `super::` chains that climb out of the module) outside comments and string
//! literals, and names each upward or peer edge with its file and line.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The top-level modules of the library, lowest first, with their rank. A module may
/// import only modules of a lower rank: two modules of one rank are peers and never
/// import each other.
const RANKS: &[(&str, u32)] = &[
    ("error", 0),
    ("exit", 0),
    ("model", 1),
    ("gen", 2),
    ("archive", 2),
    ("workspace", 3),
    ("jail", 4),
    ("checks", 5),
    ("report", 6),
    ("engine", 7),
    ("run", 8),
    ("lifecycle", 8),
    ("fuzz", 8),
];

/// Top-level entries of `harness/src` that belong to the binary, not the library: not
/// scanned, and never imported by the library.
const BINARY: &[&str] = &["cmd", "main"];

/// Edges allowed for now, each with the reason and the change that removes it. The test
/// fails when one of them is no longer found, so that the list only shrinks.
const PENDING: &[(&str, &str, &str)] = &[];

fn rank(module: &str) -> Option<u32> {
    RANKS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

/// One reference from a file to another top-level module.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Edge {
    /// 1-based line of the reference.
    line: usize,
    /// The top-level module referred to.
    to: String,
    /// The path as written (`crate::run::case`, `super::super::run`).
    text: String,
}

/// `src` with comments and the contents of string and character literals blanked out
/// (newlines kept, so line numbers stay).
fn strip(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        let prev_ident = i > 0 && is_ident(b[i - 1]);
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if !prev_ident && (c == 'r' || (c == 'b' && next == Some('r'))) && {
            // A raw string: r"..", r#".."#, br#".."#.
            let mut j = i + if c == 'b' { 2 } else { 1 };
            while b.get(j) == Some(&'#') {
                j += 1;
            }
            b.get(j) == Some(&'"')
        } {
            let mut j = i + if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while b[j] == '#' {
                hashes += 1;
                j += 1;
            }
            // b[j] is the opening quote.
            out.extend(std::iter::repeat_n(' ', j + 1 - i));
            i = j + 1;
            while i < b.len() {
                if b[i] == '"' && (0..hashes).all(|k| b.get(i + 1 + k) == Some(&'#')) {
                    out.extend(std::iter::repeat_n(' ', hashes + 1));
                    i += hashes + 1;
                    break;
                }
                out.push(blank(b[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < b.len() {
                if b[i] == '\\' {
                    out.push(' ');
                    if let Some(&e) = b.get(i + 1) {
                        out.push(blank(e));
                    }
                    i += 2;
                    continue;
                }
                if b[i] == '"' {
                    out.push(' ');
                    i += 1;
                    break;
                }
                out.push(blank(b[i]));
                i += 1;
            }
        } else if c == '\'' && (next == Some('\\') || b.get(i + 2) == Some(&'\'')) {
            // A character literal ('x', '\n', '\''); a lifetime ('a) is left as it is.
            out.push(' ');
            i += 1;
            while i < b.len() {
                if b[i] == '\\' {
                    out.push_str("  ");
                    i += 2;
                    continue;
                }
                if b[i] == '\'' {
                    out.push(' ');
                    i += 1;
                    break;
                }
                out.push(blank(b[i]));
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The module path of the file at `rel` (relative to `src`, `/`-separated):
/// `engine/faults/mod.rs` is `[engine, faults]`, `engine/faults/plan.rs` is
/// `[engine, faults, plan]`.
fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Scans `src` (the text of the file whose module path is `path`) for references to
/// top-level modules other than its own.
fn references(path: &[String], src: &str) -> Vec<Edge> {
    let text = strip(src);
    let b: Vec<char> = text.chars().collect();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let ident_at = |i: usize| -> String {
        b[i..]
            .iter()
            .take_while(|c| is_ident(**c))
            .collect::<String>()
    };
    let skip_ws = |mut i: usize| {
        while i < b.len() && b[i].is_whitespace() {
            i += 1;
        }
        i
    };
    let starts = |i: usize, s: &str| s.chars().enumerate().all(|(k, c)| b.get(i + k) == Some(&c));
    // The first-level names of a `{..}` group at `i` (which holds `{`).
    let group = |i: usize| -> Vec<String> {
        let mut names = Vec::new();
        let mut depth = 0;
        let mut expect_name = false;
        let mut j = i;
        while j < b.len() {
            match b[j] {
                '{' => {
                    depth += 1;
                    expect_name = depth == 1;
                }
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                ',' if depth == 1 => expect_name = true,
                c if expect_name && is_ident(c) => {
                    names.push(ident_at(j));
                    expect_name = false;
                    j += names.last().map_or(1, |n| n.chars().count());
                    continue;
                }
                c if c.is_whitespace() => {}
                _ if depth == 1 => expect_name = false,
                _ => {}
            }
            j += 1;
        }
        names
    };
    let mut edges = Vec::new();
    let mut line = 1;
    let mut depth = 0usize;
    // Inline modules open here: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut pending_mod: Option<String> = None;
    let own = path.first().cloned().unwrap_or_default();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == '\n' {
            line += 1;
        }
        if c == '{' {
            depth += 1;
            if let Some(m) = pending_mod.take() {
                inline.push((m, depth));
            }
            i += 1;
            continue;
        }
        if c == '}' {
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
            i += 1;
            continue;
        }
        if c == ';' {
            pending_mod = None;
        }
        let boundary = i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == ':' || b[i - 1] == '$');
        if !boundary || !is_ident(c) {
            i += 1;
            continue;
        }
        let word = ident_at(i);
        let after = i + word.chars().count();
        if word == "mod" {
            let j = skip_ws(after);
            let name = ident_at(j);
            if !name.is_empty() {
                pending_mod = Some(name);
            }
        } else if word == "crate" && starts(after, "::") {
            let j = after + 2;
            let names = if b.get(j) == Some(&'{') {
                group(j)
            } else {
                vec![ident_at(j)]
            };
            for to in names {
                if to != own && to != "self" && !to.is_empty() {
                    edges.push(Edge {
                        line,
                        text: format!("crate::{to}"),
                        to,
                    });
                }
            }
        } else if word == "super" && starts(after, "::") {
            let mut climbs = 0;
            let mut j = i;
            while starts(j, "super::") {
                climbs += 1;
                j += "super::".len();
            }
            let here = path.len() + inline.len();
            if climbs >= here {
                let names = if b.get(j) == Some(&'{') {
                    group(j)
                } else {
                    vec![ident_at(j)]
                };
                for to in names {
                    if to != own && !to.is_empty() {
                        edges.push(Edge {
                            line,
                            text: format!("{}{to}", "super::".repeat(climbs)),
                            to,
                        });
                    }
                }
            }
            i = j;
            continue;
        }
        i = after;
    }
    edges
}

/// The rule broken by `from` importing `to`, if any.
fn violation(from: &str, to: &str) -> Option<String> {
    if BINARY.contains(&to) {
        return Some(format!("`{to}` is the binary's, not the library's"));
    }
    let (Some(rf), Some(rt)) = (rank(from), rank(to)) else {
        return Some(format!(
            "`{from}` or `{to}` is not in the layering table (RANKS in harness/tests/it/layering.rs)"
        ));
    };
    if rt > rf {
        Some(format!(
            "upward: `{from}` (rank {rf}) imports `{to}` (rank {rt})"
        ))
    } else if rt == rf && from != to {
        Some(format!("peers: `{from}` and `{to}` share rank {rf}"))
    } else {
        None
    }
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, relative to `src`, `/`-separated, sorted.
fn rust_files(src: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read `{}`: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(src, &p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(src).expect("under src");
            out.push(
                rel.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/"),
            );
        }
    }
}

#[test]
fn no_module_imports_one_above_it_or_a_peer() {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &src, &mut files);
    let mut problems = Vec::new();
    let mut pending_seen = BTreeSet::new();
    for rel in &files {
        let path = module_path(rel);
        let top = path[0].as_str();
        if BINARY.contains(&top) || top == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(src.join(rel)).expect("read");
        for e in references(&path, &text) {
            let Some(why) = violation(top, &e.to) else {
                continue;
            };
            if let Some(p) = PENDING
                .iter()
                .find(|(f, to, _)| *f == rel.as_str() && *to == e.to)
            {
                pending_seen.insert(p.0);
                continue;
            }
            problems.push(format!("harness/src/{rel}:{}: `{}`: {why}", e.line, e.text));
        }
    }
    for (f, to, why) in PENDING {
        if !pending_seen.contains(f) {
            problems.push(format!(
                "PENDING lists `{f}` -> `{to}` ({why}), which is gone: remove the entry"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "layering of harness/src broken ({} problem(s)):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Every top-level module of the library (a file or folder of `src`, a `mod` of `lib.rs`)
/// is in the table, and every module of the table exists.
#[test]
fn the_table_knows_every_top_level_module() {
    let src = src_dir();
    let mut found = BTreeSet::new();
    for e in std::fs::read_dir(&src).expect("read src") {
        let p = e.expect("entry").path();
        let name = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.is_dir() || p.extension().is_some_and(|x| x == "rs") {
            found.insert(name);
        }
    }
    let lib = strip(&std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs"));
    for line in lib.lines() {
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == ';')
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(k) = words.iter().position(|w| *w == "mod") {
            if let Some(name) = words.get(k + 1) {
                found.insert((*name).to_string());
            }
        }
    }
    let unknown: Vec<&String> = found
        .iter()
        .filter(|m| rank(m).is_none() && !BINARY.contains(&m.as_str()) && *m != "lib")
        .collect();
    assert!(
        unknown.is_empty(),
        "top-level module(s) {unknown:?} missing from RANKS in harness/tests/it/layering.rs: \
         give each its rank in the pipeline"
    );
    let missing: Vec<&str> = RANKS
        .iter()
        .map(|(m, _)| *m)
        .filter(|m| !found.contains(*m))
        .collect();
    assert!(
        missing.is_empty(),
        "RANKS names modules that do not exist: {missing:?}"
    );
}

fn p(s: &str) -> Vec<String> {
    module_path(s)
}

fn targets(rel: &str, src: &str) -> Vec<(usize, String)> {
    references(&p(rel), src)
        .into_iter()
        .map(|e| (e.line, e.to))
        .collect()
}

/// The scanner itself: what it must flag and what it must not.
#[test]
fn the_scanner_finds_upward_imports_and_nothing_else() {
    // A plain upward import, and one in a group.
    let t = targets(
        "report/model.rs",
        "use crate::model::spec::Case;\nuse crate::{checks::Check, run::runner};\n",
    );
    assert_eq!(
        t,
        vec![(1, "model".into()), (2, "checks".into()), (2, "run".into())]
    );
    assert!(violation("report", "run").is_some());
    assert!(violation("report", "checks").is_none());
    // Peers.
    assert!(violation("gen", "archive").is_some());
    assert!(violation("fuzz", "run").is_some());
    assert!(violation("run", "run").is_none());
    // Unknown modules and the binary.
    assert!(violation("report", "nope").is_some());
    assert!(violation("report", "cmd").is_some());
    // Comments, doc comments and strings are not imports; a nested path is.
    let t = targets(
        "report/a.rs",
        "// crate::run\n/// [`crate::fuzz::X`]\n/* crate::lifecycle\n */ let s = \"crate::run\";\n\
         let r = r#\"crate::run\"#; let c = '\"'; fn f<'a>(x: &'a str) { crate::engine::f() }\n",
    );
    assert_eq!(t, vec![(5, "engine".into())]);
    // `super::` chains: inside the module they stay; out of it they are top-level names.
    assert!(targets("report/a.rs", "use super::b::X;\n").is_empty());
    assert_eq!(
        targets("report/a.rs", "use super::super::run::X;\n"),
        vec![(1, "run".into())]
    );
    assert_eq!(
        targets("engine/faults/mod.rs", "use super::super::{fuzz, model};\n"),
        vec![(1, "fuzz".into()), (1, "model".into())]
    );
    // An inline module adds a level for `super`.
    let src = "mod tests {\n    use super::*;\n    use super::super::run::Y;\n}\nuse super::lifecycle::Z;\n";
    assert_eq!(
        targets("report.rs", src),
        vec![(3, "run".into()), (5, "lifecycle".into())]
    );
    // A module's own name is not an edge.
    assert!(targets("run/a.rs", "use crate::run::case;\n").is_empty());
}
