//! Running the embedded Python helper scripts with `python3`, and finding a Python whose
//! `tarfile` has the PEP 706 filters ([`interpreter`]).

use crate::adapter::{Availability, Outcome, ToolError};
use crate::process::run::{probe_version, run_with_timeout};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The interpreter name tried first on `PATH` (then `python3.13`, `python3.12`, …, see
/// [`interpreter`]).
pub const PYTHON_PROGRAM: &str = "python3";
/// What to do when no Python with the PEP 706 filters is found, in general words (the
/// unavailable adapters name the exact command, [`setup_command`]).
pub const FILTERS_HINT: &str =
    "a Python with PEP 706 filters (3.12, or 3.11.4 and later): `uv python install 3.12`, `pyenv install 3.12`, or pass --python PATH";

/// The script a candidate interpreter runs: it fails without the PEP 706 filters, and
/// prints the real executable (going around launchers such as pyenv's shims).
const PROBE: &str = "import sys, tarfile; tarfile.data_filter; sys.stdout.write(sys.executable)";

/// The interpreter `--python PATH` names, set once by the command line before any adapter
/// runs.
static FLAG: std::sync::OnceLock<OsString> = std::sync::OnceLock::new();

/// Run the Python adapters with `path` (`--python PATH`), before `SNAPCONF_PYTHON` and the
/// search. Takes effect only before the first adapter asks for [`interpreter`]; a second
/// call is ignored.
pub fn use_python(path: &Path) {
    let _ = FLAG.set(path.as_os_str().to_owned());
}

/// The interpreter the adapters run and how it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The executable (`sys.executable` of the chosen candidate when it runs, else the
    /// candidate as named).
    pub exe: OsString,
    /// How it was found, in words (`--python`, `SNAPCONF_PYTHON`, `python3.12 on PATH`,
    /// `uv python find`, `pyenv`, …).
    pub how: String,
    /// Its `tarfile` has the PEP 706 extraction filters.
    pub filters: bool,
    /// It was named (`--python` or `SNAPCONF_PYTHON`) rather than searched for.
    pub named: bool,
}

/// The named interpreter: `--python PATH`, else `$SNAPCONF_PYTHON` when set and not empty
/// (an empty value counts as unset, as a shell's `SNAPCONF_PYTHON=` means).
fn chosen_interpreter() -> Option<(OsString, &'static str)> {
    if let Some(p) = FLAG.get() {
        return Some((p.clone(), "--python"));
    }
    std::env::var_os("SNAPCONF_PYTHON")
        .filter(|p| !p.is_empty())
        .map(|p| (p, "SNAPCONF_PYTHON"))
}

/// `sys.executable` of `candidate` when it runs and its `tarfile` has the filters.
fn probe(candidate: &OsStr) -> Option<OsString> {
    match probe_version(candidate, &["-I", "-S", "-c", PROBE], "") {
        Availability::Available { version } if !version.is_empty() => Some(version.into()),
        _ => None,
    }
}

/// `$HOME/rel`, when `HOME` is set and absolute.
fn home(rel: &str) -> Option<PathBuf> {
    let h = PathBuf::from(std::env::var_os("HOME")?);
    h.is_absolute().then(|| h.join(rel))
}

/// `var` as an absolute path, when set.
fn env_dir(var: &str) -> Option<PathBuf> {
    let p = PathBuf::from(std::env::var_os(var)?);
    p.is_absolute().then_some(p)
}

/// `name` on `PATH` (the first executable file of that name), else `fallback` when it is one.
fn which(name: &str, fallback: Option<PathBuf>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exe = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    std::env::var_os("PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .chain(fallback)
        .find(|p| p.is_absolute() && is_exe(p))
}

/// The numbers in `name` after its first `-` or from its start (`cpython-3.12.1-linux…` →
/// `[3, 12, 1]`, `3.13.0` → `[3, 13, 0]`), for ordering installed versions newest first.
fn version_key(name: &str) -> Vec<u64> {
    let rest = name.strip_prefix("cpython-").unwrap_or(name);
    rest.split(['.', '-'])
        .map_while(|p| p.parse::<u64>().ok())
        .collect()
}

/// `DIR/*/bin/python3` of the installations under `dir` (uv's or pyenv's layout), newest
/// version first.
fn installed_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(Vec<u64>, PathBuf)> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let exe = e.path().join("bin/python3");
            exe.exists().then(|| (version_key(&name), exe))
        })
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0));
    found.into_iter().map(|(_, p)| p).collect()
}

