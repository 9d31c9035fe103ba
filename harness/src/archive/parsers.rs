//! Every available tar parser's reading of one archive, and their disagreements
//! (docs/design.md, `parser-disagreement`): the reference (`validate`, permissive policy), the
//! `tar` crate, GNU tar, bsdtar and BusyBox (`-tvf`) and Python `tarfile`
//! (a small script printing one JSON object with hex names per member and line). The
//! external tools run under [`run_with_timeout_capturing_stdout`], the project's one way to
//! run a process with a timeout.
//!
//! Text listings are parsed by column: GNU tar and BusyBox print `mode owner size date
//! time name`, bsdtar `mode links uid gid size month day time|year name`; a symlink ends in
//! ` -> target`, a hardlink in ` link to target`. bsdtar appends `+` to the mode of a
//! member with an ACL (`-rwxrw-r--+`). GNU tar (`--quoting-style=escape`) and bsdtar escape
//! non-printable bytes with the C escapes `\\`, `\a`, `\b`, `\f`, `\n`, `\r`, `\t`, `\v` and
//! octal `\ooo` (GNU tar's manual, "Quoting Styles"; bsdtar's `safe_fprintf` in
//! libarchive's `tar/util.c`), which we undo; BusyBox prints names raw, so its listing is
//! not unescaped. A name that itself contains ` -> ` or ` link to ` cannot be split exactly
//! from text (a limitation of those listings).
//!
//! The tools run under `LC_ALL=C.UTF-8` (a locale glibc has built in since 2.35, and Debian
//! always ships): under `LC_ALL=C` bsdtar refuses a PAX name it cannot convert from UTF-8
//! ("Pathname can't be converted from UTF-8 to current locale", exit 1) where the others
//! list it. Bytes that are not UTF-8 are still escaped in octal by GNU tar and bsdtar.
//!
//! A tool that stops with a message of one of its own documented limits ([`LIMITS`]) is a
//! limit of that tool, not a reading of the bytes to compare: see [`known_limit`].

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

/// The locale every listing tool runs under (see the module docs).
pub const LOCALE: &str = "C.UTF-8";

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

/// A documented limit of one listing tool: bytes it does not read by its own design (it
/// stops with `message`), not a different reading of them. A tool that stops so is
/// reported as "limit of `<tool>`" and never counted as a parser disagreement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The parser's report name.
    pub parser: &'static str,
    /// The last line the tool prints on stderr when it stops at this limit.
    pub message: &'static str,
    /// What the tool does not read.
    pub what: &'static str,
    /// Where the limit is documented or was observed.
    pub source: &'static str,
}

/// Every known limit of the listing tools. GNU tar, bsdtar, Python `tarfile` and the `tar`
/// crate have none here: when one of them stops, that is a disagreement. BusyBox tar reads
/// PAX global headers (observed with 1.35.0: an archive with one lists like the others), so
/// that is not one of its limits.
pub const LIMITS: &[Limit] = &[
    Limit {
        parser: "busybox",
        message: "tar: invalid tar magic",
        what: "reads only headers with the POSIX `ustar` magic, so no V7 (pre-POSIX) header",
        source: "BusyBox `archival/libarchive/get_header_tar.c` (the magic check); observed \
                 with BusyBox 1.35.0 (Debian) on a V7 archive",
    },
    Limit {
        parser: "busybox",
        message: "tar: unknown typeflag: 0x53",
        what: "no GNU sparse member (type `S`)",
        source: "BusyBox `archival/libarchive/get_header_tar.c` (its type switch has no `S`); \
                 observed with BusyBox 1.35.0 on `corpora/sparse/gnu-oldgnu.tar`",
    },
];

/// The [`Limit`] of `parser` whose message a failed listing's `message` ends with (the
/// error a tool dies with is the last line it prints), raw or made [`printable`], if any.
pub fn known_limit(parser: &str, message: &str) -> Option<&'static Limit> {
    let mut end = message.trim_end();
    while let Some(shorter) = end.strip_suffix("\\n") {
        end = shorter.trim_end();
    }
    LIMITS
        .iter()
        .find(|l| l.parser == parser && end.ends_with(l.message))
}

/// `text` safe to print on a terminal: every control character is shown as an escape
/// (`\n`, `\t`, else `\xNN`), so nothing a member name or a tool's message holds can move
/// the cursor, set colours or ring the bell (escape injection). Backslashes are kept as
/// they are, so a text already escaped is unchanged.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

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
    // Every message is made printable here, once: they hold tools' stderr and member names.
    for r in &mut out {
        if let Some(ParserListing::Failed(m) | ParserListing::Refused(m)) = &mut r.listing {
            *m = printable(m);
        }
    }
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
    cmd.args(args).arg(&path).env("LC_ALL", LOCALE);
    match run_with_timeout_capturing_stdout(&mut cmd, &std::env::temp_dir(), LIST_TIMEOUT) {
        Ok((Outcome::Success, stdout)) => Ok(Some(Ok(stdout))),
        Ok((Outcome::Refused { message } | Outcome::Hang { message }, _)) => Ok(Some(Err(message))),
        Err(ToolError::Spawn { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(source) => Err(ParsersError::Run { parser, source }),
    }
}

/// Undo the escapes GNU tar (`--quoting-style=escape`) and bsdtar print in a `-tv`
/// listing: `\\`, `\a`, `\b`, `\f`, `\n`, `\r`, `\t`, `\v` and octal `\ooo` (three digits, as
/// both print them). Any other backslash is kept as it is.
fn unescape(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            if let Some(octal) = b.get(i + 1..i + 4) {
                if octal.iter().all(|c| (b'0'..=b'7').contains(c)) {
                    let v = octal.iter().fold(0u32, |a, c| a * 8 + u32::from(c - b'0'));
                    out.push((v & 0xff) as u8);
                    i += 4;
                    continue;
                }
            }
            let m = match b[i + 1] {
                b'\\' => Some(b'\\'),
                b'a' => Some(0x07),
                b'b' => Some(0x08),
                b'f' => Some(0x0c),
                b'n' => Some(b'\n'),
                b'r' => Some(b'\r'),
                b't' => Some(b'\t'),
                b'v' => Some(0x0b),
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
/// for a type it does not know (it extracts those as regular files). bsdtar appends `+` to
/// the mode of a member that carries an ACL (`-rwxrw-r--+`, as `ls -l` does).
fn is_mode(col: &[u8]) -> bool {
    let perms = col.strip_suffix(b"+").unwrap_or(col);
    perms.len() == 10 && b"-dlhcbpsCVMN?".contains(&perms[0])
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
        // BusyBox prints names raw: only GNU tar's and bsdtar's are escaped.
        let text = |b: &[u8]| {
            if tool == "busybox" {
                b.to_vec()
            } else {
                unescape(b)
            }
        };
        let link = link.map(text);
        out.push(Member::new(&text(name), kind, link.as_deref(), size));
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
mod tests;
