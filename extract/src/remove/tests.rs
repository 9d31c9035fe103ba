//! The remover end to end: modes, symlinks, depth, descriptors, mounts.

use super::open::NO_OPENAT2;
use super::{clear_dir, remove_tree};
use rustix::fs::{openat, Mode, OFlags, CWD};
use std::io;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// The suite's one skip helper (`test-support/skip.rs`): prints `SKIPPED <test>: ...`,
/// or fails with `SNAPCONF_REQUIRE_TOOLS=1`.
mod skip {
    include!("../../../test-support/skip.rs");
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// `remove_tree` removes `0000` and `0555` directories with children, unlinks a symlink
/// to a directory without touching the directory behind it, and accepts a missing path.
#[test]
fn removes_unreadable_dirs_and_never_follows_links() {
    let t = tempfile::tempdir().expect("tempdir");
    let keep = t.path().join("keep");
    std::fs::create_dir(&keep).expect("mkdir");
    std::fs::write(keep.join("canary"), "c").expect("write");
    let root = t.path().join("root");
    std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
    std::fs::write(root.join("a/b/c"), "x").expect("write");
    symlink(&keep, root.join("a/link")).expect("symlink");
    symlink(&keep, t.path().join("top-link")).expect("symlink");
    chmod(&root.join("a/b/c"), 0o000);
    chmod(&root.join("a/b"), 0o555);
    chmod(&root.join("a"), 0o000);
    remove_tree(&t.path().join("top-link")).expect("remove a symlink");
    remove_tree(&root).expect("remove root");
    assert!(!root.exists() && !t.path().join("top-link").exists());
    assert_eq!(std::fs::read(keep.join("canary")).expect("canary"), b"c");
    remove_tree(&root).expect("a missing path is fine");
}

/// `clear_dir` empties a read-only directory, keeps it and its mode, and refuses a
/// symlink and a file.
#[test]
fn clear_dir_keeps_the_directory_and_refuses_links() {
    let t = tempfile::tempdir().expect("tempdir");
    let root = t.path().join("root");
    std::fs::create_dir_all(root.join("d/e")).expect("mkdir");
    std::fs::write(root.join("f"), "x").expect("write");
    chmod(&root, 0o555);
    clear_dir(&root).expect("clear");
    let mode = std::fs::metadata(&root).expect("stat").permissions().mode() & 0o7777;
    assert_eq!(mode, 0o555);
    assert_eq!(std::fs::read_dir(&root).expect("read").count(), 0);
    let link = t.path().join("link");
    symlink(&root, &link).expect("symlink");
    std::fs::write(root.join("kept"), "k").expect("write");
    for via in [link.clone(), link.join("."), t.path().join("link/")] {
        let e = clear_dir(&via).expect_err("a symlink is refused");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{}", via.display());
    }
    assert!(
        root.join("kept").exists(),
        "nothing behind the link was removed"
    );
    std::fs::remove_file(root.join("kept")).expect("rm");
    assert_eq!(
        clear_dir(&root.join("nope")).expect_err("missing").kind(),
        io::ErrorKind::NotFound
    );
    std::fs::write(t.path().join("file"), "x").expect("write");
    let e = clear_dir(&t.path().join("file")).expect_err("a file is refused");
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
}

/// A directory larger than one `getdents64` buffer is emptied in one pass.
#[test]
fn removes_directories_larger_than_one_read() {
    let t = tempfile::tempdir().expect("tempdir");
    let root = t.path().join("root");
    std::fs::create_dir(&root).expect("mkdir");
    for i in 0..600 {
        std::fs::write(root.join(format!("a-rather-long-file-name-{i:04}")), "").expect("write");
    }
    remove_tree(&root).expect("remove");
    assert!(!root.exists());
}

/// A chain of `depth` directories `d` under `top`, each made relative to the one above
/// (the whole path is far longer than `PATH_MAX`), with a file at the bottom.
fn deep_chain(top: &Path, depth: usize) {
    let mut fd = crate::dirs::open_dir(CWD, top).expect("open top");
    for _ in 0..depth {
        rustix::fs::mkdirat(&fd, "d", Mode::from_raw_mode(0o755)).expect("mkdirat");
        fd = crate::dirs::open_dir(&fd, "d").expect("open level");
    }
    let f = openat(
        &fd,
        "bottom",
        OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )
    .expect("create bottom");
    drop(f);
}

/// Depth costs neither stack nor descriptors: a chain 10,000 directories deep (the
/// recursive remover overflowed its stack at 8,000) is removed, and cleared.
#[test]
fn removes_trees_deeper_than_any_stack() {
    let t = tempfile::tempdir().expect("tempdir");
    clear_then_remove_a_chain(&t.path().join("root"), 10_000);
}

/// Under a new directory `root`: a chain `depth` deep is cleared (`root` stays, empty),
/// then a new chain is removed with `root`.
fn clear_then_remove_a_chain(root: &Path, depth: usize) {
    std::fs::create_dir(root).expect("mkdir");
    deep_chain(root, depth);
    clear_dir(root).expect("clear a deep tree");
    assert_eq!(std::fs::read_dir(root).expect("list").count(), 0);
    deep_chain(root, depth);
    remove_tree(root).expect("remove a deep tree");
    assert!(!root.exists());
}

/// Run by [`deep_trees_need_few_descriptors`] in a child process: with at most 24 open
/// files (fewer than `OPEN_LEVELS`, so `EMFILE` makes the walk close more levels), a
/// chain 3,000 deep (the recursive remover needed one descriptor per level) is removed
/// and cleared.
#[test]
#[ignore = "run by deep_trees_need_few_descriptors in a child with a low RLIMIT_NOFILE"]
fn inner_deep_tree_under_a_low_open_file_limit() {
    let t = tempfile::tempdir().expect("tempdir");
    let limit = 24;
    let old = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    rustix::process::setrlimit(
        rustix::process::Resource::Nofile,
        rustix::process::Rlimit {
            current: Some(limit),
            maximum: old.maximum,
        },
    )
    .expect("lower RLIMIT_NOFILE");
    clear_then_remove_a_chain(&t.path().join("root"), 3_000);
}

#[test]
fn deep_trees_need_few_descriptors() {
    let exe = std::env::current_exe().expect("test binary");
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "remove::tests::inner_deep_tree_under_a_low_open_file_limit",
            "--ignored",
            "--test-threads",
            "1",
        ])
        .output()
        .expect("run the inner test");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "inner test: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// As a user without root's `CAP_DAC_OVERRIDE` (the test drops its own thread to
