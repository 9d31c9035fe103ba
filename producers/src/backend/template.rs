//! Command templates: argv words with `{placeholder}`s, substituted without a shell.
//!
//! A template is a TOML array of words, `["tar", "-xf", "{archive}", "-C", "{root}"]`. The
//! rule: **a placeholder becomes (part of) exactly one argv word, and never part of code.**
//! Its value is spliced in as bytes and never re-split, globbed, quoted or interpreted, so a
//! root holding spaces, quotes, `$(…)` or non-UTF-8 bytes reaches the program intact.
//!
//! A word that holds a placeholder *and* looks like code is refused when the description is
//! loaded ([`CommandTemplate::new`]): outside its placeholder tokens it holds whitespace or
//! one of the [`CODE_BYTES`] (`` ;|&$`"'()<>*?[]{}\!# ``). snapconf cannot tell which program
//! reads a word as a script (`sh -c`, `env sh -c`, `bash -o pipefail -c`, `busybox sh -c`,
//! `python3 -c`, `node -e`, …), so it never splices a value into one: a script gets its
//! values as positional parameters instead,
//! `["sh", "-c", "tar -xf \"$1\"", "sh", "{archive}"]`. Option-like words such as
//! `--file={archive}`, `-C{root}`, `{dir}/helper.py` and `--exclude-from={exclude_file}`
//! stay allowed.
//!
//! What the rule cannot see: a word that is *only* a placeholder passed where a program
//! expects a script (`["sh", "-c", "{archive}"]`) runs the value as code. Don't write that;
//! the value is a path snapconf chooses, but nothing checks it here.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use std::process::Command;

/// The placeholders a template may use.
pub const PLACEHOLDERS: &[&str] = &["{root}", "{archive}", "{exclude_file}", "{dir}"];

/// The bytes that make a word holding a placeholder "look like code" (besides whitespace),
/// when they appear outside the placeholder tokens: shell metacharacters, quotes, globs,
/// brackets and braces, the escape character, comment and history characters.
pub const CODE_BYTES: &[u8] = b";|&$`\"'()<>*?[]{}\\!#";

/// One command line with placeholders; see the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandTemplate {
    words: Vec<String>,
}

/// The values substituted into a template.
#[derive(Clone, Copy, Debug)]
pub struct Vars<'a> {
    /// `{root}`: the workspace root.
    pub root: &'a Path,
    /// `{archive}`: the archive path.
    pub archive: &'a Path,
    /// `{exclude_file}`: a file of root-relative excluded paths, one per line.
    pub exclude_file: &'a Path,
    /// `{dir}`: the directory holding the description file.
    pub dir: &'a Path,
}

impl CommandTemplate {
    /// A template from its words.
    ///
    /// # Errors
    /// A message (without the file and key; the caller adds them) when there are no words,
    /// the program word is empty, a word holds `{name}` for a name that is not a
    /// placeholder, or a word holds a placeholder and looks like code (see the module docs;
    /// the message names the word and shows the positional-parameter form).
    pub fn new(words: Vec<String>) -> Result<Self, String> {
        match words.first() {
            None => return Err("the command has no words".into()),
            Some(w) if w.is_empty() => return Err("the program word is empty".into()),
            Some(_) => {}
        }
        for w in &words {
            let mut rest = w.as_str();
            while let Some(open) = rest.find('{') {
                let after = &rest[open + 1..];
                let Some(close) = after.find('}') else { break };
                let inner = &after[..close];
                let looks_like_placeholder = !inner.is_empty()
                    && inner
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                let token = &rest[open..open + close + 2];
                if looks_like_placeholder && !PLACEHOLDERS.contains(&token) {
                    return Err(format!(
                        "unknown placeholder `{token}` in `{w}` (known: {})",
                        PLACEHOLDERS.join(", ")
                    ));
                }
                rest = &after[close + 1..];
            }
            if let Some(why) = code_in_word(w).or_else(|| script_of_an_option(&words, w)) {
                return Err(format!(
                    "word `{}` puts a placeholder into what looks like code ({why}); a value is \
                     never spliced into a script: pass it as a positional parameter instead, \
                     e.g. [\"sh\", \"-c\", \"tar -xf \\\"$1\\\"\", \"sh\", \"{{archive}}\"]",
                    w.escape_debug()
                ));
            }
        }
        Ok(CommandTemplate { words })
    }

    /// The words as written.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// The program word as written (placeholders unsubstituted), for messages.
    pub fn program(&self) -> &str {
        self.words.first().map_or("", String::as_str)
    }

