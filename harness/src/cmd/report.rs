//! `snapconf report merge DIR... --out DIR`.

use super::args::ReportMergeArgs;
use super::run::{finish, prepare_report_dir};
use super::Usage;
use anyhow::Context;
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
    for dir in &a.dirs {
        if same_dir(dir, &a.out) {
            return Err(Usage(format!(
                "`{}` is both an input and --out; write the merged report elsewhere",
                dir.display()
            ))
            .into());
        }
        let file = ReportFile::load(&dir.join("report.json")).map_err(Usage)?;
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

/// The case index `finding.json` in `case_dir` records, if it can be read.
fn case_index(case_dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(case_dir.join("finding.json")).ok()?;
    let meta: FindingMeta = serde_json::from_str(&text).ok()?;
    meta.case_index
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
