//! Unit tests of the snapshot walk: digest and listing reuse never hide a change.

use super::*;
use crate::jail::default_jail_base;
use snapconf_extract::dirs::open_dir;

/// Digests kept between snapshots never hide a write: a decoy rewritten with other
/// bytes of the same length is a change, a second name for it is not.
#[test]
fn decoy_writes_are_seen_through_the_digest_cache() {
    let mut jail = Jail::new(None).expect("jail");
    let target = jail.path().join("out/target");
    let first = jail.snapshot().expect("snapshot");
    let second = jail.snapshot().expect("snapshot");
    assert!(first.changes(&second, &[]).is_empty());
    let link = jail.fresh_dir("h").expect("h").join("link");
    std::fs::hard_link(&target, &link).expect("link");
    let linked = jail.snapshot().expect("snapshot");
    assert!(
        second.changes(&linked, &[b"h-1"]).is_empty(),
        "a new name only"
    );
    let len = std::fs::read(&target).expect("read").len();
    std::fs::write(&target, vec![b'#'; len]).expect("write");
    let written = jail.snapshot().expect("snapshot");
    let changes = linked.changes(&written, &[b"h-1"]);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert!(changes[0].starts_with("changed out/target"), "{changes:?}");
}

/// Snapshots taken in quick succession see every entry change: a rename inside a
/// directory (same number of entries), and a directory removed and made again at the
/// same path with other contents, each right after a snapshot, are seen every time.
#[test]
fn entry_changes_are_seen_by_every_snapshot() {
    // On `/dev/shm` where there is one: tmpfs, where timestamps alone would miss some.
    let jail = Jail::new(default_jail_base().as_deref()).expect("jail");
    let d = jail.src().join("d");
    std::fs::create_dir_all(d.join("sub")).expect("mkdir");
    std::fs::write(d.join("f-0"), "x").expect("write");
    let mut last = jail.snapshot().expect("snapshot");
    for i in 1..200 {
        std::fs::rename(d.join(format!("f-{}", i - 1)), d.join(format!("f-{i}"))).expect("rename");
        let now = jail.snapshot().expect("snapshot");
        let changes = last.changes(&now, &[]);
        assert!(
            changes
                .iter()
                .any(|c| c.starts_with(&format!("new src/d/f-{i} "))),
            "round {i}: {changes:?}"
        );
        std::fs::remove_dir_all(d.join("sub")).expect("rmdir");
        std::fs::create_dir(d.join("sub")).expect("mkdir");
        std::fs::write(d.join("sub").join(format!("g-{i}")), "y").expect("write");
        let again = jail.snapshot().expect("snapshot");
        let changes = now.changes(&again, &[]);
        assert!(
            changes
                .iter()
                .any(|c| c.starts_with(&format!("new src/d/sub/g-{i} "))),
            "round {i}: {changes:?}"
        );
        last = again;
    }
}

