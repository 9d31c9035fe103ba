//! The exit codes of `snapconf hydrate` and `check-archive` by class (harness/src/exit.rs):
//! 1 only for a refused archive; 2 for bad arguments, told before anything is read (the
//! archive a directory or missing, ROOT `/`, a file or a symlink, ROOT's parent missing);
//! 3 for an I/O failure while hydrating (an unwritable parent). ROOT is unchanged in all.

use crate::support;
use snapconf_tarbytes::raw::RawTar;
use std::ffi::OsStr;
use std::path::Path;

/// `snapconf hydrate ARCHIVE ROOT`: exit code and stderr.
fn hydrate(archive: &Path, root: &Path) -> (i32, String) {
    let (code, _, err) = support::snapconf(
        &[OsStr::new("hydrate"), archive.as_os_str(), root.as_os_str()],
        &[],
    );
    (code, err)
}

/// A small valid archive in `dir`.
fn good_archive(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("a.tar");
    let mut t = RawTar::new();
    t.file("a", b"new\n");
    std::fs::write(&path, t.finish()).expect("write");
    path
}

#[test]
fn a_refused_archive_exits_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.tar");
    let mut t = RawTar::new();
    t.file("../x", b"out");
    std::fs::write(&path, t.finish()).expect("write");
    let root = dir.path().join("ws");
    let (code, err) = hydrate(&path, &root);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("refused (parent-traversal)"), "{err}");
    assert!(!root.exists(), "{err}");
}

#[test]
fn an_archive_that_is_a_directory_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ws");
    let (code, err) = hydrate(dir.path(), &root);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is a directory"), "{err}");
    assert!(!root.exists());
    for flags in [&[][..], &["--all-parsers"][..]] {
        let (code, _, err) = support::snapconf(
            &[
                &[OsStr::new("check-archive")][..],
                &flags.iter().map(OsStr::new).collect::<Vec<_>>(),
                &[dir.path().as_os_str()],
            ]
            .concat(),
            &[],
        );
        assert_eq!(code, 2, "check-archive {flags:?}: {err}");
        assert!(err.contains("is a directory"), "{err}");
    }
}

#[test]
fn a_missing_archive_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, err) = hydrate(&dir.path().join("none.tar"), &dir.path().join("ws"));
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = support::snapconf(
        &["check-archive", "--all-parsers", "/nonexistent/a.tar"],
        &[],
    );
    assert_eq!(code, 2, "{err}");
}

/// ROOT `/`, a file, a symlink: usage errors before anything is read; the file and the
/// symlink are left as they were.
#[test]
fn a_root_that_is_slash_a_file_or_a_symlink_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let archive = good_archive(dir.path());
    let (code, err) = hydrate(&archive, Path::new("/"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("must end in a plain name"), "{err}");
    let file = dir.path().join("file");
    std::fs::write(&file, "mine").expect("write");
    let (code, err) = hydrate(&archive, &file);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("exists and is not a directory"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "mine");
    let target = dir.path().join("target");
    std::fs::create_dir(&target).expect("mkdir");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let (code, err) = hydrate(&archive, &link);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is a symlink"), "{err}");
    assert!(std::fs::read_dir(&target).expect("read").next().is_none());
}

#[test]
fn a_missing_parent_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let archive = good_archive(dir.path());
    let root = dir.path().join("no/such/ws");
    let (code, err) = hydrate(&archive, &root);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("parent of root"), "{err}");
    assert!(!dir.path().join("no").exists());
}

/// A parent where no staging directory can be created: an I/O failure (exit 3), not a
/// refusal of the archive. As root (who writes anywhere) a directory of `/proc` stands
/// for it: nothing can be created there.
#[test]
fn an_unwritable_parent_is_an_io_failure() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let archive = good_archive(dir.path());
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).expect("mkdir");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let root = if rustix::process::geteuid().is_root() {
        Path::new("/proc/snapconf-no-such-root").to_path_buf()
    } else {
        ro.join("ws")
    };
    let (code, err) = hydrate(&archive, &root);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.starts_with("failed: ") && err.contains("is unchanged"),
        "{err}"
    );
    assert!(!root.exists());
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}
