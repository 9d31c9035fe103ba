//! `snapconf audit DIR [--exclude PATH]...`.

use super::args::AuditArgs;
use super::common::{finish, nothing_to_run, setup, ShrinkLimits};
use super::Usage;
use anyhow::Context;
use snapconf_harness::engine::progress::Progress;
use snapconf_harness::model::bytes::RelPath;
use snapconf_harness::model::spec::{Case, WorkspaceSpec};
use snapconf_harness::run::matrix::audit as audit_matrix;
use snapconf_harness::workspace::describe::spec_from_dir;
use std::time::Duration;

pub fn audit(a: AuditArgs) -> anyhow::Result<i32> {
    let out = super::output::set(&a.output)?;
    if !a.dir.is_dir() {
        let why = match (
            std::fs::symlink_metadata(&a.dir),
            std::fs::read_link(&a.dir),
        ) {
            (Ok(_), Ok(target)) if std::fs::metadata(&a.dir).is_err() => format!(
                "is a symlink to `{}`, which does not exist",
                target.display()
            ),
            (Ok(_), Ok(target)) => format!(
                "is a symlink to `{}`, which is not a directory",
                target.display()
            ),
            (Ok(_), Err(_)) => "is not a directory".to_owned(),
            (Err(e), _) if e.kind() == std::io::ErrorKind::NotFound => "does not exist".to_owned(),
            (Err(e), _) => format!("cannot be read: {e}"),
        };
        return Err(Usage(format!("`{}` {why}", a.dir.display())).into());
    }
    // DIR itself may be a symlink to the directory (as `ls DIR` follows it); what is inside
    // is read as it is, links never followed.
    let dir = a
        .dir
        .canonicalize()
        .map_err(|e| Usage(format!("cannot resolve `{}`: {e}", a.dir.display())))?;
    let mut exclusions = Vec::new();
    for x in &a.exclude {
        let x = x.trim_start_matches("./").trim_end_matches('/');
        exclusions.push(RelPath::new(x).map_err(|e| Usage(format!("bad --exclude `{x}`: {e}")))?);
    }
    let spec = spec_from_dir(&dir, &exclusions).map_err(Usage)?;
    let limits = ShrinkLimits {
        steps: a.shrink.shrink_steps,
        per_finding: Duration::from_secs(a.shrink.shrink_time),
        total: Duration::from_secs(a.shrink.shrink_total),
    };
    let s = setup(&a.pairs, 1, 0, limits, "audit")?;
    if let Some(code) = nothing_to_run(&s.opts.producers, &s.opts.extractors) {
        return Ok(code);
    }
    super::output::note(&format!(
        "snapconf: auditing `{}` ({} entries) with profile `{}`",
        a.dir.display(),
        spec.entries.len(),
        s.opts.env.profile.name
    ));
    super::output::event(super::run::run_started("audit", &s.opts));
    let unreadable = unreadable_by_owner(&spec);
    let case = Case {
        spec,
        prior: WorkspaceSpec::default(),
    };
    // SIGINT/SIGTERM (caught since `setup`) end the audit after the steps running, with
    // the jails removed and what was found written, as for `run`.
    super::not_interrupted()?;
    let mut progress = Progress::counting(1, "cases", out);
    let mut report =
        audit_matrix(&s.opts, &case, &mut |ev| progress.event(&ev)).context("the audit failed")?;
    progress.finish();
    // A producer that refused every capture says which path and why (the tool's own
    // words, e.g. a mode-000 directory an ordinary user's `tar` cannot open).
    let refused = report
        .notes
        .iter()
        .any(|n| n.starts_with("every capture by"));
    let euid = rustix::process::geteuid();
    if refused && !euid.is_root() && !unreadable.is_empty() {
        report.notes.push(format!(
            "as uid {}, the producers run as you and cannot read {} (EACCES, Permission denied): audit as root, or `chmod u+rx` the directories (`u+r` the files)",
            euid.as_raw(),
            unreadable.join(", ")
        ));
    }
    for n in report
        .notes
        .iter()
        .filter(|n| n.starts_with("every capture by") || n.contains("the producers run as you"))
    {
        eprintln!("snapconf: {n}");
    }
    report.audited = Some(a.dir.display().to_string());
    report.mode = snapconf_harness::report::Mode::Audit;
    report.incomplete = s.incomplete;
    let code = finish(report, &s.opts.report_dir, a.pairs.baseline.as_deref())?;
    if snapconf_harness::jail::cleanup::stop_requested() {
        eprintln!("snapconf: interrupted; partial report written");
        return Ok(snapconf_harness::jail::cleanup::INTERRUPTED);
    }
    Ok(code)
}

/// The entries of `spec` their owner cannot read as they are (a directory without `u+r`
/// or `u+x`, a file without `u+r`), as `` `PATH` (mode NNN) ``: what an ordinary user's
/// producers refuse (snapconf itself reads them by lending the owner's bits for the moment).
fn unreadable_by_owner(spec: &WorkspaceSpec) -> Vec<String> {
    use snapconf_harness::model::spec::EntryKind;
    spec.entries
        .iter()
        .filter(|e| {
            let m = e.effective_mode();
            match e.kind {
                EntryKind::Dir => m & 0o500 != 0o500,
                EntryKind::File { .. } => m & 0o400 == 0,
                _ => false,
            }
        })
        .map(|e| format!("`{}` (mode {:03o})", e.path, e.effective_mode()))
        .collect()
}
