//! Reproducer directories (`cases/<id>/`), written by one writer for every mode.
//!
//! A reproducer holds `finding.json` (one schema, [`FindingFile`], whose `mode` says which
//! command wrote it and replays it), the case (`spec.json` and `prior.json` of a run,
//! `sequence.json` of a lifecycle run, `archive.tar` of a fuzz finding; a run's archive
//! too), `expected.txt`, `observed.txt` and `repro.sh`, which re-runs it and exits 1 while
//! the finding reproduces, 0 once it is fixed. [`ReproDir`] writes them; each driver says
//! what goes in.

use crate::checks::Check;
use crate::error::{HarnessError, IoContext};
use crate::model::profile::Profile;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `schema` of the `finding.json` this version writes. Schema 1 (no `mode`; a run's
/// and a lifecycle run's fields apart, a fuzz finding's profile by name) is still read.
pub const FINDING_SCHEMA: u32 = 2;

/// The file name of a reproducer's metadata.
pub const FINDING_JSON: &str = "finding.json";

/// Which command wrote a reproducer, and so which one replays it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReproMode {
    /// `snapconf run` or `audit`: a case through one pair (`snapconf replay DIR`).
    #[default]
    Run,
    /// A run's finding under an injected fault (`fault.json` holds it; `snapconf replay
    /// DIR` runs the case with that fault again).
    Faults,
    /// `snapconf lifecycle`: a sequence of turns (`snapconf lifecycle --replay DIR`).
    Lifecycle,
    /// `snapconf fuzz`: one archive through one extractor (`snapconf fuzz --replay DIR`).
    Fuzz,
}

impl ReproMode {
    /// The mode's name as `finding.json` spells it.
    pub fn id(self) -> &'static str {
        match self {
            ReproMode::Run => "run",
            ReproMode::Faults => "faults",
            ReproMode::Lifecycle => "lifecycle",
            ReproMode::Fuzz => "fuzz",
        }
    }

    /// The command that replays a reproducer of this mode.
    pub fn replay_command(self) -> &'static str {
        match self {
            ReproMode::Run | ReproMode::Faults => "snapconf replay DIR",
            ReproMode::Lifecycle => "snapconf lifecycle --replay DIR",
            ReproMode::Fuzz => "snapconf fuzz --extractor X --replay DIR",
        }
    }
}

/// `finding.json`: the metadata of a reproducer of any mode. The fields every mode writes
/// come first; the others are written only by the modes named (and absent otherwise).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FindingFile {
    /// Format version ([`FINDING_SCHEMA`]).
    pub schema: u32,
    /// The command that wrote it.
    pub mode: ReproMode,
    /// The violated check.
    pub check: Check,
    /// The producer (run, faults, lifecycle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer: Option<String>,
    /// The extractor; `None` for a capture-side finding of a run.
    pub extractor: Option<String>,
    /// The profile the pair was judged under.
    pub profile: Profile,
    /// What happened.
    pub message: String,
    /// The seed of the run or session; `None` for an audit.
    pub seed: Option<u64>,
    /// The drawn case (run) or sequence (lifecycle, which wrote `index` before schema 2)
    /// the finding came from; `None` for an audit and a fuzz finding.
    #[serde(alias = "index")]
    pub case_index: Option<u64>,
    /// Timeout per capture, hydration and restore, in seconds.
    pub timeout_secs: u64,
    /// Entries in the shrunk W1 spec (run, faults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<usize>,
    /// The faults of the run (`--faults`), tried over every warm restore again on replay
    /// (lifecycle).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
    /// 0-based iteration of the session that found it (fuzz).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u64>,
    /// The base archive's label, or the attack class and what it built (fuzz).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The mutations applied to the base, as the fuzzer records them (fuzz).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mutations: Vec<serde_json::Value>,
    /// The reference's verdict on the shrunk archive (fuzz).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Records (headers, extension headers included) in the shrunk archive (fuzz).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<usize>,
    /// The cause the finding was told apart by (fuzz).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// `cases/<id>` relative to the report directory (fuzz).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_dir: Option<String>,
    /// The baseline lists the cause (fuzz).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub known: bool,
    /// How the shrink ended (fuzz).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrink: Option<crate::report::ShrinkEnd>,
}

