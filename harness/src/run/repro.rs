//! A run's reproducer read back for `snapconf replay`: its `finding.json`
//! ([`FindingFile`], mode `run` or `faults`) and its case (`spec.json`, `prior.json`).

use crate::engine::case::CaseOutcome;
use crate::engine::repro::{read_finding, read_repro_text, FindingFile, ReproMode, FINDING_JSON};
use crate::model::spec::{Case, WorkspaceSpec};
use std::path::Path;

/// Read a run's reproducer back: its metadata and case (regular files of at most
/// [`CONFIG_LIMIT`](snapconf_producers::input::CONFIG_LIMIT) bytes). `Err` names the file,
/// or the command that replays a reproducer of another mode.
pub fn read_case_dir(dir: &Path) -> Result<(FindingFile, Case), String> {
    let read = |name: &str| read_repro_text(dir, name);
    let meta = read_finding(dir)?;
    meta.expect_mode(
        &[ReproMode::Run, ReproMode::Faults],
        &dir.join(FINDING_JSON),
    )?;
    if meta.producer.is_none() {
        return Err(format!(
            "`{}` is not a snapconf finding: it names no producer",
            dir.join(FINDING_JSON).display()
        ));
    }
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
pub fn reproduces(meta: &FindingFile, outcome: &CaseOutcome) -> bool {
    outcome.has(meta.check, meta.extractor.as_deref())
}