/// What snapshots keep (directory names, symlink targets, decoy digests) never hides
/// a change: every kind of change, made at every offset into the clock tick after a
/// snapshot that used kept names, is seen by the next snapshot. On `/dev/shm` where
/// there is one (tmpfs, where snapshots keep); elsewhere it checks plain walks.
#[test]
fn kept_listings_never_hide_a_change() {
    let jail = Jail::new(default_jail_base().as_deref()).expect("jail");
    let deep = jail.src().join("a/b/c");
    std::fs::create_dir_all(deep.join("sub")).expect("mkdir");
    std::fs::write(deep.join("f"), "x").expect("write");
    std::os::unix::fs::symlink("target-1", deep.join("l")).expect("symlink");
    let decoy_dir = jail.path().join("out/decoy");
    let mut last = jail.snapshot().expect("snapshot");
    let mut kept = 0;
    let mut moved = "f".to_string();
    for i in 0..240u32 {
        // Let the last change settle (or not), then snapshot, so kept names are used.
        std::thread::sleep(std::time::Duration::from_micros(u64::from(i % 12) * 500));
        let before = jail.snapshot().expect("snapshot");
        assert!(last.changes(&before, &[]).is_empty(), "round {i}");
        kept += jail.memo.lock().expect("memo").listings.len();
        std::thread::sleep(std::time::Duration::from_micros(u64::from(i % 5) * 300));
        let (what, want) = match i % 8 {
            0 => {
                std::fs::write(deep.join(format!("n-{i}")), "y").expect("write");
                ("create", format!("new src/a/b/c/n-{i} "))
            }
            1 => {
                std::fs::remove_file(deep.join(format!("n-{}", i - 1))).expect("unlink");
                ("unlink", format!("removed src/a/b/c/n-{} ", i - 1))
            }
            2 => {
                std::fs::remove_dir(deep.join("sub")).expect("rmdir");
                ("rmdir", "removed src/a/b/c/sub ".to_string())
            }
            3 => {
                std::fs::create_dir(deep.join("sub")).expect("mkdir");
                ("mkdir", "new src/a/b/c/sub ".to_string())
            }
            4 => {
                let to = format!("f-{i}");
                std::fs::rename(deep.join(&moved), deep.join(&to)).expect("rename");
                moved = to;
                ("rename", format!("new src/a/b/c/{moved} "))
            }
            5 => {
                std::fs::remove_file(deep.join("l")).expect("unlink");
                std::os::unix::fs::symlink(format!("target-{}", i % 10), deep.join("l"))
                    .expect("symlink");
                ("replace a symlink", "changed src/a/b/c/l ".to_string())
            }
            6 => {
                std::fs::write(decoy_dir.join(format!("d-{i}")), "w").expect("write");
                ("create a decoy", format!("new out/decoy/d-{i} "))
            }
            _ => {
                std::fs::remove_file(decoy_dir.join(format!("d-{}", i - 1))).expect("rm");
                ("remove a decoy", format!("removed out/decoy/d-{} ", i - 1))
            }
        };
        let after = jail.snapshot().expect("snapshot");
        let changes = before.changes(&after, &[]);
        assert!(
            changes.iter().any(|c| c.starts_with(&want)),
            "round {i} ({what}): want `{want}` in {changes:?}"
        );
        last = after;
    }
    if jail.keeps {
        assert!(kept > 0, "snapshots on tmpfs kept no listing");
    }
}

/// A deep tree outside the roots, whose paths pass `PATH_MAX`, is walked the same with
/// kept listings as without.
#[test]
fn kept_listings_reach_trees_deeper_than_path_max() {
    let jail = Jail::new(default_jail_base().as_deref()).expect("jail");
    // `create_dir_all` resolves the whole path; build it one level at a time instead.
    let mut dir = std::fs::File::open(jail.path()).expect("open");
    for name in std::iter::once("escaped".to_string()).chain((0..25).map(|_| "d".repeat(200))) {
        rustix::fs::mkdirat(&dir, name.as_str(), Mode::from_raw_mode(0o755)).expect("mkdir");
        dir = std::fs::File::from(open_dir(&dir, name.as_str()).expect("open"));
    }
    rustix::fs::symlinkat("t", &dir, "l").expect("symlink");
    let first = jail.snapshot().expect("first snapshot");
    std::thread::sleep(std::time::Duration::from_millis(30));
    let second = jail.snapshot().expect("second snapshot (names kept)");
    let third = jail.snapshot().expect("third snapshot (names used)");
    assert!(jail.memo.lock().expect("memo").listings.len() > 20 || !jail.keeps);
    assert_eq!(first, second);
    assert_eq!(second, third);
    assert!(third.0.keys().any(|k| k.len() > 5000 && k.ends_with(b"/l")));
}