    /// Whether any word uses `placeholder` (e.g. `{exclude_file}`).
    pub fn uses(&self, placeholder: &str) -> bool {
        self.words.iter().any(|w| w.contains(placeholder))
    }

    /// The words with `vars` substituted, as argv bytes: one argv word per template word,
    /// each placeholder replaced by its value's raw bytes (no quoting, no splitting).
    pub fn render(&self, vars: &Vars<'_>) -> Vec<OsString> {
        self.words
            .iter()
            .map(|w| OsString::from_vec(substitute(w, vars)))
            .collect()
    }

    /// A [`Command`] for the rendered words, with `env` added to snapconf's environment.
    pub fn command<'e>(
        &self,
        vars: &Vars<'_>,
        env: impl IntoIterator<Item = (&'e String, &'e String)>,
    ) -> Command {
        let words = self.render(vars);
        let mut cmd = Command::new(words.first().cloned().unwrap_or_default());
        cmd.args(words.iter().skip(1));
        cmd.envs(env);
        cmd
    }
}

/// Why `word` is a script, if it holds a placeholder and follows an option that takes
/// code: `-c` (or a cluster ending in it, `-ec`: sh, bash, python), `-e` (node, perl,
/// ruby), `--eval`, `--print`, `--command`. A value is never a script (hostile review:
/// `["sh", "-c", "{dir}/v.sh"]` ran a directory's name). A program whose `-c` takes no
/// code (`gzip -c FILE`) gets its file after `--` instead.
fn script_of_an_option(words: &[String], word: &str) -> Option<String> {
    if !PLACEHOLDERS.iter().any(|p| word.contains(p)) {
        return None;
    }
    let at = words.iter().position(|w| std::ptr::eq(w.as_str(), word))?;
    let prev = words.get(at.checked_sub(1)?)?;
    let short = prev.len() >= 2
        && prev.starts_with('-')
        && !prev.starts_with("--")
        && prev[1..].bytes().all(|b| b.is_ascii_alphabetic())
        && prev.ends_with(['c', 'e']);
    let long = matches!(prev.as_str(), "--eval" | "--print" | "--command");
    (short || long).then(|| format!("it is the script of `{prev}`"))
}

/// Why `word` looks like code, if it holds a placeholder and, outside its placeholder
/// tokens, whitespace or one of [`CODE_BYTES`]; `None` when it holds no placeholder or
/// none of those.
fn code_in_word(word: &str) -> Option<String> {
    if !PLACEHOLDERS.iter().any(|p| word.contains(p)) {
        return None;
    }
    let mut rest = word.to_owned();
    for p in PLACEHOLDERS {
        rest = rest.replace(p, "");
    }
    rest.chars().find_map(|c| {
        if c.is_whitespace() {
            Some(format!("whitespace {}", c.escape_debug()))
        } else if c.is_ascii() && CODE_BYTES.contains(&(c as u8)) {
            Some(format!("`{c}`"))
        } else {
            None
        }
    })
}

/// `word` with every placeholder replaced by its value's bytes.
fn substitute(word: &str, vars: &Vars<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(word.len());
    let mut rest = word.as_bytes();
    'outer: while !rest.is_empty() {
        for (token, value) in [
            ("{root}", vars.root),
            ("{archive}", vars.archive),
            ("{exclude_file}", vars.exclude_file),
            ("{dir}", vars.dir),
        ] {
            if rest.starts_with(token.as_bytes()) {
                out.extend_from_slice(value.as_os_str().as_bytes());
                rest = &rest[token.len()..];
                continue 'outer;
            }
        }
        out.push(rest[0]);
        rest = &rest[1..];
    }
    out
}

