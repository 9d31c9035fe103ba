//! Crash safety: a child process hydrates a 2,000-member archive over a prior workspace and
//! is killed with `SIGKILL` at a random moment, 200 times. After each kill and `recover`,
//! the root must be exactly the prior tree or exactly the new tree, and nothing may be left
//! beside it.
//!
//! The child is the helper binary `snapconf-extract-test-child crash ARCHIVE ROOT`
//! ([`common::TEST_CHILD`], `tests/child/main.rs`).

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{snapshot, Node, Raw};
use snapconf_extract::{hydrate, hydrate_file, recover, Hardlinks, Policy};
use snapconf_tarbytes::Rng;

const KILLS: usize = 200;

fn policy() -> Policy {
    Policy {
        hardlinks: Hardlinks::Link,
        ..Policy::default()
    }
}

/// 2,000 members: 100 directories (some read-only), files, hardlinks and symlinks.
fn new_archive() -> Vec<u8> {
    let mut raw = Raw::new();
    let mut members = 0;
    for d in 0..100 {
        raw.dir_mode(
            &format!("d{d:03}/"),
            if d % 10 == 0 { 0o555 } else { 0o755 },
        );
        members += 1;
        for f in 0..19 {
            if members == 2000 {
                break;
            }
            let name = format!("d{d:03}/f{f:02}");
            match f {
                17 => raw.hardlink(&name, &format!("d{d:03}/f00")),
                18 => raw.symlink(&name, "f01"),
                _ => raw.file(&name, format!("new {d} {f}\n").repeat(f + 1).as_bytes()),
            };
            members += 1;
        }
    }
    raw.finish()
}

fn prior_archive() -> Vec<u8> {
    let mut raw = Raw::new();
    for i in 0..300 {
        raw.file(
            &format!("p{:02}/old{i:03}", i % 30),
            format!("prior {i}\n").as_bytes(),
        );
    }
    raw.file("shared-name", b"prior version\n");
    raw.finish()
}

fn leftovers(parent: &Path) -> Vec<PathBuf> {
    fs::read_dir(parent)
        .expect("read_dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("snapconf"))
        .collect()
}

fn spawn(archive: &Path, root: &Path) -> std::process::Child {
    // The child hydrates with the same policy as `policy()`.
    Command::new(common::TEST_CHILD)
        .arg("crash")
        .arg(archive)
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child")
}

/// Files (not directories) inside staging-shaped names of `parent`.
fn staged_files(parent: &Path) -> usize {
    let mut n = 0;
    let mut stack: Vec<PathBuf> = leftovers(parent);
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(_) => n += 1,
                Err(_) => {}
            }
        }
    }
    n
}

/// Where the tests run: tmpfs when there is one (this is about ordering, not the disk).
fn scratch() -> tempfile::TempDir {
    match Path::new("/dev/shm").is_dir() {
        true => tempfile::tempdir_in("/dev/shm"),
        false => tempfile::tempdir(),
    }
    .expect("tempdir")
}

/// Empties the root (the new tree has read-only directories, which `TempDir`'s removal
/// cannot enter when not running as root).
fn empty(root: &Path) {
    let empty = Policy {
        allow_empty: true,
        ..policy()
    };
    hydrate(&Raw::new().finish()[..], root, &empty).expect("empty");
}

/// The single pass killed inside its validation pass, after payloads were written: a child
/// hydrating from a pipe is fed a part of the archive (10 cut points), killed once its
/// staging directory holds files, and `recover` leaves exactly the prior tree and nothing
/// beside it.
#[test]
fn sigkill_in_the_validation_pass_then_recover_leaves_the_prior() {
    let dir = scratch();
    let new = new_archive();
    let root = dir.path().join("root");
    hydrate(&prior_archive()[..], &root, &policy()).expect("prior");
    let expected_prior = snapshot(&root, &[]);
    for cut in 1..=10 {
        let part = new.len() * cut / 11;
        let mut child = spawn(Path::new("-"), &root);
        let mut stdin = child.stdin.take().expect("stdin");
        std::io::Write::write_all(&mut stdin, &new[..part]).expect("feed");
        let t0 = Instant::now();
        while staged_files(dir.path()) == 0 && t0.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(2));
        }
        // A little later still: the pass is writing or waiting for more input.
        std::thread::sleep(Duration::from_millis(5 * cut as u64));
        assert!(staged_files(dir.path()) > 0, "cut {cut}: files were staged");
        let _ = child.kill();
        child.wait().expect("wait");
        drop(stdin);
        recover(&root).expect("recover");
        assert_eq!(
            snapshot(&root, &[]),
            expected_prior,
            "cut {cut}: not the prior"
        );
        assert!(
            leftovers(dir.path()).is_empty(),
            "cut {cut}: leftovers {:?}",
            leftovers(dir.path())
        );
    }
    empty(&root);
}

