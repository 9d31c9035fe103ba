//! `recover` (and the next `hydrate`) resolve what a killed hydration left beside the root,
//! for each state the journal can describe, and never delete a name that is not ours.

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use common::{snapshot, Jail, Raw};
use snapconf_extract::{hydrate, recover, Policy};

const HEX: &str = "0123456789abcdef";

fn journal(jail: &Jail, phase: &str, stage: &str) {
    fs::write(
        jail.path().join(".root.snapconf-journal"),
        format!("snapconf-journal 1\nphase={phase}\nstage={stage}\n"),
    )
    .expect("journal");
}

fn stage_name() -> String {
    format!(".root.snapconf-stage-{HEX}")
}

/// A partial staging tree (with a read-only directory inside) and a `staged` journal: rolled
/// back, root untouched.
#[test]
fn staged_is_rolled_back() {
    let jail = Jail::new();
    jail.prior(&[("a", "prior")]);
    let before = jail.inside();
    let stage = jail.path().join(stage_name());
    fs::create_dir_all(stage.join("ro/sub")).expect("mkdir");
    fs::write(stage.join("ro/sub/f"), "partial").expect("write");
    std::os::unix::fs::symlink(jail.out(), stage.join("ro/link-out")).expect("symlink");
    fs::set_permissions(stage.join("ro"), fs::Permissions::from_mode(0o555)).expect("chmod");
    journal(&jail, "staged", &stage_name());
    let outside_before = snapshot(&jail.out(), &[]);
    recover(&jail.root()).expect("recover");
    assert_eq!(jail.inside(), before);
    assert!(!stage.exists());
    assert!(!jail.path().join(".root.snapconf-journal").exists());
    assert_eq!(
        snapshot(&jail.out(), &[]),
        outside_before,
        "removal followed a symlink"
    );
}

/// `swapped`: the staging name holds the old tree; it is deleted, root (the new tree) kept.
#[test]
fn swapped_is_finished() {
    let jail = Jail::new();
    jail.prior(&[("new", "new tree")]);
    let stage = jail.path().join(stage_name());
    fs::create_dir_all(stage.join("old")).expect("mkdir");
    journal(&jail, "swapped", &stage_name());
    recover(&jail.root()).expect("recover");
    assert_eq!(
        fs::read(jail.root().join("new")).expect("read"),
        b"new tree"
    );
    assert!(!stage.exists());
}

/// A stray staging directory without a journal, a leftover journal temp file: removed.
#[test]
fn strays_are_removed() {
    let jail = Jail::new();
    jail.prior(&[("a", "prior")]);
    fs::create_dir(jail.path().join(stage_name())).expect("mkdir");
    fs::write(
        jail.path().join(".root.snapconf-journal.tmp"),
        "snapconf-jou",
    )
    .expect("tmp");
    recover(&jail.root()).expect("recover");
    let names: Vec<_> = fs::read_dir(jail.path())
        .expect("ls")
        .map(|e| e.expect("e").file_name())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.to_string_lossy().contains("snapconf")),
        "{names:?}"
    );
}

/// A journal naming anything but a staging name of this root is never acted on.
#[test]
fn tampered_journal_deletes_nothing() {
    let jail = Jail::new();
    jail.prior(&[("a", "prior")]);
    for stage in [
        "out",
        "../out",
        "root",
        ".other.snapconf-stage-0123456789abcdef",
        ".root.snapconf-stage-XYZ",
    ] {
        journal(&jail, "staged", stage);
        let before = snapshot(jail.path(), &[".root.snapconf-journal"]);
        recover(&jail.root()).expect("recover");
        assert_eq!(
            snapshot(jail.path(), &[]),
            before,
            "journal naming `{stage}`"
        );
    }
}

/// An unreadable journal is an error and is left for a human; root untouched.
#[test]
fn unreadable_journal_is_an_error() {
    let jail = Jail::new();
    jail.prior(&[("a", "prior")]);
    fs::write(jail.path().join(".root.snapconf-journal"), "garbage").expect("write");
    assert!(recover(&jail.root()).is_err());
    assert!(jail.path().join(".root.snapconf-journal").exists());
    fs::remove_file(jail.path().join(".root.snapconf-journal")).expect("rm");
}

