//! The process runner kills a tool at its timeout, with its whole process group, and maps
//! exits and signals to outcomes.

use snapconf_producers::process::run::run_with_timeout;
use snapconf_producers::{Outcome, ToolError};
use std::process::Command;
use std::time::{Duration, Instant};

/// A shell that records its pid (= its process-group id), starts a background `sleep 30` in
/// the same group and waits on a foreground one, is killed at the 1 s timeout; afterwards no
/// process of that group exists.
#[test]
fn a_sleeping_tool_is_killed_at_the_timeout_with_its_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("pid");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("echo $$ > \"$1\"; sleep 30 & sleep 30")
        .arg("sh")
        .arg(&pid_file);
    let started = Instant::now();
    let outcome = run_with_timeout(&mut cmd, dir.path(), Duration::from_secs(1)).expect("run");
    let elapsed = started.elapsed();
    match &outcome {
        Outcome::Hang { message } => {
            assert!(
                message.contains("sleep 30") && message.contains("1000 ms"),
                "{message}"
            )
        }
        other => panic!("expected Hang, got {other:?}"),
    }
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("pid file")
        .trim()
        .parse()
        .expect("pid");
    let pgid = rustix::process::Pid::from_raw(pid).expect("nonzero pid");
    // The background sleep was orphaned and reparented; give init a moment to reap it.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match rustix::process::test_kill_process_group(pgid) {
            Err(rustix::io::Errno::SRCH) => break,
            _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            other => panic!("process group {pid} still exists: {other:?}"),
        }
    }
}

#[test]
fn exit_codes_and_signals_map_to_outcomes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = Duration::from_secs(10);
    let mut ok = Command::new("true");
    assert_eq!(
        run_with_timeout(&mut ok, dir.path(), t).expect("run"),
        Outcome::Success
    );

    let mut fail = Command::new("sh");
    fail.arg("-c")
        .arg("echo first >&2; echo 'the last words' >&2; exit 3");
    match run_with_timeout(&mut fail, dir.path(), t).expect("run") {
        Outcome::Refused { message } => {
            assert!(
                message.contains("status 3") && message.ends_with("the last words"),
                "{message}"
            )
        }
        other => panic!("expected Refused, got {other:?}"),
    }

    let mut killed = Command::new("sh");
    killed.arg("-c").arg("kill -SEGV $$");
    match run_with_timeout(&mut killed, dir.path(), t).expect("run") {
        Outcome::Hang { message } => assert!(message.contains("SIGSEGV"), "{message}"),
        other => panic!("expected Hang, got {other:?}"),
    }

    let mut missing = Command::new("snapconf-no-such-tool");
    match run_with_timeout(&mut missing, dir.path(), t) {
        Err(ToolError::Spawn { command, .. }) => assert_eq!(command, "snapconf-no-such-tool"),
        other => panic!("expected a spawn error, got {other:?}"),
    }
    // Nothing is left in the scratch dir.
    assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 0);
}

/// The stderr tail is bounded: a tool printing 100 KB keeps only the last ~2 KB.
#[test]
fn refusal_keeps_only_the_tail_of_stderr() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut loud = Command::new("sh");
    loud.arg("-c").arg("i=0; while [ $i -lt 2000 ]; do echo 'line of noise line of noise line of noise' >&2; i=$((i+1)); done; echo END >&2; exit 1");
    match run_with_timeout(&mut loud, dir.path(), Duration::from_secs(20)).expect("run") {
        Outcome::Refused { message } => {
            assert!(message.len() < 2048 + 200, "{} bytes", message.len());
            assert!(message.ends_with("END"), "{message}");
        }
        other => panic!("expected Refused, got {other:?}"),
    }
}
