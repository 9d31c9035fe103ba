//! The shape of a finding's message and the fingerprints made of it: names, paths,
//! quoted strings, hashes and numbers replaced by placeholders ([`shape`]), so that one
//! cause found again from another seed keeps its fingerprint ([`fingerprint`]); and the
//! fingerprint of a fuzz finding's cause signature ([`cause_fingerprint`]).

use crate::checks::Check;
use sha2::{Digest, Sha256};

/// The fingerprint of a fuzz finding (16 lower-case hex digits): a digest of the check and
/// its cause signature as it is. The signature already has names abstracted (type flags
/// and path shapes such as `1:d1->/d2`), so unlike [`fingerprint`] no [`shape`] is applied:
/// its digits are what tells causes apart.
pub fn cause_fingerprint(check: Check, cause: &str) -> String {
    let mut h = Sha256::new();
    h.update(check.id().as_bytes());
    h.update(b"\0cause\0");
    h.update(cause.as_bytes());
    hex::encode(&h.finalize()[..8])
}

/// The fingerprint of a cause key (16 lower-case hex digits): a digest of the check, the
/// side (`capture`, `hydration`) and the behaviour ([`super::behaviour()`]), which holds no
/// names, lengths, counts or seeds, so that one behaviour keeps its fingerprint across
/// seeds, `-j`, shards and modes.
pub fn behaviour_fingerprint(check: Check, side: &str, behaviour: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"behaviour-v3\0");
    h.update(check.id().as_bytes());
    h.update(b"\0");
    h.update(side.as_bytes());
    h.update(b"\0");
    h.update(behaviour.as_bytes());
    hex::encode(&h.finalize()[..8])
}

/// The fingerprint of a finding's message (16 lower-case hex digits), the cause key of
/// report schema 2 and baseline schema 2 (still matched, see [`super::Baseline`]): a digest of the check and
/// of [`shape`] of the message. It keeps what went wrong (`hardlink-not-allowed`, `differs
/// from the expected tree: + c?????????`) and drops what varies with the seed or with how
/// far shrinking got (names, paths, sizes, counts).
pub fn fingerprint(check: Check, message: &str) -> String {
    let mut h = Sha256::new();
    h.update(check.id().as_bytes());
    h.update(b"\0");
    h.update(shape(message).as_bytes());
    hex::encode(&h.finalize()[..8])
}

/// The message with names abstracted, the one place that decides what is a name:
/// - a backticked span (a member name, a path, a command) becomes `` `…` ``;
/// - a single-quoted span that starts after a space, a bracket or punctuation and ends
///   before one (`'./a/b'`, not the `'` of `can't`) becomes `'…'`;
/// - a whitespace-separated word holding a `/` becomes `<path>`; `sha256:` plus hex becomes
///   `<hash>`;
/// - in an `ls -l`-style tree line (`- drwxr-xr-x  name/`, `+ c?????????  1,3  name`) the
///   name becomes `<name>` (its trailing `/` kept) and a link target `<target>`;
/// - the names of a `hardlinks: a = b` line become `<names>`, and the word after a tar
///   tool's own name (`tar: a-1: Cannot open: ...`) `<name>:`;
/// - every run of digits becomes `N`;
/// - runs of whitespace become one space.
pub fn shape(message: &str) -> String {
    let spans = abstract_spans(message);
    let mut words: Vec<String> = Vec::new();
    let mut rest = spans.as_str();
    // A tree line's name is everything after its fields, up to ` -> ` or the end: find the
    // first mode-string word and abstract what follows it field by field.
    let mut tail: Option<String> = None;
    let mut pos = 0;
    for w in spans.split_whitespace() {
        let at = rest.find(w).map(|i| i + pos).unwrap_or(pos);
        pos = at + w.len();
        rest = &spans[pos..];
        if is_mode_string(w) {
            words.push(w.to_string());
            tail = Some(tree_line_tail(rest));
            break;
        }
        if w == "hardlinks:" {
            words.push("hardlinks: <names>".into());
            break;
        }
        // `tar: NAME: Cannot open: File exists`, `bsdtar: NAME: Can't create '…'`.
        let after_tool = words
            .last()
            .is_some_and(|p| TOOL_PREFIXES.contains(&p.as_str()));
        if after_tool && w.len() > 1 && w.ends_with(':') {
            words.push("<name>:".into());
            continue;
        }
        words.push(abstract_word(w));
    }
    if let Some(t) = tail {
        if !t.is_empty() {
            words.push(t);
        }
    }
    digits_to_n(&words.join(" "))
}

