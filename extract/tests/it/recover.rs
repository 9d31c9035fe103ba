//! `recover` (and the next `hydrate`) resolve what a killed hydration left beside the root,
//! before and after the exchange, and never delete a name that is not ours; journals left by
//! earlier versions are unlinked unread.

use crate::common;

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

/// A partial staging tree (with a read-only directory inside; killed before the exchange):
/// rolled back, root untouched, nothing behind the tree's symlink touched.
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

/// Killed after the exchange: the staging name holds the old tree; it is deleted, root (the
/// new tree) kept.
#[test]
fn swapped_is_finished() {
    let jail = Jail::new();
    jail.prior(&[("new", "new tree")]);
    let stage = jail.path().join(stage_name());
    fs::create_dir_all(stage.join("old")).expect("mkdir");
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

/// A journal of an earlier version is unlinked unread, whatever it names: nothing else is
/// touched.
#[test]
fn legacy_journals_delete_nothing_else() {
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

/// A leftover journal of any content is unlinked; a directory at the journal's name was
/// never ours and is left alone; the root is untouched either way.
#[test]
fn leftover_journals_are_unlinked_unread() {
    let jail = Jail::new();
    jail.prior(&[("a", "prior")]);
    let before = jail.inside();
    let journal = jail.path().join(".root.snapconf-journal");
    fs::write(&journal, "garbage").expect("write");
    recover(&jail.root()).expect("recover");
    assert!(!journal.exists());
    fs::create_dir(&journal).expect("mkdir");
    fs::write(journal.join("keep"), "k").expect("write");
    recover(&jail.root()).expect("recover");
    assert_eq!(fs::read(journal.join("keep")).expect("kept"), b"k");
    assert_eq!(jail.inside(), before);
    fs::remove_dir_all(&journal).expect("rm");
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

/// FIFOs at the journal names (an earlier version's, or planted) are unlinked, never
/// opened: neither `recover` nor `hydrate` blocks on them.
#[test]
fn fifos_at_journal_names_never_block() {
    let jail = Jail::new();
    jail.prior(&[("a", "prior")]);
    let names = [
        jail.path().join(".root.snapconf-journal"),
        jail.path().join(".root.snapconf-journal.tmp"),
    ];
    let mkfifo = |p: &std::path::Path| {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            p,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo")
    };
    names.iter().for_each(|p| mkfifo(p));
    let root = jail.root();
    within_deadline("recover", move || recover(&root)).expect("recover");
    assert!(names.iter().all(|p| !p.exists()));
    names.iter().for_each(|p| mkfifo(p));
    let (root, ar) = (jail.root(), Raw::new().file("b", b"new").finish());
    within_deadline("hydrate", move || {
        hydrate(&ar[..], &root, &Policy::default())
    })
    .expect("hydrate");
    assert_eq!(fs::read(jail.root().join("b")).expect("read"), b"new");
    assert!(names.iter().all(|p| !p.exists()));
}

/// `recover` names what it did: the staging directory it removed, the journal it unlinked,
/// and a staging directory whose lock a live hydration holds (here: this test), kept.
#[test]
fn recovery_names_what_was_removed_and_what_was_live() {
    use rustix::fs::{flock, FlockOperation};
    let jail = Jail::new();
    jail.prior(&[("a", "prior")]);
    fs::create_dir(jail.path().join(stage_name())).expect("dead staging");
    journal(&jail, "staged", &stage_name());
    let live = ".root.snapconf-stage-fedcba9876543210";
    fs::create_dir(jail.path().join(live)).expect("live staging");
    let held = fs::File::open(jail.path().join(live)).expect("open");
    flock(&held, FlockOperation::LockExclusive).expect("flock");
    let done = recover(&jail.root()).expect("recover");
    assert_eq!(done.removed, [stage_name().as_str()]);
    assert_eq!(done.journals, [".root.snapconf-journal"]);
    assert_eq!(done.live, [live]);
    assert!(jail.path().join(live).exists());
    drop(held);
    let done = recover(&jail.root()).expect("recover");
    assert_eq!(done.removed, [live]);
    assert!(recover(&jail.root()).expect("recover").is_empty());
}
