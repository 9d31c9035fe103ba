//! The single pass of a stream (`hydrate`, and `hydrate_file` of a compressed file): the
//! validation pass writes each checked member into the staging directory as it reads it.
//!
//! - a refusal found late, after payloads were written, leaves the root and its parent
//!   exactly as they were, with `validate`'s verdict;
//! - the tree equals the two-pass one (`hydrate_file` of the plain file) for the shapes the
//!   single pass must get right: duplicates under `LastWins` (a file, an empty directory, a
//!   hardlink target replaced), hardlink copies and links, files without owner read, the
//!   root `.` member, files under directories whose member comes later;
//! - a hydration stalled in its validation pass keeps its staging directory while a
//!   sibling root and the same root are hydrated and recovered, and then completes.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{snapshot, Raw};
use snapconf_extract::{
    hydrate, hydrate_file, recover, validate, Duplicates, Hardlinks, HydrateError, HydrateReport,
    Limits, Modes, Policy,
};
use snapconf_tarbytes::raw::{RawHeader, CHKSUM};

/// Names in `dir` (sorted).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Staging-shaped names in `dir`.
fn stages(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.contains(".snapconf-stage-"))
        .collect()
}

/// 200 files of 20 KiB in 10 directories: enough payload that a late refusal comes after
/// much was written.
fn body(raw: &mut Raw) -> &mut Raw {
    for i in 0..200 {
        raw.file(
            &format!("d{}/f{i:03}", i % 10),
            format!("payload {i}\n").repeat(2000).as_bytes(),
        );
    }
    raw
}

/// Archives refused only at their end, each with the reason and the policy.
fn late_refusals() -> Vec<(&'static str, Vec<u8>, Policy)> {
    let p = Policy::default();
    let mut bad_sum = body(&mut Raw::new()).finish();
    // The end-of-archive marker replaced by a header whose checksum is wrong.
    let end = bad_sum.len() - 1024;
    let mut h = common::header(b'0', b"late", b"", 0, 0o644);
    RawHeader(&mut h).field_mut(CHKSUM)[0] = b'9';
    bad_sum[end..end + 512].copy_from_slice(&h);
    let mut cut = body(&mut Raw::new()).file("last", &[7u8; 5000]).finish();
    cut.truncate(cut.len() - 1024 - 1000);
    vec![
        (
            "parent-traversal",
            body(&mut Raw::new()).file("../escape", b"x").finish(),
            p.clone(),
        ),
        (
            "duplicate",
            body(&mut Raw::new()).file("d3/f003", b"again").finish(),
            p.clone(),
        ),
        (
            "through-symlink",
            body(&mut Raw::new())
                .symlink("link", "d1")
                .file("link/x", b"x")
                .finish(),
            p.clone(),
        ),
        (
            "limit-exceeded",
            body(&mut Raw::new()).finish(),
            Policy {
                limits: Limits {
                    members: 150,
                    ..Limits::default()
                },
                ..p.clone()
            },
        ),
        (
            "limit-exceeded",
            body(&mut Raw::new()).finish(),
            Policy {
                limits: Limits {
                    total_bytes: 3 << 20,
                    ..Limits::default()
                },
                ..p.clone()
            },
        ),
        ("malformed", bad_sum, p.clone()),
        ("truncated", cut, p.clone()),
        (
            "truncated",
            {
                let mut b = body(&mut Raw::new()).finish();
                b.truncate(b.len() - 1024);
                b
            },
            p.clone(),
        ),
        (
            "dangling-hardlink",
            body(&mut Raw::new()).hardlink("h", "nowhere").finish(),
            p,
        ),
    ]
}

/// A late refusal leaves root and parent exactly as before, and is `validate`'s verdict:
/// through `hydrate` of the plain stream, of a gzip stream, and `hydrate_file` of a zstd
/// file (the decoding thread), onto a prior workspace and onto no root at all.
#[test]
fn late_refusals_leave_root_and_parent_as_before() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    let file = dir.path().join("archive.tar.zst");
    let prior = Raw::new()
        .file("keep", b"prior")
        .dir_mode("ro/", 0o755)
        .file("ro/x", b"y")
        .finish();
    for (want, tar, policy) in late_refusals() {
        let v = validate(&tar[..], &policy);
        assert_eq!(common::reason(&v), Some(want), "validate: {v:?}");
        fs::write(&file, common::zstd(&tar)).expect("write");
        for with_root in [true, false] {
            if with_root {
                hydrate(&prior[..], &root, &Policy::default()).expect("prior");
            } else if root.exists() {
                fs::remove_dir_all(&root).expect("rm root");
            }
            let tree = root.exists().then(|| snapshot(&root, &[]));
            let parent = names(dir.path());
            type Run<'a> = Box<dyn Fn() -> Result<HydrateReport, HydrateError> + 'a>;
            let runs: [(&str, Run); 3] = [
                (
                    "plain stream",
                    Box::new(|| hydrate(&tar[..], &root, &policy)),
                ),
                (
                    "gzip stream",
                    Box::new(|| hydrate(&common::gzip(&tar)[..], &root, &policy)),
                ),
                (
                    "zstd file",
                    Box::new(|| {
                        hydrate_file(&fs::File::open(&file).expect("open"), &root, &policy)
                    }),
                ),
            ];
            for (how, run) in runs {
                let h = run();
                assert_eq!(common::reason(&h), Some(want), "{want} {how}: {h:?}");
                assert_eq!(
                    root.exists().then(|| snapshot(&root, &[])),
                    tree,
                    "{want} {how}: root changed"
                );
                assert_eq!(names(dir.path()), parent, "{want} {how}: parent changed");
            }
        }
    }
}