/// What a replay needs to run a finding's case again as it was found: the profile it was
/// judged under, the timeout per step in seconds, and the seed and drawn case (`None` for an
/// audit; `case_index` is `None` for a fuzz finding too).
#[derive(Clone, Debug)]
pub struct ReplayConditions {
    /// The profile the pair was judged under.
    pub profile: Profile,
    /// Timeout per capture, hydration and restore, in seconds.
    pub timeout_secs: u64,
    /// The seed of the run or session.
    pub seed: Option<u64>,
    /// The drawn case (run) or sequence (lifecycle).
    pub case_index: Option<u64>,
}

impl FindingFile {
    /// A `finding.json` of `mode` with the fields every mode writes (`replay` the
    /// conditions it was found under); the mode's own fields are empty, for the driver to
    /// fill in.
    pub fn new(
        mode: ReproMode,
        check: Check,
        extractor: Option<String>,
        message: String,
        replay: ReplayConditions,
    ) -> FindingFile {
        let ReplayConditions {
            profile,
            timeout_secs,
            seed,
            case_index,
        } = replay;
        FindingFile {
            schema: FINDING_SCHEMA,
            mode,
            check,
            producer: None,
            extractor,
            profile,
            message,
            seed,
            case_index,
            timeout_secs,
            entries: None,
            faults: Vec::new(),
            iteration: None,
            base: None,
            mutations: Vec::new(),
            reference: None,
            records: None,
            cause: None,
            case_dir: None,
            known: false,
            shrink: None,
        }
    }

    /// The pair in words, as `repro.sh` and `replay` name it: `producer x extractor`,
    /// `capture by producer`, or `extractor` alone (fuzz).
    pub fn pair(&self) -> String {
        match (&self.producer, &self.extractor) {
            (Some(p), Some(e)) => format!("{p} x {e}"),
            (Some(p), None) => format!("capture by {p}"),
            (None, Some(e)) => e.clone(),
            (None, None) => String::new(),
        }
    }

    /// Parse `text`, a `finding.json` of schema 1 or 2. A schema-1 file has no `mode`: a
    /// lifecycle reproducer's is told by its `index`, a fuzz finding's by its `iteration`,
    /// anything else is a run's.
    ///
    /// # Errors
    /// The JSON error.
    pub fn parse(text: &str) -> Result<FindingFile, serde_json::Error> {
        let mut v: serde_json::Value = serde_json::from_str(text)?;
        if let Some(o) = v.as_object_mut() {
            if !o.contains_key("mode") {
                let mode = if o.contains_key("index") {
                    ReproMode::Lifecycle
                } else if o.contains_key("iteration") {
                    ReproMode::Fuzz
                } else {
                    ReproMode::Run
                };
                o.insert("mode".into(), serde_json::Value::from(mode.id()));
            }
        }
        serde_json::from_value(v)
    }

    /// `Ok` when the reproducer is one of `modes`; otherwise a message naming `file` and
    /// the command that replays it.
    ///
    /// # Errors
    /// The message.
    pub fn expect_mode(&self, modes: &[ReproMode], file: &Path) -> Result<(), String> {
        if modes.contains(&self.mode) {
            return Ok(());
        }
        Err(format!(
            "`{}` is a reproducer of `snapconf {}`; replay it with `{}`",
            file.display(),
            self.mode.id(),
            self.mode.replay_command()
        ))
    }
}

/// The text of file `name` of reproducer `dir` (a regular file of at most
/// [`CONFIG_LIMIT`](snapconf_producers::input::CONFIG_LIMIT) bytes). `Err` names the file.
pub fn read_repro_text(dir: &Path, name: &str) -> Result<String, String> {
    snapconf_producers::input::read_text(&dir.join(name), snapconf_producers::input::CONFIG_LIMIT)
        .map_err(|e| e.to_string())
}

/// Read `dir/finding.json` (a regular file of at most
/// [`CONFIG_LIMIT`](snapconf_producers::input::CONFIG_LIMIT) bytes). `Err` names the file.
pub fn read_finding(dir: &Path) -> Result<FindingFile, String> {
    let path = dir.join(FINDING_JSON);
    let text = snapconf_producers::input::read_text(&path, snapconf_producers::input::CONFIG_LIMIT)
        .map_err(|e| e.to_string())?;
    FindingFile::parse(&text)
        .map_err(|e| format!("`{}` is not a snapconf finding: {e}", path.display()))
}

