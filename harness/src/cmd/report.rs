//! `snapconf report merge DIR... --out DIR`.

use super::args::ReportMergeArgs;
use super::common::finish;
use super::Usage;
use anyhow::Context;
use snapconf_harness::engine::report_dir::{prepare_report_dir, read_lock_report_dir};
use snapconf_harness::engine::repro::{FindingFile, ReproMode};
use snapconf_harness::report::{merge as merge_reports, MergeInput, ReportFile};
use snapconf_producers::input::{self, InputError, ARCHIVE_LIMIT, CONFIG_LIMIT};
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Read every shard report, merge them (see [`snapconf_harness::report::merge`]), copy each
/// kept finding's reproducer into `--out`, and write the merged report there as `run` does.
/// Two reports of one shard: exit 2 naming both. Shards missing: the report is written
/// marked partial, and the exit is 3 unless `--allow-partial`.
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
            read_lock_report_dir(dir).map_err(Usage::from)?;
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
        // Every reproducer is looked at now, before anything is written: a symlink at
        // `cases` or `cases/<id>` or in it, or a file that is not a regular one, is refused.
        let mut case_index = Vec::with_capacity(file.run.findings.len());
        for f in &file.run.findings {
            let case = open_case(dir, &f.case_dir).map_err(bad_input)?;
            case_index.push(match case {
                Some(fd) => {
                    case_files(&fd, &dir.join(&f.case_dir)).map_err(bad_input)?;
                    read_case_index(&fd, &dir.join(&f.case_dir))
                }
                None => None,
            });
        }
        inputs.push(MergeInput {
            dir: dir.display().to_string(),
            run: file.run,
            case_index,
        });
    }
    let mut merged = merge_reports(&inputs).map_err(Usage)?;
    if let Some(p) = &merged.run.partial {
        if a.allow_partial {
            eprintln!(
                "snapconf: partial merge (--allow-partial): {}",
                p.describe()
            );
        } else {
            // Written all the same, marked partial; the exit code says it is incomplete.
            // `finish` says it on stderr, last.
            let said = format!("{}; pass --allow-partial to accept", p.describe());
            merged.run.incomplete.push(said);
        }
    }
    prepare_report_dir(&a.out, true).map_err(Usage::from)?;
    let mut copied: Vec<&str> = Vec::new();
    for (f, &src) in merged.run.findings.iter().zip(&merged.source) {
        if copied.contains(&f.case_dir.as_str()) {
            continue;
        }
        copied.push(&f.case_dir);
        let from = a.dirs[src].join(&f.case_dir);
        let to = a.out.join(&f.case_dir);
        if let Some(case) = open_case(&a.dirs[src], &f.case_dir).map_err(bad_input)? {
            copy_case(&case, &from, &to)?;
        } else {
            eprintln!(
                "snapconf: warning: reproducer `{}` is missing; the merged report links to nothing there",
                from.display()
            );
        }
    }
    finish(merged.run, &a.out, a.baseline.as_deref())
}

/// A file of an input report that is refused (a symlink, a special file, too large): a
/// usage error (exit 2) naming it.
fn bad_input(e: InputError) -> anyhow::Error {
    Usage(format!("cannot merge: {e}")).into()
}

/// The reproducer `case_dir` (`cases/<id>`, checked by [`is_case_dir`]) of input report
/// `dir`, opened beneath `dir` without following a symlink at `cases` or at `<id>`;
/// `Ok(None)` when either is missing.
///
/// # Errors
/// [`InputError`] naming the path: a symlink or anything else that is not a directory.
fn open_case(dir: &Path, case_dir: &str) -> Result<Option<OwnedFd>, InputError> {
    let Some(id) = case_dir.strip_prefix("cases/") else {
        return Ok(None);
    };
    let missing = |r: Result<OwnedFd, InputError>| match r {
        Err(e) if e.is_not_found() => Ok(None),
        r => r.map(Some),
    };
    let top = input::open_dir(dir)?;
    let Some(cases) = missing(input::open_dir_at(
        &top,
        Path::new("cases"),
        &dir.join("cases"),
    ))?
    else {
        return Ok(None);
    };
    missing(input::open_dir_at(
        &cases,
        Path::new(id),
        &dir.join(case_dir),
    ))
}

/// The names of the files in the opened case directory `case` (`shown` in messages),
/// sorted; each is a regular file of at most [`ARCHIVE_LIMIT`] bytes, looked at without
/// following a symlink.
///
/// # Errors
/// [`InputError`] naming the first entry that is a symlink, a directory or a special file,
/// or too large, or the directory when it cannot be listed.
fn case_files(case: &OwnedFd, shown: &Path) -> Result<Vec<OsString>, InputError> {
    let listing_err = |e: rustix::io::Errno| InputError::Read {
        path: shown.to_path_buf(),
        source: e.into(),
    };
    let mut names = Vec::new();
    for e in rustix::fs::Dir::read_from(case).map_err(listing_err)? {
        let e = e.map_err(listing_err)?;
        let name = e.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let name = OsStr::from_bytes(name).to_owned();
        // Opened (`O_NOFOLLOW`, `O_NONBLOCK`) and `fstat`ed: a regular file or refused;
        // one too large to copy is refused now too, not half-way through the copy.
        let path = shown.join(&name);
        let file = input::open_file_at(case, Path::new(&name), &path)?;
        if file.metadata().is_ok_and(|m| m.len() > ARCHIVE_LIMIT) {
            return Err(InputError::TooLarge {
                path,
                limit: ARCHIVE_LIMIT,
            });
        }
        names.push(name);
    }
    names.sort();
    Ok(names)
}

/// The case index `finding.json` in the opened case directory records, if it can be read:
/// a run's `case_index`, or a lifecycle reproducer's sequence `index`.
fn read_case_index(case: &OwnedFd, shown: &Path) -> Option<u64> {
    let name = Path::new("finding.json");
    let text = input::read_text_at(case, name, &shown.join(name), CONFIG_LIMIT).ok()?;
    let meta = FindingFile::parse(&text).ok()?;
    match meta.mode {
        ReproMode::Run | ReproMode::Faults | ReproMode::Lifecycle => meta.case_index,
        ReproMode::Fuzz => None,
    }
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

/// Copy the opened reproducer directory `case` (`from` in messages) to `to`: its regular
/// files, each at most [`ARCHIVE_LIMIT`] bytes, with their permission bits.
///
/// # Errors
/// A usage error naming an entry that is not a regular file (a symlink, a subdirectory, a
/// special file) or is too large; an I/O error writing `to`.
fn copy_case(case: &OwnedFd, from: &Path, to: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(to).with_context(|| format!("cannot create `{}`", to.display()))?;
    for name in case_files(case, from).map_err(bad_input)? {
        let shown = from.join(&name);
        let file = input::open_file_at(case, Path::new(&name), &shown).map_err(bad_input)?;
        let mode = file.metadata().map(|m| m.permissions().mode() & 0o777);
        let bytes = input::read_limited(file, &shown, ARCHIVE_LIMIT).map_err(bad_input)?;
        let dst = to.join(&name);
        std::fs::write(&dst, bytes).with_context(|| format!("cannot write `{}`", dst.display()))?;
        if let Ok(mode) = mode {
            std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(mode))
                .with_context(|| format!("cannot set the mode of `{}`", dst.display()))?;
        }
    }
    Ok(())
}