/// `nobody` when it runs as root): `0000`, `0300` and `0555` directories with children
/// are removed; `clear_dir` empties `0555` and `0000` directories and gives each its
/// mode back; a symlinked directory's mode is never touched.
#[test]
fn removes_protected_dirs_without_root() {
    let t = tempfile::tempdir().expect("tempdir");
    let base = t.path().to_path_buf();
    let root_user = rustix::process::geteuid().is_root();
    // As root, also a directory the unprivileged user may enter but not change, inside
    // one it owns: clearing the outer one then fails, and must give its mode back.
    let stuck = base.join("stuck");
    if root_user {
        let nobody = Some(rustix::process::Uid::from_raw(65534));
        let nogroup = Some(rustix::process::Gid::from_raw(65534));
        std::fs::create_dir_all(stuck.join("roots")).expect("mkdir");
        std::fs::write(stuck.join("roots/f"), "x").expect("write");
        rustix::fs::chown(&stuck, nobody, nogroup).expect("chown");
        rustix::fs::chown(&base, nobody, nogroup).expect("chown the temp dir");
    }
    let worker = std::thread::spawn(move || {
        if root_user {
            let gid = rustix::process::Gid::from_raw(65534);
            let uid = rustix::process::Uid::from_raw(65534);
            rustix::thread::set_thread_groups(&[]).expect("drop groups");
            rustix::thread::set_thread_res_gid(gid, gid, gid).expect("setresgid");
            rustix::thread::set_thread_res_uid(uid, uid, uid).expect("setresuid");
        }
        let keep = base.join("keep");
        std::fs::create_dir(&keep).expect("mkdir keep");
        chmod(&keep, 0o751);
        let root = base.join("root");
        // Every mode without full owner rights, each with a file, a link and a
        // subdirectory (a directory without `x`, 0400 or 0600, cannot even be entered).
        let modes = [0o000, 0o100, 0o200, 0o300, 0o400, 0o500, 0o555, 0o600];
        for mode in modes {
            let dir = root.join(format!("m{mode:o}"));
            std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
            std::fs::write(dir.join("f"), "x").expect("write");
            std::fs::write(dir.join("sub/g"), "y").expect("write");
            symlink(&keep, dir.join("link")).expect("symlink");
        }
        for mode in modes {
            chmod(&root.join(format!("m{mode:o}/sub")), mode);
            chmod(&root.join(format!("m{mode:o}")), mode);
        }
        remove_tree(&root).expect("remove protected dirs");
        assert!(!root.exists());
        for mode in [0o555, 0o000, 0o400, 0o600] {
            std::fs::create_dir_all(root.join("sub")).expect("mkdir");
            std::fs::write(root.join("sub/f"), "x").expect("write");
            symlink(&keep, root.join("link")).expect("symlink");
            chmod(&root.join("sub"), 0o500);
            chmod(&root, mode);
            clear_dir(&root).expect("clear a protected dir");
            let got = std::fs::symlink_metadata(&root)
                .expect("stat")
                .permissions()
                .mode();
            assert_eq!(got & 0o7777, mode, "clear_dir gives the mode back");
            chmod(&root, 0o700);
            assert_eq!(std::fs::read_dir(&root).expect("list").count(), 0);
            std::fs::remove_dir(&root).expect("rmdir");
        }
        if root_user {
            // 0400: entering `roots` needs `stuck` widened first.
            chmod(&stuck, 0o400);
            clear_dir(&stuck).expect_err("a root-owned directory inside cannot be emptied");
            let got = std::fs::symlink_metadata(&stuck)
                .expect("stat")
                .permissions();
            assert_eq!(
                got.mode() & 0o7777,
                0o400,
                "a failed clear_dir gives it back"
            );
        }
        let got = std::fs::metadata(&keep)
            .expect("stat keep")
            .permissions()
            .mode();
        assert_eq!(got & 0o7777, 0o751, "a link's target keeps its mode");
    });
    worker.join().expect("the unprivileged thread's checks");
}

