//! Accepted archives come back exactly: names, kinds, contents, modes, links.

use crate::common;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use common::{jailed, Jail, Raw};
use snapconf_extract::{
    hydrate, hydrate_file, validate, AbsoluteSymlinks, Hardlinks, MemberKind, Modes, Policy,
};

fn mode(p: &Path) -> u32 {
    fs::symlink_metadata(p).expect("lstat").permissions().mode() & 0o7777
}

/// A plain archive into a root that does not exist yet: the root is created.
#[test]
fn new_root_is_created() {
    let jail = Jail::new();
    let ar = Raw::new()
        .dir("./")
        .dir("./d/")
        .file("./d/a", b"hello")
        .file("b", b"")
        .finish();
    let report =
        jailed(&jail, || hydrate(&ar[..], &jail.root(), &Policy::default())).expect("hydrate");
    assert_eq!(report.members, 4);
    assert_eq!(report.bytes, 5);
    let root = jail.root();
    assert_eq!(fs::read(root.join("d/a")).expect("read"), b"hello");
    assert_eq!(fs::read(root.join("b")).expect("read"), b"");
    assert_eq!(mode(&root), 0o755);
    assert_eq!(jail.inside().len(), 3);
}

/// A `.` member's modification time becomes the root's, into a new root and over a prior
/// one, as every other directory's does (the test headers all say 1,700,000,000); without a
/// `.` member the root's time is the hydration's.
#[test]
fn root_takes_the_dot_members_mtime() {
    let jail = Jail::new();
    let ar = Raw::new()
        .dir("./")
        .dir("./d/")
        .file("./d/a", b"hello")
        .finish();
    for round in ["new root", "over the prior"] {
        jailed(&jail, || hydrate(&ar[..], &jail.root(), &Policy::default())).expect("hydrate");
        let root = fs::symlink_metadata(jail.root()).expect("lstat");
        let d = fs::symlink_metadata(jail.root().join("d")).expect("lstat");
        assert_eq!(
            (root.mtime(), d.mtime()),
            (1_700_000_000, 1_700_000_000),
            "{round}"
        );
    }
    let bare = Raw::new().file("a", b"x").finish();
    jailed(&jail, || {
        hydrate(&bare[..], &jail.root(), &Policy::default())
    })
    .expect("hydrate");
    let root = fs::symlink_metadata(jail.root()).expect("lstat");
    assert!(
        root.mtime() > 1_700_000_000,
        "no `.` member: {}",
        root.mtime()
    );
}

/// Implicit parent directories are created with mode 0755.
#[test]
fn implicit_parents() {
    let jail = Jail::new();
    let ar = Raw::new().file("a/b/c/d", b"x").finish();
    jailed(&jail, || hydrate(&ar[..], &jail.root(), &Policy::default())).expect("hydrate");
    assert_eq!(mode(&jail.root().join("a/b")), 0o755);
    assert_eq!(fs::read(jail.root().join("a/b/c/d")).expect("read"), b"x");
}

/// H7: a 0555 directory with children; children first, then the mode.
#[test]
fn h7_read_only_dir_with_children() {
    let jail = Jail::new();
    let ar = Raw::new()
        .dir_mode("ro/", 0o555)
        .file("ro/foo", b"x")
        .finish();
    jailed(&jail, || hydrate(&ar[..], &jail.root(), &Policy::default())).expect("hydrate");
    assert_eq!(mode(&jail.root().join("ro")), 0o555);
    assert_eq!(fs::read(jail.root().join("ro/foo")).expect("read"), b"x");
    // and a second hydration over it removes the read-only tree
    let ar2 = Raw::new().file("new", b"y").finish();
    jailed(&jail, || {
        hydrate(&ar2[..], &jail.root(), &Policy::default())
    })
    .expect("hydrate");
    assert_eq!(jail.inside().len(), 1);
}

/// H8: a hardlink to a symlink comes back as a second symlink with the same target.
#[test]
fn h8_hardlink_to_symlink() {
    let jail = Jail::new();
    let ar = Raw::new().symlink("s", "foo").hardlink("s2", "s").finish();
    let policy = Policy {
        hardlinks: Hardlinks::Copy,
        ..Policy::default()
    };
    jailed(&jail, || hydrate(&ar[..], &jail.root(), &policy)).expect("hydrate");
    for n in ["s", "s2"] {
        assert_eq!(
            fs::read_link(jail.root().join(n)).expect("readlink"),
            Path::new("foo")
        );
    }
}

/// Modes: `Exact` keeps setuid; `DataFilter` clears it and group/other write.
#[test]
fn modes() {
    let jail = Jail::new();
    let ar = Raw::new()
        .file_mode("s", b"x", 0o4777)
        .dir_mode("d/", 0o1777)
        .finish();
    jailed(&jail, || hydrate(&ar[..], &jail.root(), &Policy::default())).expect("hydrate");
    assert_eq!(mode(&jail.root().join("s")), 0o755);
    assert_eq!(mode(&jail.root().join("d")), 0o755);
    let exact = Policy {
        modes: Modes::Exact,
        ..Policy::default()
    };
    jailed(&jail, || hydrate(&ar[..], &jail.root(), &exact)).expect("hydrate");
    assert_eq!(mode(&jail.root().join("s")), 0o4777);
    assert_eq!(mode(&jail.root().join("d")), 0o1777);
}

