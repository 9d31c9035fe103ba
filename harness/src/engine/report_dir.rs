//! The report directory of a run, a fuzz session or a lifecycle run: its default name and
//! the clock seed, making it ready (created, or an earlier report's files removed when it
//! is named), and the `flock` that keeps two snapconf processes out of one directory.

use std::path::{Path, PathBuf};

/// Why a report directory cannot be used (the commands report it as a usage error, exit
/// 2).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReportDirError(pub String);

/// Nanoseconds since the epoch and the process id: what default run ids and clock seeds are
/// drawn from, so that two runs started in the same second differ.
fn clock_and_pid() -> (u128, u32) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    (nanos, std::process::id())
}

/// `reports/runs/<label>-<secs>-<nanos>-<pid>-seed<seed>`: unique to this process and
/// instant.
pub fn default_report_dir(label: &str, seed: u64) -> PathBuf {
    let (nanos, pid) = clock_and_pid();
    PathBuf::from("reports/runs").join(format!(
        "{label}-{}-{:09}-{pid}-seed{seed}",
        nanos / 1_000_000_000,
        nanos % 1_000_000_000
    ))
}

/// A seed drawn from the clock's nanoseconds and the process id (mixed, below 10^9), so
/// that two runs started together draw different seeds.
pub fn clock_seed() -> u64 {
    let (nanos, pid) = clock_and_pid();
    let z = (nanos as u64) ^ ((nanos >> 64) as u64) ^ (u64::from(pid) << 40);
    snapconf_tarbytes::Rng::new(z).next_u64() % 1_000_000_000
}

/// The files of a report directory that a run (or a fuzz session: `fuzz.json`) writes,
/// besides `cases/` (`lifecycle.json`: a lifecycle run).
const REPORT_FILES: [&str; 6] = [
    "report.json",
    "lifecycle.json",
    "summary.md",
    "junit.xml",
    "index.html",
    "fuzz.json",
];

/// Make `dir` ready for a report before anything runs, or say why it cannot be (a usage
/// error, exit 2):
/// - a directory that does not exist is created (with its parents);
/// - an empty directory is used as it is;
/// - a directory holding nothing but an earlier report's files (`report.json`,
///   `summary.md`, `junit.xml`, `index.html`, `fuzz.json`, `cases/`; a run that died before its end
///   leaves only `cases/`) is reused only when asked for by name (`explicit`,
///   `--report-dir`, `report merge --out`): those are removed first, so nothing of the old
///   run is left to mistake for the new one;
/// - any other non-empty directory, or a default one that already exists, is refused: a run
///   never writes into someone else's files;
/// - finally a probe file is written and removed, so an unwritable directory fails now,
///   not after the run.
pub fn prepare_report_dir(dir: &Path, explicit: bool) -> Result<(), ReportDirError> {
    let shown = dir.display();
    // Two runs never share one report directory: the first holds a lock on it until it
    // exits, and a second one is refused before it removes or writes anything there; nor
    // does one write inside another's (an ancestor locked), nor remove one that sits in
    // its own (`cases/` or below locked).
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    if let Some(other) = absolute.ancestors().skip(1).find(|a| held_elsewhere(a)) {
        return Err(ReportDirError(format!(
            "report directory `{shown}` is inside `{}`, which another snapconf process is \
             writing; name a directory outside it",
            other.display()
        )));
    }
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        lock_report_dir(dir)?;
        let cases = dir.join("cases");
        if let Some(inner) = locked_below(&cases) {
            return Err(ReportDirError(format!(
                "report directory `{shown}` holds `{}`, which another snapconf process is \
                 writing; not removing it",
                inner.display()
            )));
        }
    }
    match std::fs::symlink_metadata(dir) {
        // Not followed: what it names would be emptied and locked under another name.
        Ok(m) if m.is_symlink() => {
            let target = std::fs::read_link(dir)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|e| format!("(unreadable: {e})"));
            let what = match std::fs::metadata(dir) {
                Ok(t) if t.is_dir() => "a directory: name that directory itself",
                Ok(_) => "something that is not a directory",
                Err(_) => "nothing that exists",
            };
            return Err(ReportDirError(format!(
                "report directory `{shown}` is a symlink to `{target}`, {what}; a report \
                 directory is never reached through a symlink"
            )));
        }
        Ok(m) if !m.is_dir() => {
            return Err(ReportDirError(format!(
                "report directory `{shown}` exists and is not a directory"
            )))
        }
        Ok(_) => {
            let names: Vec<std::ffi::OsString> = std::fs::read_dir(dir)
                .and_then(|rd| rd.map(|e| e.map(|e| e.file_name())).collect())
                .map_err(|e| {
                    ReportDirError(format!("cannot read report directory `{shown}`: {e}"))
                })?;
            if !names.is_empty() {
                if !explicit {
                    return Err(ReportDirError(format!(
                        "report directory `{shown}` already exists; not writing into it"
                    )));
                }
                let ours =
                    |n: &std::ffi::OsString| n == "cases" || REPORT_FILES.iter().any(|f| n == f);
                if let Some(other) = names.iter().find(|n| !ours(n)) {
                    return Err(ReportDirError(format!(
                        "report directory `{shown}` holds `{}`, which is not part of a snapconf \
                         report; not writing into it (name a new or empty directory)",
                        other.to_string_lossy()
                    )));
                }
                for name in REPORT_FILES {
                    match std::fs::remove_file(dir.join(name)) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => {
                            return Err(ReportDirError(format!(
                                "cannot replace `{}`: {e}",
                                dir.join(name).display()
                            )))
                        }
                    }
                }
                let cases = dir.join("cases");
                if cases.exists() {
                    crate::workspace::materialise::remove_tree(&cases).map_err(|e| {
                        ReportDirError(format!("cannot replace `{}`: {e}", cases.display()))
                    })?;
                }
            }
        }
        // Missing (or not reachable: a file on the way fails here too, and says so).
        Err(_) => {
            std::fs::create_dir_all(dir).map_err(|e| {
                ReportDirError(format!("cannot create report directory `{shown}`: {e}"))
            })?;
            lock_report_dir(dir)?;
        }
    }
    let probe = dir.join(".snapconf-write-check");
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|e| ReportDirError(format!("cannot write into report directory `{shown}`: {e}")))
}

