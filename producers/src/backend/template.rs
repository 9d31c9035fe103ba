//! Command templates: argv words with `{placeholder}`s, substituted without a shell.
//!
//! A template is a TOML array of words, `["tar", "-xf", "{archive}", "-C", "{root}"]`. Each
//! word becomes exactly one argv word: a placeholder's value is spliced in as bytes and
//! never re-split, globbed or interpreted, so a root holding spaces, quotes, `$(…)` or
//! non-UTF-8 bytes reaches the program intact. Only when the template itself runs a shell
//! script (`sh -c SCRIPT`, likewise `bash`, `dash`, `zsh`, `ksh`) is a placeholder inside
//! SCRIPT replaced by its single-quoted form (see [`shell_quote`]); the safer habit is to
//! pass values as positional parameters: `["sh", "-c", "tar -xf \"$1\"", "sh", "{archive}"]`.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use std::process::Command;

/// The placeholders a template may use.
pub const PLACEHOLDERS: &[&str] = &["{root}", "{archive}", "{exclude_file}", "{dir}"];

/// Shells whose `-c` script argument gets quoted substitutions.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "ash"];

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
    /// A message (without the key; the caller adds it) when there are no words, the program
    /// word is empty, or a word holds `{name}` for a name that is not a placeholder.
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

    /// The words with `vars` substituted, as argv bytes.
    pub fn render(&self, vars: &Vars<'_>) -> Vec<OsString> {
        let program = self.words.first().map_or("", String::as_str);
        let base = program.rsplit('/').next().unwrap_or(program);
        let is_shell = SHELLS.contains(&base);
        let mut out = Vec::with_capacity(self.words.len());
        for (i, w) in self.words.iter().enumerate() {
            let script = is_shell
                && i >= 2
                && self.words[i - 1].starts_with('-')
                && !self.words[i - 1].starts_with("--")
                && self.words[i - 1].contains('c')
                && self.words[1..i - 1].iter().all(|x| x.starts_with('-'));
            out.push(OsString::from_vec(substitute(w, vars, script)));
        }
        out
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

/// `word` with every placeholder replaced by its value's bytes; shell-quoted when `quote`.
fn substitute(word: &str, vars: &Vars<'_>, quote: bool) -> Vec<u8> {
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
                let bytes = value.as_os_str().as_bytes();
                if quote {
                    out.extend_from_slice(&shell_quote(bytes));
                } else {
                    out.extend_from_slice(bytes);
                }
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

    /// Placeholders are spliced into one argv word each, never split or interpreted.
    #[test]
    fn values_stay_one_word() {
        let root = Path::new(OsStr::from_bytes(b"/j/r oo$(x)\xff"));
        let words = t(&["tar", "-C", "{root}", "--file={archive}", "{}"]).render(&vars(root));
        assert_eq!(words[2].as_bytes(), b"/j/r oo$(x)\xff");
        assert_eq!(words[3].as_bytes(), b"--file=/j/a.tar");
        assert_eq!(words[4].as_bytes(), b"{}", "non-placeholders stay literal");
    }

    /// Inside a shell's `-c` script a value is single-quoted, so it cannot inject code.
    #[test]
    fn shell_scripts_get_quoted_values() {
        let root = Path::new("/j/it's; rm -rf /");
        let words = t(&["/bin/sh", "-ec", "cd {root} && ls", "sh", "{root}"]).render(&vars(root));
        assert_eq!(words[2].as_bytes(), b"cd '/j/it'\\''s; rm -rf /' && ls");
        assert_eq!(
            words[4].as_bytes(),
            b"/j/it's; rm -rf /",
            "positional stays raw"
        );
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "printf %s {}",
                String::from_utf8_lossy(&shell_quote(b"a'b $HOME `x`"))
            ))
            .output()
            .map(|o| o.stdout)
            .unwrap_or_default();
        assert_eq!(out, b"a'b $HOME `x`");
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
