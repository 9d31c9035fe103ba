//! Hostile archives from docs/cases.md (H9-H14) and planted links, each hydrated in a jail with a
//! prior workspace inside `root/` and canaries and decoys in `out/` (and beside the root).
//! Every run asserts that nothing outside the root changed; every refusal asserts that the
//! prior workspace is byte-identical.

use crate::common;

use std::fs;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::Path;

use common::{jailed, reason, Jail, Raw};
use snapconf_extract::{
    hydrate, hydrate_file, AbsoluteSymlinks, Duplicates, EscapingSymlinks, Hardlinks, Policy,
};

/// The policies every attack is tried under: the default, and the most permissive one.
/// The default policy (hardlinks copied), one that refuses hardlinks (as the harness's
/// reference does under the default profile), and a permissive one.
fn policies() -> Vec<Policy> {
    vec![
        Policy::default(),
        Policy {
            hardlinks: Hardlinks::Reject,
            ..Policy::default()
        },
        Policy {
            hardlinks: Hardlinks::Link,
            absolute_symlinks: AbsoluteSymlinks::Keep,
            escaping_symlinks: EscapingSymlinks::Keep,
            duplicates: Duplicates::LastWins,
            ..Policy::default()
        },
    ]
}

fn jail_with_prior() -> Jail {
    let jail = Jail::new();
    jail.prior(&[
        ("keep", "prior"),
        ("foo/old", "prior foo"),
        ("link", "prior link"),
    ]);
    jail
}

fn out(jail: &Jail, rest: &str) -> String {
    format!("{}{rest}", jail.out().display())
}

/// H9, directory then symlink of the same name: `DIR foo/`, `SYM foo -> <out>`,
/// `REG foo/x`. An extractor caching "directories already created" writes `foo/x` through
/// the link into `<out>`. Refused (`duplicate` by default, `through-symlink` under
/// last-wins); `<out>` untouched.
#[test]
fn h9_dir_then_symlink_same_name() {
    for policy in policies() {
        let jail = jail_with_prior();
        let ar = Raw::new()
            .dir("foo/")
            .symlink("foo", &out(&jail, ""))
            .file("foo/x", b"1")
            .finish();
        let r = jailed(&jail, || hydrate(&ar[..], &jail.root(), &policy));
        let code = reason(&r).expect("refused");
        assert!(["duplicate", "through-symlink"].contains(&code), "{code}");
        assert!(!jail.out().join("x").exists());
    }
}

/// H10, symlink then file of the same name: `SYM link -> <out>/target`, `REG link (5)`.
/// An extractor that opens `link` for writing without `O_NOFOLLOW` overwrites the decoy.
/// Default: `duplicate`. Last-wins: `link` becomes a regular file; the decoy is untouched.
#[test]
fn h10_symlink_then_file_same_name() {
    for policy in policies() {
        let jail = jail_with_prior();
        let ar = Raw::new()
            .symlink("link", &out(&jail, "/target"))
            .file("link", b"owned")
            .finish();
        let r = jailed(&jail, || hydrate(&ar[..], &jail.root(), &policy));
        match policy.duplicates {
            Duplicates::Reject => assert_eq!(reason(&r), Some("duplicate")),
            Duplicates::LastWins => {
                r.expect("last-wins accepts");
                let m = fs::symlink_metadata(jail.root().join("link")).expect("lstat");
                assert!(m.file_type().is_file());
                assert_eq!(fs::read(jail.root().join("link")).expect("read"), b"owned");
            }
        }
    }
}

/// H11, traversal through a link: `SYM up -> ..`, `REG up/exploit/foo/bar`. Some extractors
/// create `exploit/foo` outside the root before failing. Refused (`through-symlink`), nothing
/// created outside, prior intact.
#[test]
fn h11_traversal_through_link() {
    for policy in policies() {
        let jail = jail_with_prior();
        let ar = Raw::new()
            .symlink("up", "..")
            .file("up/exploit/foo/bar", b"bad")
            .finish();
        let r = jailed(&jail, || hydrate(&ar[..], &jail.root(), &policy));
        assert_eq!(reason(&r), Some("through-symlink"));
        assert!(!jail.path().join("exploit").exists());
        assert!(!jail.out().join("exploit/foo").exists());
    }
}

/// H12, self link: `REG x (3)`, `LNK x -> x`. Extractors disagree (keep, error, truncate to
/// zero). Ours: the link is a no-op, `x` keeps its three bytes, under every policy that
/// allows hardlinks (`Hardlinks::Reject` refuses it and keeps the prior).
#[test]
fn h12_self_link() {
    for policy in policies() {
        let jail = jail_with_prior();
        let ar = Raw::new().file("x", b"abc").hardlink("x", "x").finish();
        let r = jailed(&jail, || hydrate(&ar[..], &jail.root(), &policy));
        if policy.hardlinks == Hardlinks::Reject {
            assert_eq!(reason(&r), Some("hardlink-not-allowed"));
            continue;
        }
        r.expect("accepted");
        assert_eq!(fs::read(jail.root().join("x")).expect("read"), b"abc");
        assert!(!jail.root().join("keep").exists(), "replace, not merge");
    }
}

