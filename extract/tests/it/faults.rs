//! Filesystem faults during the write pass leave the prior workspace byte-identical:
//! `EFBIG` under `RLIMIT_FSIZE`, and `ENOSPC` on a full small tmpfs.
//!
//! The `RLIMIT_FSIZE` case runs in a child (the helper binary
//! `snapconf-extract-test-child fault MODE ARCHIVE ROOT`, [`common::TEST_CHILD`]) started
//! through `sh -c 'trap "" XFSZ; exec ...'`: an ignored signal stays ignored across `exec`,
//! so the kernel's `SIGXFSZ` does not kill the child and the write fails with `EFBIG`
//! instead. The child sets the limit itself with `setrlimit` and exits 0 only if the
//! hydration failed with an I/O error.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::skip::skip;
use common::{snapshot, Raw};
use snapconf_extract::{hydrate, hydrate_file, Policy};
use snapconf_tarbytes::Rng;

/// 1 MiB of bytes that do not compress (so that a compressed archive of them stays under
/// the compression-ratio limit).
fn big() -> Vec<u8> {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    (0..1 << 20).map(|_| rng.next_u64() as u8).collect()
}

/// Small prior workspace plus a 1 MiB file in the new archive.
fn archives() -> (Vec<u8>, Vec<u8>) {
    let mut prior = Raw::new();
    for i in 0..20 {
        prior.file(&format!("p/f{i}"), format!("prior {i}\n").as_bytes());
    }
    let mut new = Raw::new();
    new.file("small", b"fits");
    new.file("big", &big());
    new.file("after", b"after");
    (prior.finish(), new.finish())
}

fn leftovers(parent: &Path) -> Vec<PathBuf> {
    fs::read_dir(parent)
        .expect("read_dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("snapconf"))
        .collect()
}

/// `RLIMIT_FSIZE`: the 1 MiB member fails with `EFBIG` in the staging tree (written by the
/// write pass of `hydrate_file` of a plain file, by the validation pass itself for
/// `hydrate` and for `hydrate_file` of a zstd file); the prior is byte-identical and nothing
/// is left beside the root.
#[test]
fn efbig_leaves_prior_intact() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (prior, new) = archives();
    let plain = dir.path().join("new.tar");
    fs::write(&plain, &new).expect("write");
    let packed = dir.path().join("new.tar.zst");
    fs::write(&packed, common::zstd(&new)).expect("write");
    let root = dir.path().join("root");
    hydrate(&prior[..], &root, &Policy::default()).expect("prior");
    let before = snapshot(&root, &[]);
    for mode in ["file", "stream", "zstd"] {
        let archive = if mode == "zstd" { &packed } else { &plain };
        let out = Command::new("sh")
            .arg("-c")
            .arg("trap '' XFSZ; exec \"$0\" \"$@\"")
            .arg(common::TEST_CHILD)
            .args(["fault", mode])
            .arg(archive)
            .arg(&root)
            .output()
            .expect("spawn");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "child ({mode}) failed: {stderr}");
        assert!(stderr.contains("File too large"), "{mode}: {stderr}");
        assert_eq!(snapshot(&root, &[]), before, "{mode}: prior changed");
        assert!(
            leftovers(dir.path()).is_empty(),
            "{mode}: {:?}",
            leftovers(dir.path())
        );
    }
}