/// `remove_tree` refuses a path ending in `.` or `..` (as `rm -r` does) and accepts a
/// trailing `/`.
#[test]
fn dot_names_are_refused() {
    let t = tempfile::tempdir().expect("tempdir");
    let dir = t.path().join("dir");
    std::fs::create_dir(&dir).expect("mkdir");
    for bad in [dir.join("."), dir.join(".."), PathBuf::from("/")] {
        let e = remove_tree(&bad).expect_err("refused");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{}", bad.display());
    }
    assert!(dir.exists());
    remove_tree(&t.path().join("dir/")).expect("a trailing slash is fine");
    assert!(!dir.exists());
}

/// Unmounts (lazily) what a test bind-mounted, when dropped.
struct Bind(PathBuf);

impl Drop for Bind {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// A bind mount deep in the tree is never entered, with `openat2(RESOLVE_NO_XDEV)` and
/// with the fallback's check of each opened handle: the error names the mount point by
/// its whole path, and the mount source keeps its files. Needs root (skipped, saying
/// so, where `mount --bind` is refused).
#[test]
fn mount_points_are_never_entered_with_or_without_openat2() {
    for fallback in [false, true] {
        let t = tempfile::tempdir().expect("tempdir");
        let src = t.path().join("src");
        std::fs::create_dir(&src).expect("mkdir");
        std::fs::write(src.join("precious"), "keep").expect("write");
        let root = t.path().join("root");
        let m = root.join("a/b/m");
        std::fs::create_dir_all(&m).expect("mkdir");
        let ok = std::process::Command::new("mount")
            .arg("--bind")
            .arg(&src)
            .arg(&m)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            skip::skip(
                "cannot bind-mount here (needs root)",
                "run the tests as root",
            );
            return;
        }
        let _guard = Bind(m.clone());
        // Other tests of this binary may take the fallback meanwhile; it is as strict.
        NO_OPENAT2.store(fallback, Ordering::Relaxed);
        let e = remove_tree(&root).expect_err("a mount point stops removal");
        NO_OPENAT2.store(false, Ordering::Relaxed);
        let shown = format!("`{}/a/b/m` is a mount point", root.display());
        assert!(e.to_string().contains(&shown), "fallback {fallback}: {e}");
        assert_eq!(std::fs::read(src.join("precious")).expect("kept"), b"keep");
        let e = clear_dir(&root.join("a")).expect_err("clearing stops there too");
        assert!(e.to_string().contains("/a/b/m` is a mount point"), "{e}");
        assert_eq!(std::fs::read(src.join("precious")).expect("kept"), b"keep");
    }
}