/// The next `hydrate` recovers first, then hydrates.
#[test]
fn hydrate_recovers_first() {
    let jail = Jail::new();
    jail.prior(&[("a", "prior")]);
    fs::create_dir(jail.path().join(stage_name())).expect("mkdir");
    journal(&jail, "staged", &stage_name());
    let ar = Raw::new().file("b", b"new").finish();
    hydrate(&ar[..], &jail.root(), &Policy::default()).expect("hydrate");
    assert_eq!(fs::read(jail.root().join("b")).expect("read"), b"new");
    assert!(!jail.path().join(stage_name()).exists());
    assert!(!jail.path().join(".root.snapconf-journal").exists());
}

/// A hydration whose archive is refused still resolves what a crash left first (found by a
/// hostile-input review: leftovers stayed until a hydration succeeded), from a stream and
/// from a file.
#[test]
fn refused_hydrate_still_recovers_first() {
    for from_file in [false, true] {
        let jail = Jail::new();
        jail.prior(&[("a", "prior")]);
        fs::create_dir(jail.path().join(stage_name())).expect("mkdir");
        journal(&jail, "staged", &stage_name());
        let ar = Raw::new().file("/abs", b"x").finish();
        let err = if from_file {
            let path = jail.path().join("ar.tar");
            fs::write(&path, &ar).expect("write");
            let f = fs::File::open(&path).expect("open");
            let e = snapconf_extract::hydrate_file(&f, &jail.root(), &Policy::default());
            fs::remove_file(&path).expect("remove");
            e.expect_err("absolute name refused")
        } else {
            hydrate(&ar[..], &jail.root(), &Policy::default()).expect_err("absolute name refused")
        };
        assert!(err.reason().is_some(), "{err}");
        assert!(
            !jail.path().join(stage_name()).exists(),
            "from_file={from_file}"
        );
        assert!(!jail.path().join(".root.snapconf-journal").exists());
        assert_eq!(fs::read(jail.root().join("a")).expect("read"), b"prior");
    }
}

/// Nothing to do is success, also for a root that does not exist.
#[test]
fn nothing_to_do() {
    let jail = Jail::new();
    recover(&jail.root()).expect("absent root");
    jail.prior(&[("a", "prior")]);
    recover(&jail.root()).expect("clean root");
}

/// Runs `f` in a thread and fails the test if it has not returned within 20 s (a FIFO open
/// would block forever).
fn within_deadline<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what} blocked"))
}

/// A FIFO at the journal's name is an unreadable journal (an error, left for a human), not
/// a `recover` or `hydrate` that blocks on opening it; one at the temporary name is removed
/// like a stale temporary file, and the hydration goes on.
#[test]
fn fifos_at_journal_names_never_block() {
    let jail = Jail::new();
    jail.prior(&[("a", "prior")]);
    let fifo = jail.path().join(".root.snapconf-journal");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .expect("mkfifo");
    let root = jail.root();
    let e = within_deadline("recover", move || recover(&root)).expect_err("an error");
    assert!(e.to_string().contains("not a regular file"), "{e}");
    let (root, ar) = (jail.root(), Raw::new().file("b", b"new").finish());
    let got = within_deadline("hydrate", move || {
        hydrate(&ar[..], &root, &Policy::default())
    });
    assert!(got.is_err(), "hydrate stops at the FIFO journal");
    assert_eq!(
        fs::read(jail.root().join("a")).expect("prior kept"),
        b"prior"
    );
    fs::remove_file(&fifo).expect("rm fifo");

    let tmp = jail.path().join(".root.snapconf-journal.tmp");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &tmp,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .expect("mkfifo");
    let (root, ar) = (jail.root(), Raw::new().file("b", b"new").finish());
    within_deadline("hydrate", move || {
        hydrate(&ar[..], &root, &Policy::default())
    })
    .expect("hydrate");
    assert_eq!(fs::read(jail.root().join("b")).expect("read"), b"new");
    assert!(!tmp.exists() && !fifo.exists());
}