/// Every file's and directory's mtime under `root`, by path.
fn mtimes(root: &Path) -> BTreeMap<PathBuf, i64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            let m = fs::symlink_metadata(&p).expect("lstat");
            if m.is_dir() {
                stack.push(p.clone());
            }
            if !m.file_type().is_symlink() {
                out.insert(
                    p.strip_prefix(root).expect("prefix").to_path_buf(),
                    m.mtime(),
                );
            }
        }
    }
    out.insert(
        PathBuf::from("."),
        fs::metadata(root).expect("stat").mtime(),
    );
    out
}

/// A member with an explicit mtime.
fn at(raw: &mut Raw, flag: u8, name: &str, link: &str, data: &[u8], mode: u32, t: u64) {
    let mut h = common::header(
        flag,
        name.as_bytes(),
        link.as_bytes(),
        data.len() as u64,
        mode,
    );
    RawHeader(&mut h).set_mtime(t).set_checksum();
    raw.block(&h);
    raw.data(data);
}

/// The shapes the single pass must build as the two-pass write does.
fn tricky() -> Vec<u8> {
    let mut raw = Raw::new();
    let r = &mut raw;
    at(
        r,
        b'0',
        "late/inner/f",
        "",
        b"under a later dir",
        0o644,
        1000,
    );
    at(r, b'5', "late/", "", b"", 0o750, 1001);
    // Every directory has a member: an implied one's mtime is the clock's, which two
    // hydrations need not share.
    at(r, b'5', "late/inner/", "", b"", 0o755, 1001);
    at(r, b'0', "noread", "", b"write-only", 0o200, 1002);
    at(r, b'1', "noread-link", "noread", b"", 0o644, 1003);
    at(r, b'0', "target", "", b"first target", 0o640, 1004);
    at(r, b'1', "link1", "target", b"", 0o644, 1005);
    at(r, b'1', "link2", "link1", b"", 0o644, 1006);
    at(r, b'0', "target", "", b"second target", 0o600, 1007);
    at(r, b'1', "link3", "target", b"", 0o644, 1008);
    at(r, b'5', "emptydir/", "", b"", 0o755, 1009);
    at(r, b'0', "emptydir", "", b"now a file", 0o644, 1010);
    at(r, b'0', "becomes-dir", "", b"was a file", 0o644, 1011);
    at(r, b'5', "becomes-dir/", "", b"", 0o700, 1012);
    at(r, b'0', "becomes-dir/f", "", b"in it", 0o444, 1013);
    at(r, b'0', "becomes-link", "", b"was a file", 0o644, 1014);
    at(r, b'2', "becomes-link", "target", b"", 0o777, 1015);
    at(r, b'2', "was-link", "nowhere", b"", 0o777, 1016);
    at(r, b'0', "was-link", "", b"now a file", 0o644, 1017);
    at(r, b'0', "zero", "", b"", 0o000, 1018);
    at(r, b'5', "ro/", "", b"", 0o555, 1019);
    at(r, b'0', "ro/f", "", b"in a read-only dir", 0o644, 1020);
    at(r, b'5', "./", "", b"", 0o711, 1021);
    raw.finish()
}

