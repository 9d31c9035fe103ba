//! Every available tar parser's reading of one archive, and their disagreements
//! (DESIGN.md `parser-disagreement`): the reference (`validate`, permissive policy), the
//! `tar` crate, GNU tar, bsdtar and BusyBox (`-tvf`, escaped names) and Python `tarfile`
//! (a small script printing JSON with hex names).
//!
//! Text listings are parsed by column: GNU tar and BusyBox print `mode owner size date
//! time name`, bsdtar `mode links uid gid size month day time|year name`; a symlink ends in
//! ` -> target`, a hardlink in ` link to target`. GNU tar and bsdtar escape non-printable
//! bytes (`\ooo`, `\n`, `\\`), which we undo; a name that itself contains ` -> ` or
//! ` link to ` cannot be split exactly from text (a limitation of those listings).

use crate::fuzz::{compare_listings, parsed, reference_listing, tar_crate_listing, ParserListing};
use std::path::Path;
use std::process::Command;

/// Seconds a listing tool may run (hostile headers can make a parser loop).
const LIST_TIMEOUT_SECS: &str = "10";

/// The external parsers, in report order: `(name, program, arguments before the file)`.
const TOOLS: [(&str, &str, &[&str]); 3] = [
    (
        "gnu-tar",
        "tar",
        &[
            "--list",
            "--verbose",
            "--quoting-style=escape",
            "--numeric-owner",
            "-f",
        ],
    ),
    ("bsdtar", "bsdtar", &["-tvf"]),
    ("busybox", "busybox", &["tar", "-tvf"]),
];

const PY_LIST: &str = r#"
import json, sys, tarfile
out = []
with tarfile.open(sys.argv[1]) as t:
    for m in t:
        out.append({"name": m.name.encode("utf-8", "surrogateescape").hex(),
                    "type": m.type.hex(),
                    "link": m.linkname.encode("utf-8", "surrogateescape").hex(),
                    "size": m.size})
print(json.dumps(out))
"#;

/// One parser's result; `None` listing when the tool is not installed.
#[derive(Clone, Debug)]
pub struct ParserRun {
    /// `reference`, `tar-crate`, `gnu-tar`, `bsdtar`, `busybox` or `python-tarfile`.
    pub parser: &'static str,
    /// What it read, or `None` if the tool is missing here.
    pub listing: Option<ParserListing>,
}

/// List `bytes` (also stored at `path`, for the external tools) with every parser.
pub fn all_listings(path: &Path, bytes: &[u8]) -> Vec<ParserRun> {
    let mut out = vec![
        ParserRun {
            parser: "reference",
            listing: Some(reference_listing(bytes)),
        },
        ParserRun {
            parser: "tar-crate",
            listing: Some(tar_crate_listing(bytes)),
        },
    ];
    for (name, prog, args) in TOOLS {
        let listing = run(prog, args, path).map(|r| match r {
            Ok(text) => ParserListing::Members(parse_text(name, &text)),
            Err(e) => ParserListing::Failed(e),
        });
        out.push(ParserRun {
            parser: name,
            listing,
        });
    }
    let py = run("python3", &["-I", "-S", "-c", PY_LIST], path).map(|r| match r {
        Ok(json) => parse_python(&String::from_utf8_lossy(&json)),
        Err(e) => ParserListing::Failed(e),
    });
    out.push(ParserRun {
        parser: "python-tarfile",
        listing: py,
    });
    out
}

/// Every disagreement between parsers that read the archive to the end, each against the
/// first such parser in report order (the reference when it accepted), one line each.
pub fn disagreements(runs: &[ParserRun]) -> Vec<String> {
    let complete: Vec<(&str, &ParserListing)> = runs
        .iter()
        .filter_map(|r| match &r.listing {
            Some(l @ ParserListing::Members(_)) => Some((r.parser, l)),
            _ => None,
        })
        .collect();
    let Some((base_name, base)) = complete.first() else {
        return Vec::new();
    };
    let read = match base {
        ParserListing::Members(m) => m.len(),
        ParserListing::Failed(_) => 0,
    };
    // A parser that stops where another reads to the end disagrees too: a validator that
    // refuses (or errors) while the extractor behind it reads members, or the reverse.
    let failed = runs.iter().filter_map(|r| match &r.listing {
        Some(ParserListing::Failed(why)) => Some(format!(
            "{} stopped ({why}) where {base_name} read {read} member(s)",
            r.parser
        )),
        _ => None,
    });
    complete[1..]
        .iter()
        .filter_map(|(n, l)| compare_listings(base_name, base, n, l))
        .chain(failed)
        .collect()
}

/// `None` when `prog` is not installed; `Err` with the tool's stderr tail when it failed.
fn run(prog: &str, args: &[&str], path: &Path) -> Option<Result<Vec<u8>, String>> {
    let out = Command::new("timeout")
        .arg(LIST_TIMEOUT_SECS)
        .arg(prog)
        .args(args)
        .arg(path)
        .env("LC_ALL", "C")
        .output()
        .ok()?;
    if out.status.code() == Some(127) {
        return None;
    }
    if out.status.success() {
        Some(Ok(out.stdout))
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(2).collect();
        Some(Err(format!(
            "exit {:?}: {}",
            out.status.code(),
            tail.into_iter().rev().collect::<Vec<_>>().join("; ")
        )))
    }
}

