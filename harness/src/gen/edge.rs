//! Fixed specs for the handed producer-side cases H1–H8 of `docs/cases.md`, built exactly as
//! described there (parents left implicit unless the case lists them).

use crate::model::bytes::{RawBytes, RelPath};
use crate::model::spec::{Entry, EntryKind, WorkspaceSpec};

/// `path` as a `RelPath`; the paths below are literals known to be valid, and an invalid one
/// would only drop its entry (caught by the tests, which check every edge spec's shape).
fn entry(path: impl Into<Vec<u8>>, kind: EntryKind, mode: Option<u32>) -> Option<Entry> {
    RelPath::new(path)
        .ok()
        .map(|path| Entry { path, kind, mode })
}

fn file(content: &str) -> EntryKind {
    EntryKind::File {
        content: RawBytes::from(content),
    }
}

fn symlink(target: &str) -> EntryKind {
    EntryKind::Symlink {
        target: RawBytes::from(target),
    }
}

fn hardlink(target: &str) -> Option<EntryKind> {
    RelPath::new(target)
        .ok()
        .map(|target| EntryKind::Hardlink { target })
}

fn spec(entries: Vec<Option<Entry>>, exclusions: &[&str]) -> WorkspaceSpec {
    WorkspaceSpec {
        entries: entries.into_iter().flatten().collect(),
        exclusions: exclusions
            .iter()
            .filter_map(|x| RelPath::new(*x).ok())
            .collect(),
    }
}

/// H1: `cache/mod.py file "VALUE = 1\n"`, `venv/mod.py hardlink->cache/mod.py`.
fn h1(exclusions: &[&str]) -> WorkspaceSpec {
    spec(
        vec![
            entry("cache/mod.py", file("VALUE = 1\n"), None),
            hardlink("cache/mod.py").and_then(|k| entry("venv/mod.py", k, None)),
        ],
        exclusions,
    )
}

/// A path of exactly 120 bytes made of components under 100 bytes (H6).
fn path_of_120_bytes() -> Vec<u8> {
    let mut v = b"h6-long-path/".to_vec();
    v.extend_from_slice(&[b'd'; 50]);
    v.push(b'/');
    v.resize(120, b'f');
    v
}

/// The handed producer-side cases H1–H8, named `"H1"`..`"H8"`; each passes
/// `WorkspaceSpec::check`.
pub fn edge_specs() -> Vec<(&'static str, WorkspaceSpec)> {
    vec![
        ("H1", h1(&[])),
        ("H2", h1(&["cache/mod.py"])),
        (
            "H3",
            spec(
                vec![
                    entry(".venv/bin/python", symlink("/usr/local/bin/python"), None),
                    entry(".venv/bin/python3", symlink("python"), None),
                ],
                &[],
            ),
        ),
        (
            "H4",
            spec(
                vec![
                    entry("pipe", EntryKind::Fifo, None),
                    entry("a", file("x"), None),
                ],
                &[],
            ),
        ),
        ("H5", spec(vec![entry("self", symlink("."), None)], &[])),
        (
            "H6",
            spec(
                vec![
                    entry(path_of_120_bytes(), file("x"), None),
                    entry(vec![b'n'; 255], file("x"), None),
                    entry(b"\xff\xfe".to_vec(), file("x"), None),
                    entry("new\nline", file("x"), None),
                ],
                &[],
            ),
        ),
        (
            "H7",
            spec(
                vec![
                    entry("ro", EntryKind::Dir, Some(0o555)),
                    entry("ro/foo", file("x"), None),
                ],
                &[],
            ),
        ),
        (
            "H8",
            spec(
                vec![
                    entry("s", symlink("foo"), None),
                    hardlink("s").and_then(|k| entry("s2", k, None)),
                ],
                &[],
            ),
        ),
    ]
}
