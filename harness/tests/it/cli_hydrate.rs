//! `snapconf hydrate`, `snapconf recover` and `snapconf check-archive`: the reference
//! extractor on the command line. Exit 0 hydrated/accepted/recovered, 1 refused with the
//! root untouched (reason code printed), 2 bad usage, 3 an I/O failure (a leftover that
//! could not be removed; every class: `hydrate_exit`). Hydrate keeps the root's owner,
//! group and mode.

use crate::support;

use std::io::Write;
use std::process::{Command, Stdio};

fn snapconf(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    support::snapconf(args, &[])
}

/// A two-member archive: `a` (regular, "new") and `b` as an LNK member to `a` (H1/H14 shape).
fn archive_with_hardlink(path: &std::path::Path) {
    let mut b = tar::Builder::new(std::fs::File::create(path).expect("create"));
    let mut h = tar::Header::new_gnu();
    h.set_size(3);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    b.append_data(&mut h, "a", &b"new"[..]).expect("append a");
    let mut l = tar::Header::new_gnu();
    l.set_size(0);
    l.set_mode(0o644);
    l.set_entry_type(tar::EntryType::Link);
    b.append_link(&mut l, "b", "a").expect("append b");
    b.into_inner().expect("finish").flush().expect("flush");
}

#[test]
fn refused_hydration_prints_the_reason_and_leaves_the_root() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ar = dir.path().join("snap.tar");
    archive_with_hardlink(&ar);
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(root.join("stale"), "old").expect("prior");
    let (code, _, err) = snapconf(&[
        "hydrate".as_ref(),
        ar.as_os_str(),
        root.as_os_str(),
        "--hardlinks".as_ref(),
        "reject".as_ref(),
    ]);
    assert_eq!(code, 1, "refused: {err}");
    assert!(
        err.contains("hardlink-not-allowed"),
        "the reason code is printed: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("stale")).expect("prior kept"),
        "old"
    );
    assert!(!root.join("a").exists(), "nothing of the archive landed");

    // H14: with hardlinks copied (the default, as the default profile's `hardlinks =
    // "copy"` says), the prior is replaced, not merged.
    let (code, _, err) = snapconf(&["hydrate".as_ref(), ar.as_os_str(), root.as_os_str()]);
    assert_eq!(code, 0, "hydrated: {err}");
    assert_eq!(std::fs::read_to_string(root.join("a")).expect("a"), "new");
    assert_eq!(std::fs::read_to_string(root.join("b")).expect("b"), "new");
    assert!(!root.join("stale").exists(), "stale files are gone");
}

