//! Every available tar parser's reading of one archive, and their disagreements
//! (docs/design.md, `parser-disagreement`): the reference (`validate`, permissive policy), the
//! `tar` crate, GNU tar, bsdtar and BusyBox (`-tvf`, escaped names) and Python `tarfile`
//! (a small script printing one JSON object with hex names per member and line). The
//! external tools run under [`run_with_timeout_capturing_stdout`], the project's one way to
//! run a process with a timeout.
//!
//! Text listings are parsed by column: GNU tar and BusyBox print `mode owner size date
//! time name`, bsdtar `mode links uid gid size month day time|year name`; a symlink ends in
//! ` -> target`, a hardlink in ` link to target`. GNU tar and bsdtar escape non-printable
//! bytes (`\ooo`, `\n`, `\\`), which we undo; a name that itself contains ` -> ` or
//! ` link to ` cannot be split exactly from text (a limitation of those listings).

use crate::archive::listing::Member;
use crate::archive::parser_listing::{
    parsed, reference_parse_listing, tar_crate_listing, ParserListing,
};
use snapconf_extract::MemberKind;
use snapconf_producers::process::run::run_with_timeout_capturing_stdout;
use snapconf_producers::{Outcome, ToolError};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// How long a listing tool may run (hostile headers can make a parser loop).
const LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// Our own fault while listing with the external parsers (a tool that ran and refused is a
/// [`ParserListing::Failed`], not this).
#[derive(Debug, thiserror::Error)]
pub enum ParsersError {
    /// The tool could not be run: its scratch files, the wait for it.
    #[error("cannot run the {parser} listing: {source}")]
    Run {
        /// The parser's report name (`gnu-tar`, `python-tarfile`, ...).
        parser: &'static str,
        /// Why it could not be run.
        #[source]
        source: ToolError,
    },
    /// The archive could not be opened for the in-process parsers.
    #[error("{context}: {source}")]
    Io {
        /// What was being opened.
        context: String,
        /// The error.
        source: std::io::Error,
    },
    /// The tool's output is not in the form our reader expects (our own script's JSON).
    #[error("{parser}: line {line} of its listing: {reason}")]
    Output {
        /// The parser's report name.
        parser: &'static str,
        /// The 1-based line of the tool's stdout.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

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

/// The Python listing: one JSON object per member and line, names and the type as hex.
const PY_LIST: &str = r#"
import json, sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    for m in t:
        print(json.dumps({"name": m.name.encode("utf-8", "surrogateescape").hex(),
                          "type": m.type.hex(),
                          "link": m.linkname.encode("utf-8", "surrogateescape").hex(),
                          "size": m.size}))
"#;

/// One parser's result; `None` listing when the tool is not installed.
#[derive(Clone, Debug)]
pub struct ParserRun {
    /// `reference`, `tar-crate`, `gnu-tar`, `bsdtar`, `busybox` or `python-tarfile`.
    pub parser: &'static str,
    /// What it read, or `None` if the tool is missing here.
    pub listing: Option<ParserListing>,
}

/// List the tar archive at `path` with every parser. The in-process ones read it through
/// a buffer, so memory does not grow with the archive's size.
///
/// # Errors
/// [`ParsersError`] when `path` cannot be opened, a tool could not be run (a missing tool
/// is a `None` listing, not an error) or printed what our reader cannot read.
pub fn all_listings(path: &Path) -> Result<Vec<ParserRun>, ParsersError> {
    let open = || {
        std::fs::File::open(path)
            .map(std::io::BufReader::new)
            .map_err(|e| ParsersError::Io {
                context: format!("cannot open `{}`", path.display()),
                source: e,
            })
    };
    let mut out = vec![
        ParserRun {
            parser: "reference",
            listing: Some(reference_parse_listing(open()?)),
        },
        ParserRun {
            parser: "tar-crate",
            listing: Some(tar_crate_listing(open()?)),
        },
    ];
    for (name, prog, args) in TOOLS {
        let listing = run(name, prog, args, path)?.map(|r| match r {
            Ok(text) => ParserListing::Members(parse_text(name, &text)),
            Err(e) => ParserListing::Failed(e),
        });
        out.push(ParserRun {
            parser: name,
            listing,
        });
    }
    let parser = "python-tarfile";
    // The interpreter the Python adapters run (`SNAPCONF_PYTHON` when set).
    let python = snapconf_producers::adapters::python::interpreter();
    let py = match run(parser, python, &["-I", "-S", "-c", PY_LIST], path)? {
        Some(Ok(lines)) => Some(parse_python(parser, &lines)?),
        Some(Err(e)) => Some(ParserListing::Failed(e)),
        None => None,
    };
    out.push(ParserRun {
        parser,
        listing: py,
    });
    Ok(out)
}

/// The listings of the parsers that ran, by name, in order: what
/// the `parser-disagreement` check compares.
pub fn listings(runs: &[ParserRun]) -> Vec<(&str, &ParserListing)> {
    runs.iter()
        .filter_map(|r| r.listing.as_ref().map(|l| (r.parser, l)))
        .collect()
}

/// Run the `parser` listing `prog args… path` under [`LIST_TIMEOUT`]: its stdout when it
/// succeeds; `Some(Err)` with the outcome's message (exit status and stderr tail, or the
/// timeout) when it ran and failed; `None` when `prog` is not installed.
///
/// # Errors
/// [`ParsersError::Run`] when it could not be started for another reason than a missing
/// program, or its output could not be read back.
fn run(
    parser: &'static str,
    prog: impl AsRef<std::ffi::OsStr>,
    args: &[&str],
    path: &Path,
) -> Result<Option<Result<Vec<u8>, String>>, ParsersError> {
    // The parser runs in the scratch dir, not in our cwd: a relative path is made absolute.
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut cmd = Command::new(prog);
    cmd.args(args).arg(&path).env("LC_ALL", "C");
    match run_with_timeout_capturing_stdout(&mut cmd, &std::env::temp_dir(), LIST_TIMEOUT) {
        Ok((Outcome::Success, stdout)) => Ok(Some(Ok(stdout))),
        Ok((Outcome::Refused { message } | Outcome::Hang { message }, _)) => Ok(Some(Err(message))),
        Err(ToolError::Spawn { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(source) => Err(ParsersError::Run { parser, source }),
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

/// True if `col` looks like an `ls -l` mode string (`-rw-r--r--`, `drwxr-xr-x`, ...). GNU
/// tar also prints `h` for a hardlink, `C` for a contiguous file (type flag `7`, which
/// POSIX ustar reserves and every extractor here reads as a regular file), `V` for a volume
/// label, `M` for a multi-volume continuation, `N` for an old GNU long-names member and `?`
/// for a type it does not know (it extracts those as regular files).
fn is_mode(col: &[u8]) -> bool {
    col.len() == 10 && b"-dlhcbpsCVMN?".contains(&col[0])
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
fn parse_text(tool: &str, text: &[u8]) -> Vec<Member> {
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
        let mut rest = rest.strip_prefix(b" ").unwrap_or(rest);
        // GNU tar follows the name of a member of a type it does not know with
        // ` unknown file type 'X'`: cut on a `?` line only, where GNU tar writes it.
        if tool == "gnu-tar" && cols.first().is_some_and(|c| c.first() == Some(&b'?')) {
            let note = b" unknown file type ";
            if let Some(i) = rest.windows(note.len()).rposition(|w| w == note) {
                if rest.ends_with(b"'") {
                    rest = &rest[..i];
                }
            }
        }
        rows.push((cols, rest.to_vec()));
    }
    let mut out = Vec::new();
    for (cols, rest) in rows {
        let perm = cols
            .first()
            .and_then(|c| c.first())
            .copied()
            .unwrap_or(b'-');
        let (name, link, kind) = if let Some((n, t)) = split_once(&rest, b" link to ") {
            (n, Some(t), MemberKind::Hardlink)
        } else if let Some((n, t)) = split_once(&rest, b" -> ") {
            // BusyBox prints hardlinks as `-rw-r--r-- ... name -> target`.
            let kind = if perm == b'l' {
                MemberKind::Symlink
            } else {
                MemberKind::Hardlink
            };
            (n, Some(t), kind)
        } else {
            let kind = match perm {
                b'd' => MemberKind::Dir,
                b'c' => MemberKind::CharDevice,
                b'b' => MemberKind::BlockDevice,
                b'p' => MemberKind::Fifo,
                _ => MemberKind::File,
            };
            (&rest[..], None, kind)
        };
        let size = cols
            .get(size_col)
            .and_then(|s| std::str::from_utf8(s).ok())
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0);
        let link = link.map(unescape);
        out.push(Member::new(&unescape(name), kind, link.as_deref(), size));
    }
    out
}

/// Read the Python listing ([`PY_LIST`]: one JSON object a line, hex names and type).
///
/// # Errors
/// [`ParsersError::Output`] naming `parser` and the line when a line is not such an object
/// or one of its hex fields does not decode: that is our script's fault, never the archive's.
fn parse_python(parser: &'static str, stdout: &[u8]) -> Result<ParserListing, ParsersError> {
    #[derive(serde::Deserialize)]
    struct M {
        name: String,
        #[serde(rename = "type")]
        ty: String,
        link: String,
        // Python reads a GNU base-256 size field as a signed number: a hostile header
        // can say -1, which is the archive's doing, not a broken listing.
        size: i64,
    }
    let mut out = Vec::new();
    for (i, line) in stdout.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let bad = |reason: String| ParsersError::Output {
            parser,
            line: i + 1,
            reason,
        };
        let m: M =
            serde_json::from_slice(line).map_err(|e| bad(format!("not a member record: {e}")))?;
        let hex = |what: &str, v: &str| {
            hex::decode(v).map_err(|e| bad(format!("bad hex in `{what}` (`{v}`): {e}")))
        };
        let name = hex("name", &m.name)?;
        let link = hex("link", &m.link)?;
        let flag = hex("type", &m.ty)?.first().copied().unwrap_or(b'0');
        let link = matches!(flag, b'1' | b'2').then_some(link);
        let Ok(size) = u64::try_from(m.size) else {
            return Ok(ParserListing::Failed(format!(
                "read member {} `{}` with the negative size {}",
                out.len() + 1,
                crate::model::bytes::escape(&name),
                m.size
            )));
        };
        out.push(parsed(&name, flag, link.as_deref(), size));
    }
    Ok(ParserListing::Members(out))
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

    /// Every first letter GNU tar's listing gives a member type is read as that type: a
    /// contiguous file (`C`, type `7`) is a file, not the continuation of the name before,
    /// and a member of a type GNU tar does not know (`?`, followed by its annotation) is
    /// one member of its own name.
    #[test]
    fn gnu_type_letters_are_read() {
        let l = parse_text(
            "gnu-tar",
            b"Crw-r--r-- 0/0               3 1970-01-01 00:00 c7\n\
              hrw-r--r-- 0/0               0 1970-01-01 00:00 h link to c7\n\
              drwxr-xr-x 0/0               0 1970-01-01 00:00 d/\n\
              prw-r--r-- 0/0               0 1970-01-01 00:00 p\n\
              -rw-r--r-- 0/0               1 1970-01-01 00:00 f\n\
              ?rw-r--r-- 0/0               0 1970-01-01 00:00 z unknown file type 'Z'\n",
        );
        let kinds: Vec<_> = l.iter().map(|m| (m.name.clone(), m.kind)).collect();
        assert_eq!(
            kinds,
            [
                (b"c7".to_vec(), MemberKind::File),
                (b"h".to_vec(), MemberKind::Hardlink),
                (b"d".to_vec(), MemberKind::Dir),
                (b"p".to_vec(), MemberKind::Fifo),
                (b"f".to_vec(), MemberKind::File),
                (b"z".to_vec(), MemberKind::File),
            ]
        );
    }

    /// A hex field that does not decode is an error naming the tool and the line, never an
    /// empty name.
    #[test]
    fn a_bad_hex_name_is_an_error_naming_the_tool_and_line() {
        let good = br#"{"name": "61", "type": "30", "link": "", "size": 1}"#;
        let bad = br#"{"name": "zz", "type": "30", "link": "", "size": 1}"#;
        let out = [&good[..], b"\n", bad, b"\n"].concat();
        let err = parse_python("python-tarfile", &out).expect_err("bad hex");
        let text = err.to_string();
        assert!(
            text.contains("python-tarfile") && text.contains("line 2") && text.contains("`name`"),
            "{text}"
        );
        let ParserListing::Members(ms) =
            parse_python("python-tarfile", &[&good[..], b"\n"].concat()).expect("reads")
        else {
            panic!("a good record lists");
        };
        assert_eq!((ms[0].name.as_slice(), ms[0].size), (&b"a"[..], Some(1)));
        // A negative size (GNU base-256 -1, as Python reads it) is the archive's doing: a
        // failed listing for that parser, not an error of the run.
        let negative = br#"{"name": "61", "type": "30", "link": "", "size": -1}"#;
        match parse_python("python-tarfile", &[&negative[..], b"\n"].concat()) {
            Ok(ParserListing::Failed(why)) => assert!(why.contains("negative size -1"), "{why}"),
            other => panic!("a negative size is a failed listing: {other:?}"),
        }
        let not_json = parse_python("python-tarfile", b"[1, 2]\n").expect_err("not a record");
        assert!(not_json.to_string().contains("line 1"), "{not_json}");
    }

    /// A tool that ran and failed is a failed listing with its status; a missing one is
    /// no listing.
    #[test]
    fn failed_and_missing_tools_are_told_apart() {
        let path = Path::new("/dev/null");
        match run("false", "false", &[], path).expect("runs") {
            Some(Err(why)) => assert!(why.contains("status 1"), "{why}"),
            other => panic!("`false` fails: {other:?}"),
        }
        assert_eq!(
            run("none", "snapconf-no-such-tool", &[], path).expect("runs"),
            None
        );
    }
}
