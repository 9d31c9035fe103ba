//! Finding a Python with the PEP 706 filters (`producers/src/adapters/python.rs`): with a
//! clean environment (`env -i`) and no Python on `PATH`, the four Python adapters are
//! available when a Python sits where `uv python install` or pyenv put it, `--python`
//! beats `SNAPCONF_PYTHON`, and with none the adapters name the exact command to run.

use crate::support::{skip, Snapconf};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The install prefix (the directory above `bin/`) and `--version` line of a Python with
/// the filters reachable from this test's `PATH`, or `None` (skipped).
fn real_python() -> Option<(PathBuf, String)> {
    let out = Command::new("python3")
        .args([
            "-I",
            "-c",
            "import sys, tarfile; tarfile.data_filter; print(sys.base_prefix); print(sys.version.split()[0])",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success());
    let Some(out) = out else {
        skip::skip(
            "a python3 with PEP 706 filters on PATH",
            "a Python 3.12 (or 3.11.4 and later) first on PATH",
        );
        return None;
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let prefix = PathBuf::from(lines.next()?);
    let version = format!("Python {}", lines.next()?);
    prefix
        .join("bin/python3")
        .exists()
        .then_some((prefix, version))
}

/// `snapconf ARGS… list` with only `PATH` (an empty directory: no tool at all) and
/// `HOME`, plus `extra`; the four Python adapters' lines.
fn python_lines(home: &Path, path: &Path, extra: &[(&str, &str)], args: &[&str]) -> Vec<String> {
    let mut cmd = Snapconf::new();
    cmd.env_clear().env("PATH", path).env("HOME", home);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let (code, out, err) = cmd.args(args).arg("list").run();
    assert_eq!(code, 0, "snapconf list: {err}");
    let lines: Vec<String> = out
        .lines()
        .filter(|l| l.contains(" python-"))
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 4, "four Python adapters listed: {out}");
    lines
}

/// All four lines show `version`, none unavailable.
fn assert_available(lines: &[String], version: &str) {
    for l in lines {
        assert!(
            l.ends_with(version) && !l.contains("unavailable"),
            "available with {version}: {l}"
        );
    }
}

/// A Python where `uv python install 3.12` puts it (`~/.local/share/uv/python/cpython-…`)
/// or where pyenv does (`~/.pyenv/versions/…`) is found with nothing on `PATH`.
#[test]
fn a_python_in_uv_or_pyenv_layout_is_found_with_nothing_on_path() {
    let Some((prefix, version)) = real_python() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let empty = tmp.path().join("empty-path");
    std::fs::create_dir(&empty).expect("mkdir");
    for layout in [
        ".local/share/uv/python/cpython-3.12.1-linux-x86_64-gnu",
        ".pyenv/versions/3.12.1",
    ] {
        let home = tmp.path().join(layout.split('/').nth(1).unwrap_or("h"));
        let at = home.join(layout);
        std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
        std::os::unix::fs::symlink(&prefix, &at).expect("symlink");
        assert_available(&python_lines(&home, &empty, &[], &[]), &version);
    }
}

/// `--python PATH` comes before `SNAPCONF_PYTHON`, which comes before the search; a named
/// interpreter that does not run is reported as named, with no search behind it.
#[test]
fn the_python_flag_beats_the_variable_and_the_search() {
    let Some((prefix, version)) = real_python() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let real = prefix.join("bin/python3");
    let real = real.to_str().expect("utf-8 path");
    let missing = tmp.path().join("no-such-python");
    let missing = missing.to_str().expect("utf-8 path");
    let lines = python_lines(
        tmp.path(),
        tmp.path(),
        &[("SNAPCONF_PYTHON", missing)],
        &["--python", real],
    );
    assert_available(&lines, &version);
    let lines = python_lines(tmp.path(), tmp.path(), &[("SNAPCONF_PYTHON", missing)], &[]);
    for l in &lines {
        assert!(
            l.contains("unavailable") && l.contains("SNAPCONF_PYTHON is") && l.contains(missing),
            "the named interpreter is reported: {l}"
        );
    }
}

/// With no Python anywhere the adapters are unavailable and name the exact command: uv
/// through pipx on a bare machine, `uv python install 3.12` once uv is there; and a
/// Python that `uv python find` names is found.
#[test]
fn with_no_python_the_command_to_run_is_named() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).expect("mkdir");
    for l in python_lines(tmp.path(), &bin, &[], &[]) {
        assert!(
            l.contains("unavailable")
                && l.contains("pipx install uv && ~/.local/bin/uv python install 3.12")
                && l.contains("--python PATH"),
            "names the command to run: {l}"
        );
    }
    // A uv that finds no Python: the command is uv's.
    let uv = bin.join("uv");
    std::fs::write(&uv, "#!/bin/sh\nexit 2\n").expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&uv, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    for l in python_lines(tmp.path(), &bin, &[], &[]) {
        assert!(
            l.contains("(install: uv python install 3.12;"),
            "names uv's command: {l}"
        );
    }
    // A uv whose `python find` names a Python with the filters.
    let Some((prefix, version)) = real_python() else {
        return;
    };
    let script = format!(
        "#!/bin/sh\n[ \"$1 $2 $3\" = 'python find >=3.12' ] && echo '{}' && exit 0\nexit 2\n",
        prefix.join("bin/python3").display()
    );
    std::fs::write(&uv, script).expect("write");
    assert_available(&python_lines(tmp.path(), &bin, &[], &[]), &version);
}
