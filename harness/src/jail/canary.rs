//! Canaries beyond the jail's fixed decoys: a decoy at every `{out}/...` path a case's
//! symlinks and (prior) hardlinks name, sibling canary directories beside the roots, and the capture-side check
//! that no archive holds bytes read from behind a link.
//!
//! Every decoy's content is `decoy <path> <jail path>`, unique to its path and its jail, so
//! finding it in an archive means a producer followed a link out of the root (a workspace
//! never holds the jail's own path as file content).

use crate::jail::Jail;
use crate::model::spec::{EntryKind, WorkspaceSpec};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// How every decoy's content begins: `decoy <path> <jail path>`.
pub const DECOY_PREFIX: &[u8] = b"decoy ";

/// How the `canary` file's content begins: `canary <jail path>`.
pub const CANARY_PREFIX: &[u8] = b"canary ";

/// Sibling canary directory of the roots, with a file and a subdirectory inside.
pub const CANARY_DIR: &str = "canary-dir";

/// Plant the decoys `specs`' `{out}/...` symlink targets name (regular files with unique
/// content; existing paths are left as they are; a target with `..` or an empty component
/// is skipped, it could not stay in `out/`), and the sibling canary directory.
///
/// # Errors
/// The I/O error of creating a decoy.
pub fn plant(jail: &Jail, specs: &[&WorkspaceSpec]) -> io::Result<()> {
    let out = jail.path().join("out");
    for spec in specs {
        for e in &spec.entries {
            let target = match &e.kind {
                EntryKind::Symlink { target } => target.0.as_slice(),
                EntryKind::Hardlink { target } => target.as_bytes(),
                _ => continue,
            };
            let Some(rest) = target.strip_prefix(b"{out}/") else {
                continue;
            };
            let rel = Path::new(std::ffi::OsStr::from_bytes(rest));
            if rest.is_empty() || !rel.components().all(|c| matches!(c, Component::Normal(_))) {
                continue;
            }
            let p = out.join(rel);
            if std::fs::symlink_metadata(&p).is_ok() {
                continue;
            }
            let parent_ok = match p.parent() {
                Some(parent) => std::fs::create_dir_all(parent).is_ok(),
                None => false,
            };
            if parent_ok {
                // A decoy under an existing decoy file cannot be created; the link then
                // dangles, which is fine (nothing to read behind it).
                let _ = std::fs::write(&p, content(jail, rest));
            }
        }
    }
    let dir = jail.path().join(CANARY_DIR);
    if std::fs::symlink_metadata(&dir).is_err() {
        std::fs::create_dir_all(dir.join("sub"))?;
        std::fs::write(dir.join("file"), content(jail, b"canary-dir/file"))?;
        std::fs::write(dir.join("sub/file"), content(jail, b"canary-dir/sub/file"))?;
    }
    Ok(())
}

fn content(jail: &Jail, rel: &[u8]) -> Vec<u8> {
    let mut c = DECOY_PREFIX.to_vec();
    c.extend_from_slice(rel);
    c.push(b' ');
    c.extend_from_slice(jail.path().as_os_str().as_bytes());
    c
}

/// Every canary's jail-relative path and content: regular files under `out/` and the
/// canary directory, and the `canary` file.
///
/// # Errors
/// The I/O error of reading one.
pub fn canaries(jail: &Jail) -> io::Result<Vec<(String, Vec<u8>)>> {
    let mut found = Vec::new();
    for top in ["out", CANARY_DIR, "canary"] {
        collect(jail.path(), Path::new(top), &mut found)?;
    }
    Ok(found)
}

fn collect(base: &Path, rel: &Path, found: &mut Vec<(String, Vec<u8>)>) -> io::Result<()> {
    let p = base.join(rel);
    let Ok(meta) = std::fs::symlink_metadata(&p) else {
        return Ok(());
    };
    if meta.is_dir() {
        for e in std::fs::read_dir(&p)? {
            collect(base, &rel.join(e?.file_name()), found)?;
        }
    } else if meta.is_file() {
        found.push((rel.display().to_string(), std::fs::read(&p)?));
    }
    Ok(())
}

/// The canaries whose content appears in `archive` (bytes of the whole archive), each
/// searched for with a substring search (`memchr::memmem`, linear in the archive's size).
pub fn stored_canaries<'a>(archive: &[u8], canaries: &'a [(String, Vec<u8>)]) -> Vec<&'a str> {
    canaries
        .iter()
        .filter(|(_, c)| !c.is_empty() && memchr::memmem::find(archive, c).is_some())
        .map(|(p, _)| p.as_str())
        .collect()
}

/// True if `archive` may hold a canary of `jail`: every canary's content starts with
/// [`DECOY_PREFIX`] or [`CANARY_PREFIX`] and ends with the jail's path, so an archive
/// without those bytes holds none, and the decoys need not be read at all (an absolute
/// symlink into the jail puts the jail's path in the archive, but not the prefixes). An
/// archive that has both is then searched canary by canary with [`stored_canaries`].
pub fn may_hold_canaries(archive: &[u8], jail: &Jail) -> bool {
    let has = |needle: &[u8]| memchr::memmem::find(archive, needle).is_some();
    has(jail.path().as_os_str().as_bytes()) && (has(DECOY_PREFIX) || has(CANARY_PREFIX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoys_for_spec_targets_are_planted_and_found_in_bytes() {
        let jail = Jail::new(None).expect("jail");
        let spec = WorkspaceSpec::from_json(
            r#"{"entries": [
                {"path": "a", "kind": "symlink", "target": "{out}/deep/er"},
                {"path": "b", "kind": "symlink", "target": "{out}/../escape"},
                {"path": "c", "kind": "symlink", "target": "{out}/decoy/file"}]}"#,
        )
        .expect("spec");
        plant(&jail, &[&spec]).expect("plant");
        assert!(jail.path().join("out/deep/er").is_file());
        assert!(!jail.path().join("escape").exists());
        let all = canaries(&jail).expect("canaries");
        let names: Vec<&str> = all.iter().map(|(p, _)| p.as_str()).collect();
        for want in [
            "out/deep/er",
            "out/decoy/file",
            "out/x",
            "canary-dir/file",
            "canary",
        ] {
            assert!(names.contains(&want), "{want} in {names:?}");
        }
        let er = all.iter().find(|(p, _)| p == "out/deep/er").expect("er");
        let mut archive = vec![0u8; 700];
        archive.extend_from_slice(&er.1);
        assert_eq!(stored_canaries(&archive, &all), ["out/deep/er"]);
        assert!(stored_canaries(&[0u8; 1024], &all).is_empty());
        assert!(may_hold_canaries(&archive, &jail));
        assert!(!may_hold_canaries(&[0u8; 1024], &jail));
        // The prefilter passes every canary, and not an archive that only names the jail
        // (an absolute symlink's target into a decoy).
        for (path, content) in &all {
            let mut archive = vec![0u8; 512];
            archive.extend_from_slice(content);
            assert!(may_hold_canaries(&archive, &jail), "{path}");
        }
        let mut named = vec![0u8; 157];
        named.extend_from_slice(jail.path().join("out/decoy/file").as_os_str().as_bytes());
        assert!(!may_hold_canaries(&named, &jail));
    }
}