/// The non-root path: directories of mode `0000`, `0100` and `0300` are widened to be
/// walked and given their mode back; snapshots record the real modes, see no change of
/// their own making however often they are taken, and still see every other change
/// (inside a widened directory, and a chmod of one).
#[test]
fn widened_directories_are_walked_and_never_seen_as_changed() {
    let jail = Jail::new(default_jail_base().as_deref()).expect("jail");
    let src = jail.src();
    std::fs::create_dir_all(src.join("a/b/c")).expect("mkdir");
    std::fs::write(src.join("a/b/c/f"), "x").expect("write");
    std::fs::create_dir(src.join("ro")).expect("mkdir");
    let chmod = |p: &str, m: u32| {
        rustix::fs::chmod(src.join(p), Mode::from_raw_mode(m)).expect("chmod");
    };
    chmod("a/b/c", 0o300);
    chmod("a/b", 0o100);
    chmod("a", 0o000);
    chmod("ro", 0o555);
    let mode_of = |p: &str| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::symlink_metadata(src.join(p))
            .expect("stat")
            .permissions()
            .mode()
            & 0o7777
    };
    let user = || {
        jail.walk_with(b"", false, false)
            .expect("snapshot as a user")
    };
    let first = user();
    let modes: Vec<u32> = ["src/a", "src/a/b", "src/a/b/c", "src/ro"]
        .iter()
        .map(|k| first.0[k.as_bytes()].mode)
        .collect();
    assert_eq!(modes, [0o000, 0o100, 0o300, 0o555]);
    assert!(first.0.contains_key(b"src/a/b/c/f".as_slice()));
    assert_eq!(
        ["a", "a/b", "a/b/c"].map(mode_of),
        [0o000, 0o100, 0o300],
        "modes given back"
    );
    let mut last = first;
    for round in 0..5 {
        std::thread::sleep(std::time::Duration::from_millis(5));
        let now = user();
        assert!(last.changes(&now, &[]).is_empty(), "round {round}");
        assert_eq!(jail.snapshot().expect("snapshot as root"), now);
        last = now;
    }
    // Changes made by someone else are seen, inside and of a widened directory.
    std::thread::sleep(std::time::Duration::from_millis(5));
    std::fs::write(src.join("a/b/c/f"), "y").expect("write as root");
    chmod("a/b", 0o700);
    chmod("a/b", 0o100);
    let after = user();
    let changes = last.changes(&after, &[]);
    assert!(
        changes
            .iter()
            .any(|c| c.starts_with("changed src/a/b/c/f ")),
        "{changes:?}"
    );
    assert!(
        changes.iter().any(|c| c.starts_with("changed src/a/b ")),
        "{changes:?}"
    );
    assert!(
        !changes.iter().any(|c| c.starts_with("changed src/a ")),
        "{changes:?}"
    );
    for p in ["a", "a/b", "a/b/c"] {
        chmod(p, 0o755);
    }
}

/// `snapshot_outside(src)` keeps `src`'s node and nothing under it, and agrees with a
/// full snapshot everywhere else.
#[test]
fn snapshot_outside_a_root_leaves_out_only_its_contents() {
    let mut jail = Jail::new(None).expect("jail");
    std::fs::create_dir_all(jail.src().join("a/b")).expect("mkdir");
    std::fs::write(jail.src().join("a/f"), "x").expect("write");
    let h = jail.fresh_dir("h").expect("h");
    std::fs::write(h.join("g"), "y").expect("write");
    let outside = jail.snapshot_outside(&jail.src()).expect("snapshot");
    let full = jail.snapshot().expect("snapshot");
    assert!(outside.0.contains_key(b"src".as_slice()));
    assert!(full.0.contains_key(b"src/a/f".as_slice()));
    assert!(!outside.0.keys().any(|k| k.starts_with(b"src/")));
    assert!(outside.changes(&full, &[b"src"]).is_empty());
    assert_eq!(
        outside.changes(&full, &[]).len(),
        3,
        "src/a, src/a/b, src/a/f"
    );
}