/// A tmpfs mount that is unmounted on drop (also when the test panics).
struct Mount(PathBuf);
impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// `ENOSPC`: root on a 1 MiB tmpfs holding a prior workspace; the new tree does not fit.
/// Skipped (with a message) where tmpfs cannot be mounted.
#[test]
fn enospc_leaves_prior_intact() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mnt = dir.path().join("mnt");
    fs::create_dir(&mnt).expect("mkdir");
    let status = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "snapconf-test"])
        .arg(&mnt)
        .stderr(std::process::Stdio::null())
        .status();
    if !matches!(status, Ok(s) if s.success()) {
        skip(
            "cannot mount a tmpfs (needs root or CAP_SYS_ADMIN)",
            "run the tests as root",
        );
        return;
    }
    let _guard = Mount(mnt.clone());
    let (prior, new) = archives();
    let root = mnt.join("root");
    hydrate(&prior[..], &root, &Policy::default()).expect("prior");
    let before = snapshot(&root, &[]);
    // Fill most of the rest so the 1 MiB member cannot fit.
    fs::write(mnt.join("ballast"), vec![0u8; 300 << 10]).expect("ballast");
    let r = hydrate(&new[..], &root, &Policy::default());
    let e = r.expect_err("must not fit");
    assert!(e.to_string().contains("No space left"), "{e}");
    assert_eq!(snapshot(&root, &[]), before);
    assert!(leftovers(&mnt).is_empty(), "{:?}", leftovers(&mnt));
    let f = {
        let p = dir.path().join("new.tar");
        fs::write(&p, &new).expect("write");
        fs::File::open(&p).expect("open")
    };
    assert!(hydrate_file(&f, &root, &Policy::default()).is_err());
    assert_eq!(snapshot(&root, &[]), before);
    assert!(leftovers(&mnt).is_empty());
    // The single pass with its decoding thread: the same I/O error.
    let p = dir.path().join("new.tar.zst");
    fs::write(&p, common::zstd(&new)).expect("write");
    let e = hydrate_file(
        &fs::File::open(&p).expect("open"),
        &root,
        &Policy::default(),
    )
    .expect_err("must not fit");
    assert!(e.to_string().contains("No space left"), "{e}");
    assert_eq!(snapshot(&root, &[]), before);
    assert!(leftovers(&mnt).is_empty(), "{:?}", leftovers(&mnt));
    // A refusal after the fault wins: the verdict stays `validate`'s.
    let mut bad = Raw::new();
    bad.file("big", &big()).file("../late", b"x");
    let bad = bad.finish();
    let e = hydrate(&bad[..], &root, &Policy::default()).expect_err("refused");
    assert_eq!(
        e.reason().map(|r| r.as_str()),
        Some("parent-traversal"),
        "{e}"
    );
    assert_eq!(snapshot(&root, &[]), before);
    assert!(leftovers(&mnt).is_empty(), "{:?}", leftovers(&mnt));
}

/// No inode left for the staging directory itself (a tmpfs with 64 inodes, filled): the
/// stream paths give a refusal of the archive if it has one (read through all the same),
/// else the I/O error; the prior is intact and nothing is left. Skipped where tmpfs cannot
/// be mounted.
#[test]
fn no_room_for_the_staging_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mnt = dir.path().join("mnt");
    fs::create_dir(&mnt).expect("mkdir");
    let status = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m,nr_inodes=64", "snapconf-test"])
        .arg(&mnt)
        .stderr(std::process::Stdio::null())
        .status();
    if !matches!(status, Ok(s) if s.success()) {
        skip(
            "cannot mount a tmpfs (needs root or CAP_SYS_ADMIN)",
            "run the tests as root",
        );
        return;
    }
    let _guard = Mount(mnt.clone());
    let root = mnt.join("root");
    hydrate(
        &Raw::new().file("prior", b"prior").finish()[..],
        &root,
        &Policy::default(),
    )
    .expect("prior");
    let mut n = 0;
    while fs::write(mnt.join(format!("fill{n}")), b"").is_ok() {
        n += 1;
        assert!(n < 1000, "the inode limit holds");
    }
    let before = snapshot(&root, &[]);
    let good = Raw::new().file("new", b"new").finish();
    let bad = Raw::new().file("new", b"new").file("/abs", b"x").finish();
    let packed = dir.path().join("bad.tar.zst");
    fs::write(&packed, common::zstd(&bad)).expect("write");
    let e = hydrate(&good[..], &root, &Policy::default()).expect_err("no inode");
    assert!(e.reason().is_none(), "an I/O error: {e}");
    for r in [
        hydrate(&bad[..], &root, &Policy::default()),
        hydrate_file(
            &fs::File::open(&packed).expect("open"),
            &root,
            &Policy::default(),
        ),
    ] {
        assert_eq!(common::reason(&r), Some("absolute-path"), "{r:?}");
    }
    assert_eq!(snapshot(&root, &[]), before);
    assert!(leftovers(&mnt).is_empty(), "{:?}", leftovers(&mnt));
}

/// A root that is a mount point cannot be exchanged (`EBUSY`): an I/O error, the prior
/// workspace intact, nothing left beside it. Skipped where tmpfs cannot be mounted.
#[test]
fn mount_point_root_is_an_error_not_a_half_swap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    fs::create_dir(&root).expect("mkdir");
    let status = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "snapconf-test"])
        .arg(&root)
        .stderr(std::process::Stdio::null())
        .status();
    if !matches!(status, Ok(s) if s.success()) {
        skip(
            "cannot mount a tmpfs (needs root or CAP_SYS_ADMIN)",
            "run the tests as root",
        );
        return;
    }
    let _guard = Mount(root.clone());
    fs::write(root.join("prior"), b"prior").expect("write");
    let before = snapshot(&root, &[]);
    let (_, new) = archives();
    let e = hydrate(&new[..], &root, &Policy::default()).expect_err("cannot swap a mount point");
    assert!(e.reason().is_none(), "{e}");
    assert_eq!(snapshot(&root, &[]), before);
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}
