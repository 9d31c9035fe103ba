//! `snapconf report merge DIR... --out DIR`.

use super::args::ReportMergeArgs;
use super::run::{finish, prepare_report_dir, read_lock_report_dir};
use super::Usage;
use anyhow::Context;
use snapconf_harness::lifecycle::runner::LifecycleMeta;
use snapconf_harness::report::{merge as merge_reports, MergeInput, ReportFile};
use snapconf_harness::run::repro::FindingMeta;
use std::path::Path;

/// Read every shard report, merge them (see [`snapconf_harness::report::merge`]), copy each
/// kept finding's reproducer into `--out`, and write the merged report there as `run` does.
pub fn merge(a: ReportMergeArgs) -> anyhow::Result<i32> {
    if let Some(b) = &a.baseline {
        snapconf_harness::report::Baseline::load(b).map_err(Usage)?;
    }
    let mut inputs = Vec::with_capacity(a.dirs.len());
    for (i, dir) in a.dirs.iter().enumerate() {
        if same_dir(dir, &a.out) || inside(&a.out, dir) {
            return Err(Usage(format!(
                "--out `{}` is (inside) the input `{}`; write the merged report elsewhere",
                a.out.display(),
                dir.display()
            ))
            .into());
        }
        if a.dirs[..i].iter().any(|d| same_dir(d, dir)) {
            return Err(Usage(format!(
                "`{}` is given twice; each shard counts once",
                dir.display()
            ))
            .into());
        }
        // Read under a shared lock: not while a run writes it, and no run starts to.
        if dir.is_dir() {
            read_lock_report_dir(dir)?;
        }
        let file = ReportFile::load(&dir.join("report.json")).map_err(Usage)?;
        // A reproducer is `cases/<id>` and nothing else: a report is input, and its paths
        // must not lead the copy out of the input or the output.
        if let Some(f) = file.run.findings.iter().find(|f| !is_case_dir(&f.case_dir)) {
            return Err(Usage(format!(
                "`{}`: finding `{}` has case_dir `{}`, not `cases/<id>`",
                dir.join("report.json").display(),
                f.check,
                f.case_dir
            ))
            .into());
        }
        let case_index = file
            .run
            .findings
            .iter()
            .map(|f| case_index(&dir.join(&f.case_dir)))
            .collect();
        inputs.push(MergeInput {
            run: file.run,
            case_index,
        });
    }
    let merged = merge_reports(&inputs).map_err(Usage)?;
    prepare_report_dir(&a.out, true)?;
    let mut copied: Vec<&str> = Vec::new();
    for (f, &src) in merged.run.findings.iter().zip(&merged.source) {
        if copied.contains(&f.case_dir.as_str()) {
            continue;
        }
        copied.push(&f.case_dir);
        let from = a.dirs[src].join(&f.case_dir);
        let to = a.out.join(&f.case_dir);
        if from.is_dir() {
            copy_dir(&from, &to).with_context(|| {
                format!("cannot copy `{}` to `{}`", from.display(), to.display())
            })?;
        } else {
            eprintln!(
                "snapconf: warning: reproducer `{}` is missing; the merged report links to nothing there",
                from.display()
            );
        }
    }
    finish(merged.run, &a.out, a.baseline.as_deref())
}

/// The case index `finding.json` in `case_dir` records, if it can be read: a run's
/// `case_index`, or a lifecycle reproducer's sequence `index`.
fn case_index(case_dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(case_dir.join("finding.json")).ok()?;
    if let Ok(meta) = serde_json::from_str::<FindingMeta>(&text) {
        return meta.case_index;
    }
    let meta: LifecycleMeta = serde_json::from_str(&text).ok()?;
    Some(meta.index)
}

/// `cases/<id>` with one plain component for the id (no `..`, no `/`, not empty).
fn is_case_dir(case_dir: &str) -> bool {
    match case_dir.strip_prefix("cases/") {
        Some(id) => !id.is_empty() && id != "." && id != ".." && !id.contains('/'),
        None => false,
    }
}

/// Whether `path` lies inside `dir` (both as they resolve now; `path` need not exist).
fn inside(path: &Path, dir: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else {
        return false;
    };
    let Ok(path) = std::path::absolute(path) else {
        return false;
    };
    // The deepest ancestor of `path` that exists, resolved, then the rest appended.
    let mut existing = path.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return false,
        }
    }
    let Ok(mut resolved) = existing.canonicalize() else {
        return false;
    };
    for name in rest.into_iter().rev() {
        resolved.push(name);
    }
    resolved.starts_with(&dir)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Copy a reproducer directory: its files, subdirectories and symlinks (as symlinks).
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let ft = e.file_type()?;
        if ft.is_dir() {
            copy_dir(&src, &dst)?;
        } else if ft.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}