/// `value` as one POSIX shell word: wrapped in single quotes, each `'` written `'\''`.
/// Every byte other than `'` is literal inside single quotes, so the result never expands.
/// For showing commands to humans (reproduction lines); templates never use it: no value is
/// spliced into a script.
pub fn shell_quote(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len() + 2);
    out.push(b'\'');
    for &b in value {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    fn vars<'a>(root: &'a Path) -> Vars<'a> {
        Vars {
            root,
            archive: Path::new("/j/a.tar"),
            exclude_file: Path::new("/j/s/ex"),
            dir: Path::new("/b"),
        }
    }

    fn t(words: &[&str]) -> CommandTemplate {
        CommandTemplate::new(words.iter().map(|w| (*w).to_owned()).collect())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// A placeholder that is the whole script of a code-taking option (`sh -c`, `bash -ec`,
    /// `python3 -c`, `node -e`, `--eval`) is refused even with no code byte in the word; a
    /// file after `--` or another option is not.
    #[test]
    fn a_placeholder_as_a_script_is_refused() {
        let new = |w: &[&str]| CommandTemplate::new(w.iter().map(|x| (*x).to_owned()).collect());
        for words in [
            &["sh", "-c", "{dir}/v.sh"][..],
            &["bash", "-ec", "{root}"],
            &["python3", "-c", "{archive}"],
            &["node", "-e", "{dir}/x.js"],
            &["node", "--eval", "{dir}"],
        ] {
            let e = new(words).expect_err("a script");
            assert!(e.contains("the script of"), "{words:?}: {e}");
        }
        for words in [
            &["zstd", "-d", "-c", "--", "{archive}"][..],
            &["tar", "-xf", "{archive}", "-C", "{root}"],
            &["python3", "{dir}/x.py", "-c", "conf"],
        ] {
            assert!(new(words).is_ok(), "{words:?}");
        }
    }

    /// Placeholders are spliced into one argv word each, never split or interpreted.
    #[test]
    fn values_stay_one_word() {
        let root = Path::new(OsStr::from_bytes(b"/j/r oo$(x)\xff"));
        let words = t(&["tar", "-C", "{root}", "--file={archive}", "{}"]).render(&vars(root));
        assert_eq!(words[2].as_bytes(), b"/j/r oo$(x)\xff");
        assert_eq!(words[3].as_bytes(), b"--file=/j/a.tar");
        assert_eq!(words[4].as_bytes(), b"{}", "non-placeholders stay literal");
    }

    /// No word is ever quoted or rewritten for a shell: a placeholder passed as a positional
    /// parameter after a script arrives raw, and the script text has no placeholder.
    #[test]
    fn positional_parameters_stay_raw() {
        let root = Path::new("/j/it's; rm -rf /");
        let words = t(&["/bin/sh", "-ec", "cd \"$1\" && ls", "sh", "{root}"]).render(&vars(root));
        assert_eq!(words[2].as_bytes(), b"cd \"$1\" && ls");
        assert_eq!(words[4].as_bytes(), b"/j/it's; rm -rf /");
    }

    /// A placeholder inside anything that looks like code is refused, whatever program
    /// reads it (a shell behind `env`, `bash -o pipefail`, `busybox`, `python3 -c`,
    /// `node -e`), and the message names the word and shows the positional form.
    #[test]
    fn placeholders_inside_code_are_refused() {
        for p in PLACEHOLDERS {
            for words in [
                vec!["sh", "-c", &format!("tar -xf {p}")],
                vec!["env", "sh", "-c", &format!("cat {p}")],
                vec!["bash", "-o", "pipefail", "-c", &format!("x={p};y")],
                vec!["busybox", "sh", "-c", &format!("ls '{p}'")],
                vec!["python3", "-c", &format!("open(\"{p}\")")],
                vec!["node", "-e", &format!("require({p})")],
                vec!["x", &format!("{p}$(y)")],
                vec!["x", &format!("{p}\nz")],
                vec!["x", &format!("`{p}`")],
                vec!["x", &format!("{{{p}}}")],
            ] {
                let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
                let e = CommandTemplate::new(words.clone()).expect_err("code with a placeholder");
                let last = words.last().map(|w| w.escape_debug().to_string());
                assert!(
                    e.contains(&format!("`{}`", last.unwrap_or_default())),
                    "{e}"
                );
                assert!(e.contains("positional parameter"), "{e}");
            }
        }
        for ok in [
            "--file={archive}",
            "{dir}/x.py",
            "-C{root}",
            "--exclude-from={exclude_file}",
            "{root}",
            "a,b:c@{root}+%=.",
        ] {
            assert!(
                CommandTemplate::new(vec!["x".into(), ok.into()]).is_ok(),
                "`{ok}` is an ordinary argument"
            );
        }
    }

    #[test]
    fn unknown_placeholders_and_empty_commands_are_refused() {
        assert!(CommandTemplate::new(vec![]).is_err());
        assert!(CommandTemplate::new(vec![String::new()]).is_err());
        let e = CommandTemplate::new(vec!["x".into(), "{archiv}".into()]).expect_err("typo");
        assert!(e.contains("`{archiv}`"), "{e}");
        assert!(CommandTemplate::new(vec!["awk".into(), "{ print $1 }".into()]).is_ok());
    }
}