/// Undo `\ooo`, `\n`, `\t`, `\\` escapes.
fn unescape(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            let n = b[i + 1];
            if i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
                let v = b[i + 1..i + 4]
                    .iter()
                    .fold(0u32, |a, c| a * 8 + u32::from(c - b'0'));
                out.push((v & 0xff) as u8);
                i += 4;
                continue;
            }
            let m = match n {
                b'n' => Some(b'\n'),
                b't' => Some(b'\t'),
                b'\\' => Some(b'\\'),
                b'r' => Some(b'\r'),
                _ => None,
            };
            if let Some(m) = m {
                out.push(m);
                i += 2;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// True if `col` looks like an `ls -l` mode string (`-rw-r--r--`, `drwxr-xr-x`, ...).
fn is_mode(col: &[u8]) -> bool {
    col.len() == 10 && b"-dlhcbps".contains(&col[0])
}

/// Split `s` at the first occurrence of `pat`.
fn split_once<'a>(s: &'a [u8], pat: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
    s.windows(pat.len())
        .position(|w| w == pat)
        .map(|i| (&s[..i], &s[i + pat.len()..]))
}

/// Parse a `-tv` listing of `tool` (see the module docs for the column layouts). A line
/// that does not start with a mode string continues the previous name after a raw newline
/// (BusyBox prints names unescaped).
fn parse_text(tool: &str, text: &[u8]) -> Vec<crate::fuzz::ParsedMember> {
    let fixed = if tool == "bsdtar" { 8 } else { 5 };
    let size_col = if tool == "bsdtar" { 4 } else { 2 };
    let mut rows: Vec<(Vec<&[u8]>, Vec<u8>)> = Vec::new();
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let mut cols = Vec::new();
        let mut rest = line;
        for _ in 0..fixed {
            let start = rest.iter().position(|&b| b != b' ').unwrap_or(rest.len());
            rest = &rest[start..];
            let end = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
            cols.push(&rest[..end]);
            rest = &rest[end..];
        }
        if !cols.first().is_some_and(|c| is_mode(c)) {
            if let Some(last) = rows.last_mut() {
                last.1.push(b'\n');
                last.1.extend_from_slice(line);
            }
            continue;
        }
        let rest = rest.strip_prefix(b" ").unwrap_or(rest);
        rows.push((cols, rest.to_vec()));
    }
    let mut out = Vec::new();
    for (cols, rest) in rows {
        let perm = cols
            .first()
            .and_then(|c| c.first())
            .copied()
            .unwrap_or(b'-');
        let (name, link, flag) = if let Some((n, t)) = split_once(&rest, b" link to ") {
            (n, Some(t), b'1')
        } else if let Some((n, t)) = split_once(&rest, b" -> ") {
            // BusyBox prints hardlinks as `-rw-r--r-- ... name -> target`.
            (n, Some(t), if perm == b'l' { b'2' } else { b'1' })
        } else {
            let flag = match perm {
                b'd' => b'5',
                b'c' => b'3',
                b'b' => b'4',
                b'p' => b'6',
                _ => b'0',
            };
            (&rest[..], None, flag)
        };
        let size = cols
            .get(size_col)
            .and_then(|s| std::str::from_utf8(s).ok())
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0);
        let link = link.map(unescape);
        out.push(parsed(&unescape(name), flag, link.as_deref(), size));
    }
    out
}

fn parse_python(json: &str) -> ParserListing {
    #[derive(serde::Deserialize)]
    struct M {
        name: String,
        #[serde(rename = "type")]
        ty: String,
        link: String,
        size: u64,
    }
    let ms: Vec<M> = match serde_json::from_str(json) {
        Ok(m) => m,
        Err(e) => return ParserListing::Failed(format!("cannot read the script's JSON: {e}")),
    };
    let mut out = Vec::new();
    for m in ms {
        let name = hex::decode(&m.name).unwrap_or_default();
        let link = hex::decode(&m.link).unwrap_or_default();
        let flag = hex::decode(&m.ty)
            .ok()
            .and_then(|t| t.first().copied())
            .unwrap_or(b'0');
        let flag = if flag == 0 { b'0' } else { flag };
        let link = matches!(flag, b'1' | b'2').then_some(link);
        out.push(parsed(&name, flag, link.as_deref(), m.size));
    }
    ParserListing::Members(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_undone() {
        assert_eq!(unescape(br"p\377\376"), b"p\xff\xfe");
        assert_eq!(unescape(br"nl\nname"), b"nl\nname");
        assert_eq!(unescape(br"a\\b"), b"a\\b");
    }

    #[test]
    fn gnu_columns_are_split() {
        let l = parse_text(
            "gnu-tar",
            b"lrwxrwxrwx 0/0               0 2023-11-14 22:13 ./a b -> /x y\n\
             -rw-r--r-- 0/0              13 2023-11-14 22:13 f\n",
        );
        assert_eq!(l[0].name, b"a b");
        assert_eq!(l[0].link_target.as_deref(), Some(&b"/x y"[..]));
        assert_eq!(l[1].size, Some(13));
    }
}
