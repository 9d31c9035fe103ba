//! Two kinds found by a hostile-input review:
//! - an input that stops without the end-of-archive marker (an empty file, a closed stdin, a
//!   cut at a member boundary) must be refused, never taken as "the workspace is empty";
//! - removing the old tree must never cross into another filesystem (a bind mount in the
//!   prior workspace), which would delete the mount source's files.

use crate::common;

use snapconf_extract::{hydrate, validate, Policy, Reason};
use std::io::Write;
use std::path::Path;
use std::process::Command;

fn archive(files: &[(&str, &str)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, body) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(body.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, name, body.as_bytes())
            .expect("append");
    }
    b.into_inner().expect("finish")
}

fn prior(root: &Path) {
    std::fs::create_dir_all(root).expect("root");
    for i in 0..5 {
        std::fs::write(root.join(format!("f{i}")), format!("prior {i}")).expect("prior file");
    }
}

fn assert_prior(root: &Path) {
    for i in 0..5 {
        assert_eq!(
            std::fs::read_to_string(root.join(format!("f{i}"))).expect("prior kept"),
            format!("prior {i}")
        );
    }
}

#[test]
fn input_without_the_end_marker_is_refused_and_the_prior_kept() {
    let full = archive(&[("a", "1"), ("b", "2"), ("c", "3")]);
    // Cut right after the second member (a member boundary), and an empty input.
    let cut = &full[..2 * 1024];
    for (what, bytes) in [("cut at a member boundary", cut), ("empty input", &[][..])] {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("ws");
        prior(&root);
        let err = hydrate(bytes, &root, &Policy::default()).expect_err(what);
        assert_eq!(err.reason(), Some(Reason::Truncated), "{what}: {err}");
        assert_prior(&root);
        assert!(
            !root.join("a").exists(),
            "{what}: nothing of the archive landed"
        );
        let err = validate(bytes, &Policy::default()).expect_err(what);
        assert_eq!(err.reason(), Some(Reason::Truncated), "{what}: {err}");
    }
    // With the marker, the same members are accepted.
    let listing = validate(&full[..], &Policy::default()).expect("complete archive");
    assert_eq!(listing.members.len(), 3);
}

/// Unmounts, on drop, every mount whose mount point lies under the directory (the bind mount
/// moves with the old tree when hydration swaps it aside).
struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let prefix = self.0.to_string_lossy().into_owned();
        let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        for point in table.lines().filter_map(|l| l.split(' ').nth(4)) {
            if point.starts_with(&prefix) {
                let _ = Command::new("umount").arg("-l").arg(point).status();
            }
        }
    }
}

#[test]
fn old_tree_removal_never_enters_a_mount_point() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    std::fs::create_dir(&src).expect("src");
    std::fs::write(src.join("precious"), "keep me").expect("precious");
    let root = dir.path().join("ws");
    prior(&root);
    let m = root.join("m");
    std::fs::create_dir(&m).expect("mount point");
    let ok = Command::new("mount")
        .arg("--bind")
        .arg(&src)
        .arg(&m)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        common::skip::skip(
            "cannot bind-mount here (needs root and mount permission)",
            "run the tests as root",
        );
        return;
    }
    let guard = Mount(dir.path().to_path_buf());
    let mut f = tempfile::tempfile().expect("tempfile");
    f.write_all(&archive(&[("new", "x")])).expect("write");
    use std::io::Seek;
    f.rewind().expect("rewind");
    // The new tree goes in; the old one, holding the mount point, stays beside the root,
    // and the report says so. The mount source's files survive.
    let report = snapconf_extract::hydrate_file(&f, &root, &Policy::default())
        .expect("the new tree is swapped in");
    let why = report
        .leftover
        .expect("the report names the old tree left behind");
    assert!(why.contains("mount point"), "{why}");
    drop(guard);
    let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    assert!(
        !table.contains(&*dir.path().to_string_lossy()),
        "the test leaves no mount behind"
    );
    assert_eq!(
        std::fs::read_to_string(src.join("precious")).expect("the mount source keeps its file"),
        "keep me"
    );
    // Clean up what the refused removal left beside the root.
    for e in std::fs::read_dir(dir.path()).expect("list").flatten() {
        if e.file_name().to_string_lossy().contains("snapconf") {
            let _ = std::fs::remove_dir_all(e.path());
            let _ = std::fs::remove_file(e.path());
        }
    }
}