/// uv: on `PATH`, or where `pipx install uv` and uv's own installer put it.
fn uv() -> Option<PathBuf> {
    which("uv", home(".local/bin/uv"))
}

/// The directory uv installs Pythons into: `$UV_PYTHON_INSTALL_DIR`, else
/// `$XDG_DATA_HOME/uv/python`, else `~/.local/share/uv/python`.
fn uv_python_dir() -> Option<PathBuf> {
    env_dir("UV_PYTHON_INSTALL_DIR")
        .or_else(|| env_dir("XDG_DATA_HOME").map(|d| d.join("uv/python")))
        .or_else(|| home(".local/share/uv/python"))
}

/// The candidates in search order, each with how it was found, each group looked for only
/// when the ones before it had none with the filters: `python3`, `python3.13`, `python3.12`
/// on `PATH` (and in `~/.local/bin`, where `uv python install` links them); `uv python
/// find '>=3.12'` when uv is there; the Pythons uv installed; pyenv's versions
/// (`$PYENV_ROOT` or `~/.pyenv`); an active venv (`$VIRTUAL_ENV`).
fn candidates() -> impl Iterator<Item = (OsString, String)> {
    type Group = fn() -> Vec<(OsString, String)>;
    let on_path: Group = || {
        [PYTHON_PROGRAM, "python3.13", "python3.12"]
            .into_iter()
            .filter_map(|name| {
                let p = which(name, home(&format!(".local/bin/{name}")))?;
                Some((p.into(), format!("{name} on PATH")))
            })
            .collect()
    };
    let uv_find: Group =
        || match uv().map(|uv| probe_version(uv, &["python", "find", ">=3.12"], "")) {
            Some(Availability::Available { version }) => {
                vec![(version.into(), "uv python find".into())]
            }
            _ => Vec::new(),
        };
    let uv_installed: Group = || {
        uv_python_dir()
            .map(|d| installed_under(&d))
            .unwrap_or_default()
            .into_iter()
            .map(|p| (p.into(), "installed by uv".into()))
            .collect()
    };
    let pyenv: Group = || {
        env_dir("PYENV_ROOT")
            .or_else(|| home(".pyenv"))
            .map(|root| installed_under(&root.join("versions")))
            .unwrap_or_default()
            .into_iter()
            .map(|p| (p.into(), "pyenv".into()))
            .collect()
    };
    let venv: Group = || {
        env_dir("VIRTUAL_ENV")
            .map(|v| (v.join("bin/python3").into(), "the active venv".into()))
            .into_iter()
            .collect()
    };
    [on_path, uv_find, uv_installed, pyenv, venv]
        .into_iter()
        .flat_map(|group| group())
}

/// Find the interpreter: the named one ([`use_python`], then `SNAPCONF_PYTHON`), else the
/// first of [`candidates`] with the filters, else `python3` on `PATH` as it is (so that
/// its version and the missing filters can be reported).
fn discover() -> Found {
    if let Some((p, how)) = chosen_interpreter() {
        let exe = probe(&p);
        return Found {
            filters: exe.is_some(),
            exe: exe.unwrap_or(p),
            how: how.to_owned(),
            named: true,
        };
    }
    for (candidate, how) in candidates() {
        if let Some(exe) = probe(&candidate) {
            return Found {
                exe,
                how,
                filters: true,
                named: false,
            };
        }
    }
    let exe = match probe_version(
        PYTHON_PROGRAM,
        &[
            "-I",
            "-S",
            "-c",
            "import sys; sys.stdout.write(sys.executable)",
        ],
        "",
    ) {
        Availability::Available { version } => version.into(),
        Availability::Unavailable { .. } => PYTHON_PROGRAM.into(),
    };
    Found {
        exe,
        how: "python3 on PATH".into(),
        filters: false,
        named: false,
    }
}

/// The interpreter the Python adapters run, found once per process: as [`interpreter`] says.
pub fn found() -> &'static Found {
    static FOUND: std::sync::OnceLock<Found> = std::sync::OnceLock::new();
    FOUND.get_or_init(discover)
}

