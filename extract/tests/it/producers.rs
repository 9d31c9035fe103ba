//! Archives written by real producers hydrate back to the tree they were made from: GNU tar
//! (gnu and pax formats), Python `tarfile` (GNU and PAX formats) and the `tar` crate's
//! `Builder`. The tree has the awkward parts of docs/cases.md: H1 (a hardlinked pair), H3
//! (absolute and relative symlinks), H6 (a 120-byte path, a 255-byte component, non-UTF-8
//! bytes, a newline), H7 (a 0555 directory with a child), an empty file and an executable.
//! A producer that is not installed is skipped with `common::skip` (a failure with
//! `SNAPCONF_REQUIRE_TOOLS=1`).

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::process::Command;

use common::skip::skip;
use common::{snapshot, Node};
use snapconf_extract::{hydrate, hydrate_file, Hardlinks, Modes, Policy};

fn make_tree(src: &Path) {
    let w = |p: &str, c: &[u8]| {
        let p = src.join(p);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, c).expect("write");
    };
    w("cache/mod.py", b"VALUE = 1\n");
    fs::create_dir_all(src.join("venv")).expect("mkdir");
    fs::hard_link(src.join("cache/mod.py"), src.join("venv/mod.py")).expect("link");
    fs::create_dir_all(src.join(".venv/bin")).expect("mkdir");
    symlink("/usr/local/bin/python", src.join(".venv/bin/python")).expect("symlink");
    symlink("python", src.join(".venv/bin/python3")).expect("symlink");
    w(
        &format!("{}/{}", "d".repeat(60), "p".repeat(59)),
        b"120-byte path",
    );
    w(&"c".repeat(255), b"255-byte component");
    fs::write(src.join(OsStr::from_bytes(b"bytes-\xff\xfe")), b"non-utf8").expect("write");
    fs::write(src.join("new\nline"), b"newline").expect("write");
    w("empty", b"");
    w("run.sh", b"#!/bin/sh\n");
    fs::set_permissions(src.join("run.sh"), fs::Permissions::from_mode(0o755)).expect("chmod");
    w("ro/foo", b"x");
    fs::set_permissions(src.join("ro"), fs::Permissions::from_mode(0o555)).expect("chmod");
}

fn policy() -> Policy {
    Policy {
        hardlinks: Hardlinks::Link,
        modes: Modes::Exact,
        ..Policy::default()
    }
}

/// Inode sharing is compared only when the producer keeps it (the `tar` crate does not).
fn forget_inodes(tree: &mut std::collections::BTreeMap<std::path::PathBuf, Node>) {
    for node in tree.values_mut() {
        if let Node::File { ino, .. } = node {
            *ino = 0;
        }
    }
}

fn check(name: &str, archive: &Path, src: &Path, dir: &Path, keeps_links: bool) {
    let mut want = snapshot(src, &[]);
    assert_eq!(want.len(), 17, "the source tree itself");
    for (i, streamed) in [false, true].into_iter().enumerate() {
        let root = dir.join(format!("root-{name}-{i}"));
        let f = fs::File::open(archive).expect("open");
        let r = if streamed {
            hydrate(f, &root, &policy())
        } else {
            hydrate_file(&f, &root, &policy())
        };
        r.unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut got = snapshot(&root, &[]);
        if !keeps_links {
            forget_inodes(&mut want);
            forget_inodes(&mut got);
        }
        assert_eq!(got, want, "{name} (streamed: {streamed})");
        // leave nothing behind, read-only directory included
        let empty = snapconf_extract::Policy {
            allow_empty: true,
            ..policy()
        };
        hydrate(&[0u8; 1024][..], &root, &empty).expect("empty");
        fs::remove_dir(&root).expect("rmdir");
    }
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn gnu_tar_archives_round_trip() {
    if !have("tar") {
        skip("GNU tar (`tar`) is not installed", "apt-get install tar");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    make_tree(&src);
    for format in ["gnu", "pax"] {
        let ar = dir.path().join(format!("{format}.tar"));
        let st = Command::new("tar")
            .args(["-cf"])
            .arg(&ar)
            .arg(format!("--format={format}"))
            .arg("-C")
            .arg(&src)
            .arg(".")
            .status()
            .expect("tar");
        assert!(st.success());
        check(&format!("gnu tar {format}"), &ar, &src, dir.path(), true);
    }
    fs::set_permissions(src.join("ro"), fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn python_tarfile_archives_round_trip() {
    if !have("python3") {
        skip("`python3` is not installed", "apt-get install python3");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    make_tree(&src);
    for format in ["GNU_FORMAT", "PAX_FORMAT"] {
        let ar = dir.path().join(format!("{format}.tar"));
        let script = format!(
            "import sys, tarfile\nwith tarfile.open(sys.argv[1], 'w', format=tarfile.{format}) as t: t.add(sys.argv[2], arcname='.')"
        );
        let st = Command::new("python3")
            .arg("-c")
            .arg(script)
            .arg(&ar)
            .arg(&src)
            .status()
            .expect("python3");
        assert!(st.success());
        check(&format!("python {format}"), &ar, &src, dir.path(), true);
    }
    fs::set_permissions(src.join("ro"), fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn tar_crate_archives_round_trip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    make_tree(&src);
    let ar = dir.path().join("tar-rs.tar");
    let mut b = tar::Builder::new(fs::File::create(&ar).expect("create"));
    b.follow_symlinks(false);
    b.append_dir_all(".", &src).expect("append_dir_all");
    b.into_inner().expect("finish");
    check("tar crate", &ar, &src, dir.path(), false);
    fs::set_permissions(src.join("ro"), fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn bsdtar_archives_round_trip() {
    if !have("bsdtar") {
        skip(
            "`bsdtar` is not installed",
            "apt-get install libarchive-tools",
        );
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    make_tree(&src);
    for format in ["pax", "gnutar"] {
        let ar = dir.path().join(format!("bsd-{format}.tar"));
        let st = Command::new("bsdtar")
            .stderr(std::process::Stdio::null()) // "can't translate pathname" for non-UTF-8
            .arg("-cf")
            .arg(&ar)
            .arg(format!("--format={format}"))
            .arg("-C")
            .arg(&src)
            .arg(".")
            .status()
            .expect("bsdtar");
        assert!(st.success());
        check(&format!("bsdtar {format}"), &ar, &src, dir.path(), true);
    }
    fs::set_permissions(src.join("ro"), fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn busybox_tar_archives_round_trip() {
    if Command::new("busybox")
        .arg("tar")
        .arg("--help")
        .output()
        .is_err()
    {
        skip("`busybox` is not installed", "apt-get install busybox");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    make_tree(&src);
    let ar = dir.path().join("busybox.tar");
    let st = Command::new("busybox")
        .arg("tar")
        .arg("-cf")
        .arg(&ar)
        .arg("-C")
        .arg(&src)
        .arg(".")
        .status()
        .expect("busybox");
    assert!(st.success());
    check("busybox tar", &ar, &src, dir.path(), true);
    fs::set_permissions(src.join("ro"), fs::Permissions::from_mode(0o755)).expect("chmod");
}