/// Report directories this process writes, each locked (`flock`, exclusive) for as long
/// as the process lives; the kernel drops the locks when it exits, however it exits.
static REPORT_LOCKS: std::sync::Mutex<Vec<std::fs::File>> = std::sync::Mutex::new(Vec::new());

/// Lock the report directory `dir` for this process (see [`REPORT_LOCKS`]); refused (exit
/// 2) while another process holds it.
fn lock_report_dir(dir: &Path) -> Result<(), ReportDirError> {
    hold_report_lock(dir, true)
}

/// Hold a shared lock on the report directory `dir` until this process exits, as a reader
/// (`report merge` of its inputs): a run cannot start writing there meanwhile, and one
/// writing there now is refused with a usage error.
///
/// # Errors
/// [`ReportDirError`] when `dir` cannot be opened, or another snapconf process is writing it.
pub fn read_lock_report_dir(dir: &Path) -> Result<(), ReportDirError> {
    hold_report_lock(dir, false)
}

/// [`lock_report_dir`] (`exclusive`) or [`read_lock_report_dir`].
fn hold_report_lock(dir: &Path, exclusive: bool) -> Result<(), ReportDirError> {
    use rustix::fs::{flock, FlockOperation};
    let shown = dir.display();
    let f = std::fs::File::open(dir)
        .map_err(|e| ReportDirError(format!("cannot open report directory `{shown}`: {e}")))?;
    let op = if exclusive {
        FlockOperation::NonBlockingLockExclusive
    } else {
        FlockOperation::NonBlockingLockShared
    };
    match flock(&f, op) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) if exclusive => {
            return Err(ReportDirError(format!(
                "report directory `{shown}` is in use by another snapconf process; name \
                 another directory or wait for that one to end"
            )))
        }
        Err(rustix::io::Errno::WOULDBLOCK) => {
            return Err(ReportDirError(format!(
                "report directory `{shown}` is being written by another snapconf process; \
                 read it once that one has ended"
            )))
        }
        Err(e) => {
            return Err(ReportDirError(format!(
                "cannot lock report directory `{shown}`: {e}"
            )))
        }
    }
    REPORT_LOCKS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(f);
    Ok(())
}

/// True if another process holds a report-directory lock on `dir` (a shared lock is
/// refused, then released at once); false for anything that is not a directory we can open.
fn held_elsewhere(dir: &Path) -> bool {
    use rustix::fs::{flock, FlockOperation};
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return false;
    }
    let Ok(f) = std::fs::File::open(dir) else {
        return false;
    };
    match flock(&f, FlockOperation::NonBlockingLockShared) {
        Err(rustix::io::Errno::WOULDBLOCK) => true,
        Ok(()) => {
            let _ = flock(&f, FlockOperation::Unlock);
            false
        }
        Err(_) => false,
    }
}

/// The first directory at or below `dir` (walked without following links) that another
/// process holds as its report directory; `None` when there is none, or `dir` is not a
/// directory.
fn locked_below(dir: &Path) -> Option<std::path::PathBuf> {
    if held_elsewhere(dir) {
        return Some(dir.to_path_buf());
    }
    let entries = std::fs::read_dir(dir).ok()?;
    entries.flatten().find_map(|e| {
        e.file_type()
            .ok()
            .filter(std::fs::FileType::is_dir)
            .and_then(|_| locked_below(&e.path()))
    })
}