/// 100 random `SIGKILL`s of `hydrate_file` of a zstd-compressed archive (the single pass
/// with its decoding thread); after each kill + `recover`, root is the prior or the new
/// tree and nothing is left beside it.
#[test]
fn sigkill_of_a_compressed_hydration_then_recover() {
    let dir = scratch();
    let archive = dir.path().join("new.tar.zst");
    fs::write(
        &archive,
        zstd::stream::encode_all(&new_archive()[..], 3).expect("zstd"),
    )
    .expect("write archive");
    let prior = prior_archive();
    let root = dir.path().join("root");
    let expected_new = {
        hydrate_file(&fs::File::open(&archive).expect("open"), &root, &policy()).expect("new");
        snapshot(&root, &[])
    };
    hydrate(&prior[..], &root, &policy()).expect("prior");
    let expected_prior = snapshot(&root, &[]);
    let t0 = Instant::now();
    assert!(spawn(&archive, &root).wait().expect("wait").success());
    let full = t0.elapsed();
    assert_eq!(snapshot(&root, &[]), expected_new);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1;
    let mut rng = Rng::new(seed);
    let (mut got_prior, mut got_new) = (0, 0);
    for i in 0..KILLS / 2 {
        hydrate(&prior[..], &root, &policy()).expect("reset prior");
        let window = full.as_micros() as u64 * 11 / 10 + 1;
        let delay = Duration::from_micros(rng.next_u64() % window);
        let mut child = spawn(&archive, &root);
        std::thread::sleep(delay);
        let _ = child.kill();
        child.wait().expect("wait");
        recover(&root).expect("recover");
        let seen = snapshot(&root, &[]);
        if seen == expected_prior {
            got_prior += 1;
        } else if seen == expected_new {
            got_new += 1;
        } else {
            panic!("kill {i} (seed {seed}, delay {delay:?}): root is neither prior nor new");
        }
        assert!(leftovers(dir.path()).is_empty(), "kill {i}: leftovers");
    }
    eprintln!("compressed crash test (seed {seed}): {got_prior} prior, {got_new} new");
    empty(&root);
}

/// 200 random `SIGKILL`s; after each kill + `recover`, root is the prior or the new tree.
#[test]
fn sigkill_at_random_moments_then_recover() {
    // tmpfs when there is one: this test is about ordering, not the disk, and a slow disk
    // only stretches it (the fault tests cover a real filesystem's errors).
    let dir = match Path::new("/dev/shm").is_dir() {
        true => tempfile::tempdir_in("/dev/shm"),
        false => tempfile::tempdir(),
    }
    .expect("tempdir");
    let archive = dir.path().join("new.tar");
    fs::write(&archive, new_archive()).expect("write archive");
    let prior = prior_archive();
    let root = dir.path().join("root");

    // The two acceptable outcomes.
    let expected_new: BTreeMap<PathBuf, Node> = {
        hydrate_file(&fs::File::open(&archive).expect("open"), &root, &policy()).expect("new");
        snapshot(&root, &[])
    };
    hydrate(&prior[..], &root, &policy()).expect("prior");
    let expected_prior = snapshot(&root, &[]);
    assert_eq!(expected_new.len(), 2000);

    // How long an uninterrupted child takes, to spread the kills over its whole life.
    let t0 = Instant::now();
    let status = spawn(&archive, &root).wait().expect("wait");
    assert!(status.success());
    let full = t0.elapsed();
    assert_eq!(snapshot(&root, &[]), expected_new);

    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1;
    // Seeded from the clock, printed for replay.
    let mut rng = Rng::new(seed);
    let (mut got_prior, mut got_new) = (0, 0);
    for i in 0..KILLS {
        hydrate(&prior[..], &root, &policy()).expect("reset prior");
        let window = full.as_micros() as u64 * 11 / 10 + 1;
        let delay = Duration::from_micros(rng.next_u64() % window);
        let mut child = spawn(&archive, &root);
        std::thread::sleep(delay);
        let _ = child.kill();
        child.wait().expect("wait");
        recover(&root).expect("recover");
        let seen = snapshot(&root, &[]);
        if seen == expected_prior {
            got_prior += 1;
        } else if seen == expected_new {
            got_new += 1;
        } else {
            panic!("kill {i} (seed {seed}, delay {delay:?}): root is neither prior nor new");
        }
        assert!(
            leftovers(dir.path()).is_empty(),
            "kill {i}: leftovers {:?}",
            leftovers(dir.path())
        );
    }
    eprintln!(
        "crash test: {KILLS} kills over a {full:?} child (seed {seed}): {got_prior} prior, {got_new} new"
    );
    assert_eq!(got_prior + got_new, KILLS);
    // Leave nothing behind: empty the root (the new tree has read-only directories, which
    // `TempDir`'s removal cannot enter when not running as root).
    let empty = Policy {
        allow_empty: true,
        ..policy()
    };
    hydrate(&Raw::new().finish()[..], &root, &empty).expect("empty");
}
