//! Finding a template's program before running it, so a missing command is reported once
//! (as an unavailable adapter, naming the command) instead of failing every case.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Where `program` (bytes of the rendered program word) would be run from: itself when it
/// holds a `/`, else the first executable regular file of that name on `path_var` (a
/// `PATH`-style list; `None` means the process's own `PATH`).
///
/// # Errors
/// A message naming the program and saying what was wrong (not found, not executable).
pub fn find_program(program: &[u8], path_var: Option<&OsString>) -> Result<PathBuf, String> {
    let shown = String::from_utf8_lossy(program);
    if program.contains(&b'/') {
        let p = PathBuf::from(OsString::from_vec(program.to_vec()));
        return if is_executable(&p) {
            Ok(p)
        } else if p.exists() {
            Err(format!("`{shown}` is not an executable file"))
        } else {
            Err(format!("`{shown}` does not exist"))
        };
    }
    let own = std::env::var_os("PATH");
    let list = path_var.or(own.as_ref()).cloned().unwrap_or_default();
    for dir in list.as_bytes().split(|&b| b == b':') {
        let dir = if dir.is_empty() { b".".as_slice() } else { dir };
        let candidate =
            Path::new(std::ffi::OsStr::from_bytes(dir)).join(std::ffi::OsStr::from_bytes(program));
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(format!("`{shown}` was not found on PATH"))
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sh_and_names_what_is_missing() {
        assert!(find_program(b"sh", None).is_ok());
        let e = find_program(b"snapconf-no-such-tool", None).expect_err("missing");
        assert!(e.contains("`snapconf-no-such-tool`"), "{e}");
        let e = find_program(b"/nonexistent/tool", None).expect_err("missing");
        assert!(e.contains("does not exist"), "{e}");
    }
}