/// The exact command that gets a Python with the filters here: `uv python install 3.12`
/// when uv is installed, `pyenv install 3.12` when pyenv is, else installing uv with pipx
/// first (`apt-get install pipx` as root when pipx is missing).
pub fn setup_command() -> String {
    if let Some(uv) = uv() {
        let uv = if which("uv", None).is_some() {
            "uv".to_owned()
        } else {
            uv.display().to_string()
        };
        return format!("{uv} python install 3.12");
    }
    if which("pyenv", home(".pyenv/bin/pyenv")).is_some() {
        return "pyenv install 3.12".to_owned();
    }
    let pipx = if which("pipx", None).is_some() {
        ""
    } else {
        "sudo apt-get install -y pipx && "
    };
    format!("{pipx}pipx install uv && ~/.local/bin/uv python install 3.12")
}

/// `python3 --version` (e.g. `Python 3.12.1`) of the [`interpreter`] the adapters run,
/// but unavailable when `tarfile` lacks the PEP 706 extraction filters (added in 3.12 and
/// backported to 3.8.17, 3.9.17, 3.10.12 and 3.11.4), since the extractors and the
/// suite's expectations rely on them. The reason then says where that Python came from,
/// and the hint names the command to run ([`setup_command`]), or the flag to fix.
pub fn python_availability() -> Availability {
    let f = found();
    let install_hint = if f.named {
        format!(
            "{} is `{}`: point it at a Python 3.12 (or 3.11.4 and later) that runs here, or drop it to search PATH, uv and pyenv",
            f.how,
            f.exe.to_string_lossy()
        )
    } else {
        format!("{}; or pass --python PATH", setup_command())
    };
    let version = probe_version(&f.exe, &["--version"], &install_hint);
    match version {
        Availability::Available { version } if !f.filters => Availability::Unavailable {
            reason: format!(
                "{version} ({}, {}): `tarfile` has no extraction filters (PEP 706){}",
                f.how,
                f.exe.to_string_lossy(),
                if f.named {
                    ""
                } else {
                    ", and no Python 3.12 was found on PATH, by uv or pyenv"
                }
            ),
            install_hint,
        },
        other => other,
    }
}

/// The interpreter binary the adapters exec ([`found`]): `--python PATH`, else
/// `$SNAPCONF_PYTHON`, else the first Python with the filters among `python3`,
/// `python3.13`, `python3.12` on `PATH`, `uv python find`, uv's and pyenv's installations
/// and an active venv; its real executable, so that launchers such as pyenv's shims (a
/// shell script, about 0.1 s per call) are gone around.
pub fn interpreter() -> &'static OsStr {
    &found().exe
}

/// The host paths the interpreter needs besides `/usr`, for a filesystem view
/// ([`crate::Extractor::view_paths`]): the installation prefix of [`interpreter`] (the
/// directory above its `bin/`, which holds the standard library), unless it is under
/// `/usr`. Empty when the interpreter cannot be resolved.
pub fn view_paths() -> Vec<std::path::PathBuf> {
    let Ok(exe) = std::fs::canonicalize(interpreter()) else {
        return Vec::new();
    };
    match exe.parent().and_then(std::path::Path::parent) {
        Some(prefix) if !prefix.starts_with("/usr") && prefix != std::path::Path::new("/") => {
            vec![prefix.to_path_buf()]
        }
        _ => Vec::new(),
    }
}

/// The command `python3 -I -S -c SCRIPT ARGS…` (with [`interpreter`]). `-I` (isolated mode)
/// ignores `PYTHON*` variables and the user site directory, and `-S` skips `site`, so the
/// host's Python set-up cannot change what the script does (the scripts need only the
/// standard library).
pub fn python_command(script: &str, args: &[&OsStr]) -> Command {
    let mut cmd = Command::new(interpreter());
    cmd.arg("-I").arg("-S").arg("-c").arg(script).args(args);
    cmd
}

/// Run `python3 -I -c SCRIPT ARGS…` with [`run_with_timeout`]: exit ≠ 0 (an uncaught
/// exception, traceback in the message) is a refusal.
///
/// # Errors
/// As [`run_with_timeout`].
pub fn run_python(
    script: &str,
    args: &[&OsStr],
    scratch: &Path,
    timeout: Duration,
) -> Result<Outcome, ToolError> {
    let mut cmd = python_command(script, args);
    run_with_timeout(&mut cmd, scratch, timeout)
}