/// H13, truncated snapshot: a prior workspace of ten files; an archive whose third member's
/// payload is cut in half. Backends that clear the workspace first lose everything. Refused
/// (`truncated`) through all three inputs (stream, regular file, pipe-like reader); the prior
/// is byte-identical.
#[test]
fn h13_truncated_snapshot() {
    let jail = Jail::new();
    let names: Vec<String> = (0..10).map(|i| format!("f{i}")).collect();
    let prior: Vec<(&str, &str)> = names
        .iter()
        .map(|n| (n.as_str(), "prior content"))
        .collect();
    jail.prior(&prior);
    let mut raw = Raw::new();
    for i in 0..5 {
        raw.file(&format!("new{i}"), &vec![b'n'; 3000]);
    }
    let full = raw.finish();
    // member 3 starts at 2 * (512 + 3072); its payload is 3000 bytes; cut in the middle
    let cut = &full[..2 * (512 + 3072) + 512 + 1500];
    for policy in policies() {
        let r = jailed(&jail, || hydrate(cut, &jail.root(), &policy));
        assert_eq!(reason(&r), Some("truncated"));
        let path = jail.path().join("cut.tar");
        fs::write(&path, cut).expect("write");
        let f = fs::File::open(&path).expect("open");
        let r = jailed(&jail, || hydrate_file(&f, &jail.root(), &policy));
        assert_eq!(reason(&r), Some("truncated"));
        fs::remove_file(&path).expect("rm");
        // a reader that hands out a few bytes at a time
        struct Trickle<'a>(&'a [u8]);
        impl std::io::Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = buf.len().min(self.0.len()).min(77);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let r = jailed(&jail, || hydrate(Trickle(cut), &jail.root(), &policy));
        assert_eq!(reason(&r), Some("truncated"));
    }
    assert_eq!(jail.inside().len(), 10);
}

/// H14, replace, not merge: prior `a "old"`, `b "old"`, `stale "x"`; the snapshot holds `a`
/// and `b` as a hardlinked pair with "new" (written by the `tar` crate's `Builder`). An
/// extractor that fails with "file exists" on the link must not leave a mix. After
/// hydration `a` and `b` read "new" (sharing an inode under `Link`, not under `Copy`) and
/// `stale` is gone.
#[test]
fn h14_replace_not_merge() {
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(3);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    b.append_data(&mut h, "a", &b"new"[..]).expect("append");
    let mut l = tar::Header::new_gnu();
    l.set_size(0);
    l.set_mode(0o644);
    l.set_entry_type(tar::EntryType::Link);
    b.append_link(&mut l, "b", "a").expect("link");
    let ar = b.into_inner().expect("finish");
    for (hardlinks, shared) in [(Hardlinks::Copy, false), (Hardlinks::Link, true)] {
        let jail = Jail::new();
        jail.prior(&[("a", "old"), ("b", "old"), ("stale", "x")]);
        let policy = Policy {
            hardlinks,
            ..Policy::default()
        };
        jailed(&jail, || hydrate(&ar[..], &jail.root(), &policy)).expect("hydrate");
        let root = jail.root();
        assert_eq!(fs::read(root.join("a")).expect("a"), b"new");
        assert_eq!(fs::read(root.join("b")).expect("b"), b"new");
        assert!(!root.join("stale").exists());
        let ino = |n: &str| fs::metadata(root.join(n)).expect("stat").ino();
        assert_eq!(ino("a") == ino("b"), shared);
        assert_eq!(jail.inside().len(), 2);
    }
}

/// Planted links in the prior workspace (`root/link -> <out>/target`, `root/foo -> <out>`)
/// must not redirect writes of members with those names: the tree is built in a fresh
/// staging directory, never by resolving paths in the live root.
#[test]
fn planted_links_in_prior_are_not_followed() {
    for policy in policies() {
        let jail = Jail::new();
        jail.prior(&[("keep", "prior")]);
        symlink(jail.out().join("target"), jail.root().join("link")).expect("symlink");
        symlink(jail.out(), jail.root().join("foo")).expect("symlink");
        let ar = Raw::new()
            .file("link", b"owned")
            .dir("foo/")
            .file("foo/x", b"owned")
            .finish();
        jailed(&jail, || hydrate(&ar[..], &jail.root(), &policy)).expect("hydrate");
        assert_eq!(fs::read(jail.root().join("foo/x")).expect("read"), b"owned");
        assert!(!jail.out().join("x").exists());
    }
}

/// The root itself is a symlink (to `<out>`): refused, not followed, `<out>` untouched.
#[test]
fn root_symlink_is_refused() {
    let jail = Jail::new();
    symlink(jail.out(), jail.root()).expect("symlink");
    let ar = Raw::new().file("x", b"1").finish();
    let r = jailed(&jail, || hydrate(&ar[..], &jail.root(), &Policy::default()));
    let e = r.expect_err("refused");
    assert!(e.to_string().contains("symlink"), "{e}");
    assert!(fs::symlink_metadata(jail.root())
        .expect("lstat")
        .file_type()
        .is_symlink());
}

/// A root whose parent is missing, and a root that is a file, are errors; nothing changes.
#[test]
fn bad_roots() {
    let jail = Jail::new();
    let ar = Raw::new().file("x", b"1").finish();
    let missing = jail.path().join("no/such/root");
    assert!(jailed(&jail, || hydrate(&ar[..], &missing, &Policy::default())).is_err());
    let file = jail.path().join("beside-root");
    assert!(jailed(&jail, || hydrate(&ar[..], &file, &Policy::default())).is_err());
    assert!(hydrate(&ar[..], Path::new("/"), &Policy::default()).is_err());
}

/// Symlinks that escape are kept verbatim under `Keep` (never followed during hydration) and
/// a later member cannot write through them.
#[test]
fn kept_escaping_links_are_never_followed() {
    let jail = jail_with_prior();
    let ar = Raw::new()
        .symlink("esc", "../out")
        .symlink("abs", &out(&jail, "/target"))
        .file("after", b"x")
        .finish();
    let policy = policies().remove(1);
    jailed(&jail, || hydrate(&ar[..], &jail.root(), &policy)).expect("hydrate");
    assert_eq!(
        fs::read_link(jail.root().join("esc")).expect("readlink"),
        Path::new("../out")
    );
}
