//! `snapconf recover`: a killed hydration's staging directory is removed, a live (locked)
//! one is left alone.

use super::*;

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
    // Tests share one process: a sibling test's child, forked but not yet exec'd, may hold
    // a copy of the handle (closed at its exec) for a moment. Wait until the lock is free
    // to anyone before asking `recover` again.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let probe = std::fs::File::open(&staging).expect("open staging");
        if flock(&probe, FlockOperation::NonBlockingLockExclusive).is_ok() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the lock was never released"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
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
