//! The backend description file (TOML), parsed and checked.
//!
//! ```toml
//! name = "my-backend"
//! capture = ["my-tool", "save", "--root", "{root}", "--out", "{archive}", "--exclude-from", "{exclude_file}"]
//! hydrate = ["my-tool", "load", "--root", "{root}", "--in", "{archive}"]
//! timeout = 20
//! [profile]
//! hardlinks = "copy"
//! # … the keys of `harness/src/model/default-profile.toml`
//! ```
//! See `producers/backends/README.md` for every key.

use super::error::BackendError;
use super::template::{CommandTemplate, CODE_BYTES};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every top-level key a description may hold, for documentation and tests.
pub const DESCRIPTION_KEYS: &[&str] = &[
    "name",
    "mode",
    "capture",
    "hydrate",
    "validate",
    "recover",
    "version",
    "worker",
    "timeout",
    "env",
    "pair-with-builtins",
    "profile",
];

/// How the backend is driven.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// One process per capture and per hydration (the `capture` / `hydrate` templates).
    #[default]
    Command,
    /// One long-lived process (the `worker` template) answering JSON lines.
    Worker,
}

/// The raw TOML shape; unknown keys are refused.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct Raw {
    name: String,
    #[serde(default)]
    mode: Mode,
    capture: Option<Vec<String>>,
    hydrate: Option<Vec<String>>,
    validate: Option<Vec<String>>,
    recover: Option<Vec<String>>,
    version: Option<Vec<String>>,
    worker: Option<Vec<String>>,
    timeout: Option<f64>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default = "yes")]
    pair_with_builtins: bool,
    profile: Option<toml::Table>,
}

fn yes() -> bool {
    true
}

/// A parsed, checked backend description.
#[derive(Clone, Debug)]
pub struct BackendDescription {
    /// The file it was read from (as given), for messages.
    pub path: PathBuf,
    /// The directory holding the file: the `{dir}` placeholder, for helper scripts shipped
    /// beside it.
    pub dir: PathBuf,
    /// Adapter name for both roles; `[a-z0-9._-]`, 1..=64 bytes.
    pub name: String,
    /// Command or worker mode.
    pub mode: Mode,
    /// One capture (command mode; required there).
    pub capture: Option<CommandTemplate>,
    /// One hydration (command mode; required there).
    pub hydrate: Option<CommandTemplate>,
    /// A host-side check run before every hydration (both modes): exit 0 accepts.
    pub validate: Option<CommandTemplate>,
    /// Run after a hydration that was refused or hung, before the outcome is reported.
    pub recover: Option<CommandTemplate>,
    /// Prints the backend's version (first line) for `snapconf list` and reports.
    pub version: Option<CommandTemplate>,
    /// The persistent worker (worker mode; required there).
    pub worker: Option<CommandTemplate>,
    /// Limit for each call; `None` means the run's `--timeout`.
    pub timeout: Option<Duration>,
    /// Extra environment for every command and the worker (on top of snapconf's own).
    pub env: BTreeMap<String, String>,
    /// Whether the backend is paired with the built-in adapters by default (`false` for a
    /// backend whose archives have their own layout).
    pub pair_with_builtins: bool,
    /// The `[profile]` table, uninterpreted: the harness parses it into its profile type
    /// (a missing `name` defaults to the backend's name there).
    pub profile: Option<toml::Table>,
}

impl BackendDescription {
    /// Read and check the description at `path`.
    ///
    /// # Errors
    /// [`BackendError`] naming `path` and, where there is one, the key;
    /// [`BackendError::Read`] when it is not a regular file of at most
    /// [`CONFIG_LIMIT`](crate::input::CONFIG_LIMIT) bytes.
    pub fn load(path: &Path) -> Result<Self, BackendError> {
        // Bounded and typed: a FIFO or `/dev/zero` given as `--backend` is refused at once.
        let text = crate::input::read_text(path, crate::input::CONFIG_LIMIT)?;
        Self::parse(&text, path)
    }