/// The single pass (a plain stream, a zstd stream, a zstd file) builds the tree the
/// two-pass write of the plain file builds, modes, times and hardlink sharing included,
/// under `LastWins` with hardlinks copied and linked and both mode filters.
#[test]
fn single_pass_builds_the_two_pass_tree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tar = tricky();
    let plain = dir.path().join("a.tar");
    let zst = dir.path().join("a.tar.zst");
    fs::write(&plain, &tar).expect("write");
    fs::write(&zst, common::zstd(&tar)).expect("write");
    for hardlinks in [Hardlinks::Copy, Hardlinks::Link] {
        for modes in [Modes::DataFilter, Modes::Exact] {
            let policy = Policy {
                hardlinks,
                modes,
                duplicates: Duplicates::LastWins,
                ..Policy::default()
            };
            let two = dir.path().join("two");
            hydrate_file(&fs::File::open(&plain).expect("open"), &two, &policy).expect("two-pass");
            let want = (snapshot(&two, &[]), mtimes(&two));
            assert!(want.0.len() > 15, "{:?}", want.0);
            for how in ["plain stream", "zstd stream", "zstd file"] {
                let one = dir.path().join("one");
                match how {
                    "plain stream" => hydrate(&tar[..], &one, &policy),
                    "zstd stream" => hydrate(&common::zstd(&tar)[..], &one, &policy),
                    _ => hydrate_file(&fs::File::open(&zst).expect("open"), &one, &policy),
                }
                .expect("single pass");
                let got = (snapshot(&one, &[]), mtimes(&one));
                assert_eq!(got, want, "{how} under {hardlinks:?} {modes:?}");
                empty(&one);
            }
            empty(&two);
        }
    }
}

/// Empties and removes a root (its read-only directories included).
fn empty(root: &Path) {
    let policy = Policy {
        allow_empty: true,
        ..Policy::default()
    };
    hydrate(&Raw::new().finish()[..], root, &policy).expect("empty");
    fs::remove_dir(root).expect("rmdir");
}

/// A reader that gives `data` up to `stall` bytes, reports it reached them, then waits for
/// a go before giving the rest.
struct Stalling {
    data: Vec<u8>,
    at: usize,
    stall: usize,
    reached: Option<mpsc::Sender<()>>,
    go: mpsc::Receiver<()>,
}

impl Read for Stalling {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.stall {
            if let Some(tx) = self.reached.take() {
                let _ = tx.send(());
                let _ = self.go.recv();
            }
        }
        let end = if self.at < self.stall {
            self.stall
        } else {
            self.data.len()
        };
        let n = buf.len().min(end - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Files written into a staging directory of `parent` so far.
fn staged_files(parent: &Path) -> usize {
    let mut n = 0;
    for s in stages(parent) {
        let mut stack = vec![parent.join(s)];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).into_iter().flatten().flatten() {
                match e.file_type() {
                    Ok(t) if t.is_dir() => stack.push(e.path()),
                    Ok(_) => n += 1,
                    Err(_) => {}
                }
            }
        }
    }
    n
}

/// A hydration stalled in its validation pass (half its archive read, files written) does
/// not block, and is not disturbed by, a hydration of a sibling root, `recover` of its own
/// root and a whole hydration of its own root meanwhile: its staging directory survives
/// them, and it then completes, its tree in place and nothing left beside the root.
#[test]
fn a_stalled_hydration_and_concurrent_ones_do_not_interfere() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ws");
    let sibling = dir.path().join("other");
    let slow = body(&mut Raw::new()).finish();
    let quick = Raw::new().file("quick", b"quick tree").finish();
    hydrate(&quick[..], &root, &Policy::default()).expect("prior");
    let (reached_tx, reached) = mpsc::channel();
    let (go, go_rx) = mpsc::channel();
    let reader = Stalling {
        stall: slow.len() / 2,
        data: slow.clone(),
        at: 0,
        reached: Some(reached_tx),
        go: go_rx,
    };
    let r = root.clone();
    let stalled = std::thread::spawn(move || hydrate(reader, &r, &Policy::default()));
    reached
        .recv_timeout(Duration::from_secs(60))
        .expect("the stalled hydration read half its archive");
    // The reader stalls on its next read, after the pass wrote what it had read.
    let t0 = Instant::now();
    while staged_files(dir.path()) < 50 && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let live = stages(dir.path());
    assert_eq!(live.len(), 1, "one live staging directory: {live:?}");
    assert!(
        staged_files(dir.path()) >= 50,
        "payloads written before the stall"
    );

    hydrate(&quick[..], &sibling, &Policy::default()).expect("sibling root");
    assert_eq!(
        fs::read(sibling.join("quick")).expect("read"),
        b"quick tree"
    );
    recover(&root).expect("recover");
    assert_eq!(
        stages(dir.path()),
        live,
        "recover left the live staging directory"
    );
    let other = Raw::new().file("other", b"same root, other tree").finish();
    hydrate(&other[..], &root, &Policy::default()).expect("same root meanwhile");
    assert_eq!(names(&root), ["other"]);
    assert_eq!(
        stages(dir.path()),
        live,
        "the same root's hydration left it too"
    );

    go.send(()).expect("go");
    let report = stalled
        .join()
        .expect("join")
        .expect("stalled hydration completes");
    assert_eq!(report.members, 200);
    let tree = snapshot(&root, &[]);
    assert_eq!(tree.len(), 210);
    assert!(stages(dir.path()).is_empty(), "{:?}", names(dir.path()));
    assert_eq!(names(dir.path()), ["other", "ws"]);
}