#[test]
fn check_archive_prints_a_json_verdict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ar = dir.path().join("snap.tar");
    archive_with_hardlink(&ar);
    let (code, out, err) = snapconf(&[
        "check-archive".as_ref(),
        ar.as_os_str(),
        "--hardlinks".as_ref(),
        "reject".as_ref(),
    ]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(v["verdict"], "refuse");
    assert_eq!(v["reason"], "hardlink-not-allowed");
    assert_eq!(v["member"], "b");
    assert_eq!(
        v["members"].as_array().map(|m| m.len()),
        Some(2),
        "the listing comes with a refusal: {v}"
    );

    let (code, out, err) = snapconf(&[
        "check-archive".as_ref(),
        ar.as_os_str(),
        "--hardlinks".as_ref(),
        "link".as_ref(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(v["verdict"], "accept");
    let names: Vec<&str> = v["members"]
        .as_array()
        .expect("members")
        .iter()
        .filter_map(|m| m["name"].as_str())
        .collect();
    assert_eq!(names, ["a", "b"]);
}

#[test]
fn missing_archive_is_a_usage_error() {
    let (code, _, err) = snapconf(&[
        "hydrate".as_ref(),
        "/nonexistent/a.tar".as_ref(),
        "/tmp".as_ref(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/a.tar"), "{err}");
    let (code, _, err) = snapconf(&["check-archive".as_ref(), "/nonexistent/a.tar".as_ref()]);
    assert_eq!(code, 2, "{err}");
}

/// A member name holding terminal escape sequences is printed escaped, never raw.
#[test]
fn member_names_are_printed_escaped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ar = dir.path().join("esc.tar");
    let mut b = tar::Builder::new(std::fs::File::create(&ar).expect("create"));
    let mut h = tar::Header::new_gnu();
    h.set_size(1);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Fifo);
    h.set_size(0);
    b.append_data(&mut h, "x\x1b]0;PWNED\x07", &b""[..])
        .expect("append");
    b.into_inner().expect("finish").flush().expect("flush");
    let root = dir.path().join("ws");
    let (code, _, err) = snapconf(&[
        "hydrate".as_ref(),
        ar.as_os_str(),
        root.as_os_str(),
        "--special-files".as_ref(),
        "reject".as_ref(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        !err.contains('\x1b'),
        "no raw escape reaches the terminal: {err:?}"
    );
    assert!(err.contains("\\x1b"), "{err}");
}

/// An archive of zero blocks only (a cut-off or zero-filled upload) does not empty the
/// workspace: `hydrate` refuses it (`empty-archive`, exit 1, the root untouched, no member
/// named), `check-archive` agrees, and `--allow-empty` accepts it when an empty workspace
/// is meant. Read from stdin too.
#[test]
fn an_archive_without_members_leaves_the_workspace_unless_allowed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ar = dir.path().join("zeros.tar");
    std::fs::write(&ar, vec![0u8; 512 * 20]).expect("zeros");
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(root.join("work"), "precious").expect("prior");
    let (code, _, err) = snapconf(&["hydrate".as_ref(), ar.as_os_str(), root.as_os_str()]);
    assert_eq!(code, 1, "refused: {err}");
    assert!(err.contains("empty-archive"), "{err}");
    assert!(!err.contains("member ``"), "no empty member name: {err}");
    assert_eq!(
        std::fs::read_to_string(root.join("work")).expect("kept"),
        "precious"
    );
    let (code, out, _) = snapconf(&["check-archive".as_ref(), ar.as_os_str()]);
    assert_eq!(code, 1, "check-archive agrees: {out}");
    let stdin = std::fs::File::open(&ar).expect("open");
    let out = support::Snapconf::new()
        .args(["hydrate".as_ref(), "-".as_ref(), root.as_os_str()])
        .stdin(stdin)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1), "stdin is refused too");
    assert!(root.join("work").exists());
    let (code, _, err) = snapconf(&[
        "hydrate".as_ref(),
        "--allow-empty".as_ref(),
        ar.as_os_str(),
        root.as_os_str(),
    ]);
    assert_eq!(code, 0, "allowed: {err}");
    assert!(!root.join("work").exists(), "an intended empty workspace");
}

/// The names in `dir`, sorted.
fn names_in(dir: &std::path::Path) -> Vec<std::ffi::OsString> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    names.sort();
    names
}

/// `snapconf ARGS` with stdin from `input`; waits at most 10 s (the stream is endless: a
/// command that read it to its end would never return), then the exit code and stderr.
fn with_endless_stdin(args: &[&std::ffi::OsStr], input: &str) -> (i32, String, String) {
    let mut child = support::Snapconf::new()
        .args(args)
        .stdin(std::fs::File::open(input).expect("open the device"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("snapconf runs");
    let status = support::wait_within(
        &mut child,
        std::time::Duration::from_secs(10),
        &format!("stop reading {input}"),
    );
    let out = child.wait_with_output().expect("output");
    let _ = status;
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 14, defect 1: `hydrate -` of an endless stream (`/dev/zero`, `/dev/urandom`) used
/// to copy it to a spool file beside the root until the disk was full. It is refused with a
/// typed reason (exit 1), the root and its parent exactly as they were (no spool or staging
/// file left), and `check-archive -` gives the same verdict.
#[test]
fn endless_stdin_is_refused_and_leaves_nothing() {
    for (input, reason) in [("/dev/zero", Some("empty-archive")), ("/dev/urandom", None)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).expect("root");
        std::fs::write(root.join("work"), "precious").expect("prior");
        let before = names_in(dir.path());
        let (code, _, err) =
            with_endless_stdin(&["hydrate".as_ref(), "-".as_ref(), root.as_os_str()], input);
        assert_eq!(code, 1, "{input}: refused: {err}");
        let printed = err
            .split_once("refused (")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(code, _)| code.to_owned())
            .unwrap_or_else(|| panic!("{input}: a reason code is printed: {err}"));
        if let Some(reason) = reason {
            assert_eq!(printed, reason, "{input}: {err}");
        }
        assert_eq!(
            names_in(dir.path()),
            before,
            "{input}: nothing beside the root"
        );
        assert_eq!(names_in(&root), ["work"], "{input}");
        assert_eq!(
            std::fs::read_to_string(root.join("work")).expect("kept"),
            "precious"
        );
        // check-archive of /dev/zero gives the same reason; of /dev/urandom (other bytes on
        // every read) a refusal too.
        let (code, out, err) = with_endless_stdin(&["check-archive".as_ref(), "-".as_ref()], input);
        assert_eq!(code, 1, "{input}: {out}{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON verdict");
        assert_eq!(v["verdict"], "refuse", "{input}: {v}");
        if reason.is_some() {
            assert_eq!(v["reason"], printed.as_str(), "{input}: {v}");
        }
    }
}

/// `hydrate -` and `check-archive -` of the same bytes agree, for bytes that are refused
/// (random, zeros, a cut archive) and bytes that are accepted, plain and gzip-compressed.
#[test]
fn hydrate_and_check_archive_of_stdin_agree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = dir.path().join("plain.tar");
    archive_with_hardlink(&plain);
    let plain_bytes = std::fs::read(&plain).expect("read");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&plain_bytes).expect("gzip");
    let gz = gz.finish().expect("gzip");
    let mut rng = snapconf_tarbytes::Rng::new(0x2545_f491_4f6c_dd1d);
    let random: Vec<u8> = (0..64 * 1024).map(|_| rng.next_u64() as u8).collect();
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("random", random),
        ("zeros", vec![0; 64 * 1024]),
        ("cut", plain_bytes[..700].to_vec()),
        ("plain", plain_bytes.clone()),
        ("gzip", gz.clone()),
        ("cut gzip", gz[..gz.len() / 2].to_vec()),
    ];
    for (what, bytes) in inputs {
        let file = dir.path().join("input");
        std::fs::write(&file, &bytes).expect("write");
        let root = dir.path().join("ws");
        let _ = std::fs::remove_dir_all(&root);
        let run = |args: &[&std::ffi::OsStr]| {
            support::Snapconf::new()
                .args(args)
                .args(["--hardlinks", "copy"])
                .stdin(std::fs::File::open(&file).expect("open"))
                .output()
                .expect("runs")
        };
        let h = run(&["hydrate".as_ref(), "-".as_ref(), root.as_os_str()]);
        let c = run(&["check-archive".as_ref(), "-".as_ref()]);
        assert_eq!(h.status.code(), c.status.code(), "{what}: {h:?} / {c:?}");
        let v: serde_json::Value = serde_json::from_slice(&c.stdout).expect("JSON");
        let herr = String::from_utf8_lossy(&h.stderr);
        match v["reason"].as_str() {
            Some(reason) => assert!(
                herr.contains(&format!("refused ({reason})")),
                "{what}: {herr} / {v}"
            ),
            None => assert!(herr.contains("hydrated"), "{what}: {herr}"),
        }
    }
}