/// Hardlinks: `Copy` gives independent files, `Link` shares the inode.
#[test]
fn hardlinks_copy_and_link() {
    let jail = Jail::new();
    let ar = Raw::new()
        .file("a", b"data")
        .hardlink("b", "a")
        .hardlink("./c", "./b")
        .finish();
    let copy = Policy {
        hardlinks: Hardlinks::Copy,
        ..Policy::default()
    };
    jailed(&jail, || hydrate(&ar[..], &jail.root(), &copy)).expect("hydrate");
    let ino = |n: &str| fs::metadata(jail.root().join(n)).expect("stat").ino();
    assert_ne!(ino("a"), ino("b"));
    assert_eq!(fs::read(jail.root().join("c")).expect("read"), b"data");
    let link = Policy {
        hardlinks: Hardlinks::Link,
        ..Policy::default()
    };
    jailed(&jail, || hydrate(&ar[..], &jail.root(), &link)).expect("hydrate");
    assert_eq!(ino("a"), ino("b"));
    assert_eq!(ino("a"), ino("c"));
}

/// H12: `REG x`, `LNK x -> x` is a no-op; x keeps its data.
#[test]
fn h12_self_link_keeps_data() {
    let jail = Jail::new();
    let ar = Raw::new().file("x", b"abc").hardlink("x", "x").finish();
    for hardlinks in [Hardlinks::Copy, Hardlinks::Link] {
        let policy = Policy {
            hardlinks,
            ..Policy::default()
        };
        let report = jailed(&jail, || hydrate(&ar[..], &jail.root(), &policy)).expect("hydrate");
        assert_eq!(fs::read(jail.root().join("x")).expect("read"), b"abc");
        assert_eq!(report.dropped, vec![b"x".to_vec()]);
    }
}

/// Symlinks: absolute kept verbatim, rebased, dropped.
#[test]
fn absolute_symlinks() {
    let jail = Jail::new();
    let ar = Raw::new()
        .dir("a/")
        .symlink("a/l", "/orig/ws/b/c")
        .symlink("top", "/orig/ws")
        .finish();
    jailed(&jail, || hydrate(&ar[..], &jail.root(), &Policy::default())).expect("hydrate");
    assert_eq!(
        fs::read_link(jail.root().join("a/l")).expect("readlink"),
        Path::new("/orig/ws/b/c")
    );
    let rebase = Policy {
        absolute_symlinks: AbsoluteSymlinks::Rebase,
        original_root: Some(b"/orig/ws/".to_vec()),
        ..Policy::default()
    };
    jailed(&jail, || hydrate(&ar[..], &jail.root(), &rebase)).expect("hydrate");
    assert_eq!(
        fs::read_link(jail.root().join("a/l")).expect("readlink"),
        Path::new("../b/c")
    );
    assert_eq!(
        fs::read_link(jail.root().join("top")).expect("readlink"),
        Path::new(".")
    );
    let drop = Policy {
        absolute_symlinks: AbsoluteSymlinks::Drop,
        ..Policy::default()
    };
    let r = jailed(&jail, || hydrate(&ar[..], &jail.root(), &drop)).expect("hydrate");
    assert_eq!(r.dropped.len(), 2);
    assert!(!jail.root().join("a/l").exists());
}

/// Long names (GNU `L` and PAX `path`), non-UTF-8 bytes, a 255-byte component.
#[test]
fn long_and_odd_names() {
    let jail = Jail::new();
    let long = format!("{}/{}", "d".repeat(120), "f".repeat(255));
    let ar = Raw::new()
        .long_name(long.as_bytes())
        .file("ignored", b"gnu")
        .pax(&[("path", b"p\xff\xfe\nname")])
        .file("ignored2", b"pax")
        .finish();
    jailed(&jail, || hydrate(&ar[..], &jail.root(), &Policy::default())).expect("hydrate");
    assert_eq!(fs::read(jail.root().join(&long)).expect("read"), b"gnu");
    use std::os::unix::ffi::OsStrExt;
    let odd = std::ffi::OsStr::from_bytes(b"p\xff\xfe\nname");
    assert_eq!(fs::read(jail.root().join(odd)).expect("read"), b"pax");
    let listing = validate(&ar[..], &Policy::default()).expect("validate");
    assert_eq!(listing.members.len(), 2);
    assert_eq!(listing.members[0].name, long.as_bytes());
    assert_eq!(listing.members[1].kind, MemberKind::File);
}

/// `hydrate_file` reads a regular file in place and gives the same tree.
#[test]
fn hydrate_file_in_place() {
    let jail = Jail::new();
    let ar = Raw::new().file("a", b"1").symlink("l", "a").finish();
    let path = jail.path().join("ar.tar");
    fs::write(&path, &ar).expect("write");
    let f = fs::File::open(&path).expect("open");
    jailed(&jail, || hydrate_file(&f, &jail.root(), &Policy::default())).expect("hydrate");
    assert_eq!(fs::read(jail.root().join("l")).expect("read"), b"1");
}

/// An archive written by the `tar` crate's `Builder` (GNU format) round-trips.
#[test]
fn tar_crate_builder() {
    let jail = Jail::new();
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(3);
    h.set_mode(0o640);
    h.set_entry_type(tar::EntryType::Regular);
    b.append_data(&mut h, "x/".to_string() + &"y".repeat(150), &b"abc"[..])
        .expect("append");
    let ar = b.into_inner().expect("finish");
    jailed(&jail, || hydrate(&ar[..], &jail.root(), &Policy::default())).expect("hydrate");
    let p = jail.root().join("x").join("y".repeat(150));
    assert_eq!(fs::read(&p).expect("read"), b"abc");
    assert_eq!(mode(&p), 0o640);
}