/// Tools whose messages name the member right after their own name (`tar: a/b: ...`).
const TOOL_PREFIXES: [&str; 4] = ["tar:", "bsdtar:", "gtar:", "busybox:"];

/// Backticked and single-quoted spans replaced by placeholders.
fn abstract_spans(message: &str) -> String {
    let chars: Vec<char> = message.chars().collect();
    let mut out = String::with_capacity(message.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            match chars[i + 1..].iter().position(|&d| d == '`') {
                Some(len) => {
                    out.push_str("`…`");
                    i += len + 2;
                }
                None => {
                    out.push_str("`…");
                    i = chars.len();
                }
            }
            continue;
        }
        let opens = c == '\''
            && (i == 0 || chars[i - 1].is_whitespace() || "([{:=,\"".contains(chars[i - 1]));
        if opens {
            let close = chars[i + 1..].iter().enumerate().position(|(j, &d)| {
                let k = i + 1 + j;
                d == '\''
                    && chars
                        .get(k + 1)
                        .is_none_or(|n| n.is_whitespace() || ")]}:;,.\"".contains(*n))
            });
            if let Some(len) = close {
                out.push_str("'…'");
                i += len + 2;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

fn abstract_word(w: &str) -> String {
    if let Some(hex) = w.strip_prefix("sha256:") {
        if !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return "<hash>".into();
        }
    }
    if w.contains('/') && !w.contains('`') && !w.contains('\'') {
        // Keep punctuation around the path (`(./a/b)` → `(<path>)`).
        let start = w.find(|c: char| !"([{\"".contains(c)).unwrap_or(0);
        let end = w
            .char_indices()
            .rfind(|&(_, c)| !")]}:;,.\"".contains(c))
            .map_or(w.len(), |(i, c)| i + c.len_utf8());
        if start < end {
            return format!("{}<path>{}", &w[..start], &w[end..]);
        }
    }
    w.to_string()
}

/// `drwxr-xr-x`, `c?????????`, `-rw-r--r--`: a type letter and nine permission characters.
fn is_mode_string(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() == 10 && b"-dlpscb".contains(&b[0]) && b[1..].iter().all(|c| b"-rwxsStT?".contains(c))
}

/// What follows the mode of a tree line: `12  sha256:ab  a/b` → `N <hash> <name>`,
/// `name/` → `<name>/`, `l -> t` → `<name> -> <target>`, `1,3  dev` → `N,N <name>`.
fn tree_line_tail(rest: &str) -> String {
    let rest = rest.trim();
    let mut fields: Vec<&str> = rest.split("  ").map(str::trim).collect();
    fields.retain(|f| !f.is_empty());
    let Some(name) = fields.pop() else {
        return String::new();
    };
    let mut out: Vec<String> = fields.iter().map(|f| abstract_word(f)).collect();
    let name = if name.contains(" -> ") {
        "<name> -> <target>".to_string()
    } else if name.ends_with('/') {
        "<name>/".to_string()
    } else {
        "<name>".to_string()
    };
    out.push(name);
    out.join(" ")
}

fn digits_to_n(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_digits = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('N');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever a tool prints (any Unicode, GNU tar's `‘…’` quotes around a path), a
    /// shape is made without a panic.
    #[test]
    fn any_message_has_a_shape() {
        for m in [
            "tar: ‘./.venv/lib/a’: Cannot hard link",
            "‘./a/b’:",
            "/ä/ö’",
            "(/a/ü)",
            "`",
            "'",
            "sha256:",
        ] {
            let _ = shape(m);
        }
        let mut rng = snapconf_tarbytes::Rng::new(7);
        let alphabet: Vec<char> = "a/.'`’‘ü:() \n-1".chars().collect();
        for _ in 0..20_000 {
            let n = rng.below(24);
            let m: String = (0..n)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            let _ = shape(&m);
        }
    }

    #[test]
    fn shapes_abstract_names_paths_and_numbers_but_keep_the_reason() {
        assert_eq!(
            shape("hydration into an empty root was refused: hardlink-not-allowed: member `./venv/a` (hardlink members are refused by policy)"),
            "hydration into an empty root was refused: hardlink-not-allowed: member `…` (hardlink members are refused by policy)"
        );
        assert_eq!(
            shape("`busybox tar -xf /x/archive.tar -C /x/h-2` exited with status 1: tar: can't create hardlink './.venv/pyvenv.cfg' to './.hidden'"),
            "`…` exited with status N: tar: can't create hardlink '…' to '…'"
        );
        assert_eq!(
            shape("Traceback ... KeyError: \"linkname './.hidden' not found\""),
            "Traceback ... KeyError: \"linkname '…' not found\""
        );
        assert_eq!(
            shape("hydration into an empty root differs from the expected tree: + c---------  1,3  a-1"),
            "hydration into an empty root differs from the expected tree: + c--------- N,N <name>"
        );
        assert_eq!(
            shape("refused hydration changed the prior workspace: - drwxr-xr-x  .hidden/"),
            "refused hydration changed the prior workspace: - drwxr-xr-x <name>/"
        );
        assert_eq!(
            shape("differs: + -rw-r--r--  12  sha256:ab12cd34  dir with space/f"),
            "differs: + -rw-r--r-- N <hash> <name>"
        );
        assert_eq!(
            shape("differs: - lrwxrwxrwx  l -> ../../etc"),
            "differs: - lrwxrwxrwx <name> -> <target>"
        );
        assert_eq!(
            shape("tar: a-1: Cannot open: File exists"),
            shape("tar: long99_nnn: Cannot open: File exists")
        );
        assert_eq!(
            shape("tar: a-1: Cannot open: File exists"),
            "tar: <name>: Cannot open: File exists"
        );
        assert_eq!(
            shape("differs: + hardlinks: a = b-2"),
            "differs: + hardlinks: <names>"
        );
        assert_eq!(
            shape("cannot open /tmp/x/y: (14 such member(s))"),
            "cannot open <path>: (N such member(s))"
        );
    }

    #[test]
    fn fingerprints_ignore_names_and_numbers_but_not_the_reason() {
        let a = "hydration into an empty root was refused: hardlink-not-allowed: member `./venv/a`";
        let b = "hydration into an empty root was refused: hardlink-not-allowed: member `./x/y/z`";
        let c = "hydration into an empty root was refused: dangling-hardlink: member `./venv/a`";
        let fp = fingerprint;
        assert_eq!(fp(Check::LATE_FAILURE, a), fp(Check::LATE_FAILURE, b));
        assert_ne!(fp(Check::LATE_FAILURE, a), fp(Check::LATE_FAILURE, c));
        assert_ne!(fp(Check::LATE_FAILURE, a), fp(Check::ROUNDTRIP, a));
        assert_eq!(
            fp(Check::DANGLING_LINK, "(1 such member(s))"),
            fp(Check::DANGLING_LINK, "(14 such member(s))")
        );
        let d = "tar: can't create hardlink './.venv/pyvenv.cfg' to './.hidden'";
        let e = "tar: can't create hardlink './b' to './a-2'";
        assert_eq!(fp(Check::LATE_FAILURE, d), fp(Check::LATE_FAILURE, e));
    }
}
