//! What a caller names: a path split into parent and last component, a name as a C string.

use std::ffi::CString;
use std::io;
use std::path::Path;

pub(super) fn cstring(name: &[u8]) -> io::Result<CString> {
    CString::new(name).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` holds a NUL byte", String::from_utf8_lossy(name)),
        )
    })
}

/// `path` as (parent directory, last component), trailing `/`s ignored. A last component
/// `.` or `..`, an empty path and `/` are refused.
pub(super) fn split(path: &Path) -> io::Result<(&Path, &[u8])> {
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` does not name an entry to remove", path.display()),
        )
    };
    let mut raw = path.as_os_str().as_encoded_bytes();
    while let [rest @ .., b'/'] = raw {
        raw = rest;
    }
    let last = raw.rsplit(|&b| b == b'/').next().unwrap_or_default();
    if last.is_empty() || last == b"." || last == b".." {
        return Err(bad());
    }
    let name = path.file_name().ok_or_else(bad)?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok((parent, name.as_encoded_bytes()))
}