/// A 1 KiB gzip that inflates to 900 KiB is refused as `decompression-limit` by `hydrate`
/// and `check-archive` under `--max-decompressed-bytes 524288`, the root untouched, and
/// hydrated without the flag; an unknown compression is named.
#[test]
fn decompression_limits_and_unknown_compressions_on_the_command_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut raw = snapconf_tarbytes::raw::RawTar::new();
    raw.file("zeros", &vec![0u8; 900 << 10]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&raw.finish()).expect("gzip");
    let gz = gz.finish().expect("gzip");
    assert!(gz.len() <= 1024, "{}", gz.len());
    let ar = dir.path().join("bomb.tar.gz");
    std::fs::write(&ar, &gz).expect("write");
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(root.join("work"), "precious").expect("prior");
    let limit = ["--max-decompressed-bytes".as_ref(), "524288".as_ref()];
    let (code, _, err) = snapconf(
        &[
            &["hydrate".as_ref(), ar.as_os_str(), root.as_os_str()][..],
            &limit[..],
        ]
        .concat(),
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("refused (decompression-limit)"), "{err}");
    assert_eq!(names_in(&root), ["work"]);
    let (code, out, _) =
        snapconf(&[&["check-archive".as_ref(), ar.as_os_str()][..], &limit[..]].concat());
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["reason"], "decompression-limit", "{v}");
    let (code, _, err) = snapconf(&["hydrate".as_ref(), ar.as_os_str(), root.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::metadata(root.join("zeros")).expect("zeros").len(),
        900 << 10
    );

    let bz = dir.path().join("a.tar.bz2");
    std::fs::write(&bz, b"BZh91AY&SY\x01\x02\x03\x04 and more bytes").expect("write");
    let (code, _, err) = snapconf(&["hydrate".as_ref(), bz.as_os_str(), root.as_os_str()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("refused (unsupported)") && err.contains("bzip2"),
        "{err}"
    );
}

/// Issue 14: the defaults are the default profile's. A plain `tar -cf ws.tar -C ws .` of a
/// workspace with a hardlink and an executable (GNU tar writes an LNK member for the second
/// name) is accepted by `check-archive` and hydrated by `hydrate` with no flag: both names
/// with the content, the owner's execute bit kept.
#[test]
fn a_plain_gnu_tar_of_a_workspace_with_a_hardlink_hydrates_with_the_defaults() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("src");
    std::fs::create_dir(&ws).expect("src");
    std::fs::write(ws.join("a"), "shared").expect("a");
    std::fs::hard_link(ws.join("a"), ws.join("b")).expect("link");
    std::fs::write(ws.join("run"), "#!/bin/sh\n").expect("run");
    std::fs::set_permissions(ws.join("run"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    let ar = dir.path().join("ws.tar");
    let tar = Command::new("tar")
        .arg("-cf")
        .arg(&ar)
        .arg("-C")
        .arg(&ws)
        .arg(".")
        .status();
    if !tar.is_ok_and(|s| s.success()) {
        return support::skip::skip("GNU tar", "apt-get install tar");
    }
    let (code, out, err) = snapconf(&["check-archive".as_ref(), ar.as_os_str()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("\"hardlink\""),
        "GNU tar wrote an LNK member: {out}"
    );
    let root = dir.path().join("ws");
    let (code, _, err) = snapconf(&["hydrate".as_ref(), ar.as_os_str(), root.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    for name in ["a", "b"] {
        assert_eq!(
            std::fs::read_to_string(root.join(name)).expect(name),
            "shared"
        );
    }
    let mode = std::fs::metadata(root.join("run"))
        .expect("run")
        .permissions()
        .mode();
    assert_eq!(mode & 0o100, 0o100, "the owner's execute bit: {mode:o}");
}

/// `check-archive --all-parsers` of a gzip-compressed archive compares the parsers on the
/// tar inside it: the `tar` crate (which does not decompress) no longer "stops" where the
/// reference reads the members, so there is no disagreement (exit 0).
#[test]
fn all_parsers_compare_the_tar_inside_a_compressed_archive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = dir.path().join("plain.tar");
    archive_with_hardlink(&plain);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&std::fs::read(&plain).expect("read"))
        .expect("gzip");
    let ar = dir.path().join("a.tar.gz");
    std::fs::write(&ar, gz.finish().expect("gzip")).expect("write");
    let (code, out, err) = snapconf(&[
        "check-archive".as_ref(),
        "--all-parsers".as_ref(),
        ar.as_os_str(),
    ]);
    assert!(out.contains("gzip-compressed"), "{out}");
    assert!(out.contains("tar-crate       2 member(s)"), "{out}");
    assert_eq!(code, 0, "{out}{err}");
}

/// Under `RLIMIT_FSIZE` (here 500 kB), a stream whose payload passes the limit before a
/// member the policy refuses (`/x`) is refused for that member, exactly as `check-archive`
/// says, with nothing left beside the root: the write fails with `EFBIG` instead of
/// `SIGXFSZ` killing the process midway (exit 153, the staging directory left), and the
/// refusal wins over the fault.
#[test]
fn a_file_size_limit_does_not_kill_a_hydration() {
    let mut t = snapconf_tarbytes::raw::RawTar::new();
    t.file("a", &[b'a'; 10_000])
        .file("b", &vec![b'b'; 1_500_000])
        .file("/x", b"x");
    let tar = t.finish();
    let dir = tempfile::tempdir().expect("tempdir");
    let parent = dir.path().join("par");
    std::fs::create_dir(&parent).expect("mkdir");
    let mut child = support::Snapconf::wrapped(
        &["prlimit", "--fsize=500000", "--"],
        &support::snapconf_bin(),
    )
    .args(["hydrate", "-"])
    .arg(parent.join("ws"))
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("prlimit runs");
    let mut stdin = child.stdin.take().expect("stdin");
    // The refusal may come before the whole stream is read.
    let _ = stdin.write_all(&tar);
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "refused, not killed: {err}");
    assert!(err.contains("absolute-path"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&parent)
        .expect("read")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "nothing left beside the root: {left:?}");
}

/// Staging names (`.ws.snapconf-stage-*`) in `parent`.
fn stagings(parent: &std::path::Path) -> Vec<String> {
    names_in(parent)
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".ws.snapconf-stage-"))
        .collect()
}

