//! Matching root-relative exclusions, listing what a directory keeps of them, and writing
//! them out for tools that read a file.

use crate::adapter::ToolError;
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Whether the root-relative path `rel` (bytes, `/`-separated) is excluded: equal to an
/// exclusion, or below one (`a/b` excludes `a/b` and `a/b/c`, not `a/bc`). Empty exclusions
/// and trailing slashes on exclusions are ignored.
pub fn is_excluded(rel: &[u8], exclusions: &[Vec<u8>]) -> bool {
    effective_exclusions(exclusions)
        .any(|ex| rel.starts_with(ex) && (rel.len() == ex.len() || rel[ex.len()] == b'/'))
}

/// The exclusions that exclude something, in order, each without its trailing `/` bytes:
/// an empty one (or one of only slashes) is left out, since it names no path. What every
/// adapter hands its tool, and what [`is_excluded`] matches.
pub fn effective_exclusions(exclusions: &[Vec<u8>]) -> impl Iterator<Item = &[u8]> {
    exclusions
        .iter()
        .map(|ex| trim_slashes(ex))
        .filter(|ex| !ex.is_empty())
}

/// `ex` without trailing `/` bytes.
pub fn trim_slashes(ex: &[u8]) -> &[u8] {
    let end = ex.iter().rposition(|&b| b != b'/').map_or(0, |i| i + 1);
    &ex[..end]
}

/// An entry of a directory that no exclusion covers (see [`kept_entries`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeptEntry {
    /// Where it is: the directory joined with its name.
    pub path: PathBuf,
    /// Its root-relative name (bytes, `/`-separated, no leading `/`).
    pub rel: Vec<u8>,
}

/// The entries of the directory `dir`, whose root-relative name is `rel` (empty for the
/// root), that [`is_excluded`] keeps, sorted by name byte for byte: the order in which
/// the adapters that walk a tree themselves (the `tar` crate's producer, BusyBox's
/// emulated exclusions) visit it. Nothing is followed or inspected but the listing.
///
/// # Errors
/// The error of reading the directory or one of its entries.
pub(crate) fn kept_entries(
    dir: &Path,
    rel: &[u8],
    exclusions: &[Vec<u8>],
) -> std::io::Result<Vec<KeptEntry>> {
    let mut names: Vec<Vec<u8>> = std::fs::read_dir(dir)?
        .map(|entry| entry.map(|e| e.file_name().as_bytes().to_vec()))
        .collect::<std::io::Result<_>>()?;
    names.sort();
    let mut kept = Vec::with_capacity(names.len());
    for name in names {
        let mut child = rel.to_vec();
        if !child.is_empty() {
            child.push(b'/');
        }
        child.extend_from_slice(&name);
        if !is_excluded(&child, exclusions) {
            kept.push(KeptEntry {
                path: dir.join(OsStr::from_bytes(&name)),
                rel: child,
            });
        }
    }
    Ok(kept)
}

/// Append `bytes` to `text` as lowercase hex, two digits a byte: how byte strings are
/// handed to helper scripts and servers (Python reads them with `bytes.fromhex`).
pub(crate) fn push_hex(text: &mut String, bytes: &[u8]) {
    for b in bytes {
        text.push_str(&format!("{b:02x}"));
    }
}

/// Write `exclusions` to `path`, one per line, each hex-encoded (lower case), so any byte
/// string (newlines, non-UTF-8) survives a line-oriented reader.
///
/// # Errors
/// [`ToolError::Io`] naming the file.
pub fn write_hex_lines(path: &Path, exclusions: &[Vec<u8>]) -> Result<(), ToolError> {
    let mut text = String::new();
    for ex in exclusions {
        push_hex(&mut text, ex);
        text.push('\n');
    }
    std::fs::File::create(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|source| ToolError::Io {
            context: format!("writing the exclusion list `{}`", path.display()),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excludes_itself_and_below_but_not_siblings_with_the_same_prefix() {
        let ex = vec![b"a/b".to_vec(), b"c/".to_vec(), Vec::new()];
        assert!(is_excluded(b"a/b", &ex));
        assert!(is_excluded(b"a/b/c", &ex));
        assert!(!is_excluded(b"a/bc", &ex));
        assert!(!is_excluded(b"a", &ex));
        assert!(is_excluded(b"c", &ex));
        assert!(is_excluded(b"c/d", &ex));
        assert!(
            !is_excluded(b"x", &ex),
            "an empty exclusion excludes nothing"
        );
    }
}