/// What a `repro.sh` runs and says: the pair in words, the tools it needs, the snapconf
/// binary it prefers, the `--backend` files it passes and the subcommand.
pub struct Script<'a> {
    /// The pair in words (`tar-rs x reference`, a session of turns, a fuzz of an extractor).
    pub pair: &'a str,
    /// The adapters (and the tools behind them) its comment names.
    pub tools: &'a [String],
    /// The snapconf binary it prefers (it falls back to `SNAPCONF`, then `snapconf` on
    /// `PATH`).
    pub bin: &'a Path,
    /// The backend descriptions passed as `--backend`.
    pub backends: &'a [PathBuf],
    /// The subcommand and its arguments (`$here` is the reproducer's directory).
    pub command: &'a str,
}

/// One reproducer directory being written: `cases/<id>` of a report directory.
#[derive(Clone, Debug)]
pub struct ReproDir {
    dir: PathBuf,
    id: String,
}

impl ReproDir {
    /// `cases_dir/<id>`, created empty (an earlier one of the same id is removed first).
    ///
    /// # Errors
    /// [`HarnessError::Io`] naming the directory.
    pub fn create(cases_dir: &Path, id: &str) -> Result<ReproDir, HarnessError> {
        let dir = cases_dir.join(id);
        if dir.exists() {
            crate::workspace::materialise::remove_tree(&dir)
                .ctx(|| format!("cannot replace `{}`", dir.display()))?;
        }
        std::fs::create_dir_all(&dir).ctx(|| format!("cannot create `{}`", dir.display()))?;
        Ok(ReproDir {
            dir,
            id: id.to_string(),
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// `cases/<id>`: the directory relative to the report directory, as reports name it.
    pub fn case_dir(&self) -> String {
        format!("cases/{}", self.id)
    }

    /// Write `data` as the file `name` in the directory.
    ///
    /// # Errors
    /// [`HarnessError::Io`] naming the file.
    pub fn write(&self, name: &str, data: &[u8]) -> Result<(), HarnessError> {
        let p = self.dir.join(name);
        std::fs::write(&p, data).ctx(|| format!("cannot write `{}`", p.display()))
    }

    /// Write `finding.json`.
    ///
    /// # Errors
    /// [`HarnessError::Io`] naming the file.
    pub fn write_finding(&self, meta: &FindingFile) -> Result<(), HarnessError> {
        self.write(
            FINDING_JSON,
            serde_json::to_string_pretty(meta)
                .unwrap_or_default()
                .as_bytes(),
        )
    }

    /// Write the evidence of a driver's finding `f`: `expected.txt` (always) and
    /// `observed.txt`, as [`ReproDir::write_evidence`].
    ///
    /// # Errors
    /// [`HarnessError::Io`] naming the file.
    pub fn write_finding_evidence(
        &self,
        f: &crate::engine::case::Finding,
    ) -> Result<(), HarnessError> {
        self.write_evidence(
            f.expected.as_deref(),
            true,
            &f.message,
            f.observed.as_deref(),
        )
    }

    /// Write `expected.txt` (`expected`, or a line saying the check has no expected tree;
    /// nothing when `expected` is `None` and `always_expected` is false) and `observed.txt`
    /// (the message, a blank line, what was observed).
    ///
    /// # Errors
    /// [`HarnessError::Io`] naming the file.
    pub fn write_evidence(
        &self,
        expected: Option<&str>,
        always_expected: bool,
        message: &str,
        observed: Option<&str>,
    ) -> Result<(), HarnessError> {
        if expected.is_some() || always_expected {
            self.write(
                "expected.txt",
                expected
                    .unwrap_or("(no expected tree for this check)\n")
                    .as_bytes(),
            )?;
        }
        self.write(
            "observed.txt",
            format!("{message}\n\n{}", observed.unwrap_or_default()).as_bytes(),
        )
    }

    /// Write the executable `repro.sh` of a reproducer of `check` ([`repro_script`]).
    ///
    /// # Errors
    /// [`HarnessError::Io`] naming the file.
    pub fn write_script(&self, check: Check, s: &Script<'_>) -> Result<(), HarnessError> {
        self.write_script_text(&repro_script(
            check, s.pair, s.tools, s.bin, s.backends, s.command,
        ))
    }

    /// Write the executable `repro.sh` of a run's finding through the `reference`
    /// extractor (under `policy`, the matrix's): as [`ReproDir::write_script`], but before
    /// the replay it prints and runs `snapconf hydrate` with the flags that give `policy`
    /// ([`hydrate_flags`](crate::model::policy_map::hydrate_flags)) on the case's
    /// `archive.tar`, into a temporary root it removes, and prints its exit code: the
    /// matrix's verdict, reproduced with `hydrate` alone.
    ///
    /// # Errors
    /// [`HarnessError::Io`] naming the file.
    pub fn write_reference_script(
        &self,
        check: Check,
        s: &Script<'_>,
        policy: &snapconf_extract::Policy,
    ) -> Result<(), HarnessError> {
        let text = repro_script(check, s.pair, s.tools, s.bin, s.backends, s.command);
        let hydrate = hydrate_lines(policy);
        let text = match text.rfind("exec \"$SNAPCONF\"") {
            Some(at) => format!("{}{hydrate}{}", &text[..at], &text[at..]),
            None => text,
        };
        self.write_script_text(&text)
    }

    /// Write `text` as the executable `repro.sh`.
    fn write_script_text(&self, text: &str) -> Result<(), HarnessError> {
        self.write("repro.sh", text.as_bytes())?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            self.dir.join("repro.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .ctx(|| "cannot make repro.sh executable".into())
    }
}

/// The `repro.sh` of a reproducer of `check` (`pair` in words): it runs `snapconf
/// {command}` (`$here` is the reproducer's directory) with `--backend` for each of
/// `backends`, on the binary `bin` (or `SNAPCONF`, or `snapconf` on `PATH`); `tools` are
/// named in its comment.
pub fn repro_script(
    check: Check,
    pair: &str,
    tools: &[String],
    bin: &Path,
    backends: &[std::path::PathBuf],
    command: &str,
) -> String {
    format!(
        "#!/bin/sh\n\
         # Re-runs snapconf finding `{check}` ({pair}).\n\
         # Exits 1 while the finding reproduces, 0 once it is fixed, 2/3 when it cannot run.\n\
         # Needs: the snapconf binary (set SNAPCONF, or have it on PATH) and the tools behind\n\
         # the adapters, found with: {tools}.\n\
         here=$(cd \"$(dirname \"$0\")\" && pwd)\n\
         SNAPCONF=${{SNAPCONF:-{bin}}}\n\
         command -v \"$SNAPCONF\" >/dev/null 2>&1 || SNAPCONF=snapconf\n\
         exec \"$SNAPCONF\" {command}{backend_args}\n",
        tools = if tools.is_empty() {
            "nothing else".to_string()
        } else {
            tools.join(", ")
        },
        bin = shell_word(&bin.display().to_string()),
        backend_args = backend_args(backends),
    )
}

/// The lines of a `repro.sh` that print and run `snapconf hydrate FLAGS "$here/archive.tar"
/// ROOT` (FLAGS those of `policy`, ROOT a fresh temporary directory, removed after) and
/// print its exit code.
fn hydrate_lines(policy: &snapconf_extract::Policy) -> String {
    let flags: Vec<String> = crate::model::policy_map::hydrate_flags(policy)
        .iter()
        .map(|f| {
            let plain = !f.is_empty()
                && f.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./=".contains(&b));
            if plain {
                f.clone()
            } else {
                shell_word(f)
            }
        })
        .collect();
    format!(
        "# The matrix's `reference` is `snapconf hydrate` with these policy flags (hydrate's\n\
         # own defaults copy hardlinks and refuse an empty archive). Its verdict on this\n\
         # case's archive, into a temporary ROOT:\n\
         hydrate_tmp=$(mktemp -d)\n\
         set -- {flags} \"$here/archive.tar\" \"$hydrate_tmp/root\"\n\
         echo \"+ snapconf hydrate $*\"\n\
         \"$SNAPCONF\" hydrate \"$@\"\n\
         echo \"snapconf hydrate exited $? (0 accepted, 1 refused)\"\n\
         rm -rf \"$hydrate_tmp\"\n\
         set --\n",
        flags = flags.join(" "),
    )
}

/// `s` as one POSIX shell word ([`snapconf_producers::backend::shell_quote`], on text).
pub fn shell_word(s: &str) -> String {
    String::from_utf8_lossy(&snapconf_producers::backend::shell_quote(s.as_bytes())).into_owned()
}

/// ` --backend 'FILE'` for each of `backends`, shell-quoted: what a `repro.sh` (of `run` or
/// `fuzz`) passes back so that a backend's finding replays without `SNAPCONF_BACKEND`.
pub fn backend_args(backends: &[std::path::PathBuf]) -> String {
    use std::os::unix::ffi::OsStrExt;
    backends
        .iter()
        .map(|b| {
            let quoted = snapconf_producers::backend::shell_quote(b.as_os_str().as_bytes());
            format!(" --backend {}", String::from_utf8_lossy(&quoted))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = r#"{"name":"default","hardlinks":"copy","special-files":"drop",
        "absolute-symlinks":"keep","escaping-symlinks":"keep","modes":"exec-bit",
        "mtimes":"ignore"}"#;

    /// A run's `finding.json` of schema 1 (no `mode`) reads as a run's, with its fields.
    #[test]
    fn a_schema_1_run_finding_reads_as_a_run() {
        let text = format!(
            r#"{{"schema":1,"check":"roundtrip","producer":"tar-rs","extractor":null,
            "profile":{PROFILE},"message":"m","seed":7,"case_index":3,"timeout_secs":5,
            "entries":2}}"#
        );
        let f = FindingFile::parse(&text).expect("parses");
        assert_eq!(f.mode, ReproMode::Run);
        assert_eq!(f.producer.as_deref(), Some("tar-rs"));
        assert_eq!(
            (f.seed, f.case_index, f.entries),
            (Some(7), Some(3), Some(2))
        );
        assert_eq!(f.pair(), "capture by tar-rs");
    }

    /// A lifecycle reproducer's `finding.json` of schema 1 (`index`, no `mode`) reads as a
    /// lifecycle one, its `index` as the case index.
    #[test]
    fn a_schema_1_lifecycle_finding_reads_as_a_lifecycle_one() {
        let text = format!(
            r#"{{"schema":1,"check":"checkpoint-restore","producer":"tar-rs",
            "extractor":"reference","profile":{PROFILE},"message":"m","seed":1,"index":4,
            "timeout_secs":5,"faults":["kill"]}}"#
        );
        let f = FindingFile::parse(&text).expect("parses");
        assert_eq!(f.mode, ReproMode::Lifecycle);
        assert_eq!(f.case_index, Some(4));
        assert_eq!(f.faults, vec!["kill".to_string()]);
        let dir = Path::new("cases/x");
        assert!(f
            .expect_mode(&[ReproMode::Lifecycle], &dir.join(FINDING_JSON))
            .is_ok());
        let e = f
            .expect_mode(
                &[ReproMode::Run, ReproMode::Faults],
                &dir.join(FINDING_JSON),
            )
            .expect_err("not a run's");
        assert!(e.contains("lifecycle --replay"), "{e}");
    }

    /// What a mode writes reads back the same, with `mode`, and without the fields of
    /// other modes.
    #[test]
    fn every_mode_round_trips_and_writes_only_its_fields() {
        let profile = Profile::default_profile();
        for mode in [
            ReproMode::Run,
            ReproMode::Faults,
            ReproMode::Lifecycle,
            ReproMode::Fuzz,
        ] {
            let mut f = FindingFile::new(
                mode,
                Check::ROUNDTRIP,
                Some("reference".into()),
                "m".into(),
                ReplayConditions {
                    profile: profile.clone(),
                    timeout_secs: 5,
                    seed: Some(1),
                    case_index: None,
                },
            );
            if mode == ReproMode::Fuzz {
                f.iteration = Some(9);
                f.shrink = Some(crate::report::ShrinkEnd::Minimal);
                f.mutations = vec![serde_json::json!({"op": "reorder", "a": 0, "b": 1})];
            } else {
                f.producer = Some("tar-rs".into());
            }
            let text = serde_json::to_string_pretty(&f).expect("json");
            assert!(
                text.contains(&format!("\"mode\": \"{}\"", mode.id())),
                "{text}"
            );
            assert_eq!(
                text.contains("\"iteration\""),
                mode == ReproMode::Fuzz,
                "{text}"
            );
            assert!(!text.contains("\"faults\":"), "{text}");
            assert_eq!(FindingFile::parse(&text).expect("parses"), f);
        }
    }
}
