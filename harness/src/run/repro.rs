//! Reproducer directories (`cases/<id>/`) and `snapconf replay`.
//!
//! A reproducer holds `finding.json` (check, pair, profile, message), `spec.json` (W1),
//! `prior.json` (W0), `archive.tar` (what the producer wrote for the shrunk case),
//! `expected.txt`, `observed.txt` and `repro.sh`, which re-runs it with `snapconf replay`
//! and exits 1 while the finding reproduces, 0 once it is fixed.

use crate::checks::Check;
use crate::engine::case::{CaseOutcome, Finding};
use crate::error::{HarnessError, IoContext};
use crate::model::profile::Profile;
use crate::model::spec::{Case, WorkspaceSpec};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The metadata of a reproducer (`finding.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FindingMeta {
    pub schema: u32,
    pub check: Check,
    pub producer: String,
    /// `None` for a capture-side finding.
    pub extractor: Option<String>,
    pub profile: Profile,
    pub message: String,
    pub seed: Option<u64>,
    pub case_index: Option<u64>,
    /// Timeout per capture and hydration, in seconds.
    pub timeout_secs: u64,
    /// Entries in the shrunk W1 spec.
    pub entries: usize,
}

/// Write a reproducer into `dir` (created; must not exist or be empty). `tools` are the
/// adapters of the pair as `repro.sh`'s comment names them (`name (tool version)`). `bin` is the
/// snapconf binary `repro.sh` prefers (it falls back to `snapconf` on `PATH`); `backends`
/// are the backend descriptions `repro.sh` passes to `snapconf replay` as `--backend`
/// (none for the built-in adapters).
pub fn write_case_dir(
    dir: &Path,
    meta: &FindingMeta,
    case: &Case,
    finding: &Finding,
    tools: &[String],
    bin: &Path,
    backends: &[std::path::PathBuf],
) -> Result<(), HarnessError> {
    std::fs::create_dir_all(dir).ctx(|| format!("cannot create `{}`", dir.display()))?;
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text)
            .ctx(|| format!("cannot write `{}`", dir.join(name).display()))
    };
    write(
        "finding.json",
        &serde_json::to_string_pretty(meta).unwrap_or_default(),
    )?;
    write("spec.json", &case.spec.to_json())?;
    write("prior.json", &case.prior.to_json())?;
    let exp = finding
        .expected
        .clone()
        .unwrap_or_else(|| "(no expected tree for this check)\n".into());
    write("expected.txt", &exp)?;
    let obs = format!(
        "{}\n\n{}",
        finding.message,
        finding.observed.clone().unwrap_or_default()
    );
    write("observed.txt", &obs)?;
    let pair = match &meta.extractor {
        Some(e) => format!("{} x {}", meta.producer, e),
        None => format!("capture by {}", meta.producer),
    };
    let script = repro_script(meta.check, &pair, tools, bin, backends, "replay \"$here\"");
    write("repro.sh", &script)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.join("repro.sh"), std::fs::Permissions::from_mode(0o755))
        .ctx(|| "cannot make repro.sh executable".into())?;
    Ok(())
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

/// Read a reproducer back: its metadata and case (regular files of at most
/// [`CONFIG_LIMIT`](snapconf_producers::input::CONFIG_LIMIT) bytes). `Err` names the file.
pub fn read_case_dir(dir: &Path) -> Result<(FindingMeta, Case), String> {
    let read = |name: &str| {
        snapconf_producers::input::read_text(
            &dir.join(name),
            snapconf_producers::input::CONFIG_LIMIT,
        )
        .map_err(|e| e.to_string())
    };
    let meta: FindingMeta = serde_json::from_str(&read("finding.json")?).map_err(|e| {
        format!(
            "`{}` is not a snapconf finding: {e}",
            dir.join("finding.json").display()
        )
    })?;
    let spec = WorkspaceSpec::from_json(&read("spec.json")?).map_err(|e| {
        format!(
            "`{}` is not a workspace spec: {e}",
            dir.join("spec.json").display()
        )
    })?;
    let prior = WorkspaceSpec::from_json(&read("prior.json")?).map_err(|e| {
        format!(
            "`{}` is not a workspace spec: {e}",
            dir.join("prior.json").display()
        )
    })?;
    spec.check().map_err(|e| {
        format!(
            "`{}` is not a valid spec: {e}",
            dir.join("spec.json").display()
        )
    })?;
    prior.check().map_err(|e| {
        format!(
            "`{}` is not a valid spec: {e}",
            dir.join("prior.json").display()
        )
    })?;
    Ok((meta, Case { spec, prior }))
}

/// True if `outcome` shows the finding described by `meta`.
pub fn reproduces(meta: &FindingMeta, outcome: &CaseOutcome) -> bool {
    outcome.has(meta.check, meta.extractor.as_deref())
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