    /// Parse description `text`; `path` is where it came from (for messages and `{dir}`).
    ///
    /// # Errors
    /// As [`BackendDescription::load`], except reading.
    pub fn parse(text: &str, path: &Path) -> Result<Self, BackendError> {
        let raw: Raw = toml::from_str(text).map_err(|e| BackendError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().replace('\n', " | "),
        })?;
        let key_err = |key: &str, message: String| BackendError::Key {
            path: path.to_path_buf(),
            key: key.to_owned(),
            message,
        };
        let name_ok = !raw.name.is_empty()
            && raw.name.len() <= 64
            && raw
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
        if !name_ok {
            return Err(key_err(
                "name",
                format!("`{}` is not 1 to 64 of [a-z0-9._-]", raw.name),
            ));
        }
        let template = |key: &str, words: Option<Vec<String>>| {
            words
                .map(|w| CommandTemplate::new(w).map_err(|m| key_err(key, m)))
                .transpose()
        };
        let capture = template("capture", raw.capture)?;
        let hydrate = template("hydrate", raw.hydrate)?;
        let validate = template("validate", raw.validate)?;
        let recover = template("recover", raw.recover)?;
        let version = template("version", raw.version)?;
        let worker = template("worker", raw.worker)?;
        // `{dir}` is the one value a user names outright (where the description lies): one
        // that a shell would read as code is refused, in case a template hands it to one
        // after all (hostile review: `sh -c {dir}/v.sh` in a directory named `v$(…)`).
        let dir = path.parent().unwrap_or(Path::new("."));
        let dir_bytes = dir.as_os_str().as_encoded_bytes();
        let uses_dir = [&capture, &hydrate, &validate, &recover, &version, &worker]
            .into_iter()
            .flatten()
            .any(|t| t.uses("{dir}"));
        if uses_dir
            && dir_bytes
                .iter()
                .any(|b| CODE_BYTES.contains(b) || matches!(b, b'\n' | b'\t' | b'\r'))
        {
            return Err(BackendError::Parse {
                path: path.to_path_buf(),
                message: format!(
                    "its directory `{}` holds a byte a shell reads as code, and a template \
                     uses `{{dir}}`; move the description to a directory without any of \
                     `{}`, a newline or a tab",
                    dir.display(),
                    String::from_utf8_lossy(CODE_BYTES)
                ),
            });
        }
        match raw.mode {
            Mode::Command => {
                for (key, t) in [("capture", &capture), ("hydrate", &hydrate)] {
                    if t.is_none() {
                        return Err(key_err(
                            key,
                            "missing; required when mode = \"command\"".into(),
                        ));
                    }
                }
            }
            Mode::Worker => {
                if worker.is_none() {
                    return Err(key_err(
                        "worker",
                        "missing; required when mode = \"worker\"".into(),
                    ));
                }
            }
        }
        for (key, t) in [("worker", &worker), ("version", &version)] {
            if let Some(t) = t {
                for p in ["{root}", "{archive}", "{exclude_file}"] {
                    if t.uses(p) {
                        return Err(key_err(
                            key,
                            format!("`{p}` has no value here; only `{{dir}}` does"),
                        ));
                    }
                }
            }
        }
        let timeout = match raw.timeout {
            None => None,
            Some(t) if t.is_finite() && t > 0.0 && t <= 86_400.0 => {
                Some(Duration::from_secs_f64(t))
            }
            Some(t) => {
                return Err(key_err(
                    "timeout",
                    format!("{t} is not a number of seconds in (0, 86400]"),
                ))
            }
        };
        for k in raw.env.keys() {
            if k.is_empty() || k.contains('=') || k.contains('\0') {
                return Err(key_err("env", format!("`{k}` is not a variable name")));
            }
        }
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let dir = dir.canonicalize().unwrap_or(dir);
        Ok(BackendDescription {
            path: path.to_path_buf(),
            dir,
            name: raw.name,
            mode: raw.mode,
            capture,
            hydrate,
            validate,
            recover,
            version,
            worker,
            timeout,
            env: raw.env,
            pair_with_builtins: raw.pair_with_builtins,
            profile: raw.profile,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<BackendDescription, String> {
        BackendDescription::parse(text, Path::new("/x/b.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_minimal_command_backend_parses() {
        let d = parse("name = \"t\"\ncapture = [\"a\", \"{root}\"]\nhydrate = [\"b\"]\n")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.mode, Mode::Command);
        assert_eq!(d.dir, Path::new("/x"));
        assert!(d.pair_with_builtins);
    }

    /// A description whose directory a shell would read as code (`$(…)`, backticks, `;`,
    /// a newline) is refused when a template uses `{dir}`; with spaces, or unused, it loads.
    #[test]
    fn a_directory_holding_code_is_refused_where_dir_is_used() {
        let text = "name = \"t\"\ncapture = [\"{dir}/c\", \"{root}\"]\nhydrate = [\"b\"]\n";
        for dir in ["/x/v$(touch PWNED)", "/x/`id`", "/x/a;b", "/x/a\nb"] {
            let e = BackendDescription::parse(text, &Path::new(dir).join("b.toml"))
                .expect_err("refused");
            assert!(e.to_string().contains("reads as code"), "{dir}: {e}");
        }
        assert!(BackendDescription::parse(text, Path::new("/x/my backends/b.toml")).is_ok());
        let unused = "name = \"t\"\ncapture = [\"a\"]\nhydrate = [\"b\"]\n";
        assert!(BackendDescription::parse(unused, Path::new("/x/v$(x)/b.toml")).is_ok());
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        // (description, what is wrong with it, what the error must name)
        let cases: [(&str, &str, &[&str]); 7] = [
            (
                "name = \"t\"\ncapture = [\"a\"]\n",
                "no hydrate",
                &["`/x/b.toml`", "`hydrate`"],
            ),
            (
                "name = \"t\"\ncapture = [\"a\"]\nhydrate = [\"b\"]\nfoo = 1\n",
                "unknown key",
                &["`/x/b.toml`", "foo"],
            ),
            ("name = [", "bad toml", &["`/x/b.toml`"]),
            (
                "name = \"t\"\ncapture = [\"a\", \"{rot}\"]\nhydrate = [\"b\"]\n",
                "typo in a placeholder",
                &["`capture`", "{rot}"],
            ),
            (
                "name = \"t\"\nmode = \"worker\"\nworker = [\"w\", \"{root}\"]\n",
                "a per-request placeholder in the worker command",
                &["`worker`", "{root}"],
            ),
            (
                "name = \"t\"\nmode = \"worker\"\n",
                "no worker",
                &["`worker`"],
            ),
            (
                "name = \"T T\"\ncapture = [\"a\"]\nhydrate = [\"b\"]\n",
                "name",
                &["`name`"],
            ),
        ];
        for (text, wrong, named) in cases {
            let e = parse(text).expect_err(wrong);
            assert!(named.iter().all(|n| e.contains(n)), "{wrong}: {e}");
        }
    }
    /// A placeholder inside a script is refused when the file is loaded, for every
    /// placeholder and every way of starting a shell; the error names the file, the key
    /// and the word, and shows the positional-parameter form.
    #[test]
    fn placeholders_inside_scripts_are_refused_at_load() {
        let t = tempfile::tempdir().expect("tempdir");
        let path = t.path().join("b.toml");
        for p in ["{root}", "{archive}", "{exclude_file}", "{dir}"] {
            for (key, shell) in [
                ("hydrate", r#""sh", "-c""#),
                ("capture", r#""env", "sh", "-c""#),
                ("validate", r#""bash", "-o", "pipefail", "-c""#),
                ("recover", r#""/usr/bin/env", "bash", "-c""#),
            ] {
                let script = format!("tar -xf {p} && touch ok");
                let mut text = String::from("name = \"t\"\n");
                for k in ["capture", "hydrate", "validate", "recover"] {
                    if k == key {
                        text.push_str(&format!("{k} = [{shell}, '{script}']\n"));
                    } else if k == "capture" || k == "hydrate" {
                        text.push_str(&format!("{k} = [\"true\"]\n"));
                    }
                }
                std::fs::write(&path, &text).expect("write");
                let e = BackendDescription::load(&path)
                    .map(|_| ())
                    .expect_err("a placeholder in a script")
                    .to_string();
                assert!(e.contains(&format!("`{}`", path.display())), "{e}");
                assert!(e.contains(&format!("`{key}`")), "{e}");
                assert!(e.contains(&format!("`{script}`")), "{e}");
                assert!(
                    e.contains(r#"["sh", "-c", "tar -xf \"$1\"", "sh", "{archive}"]"#),
                    "{e}"
                );
            }
        }
    }
}
