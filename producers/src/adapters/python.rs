//! Running the embedded Python helper scripts with `python3`.

use crate::adapter::{Availability, Outcome, ToolError};
use crate::process::run::{probe_version, run_with_timeout};
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The interpreter run for the Python adapters.
pub const PYTHON_PROGRAM: &str = "python3";
/// How to install Python on Debian and Ubuntu.
pub const PYTHON_INSTALL_HINT: &str = "apt-get install python3";
/// What to do when the Python found lacks the PEP 706 filters (installing the same package
/// again does not help).
pub const FILTERS_HINT: &str =
    "a Python with PEP 706 filters (3.12, or 3.11.4 and later) first on PATH, or SNAPCONF_PYTHON=/path/to/python3";

/// `python3 --version` (e.g. `Python 3.11.7`) of the [`interpreter`] the adapters run (so
/// `SNAPCONF_PYTHON` counts here too), but unavailable when `tarfile` lacks the PEP 706
/// extraction filters (added in 3.12 and backported to 3.8.17, 3.9.17, 3.10.12 and 3.11.4),
/// since the extractors and the suite's expectations rely on them.
pub fn python_availability() -> Availability {
    let install_hint = match chosen_interpreter() {
        Some(p) => format!(
            "SNAPCONF_PYTHON is `{}`: point it at a Python 3.11.4 or later that runs here, or unset it to use `python3` on PATH",
            p.to_string_lossy()
        ),
        None => PYTHON_INSTALL_HINT.to_owned(),
    };
    let version = probe_version(interpreter(), &["--version"], &install_hint);
    if let Availability::Available { version } = &version {
        let check = probe_version(
            interpreter(),
            &[
                "-I",
                "-c",
                "import tarfile; tarfile.data_filter; print('filters')",
            ],
            &install_hint,
        );
        if !matches!(check, Availability::Available { .. }) {
            return Availability::Unavailable {
                reason: format!("{version}: `tarfile` has no extraction filters (PEP 706)"),
                install_hint: FILTERS_HINT.to_owned(),
            };
        }
    }
    version
}

/// `$SNAPCONF_PYTHON` when set and not empty (an empty value counts as unset, as a shell's
/// `SNAPCONF_PYTHON=` means).
fn chosen_interpreter() -> Option<std::ffi::OsString> {
    std::env::var_os("SNAPCONF_PYTHON").filter(|p| !p.is_empty())
}

/// The interpreter binary the adapters exec: `$SNAPCONF_PYTHON` when set and not empty,
/// else what `python3` reports as `sys.executable`, resolved once. Going around launchers
/// such as pyenv's `python3` shim (a shell script) saves about 0.1 s per call.
pub fn interpreter() -> &'static OsStr {
    static RESOLVED: std::sync::OnceLock<std::ffi::OsString> = std::sync::OnceLock::new();
    RESOLVED.get_or_init(|| {
        if let Some(p) = chosen_interpreter() {
            return p;
        }
        Command::new(PYTHON_PROGRAM)
            .args([
                "-I",
                "-S",
                "-c",
                "import sys; sys.stdout.write(sys.executable)",
            ])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success() && !o.stdout.is_empty())
            .map(|o| {
                use std::os::unix::ffi::OsStringExt;
                std::ffi::OsString::from_vec(o.stdout)
            })
            .unwrap_or_else(|| PYTHON_PROGRAM.into())
    })
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