/// The header of a 1 GiB regular member `big`: the start of a large archive.
fn large_member_header() -> Vec<u8> {
    let mut h = tar::Header::new_gnu();
    h.set_path("big").expect("path");
    h.set_size(1 << 30);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_cksum();
    h.as_bytes().to_vec()
}

/// Property: `snapconf recover ROOT` leaves the staging directory of a hydration still
/// running alone (it holds the lock), and once that hydration is killed (SIGKILL, in the
/// middle of a large archive's payload) removes it with a line naming it; ROOT is exactly
/// its prior tree and nothing of ours is left beside it.
#[test]
fn recover_removes_a_killed_hydrations_staging_and_leaves_a_live_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(root.join("stale"), "old").expect("prior");
    /// Killed and reaped when dropped: a failing test leaves no process.
    struct Running(std::process::Child);
    impl Drop for Running {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Running(
        support::Snapconf::new()
            .args(["hydrate".as_ref(), "-".as_ref(), root.as_os_str()])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn hydrate"),
    );
    let mut stdin = child.0.stdin.take().expect("stdin");
    stdin.write_all(&large_member_header()).expect("header");
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..8 {
        stdin.write_all(&chunk).expect("payload");
    }
    stdin.flush().expect("flush");
    // Written into the staging tree as it is read: wait until the payload lands there.
    let started = std::time::Instant::now();
    let staging = loop {
        let found = stagings(dir.path()).into_iter().next();
        if let Some(s) = found {
            let big = dir.path().join(&s).join("big");
            if std::fs::metadata(&big).is_ok_and(|m| m.len() >= 1 << 20) {
                break s;
            }
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the hydration staged nothing"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let recover = || snapconf(&["recover".as_ref(), root.as_os_str()]);
    let (code, out, err) = recover();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("live") && out.contains(&staging), "{out}");
    assert_eq!(
        stagings(dir.path()),
        [staging.as_str()],
        "a live one is kept"
    );
    let pid = rustix::process::Pid::from_child(&child.0);
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).expect("SIGKILL");
    drop(stdin);
    support::wait_within(
        &mut child.0,
        std::time::Duration::from_secs(30),
        "die after SIGKILL",
    );
    assert_eq!(stagings(dir.path()), [staging.as_str()], "the kill left it");
    let (code, out, err) = recover();
    assert_eq!(code, 0, "{err}");
    let line = format!("removed {}", dir.path().join(&staging).display());
    assert_eq!(out.trim_end(), line);
    assert_eq!(names_in(dir.path()), ["ws"], "nothing beside the root");
    assert_eq!(names_in(&root), ["stale"]);
    assert_eq!(
        std::fs::read_to_string(root.join("stale")).expect("stale"),
        "old"
    );
    // Nothing left: still success, nothing printed on stdout.
    let (code, out, err) = recover();
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
}

/// Property: a staging-shaped directory whose `flock` someone holds (here: this test) is a
/// live hydration's and `recover` leaves it and what is in it alone; once the lock is
/// released it is removed. A root that is not a plain name is a usage error (exit 2).
#[test]
fn recover_leaves_a_locked_staging_alone() {
    use rustix::fs::{flock, FlockOperation};
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ws");
    let staging = dir.path().join(".ws.snapconf-stage-0123456789abcdef");
    std::fs::create_dir(&staging).expect("staging");
    std::fs::write(staging.join("partial"), "p").expect("partial");
    let held = std::fs::File::open(&staging).expect("open staging");
    flock(&held, FlockOperation::LockExclusive).expect("flock");
    let (code, out, err) = snapconf(&["recover".as_ref(), root.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("live"), "{out}");
    assert!(staging.join("partial").exists(), "the live staging is kept");
    drop(held);
    let (code, out, err) = snapconf(&["recover".as_ref(), root.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim_end(),
        format!("removed {}", staging.display()),
        "{err}"
    );
    assert!(!staging.exists());
    let (code, _, err) = snapconf(&["recover".as_ref(), "/".as_ref()]);
    assert_eq!(code, 2, "{err}");
}

/// An archive whose `.` member says mode `0755` (what a capture of a plain directory
/// holds), with one file `new`.
fn archive_with_root_member(path: &std::path::Path) {
    let mut t = snapconf_tarbytes::raw::RawTar::new();
    t.push(b'5', b"./", b"", b"", 0o755);
    t.push(b'0', b"new", b"", b"new\n", 0o644);
    std::fs::write(path, t.finish()).expect("archive");
}

/// Owner, group and mode of `p`.
fn owner_and_mode(p: &std::path::Path) -> (u32, u32, u32) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(p).expect("stat");
    (m.uid(), m.gid(), m.mode() & 0o7777)
}

/// Property: run as root, `hydrate` of a user's ROOT (`1000:1000`, mode `2770`) leaves
/// ROOT `1000:1000` mode `2770`, whatever the archive's `.` member says; before, it became
/// root's, mode `0755`, and locked its owner out.
#[test]
fn hydrate_as_root_keeps_the_roots_owner_group_and_mode() {
    if !rustix::process::geteuid().is_root() {
        support::skip::skip("root (the test hydrates a uid-1000 root)", "run as root");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let ar = dir.path().join("a.tar");
    archive_with_root_member(&ar);
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(root.join("old"), "old").expect("prior");
    std::os::unix::fs::chown(&root, Some(1000), Some(1000)).expect("chown");
    std::fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o2770))
        .expect("chmod");
    let (code, _, err) = snapconf(&["hydrate".as_ref(), ar.as_os_str(), root.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(names_in(&root), ["new"], "hydrated");
    assert_eq!(owner_and_mode(&root), (1000, 1000, 0o2770));
}

/// Property: as an ordinary user (uid 65534 through `setpriv`, no supplementary groups),
/// `hydrate` keeps ROOT's mode (setgid included) and group over an archive whose `.`
/// member says `0755`.
#[test]
fn hydrate_as_an_ordinary_user_keeps_the_roots_mode() {
    use std::os::unix::fs::PermissionsExt;
    const UID: u32 = 65534;
    if !rustix::process::geteuid().is_root() {
        support::skip::skip("root (the test drops to uid 65534)", "run as root");
        return;
    }
    if !Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        support::skip::skip("setpriv", "apt-get install util-linux");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), PermissionsExt::from_mode(0o755)).expect("chmod");
    let bin = dir.path().join("snapconf");
    std::fs::copy(support::snapconf_bin(), &bin).expect("copy the binary");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).expect("work");
    std::os::unix::fs::chown(&work, Some(UID), Some(UID)).expect("chown");
    let ar = work.join("a.tar");
    archive_with_root_member(&ar);
    let root = work.join("ws");
    std::fs::create_dir(&root).expect("root");
    std::os::unix::fs::chown(&root, Some(UID), Some(UID)).expect("chown");
    std::fs::set_permissions(&root, PermissionsExt::from_mode(0o2750)).expect("chmod");
    let setpriv = [
        "setpriv".to_owned(),
        format!("--reuid={UID}"),
        format!("--regid={UID}"),
        "--clear-groups".to_owned(),
    ];
    let out = support::Snapconf::wrapped(&setpriv, &bin)
        .arg("hydrate")
        .arg(&ar)
        .arg(&root)
        .output()
        .expect("setpriv runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(names_in(&root), ["new"], "hydrated");
    assert_eq!(owner_and_mode(&root), (UID, UID, 0o2750));
}
