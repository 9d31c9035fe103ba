//! Test support: hostile archives the `tar` crate will not write, from plain member lists
//! (through the harness's raw writer), and the built-in extractors that can run here.
#![allow(dead_code)]

/// The suite's one skip helper, [`skip::skip`] (`test-support/skip.rs`, shared by the three
/// test crates): prints `SKIPPED <test>: ...`, or fails with `SNAPCONF_REQUIRE_TOOLS=1`.
#[path = "../../../../test-support/skip.rs"]
pub mod skip;

/// The `snapconf` binary the tests run: `$SNAPCONF_TEST_BINARY` when set (a copy that an
/// ordinary user can reach, when `.ci/run` runs the compiled tests as uid 65534), else the
/// one cargo built for this test.
pub fn snapconf_bin() -> std::path::PathBuf {
    std::env::var_os("SNAPCONF_TEST_BINARY")
        .map_or_else(|| env!("CARGO_BIN_EXE_snapconf").into(), Into::into)
}

/// Runs the `snapconf` binary ([`snapconf_bin`]) with `args`, the environment variables
/// that pick backends, profiles and faults removed (a developer's shell may set them) and
/// then `envs` set; its exit code (-1 for a signal), stdout and stderr.
pub fn snapconf<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    envs: &[(&str, &str)],
) -> (i32, String, String) {
    let out = std::process::Command::new(snapconf_bin())
        .args(args)
        .env_remove("SNAPCONF_BACKEND")
        .env_remove("SNAPCONF_PROFILE")
        .env_remove("SNAPCONF_FAULTS")
        .envs(envs.iter().copied())
        .output()
        .expect("the snapconf binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Whether the built-in producer `name` can run here; if not, reports the skip
/// ([`skip::skip`]) with its reason and install hint. Panics on a name that is not built
/// in (a mistake in the test).
pub fn producer_available(name: &str) -> bool {
    match snapconf_producers::producer(name).map(|p| p.availability()) {
        Ok(Availability::Available { .. }) => true,
        Ok(Availability::Unavailable {
            reason,
            install_hint,
        }) => {
            skip::skip(
                &format!("producer `{name}` is unavailable: {reason}"),
                &install_hint,
            );
            false
        }
        Err(e) => panic!("{e}"),
    }
}

use snapconf_harness::archive::raw::RawTar;
use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::model::profile::Profile;
use snapconf_producers::{Availability, Extractor};

/// One member of a hand-built archive: type flag, name, link target, payload.
pub struct RawMember<'a> {
    pub flag: u8,
    pub name: &'a [u8],
    pub link: &'a [u8],
    pub data: &'a [u8],
}

/// The archive bytes of `members` (mode `0755` for directories, `0644` otherwise), written
/// with the harness's raw tar writer ([`RawTar`]): payloads padded to 512, two zero end
/// blocks. Names and link targets over 100 bytes are cut (not needed here).
pub fn raw_archive(members: &[RawMember<'_>]) -> Vec<u8> {
    let mut t = RawTar::new();
    for m in members {
        let mode = if m.flag == b'5' { 0o755 } else { 0o644 };
        t.push(m.flag, m.name, m.link, m.data, mode);
    }
    t.finish()
}

/// Every built-in extractor that can run here (the reference with the default profile's
/// policy); a missing tool is skipped with [`skip::skip`], naming the install hint.
pub fn available_extractors() -> Vec<Box<dyn Extractor>> {
    let policy = reference_policy(&Profile::default_profile(), None);
    snapconf_producers::extractors(policy)
        .into_iter()
        .filter(|e| match e.availability() {
            Availability::Available { .. } => true,
            Availability::Unavailable {
                reason,
                install_hint,
            } => {
                skip::skip(
                    &format!("extractor `{}` is unavailable: {reason}", e.name()),
                    &install_hint,
                );
                false
            }
        })
        .collect()
}

/// Wait for `child` to exit, failing the test if it is still running after `limit` (`what`
/// names what it should have done, e.g. "stop after SIGINT"); its exit status.
pub fn wait_within(
    child: &mut std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> std::process::ExitStatus {
    let started = std::time::Instant::now();
    loop {
        if let Some(s) = child.try_wait().expect("wait") {
            return s;
        }
        assert!(started.elapsed() < limit, "the process did not {what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// As [`snapconf`] with no extra environment, but the process must exit within `limit`:
/// past it, it is killed and the test fails (`what` names what it should have done). Its
/// output goes to files, so that a hung process cannot block on a full pipe.
pub fn snapconf_within<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    limit: std::time::Duration,
    what: &str,
) -> (i32, String, String) {
    let out = tempfile::tempfile().expect("stdout file");
    let err = tempfile::tempfile().expect("stderr file");
    let mut child = std::process::Command::new(snapconf_bin())
        .args(args)
        .env_remove("SNAPCONF_BACKEND")
        .env_remove("SNAPCONF_PROFILE")
        .env_remove("SNAPCONF_FAULTS")
        .env_remove("SNAPCONF_BASELINE")
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone().expect("dup"))
        .stderr(err.try_clone().expect("dup"))
        .spawn()
        .expect("the snapconf binary runs");
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "snapconf {:?} did not {what} within {limit:?}",
                args.iter()
                    .map(|a| a.as_ref().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let read = |mut f: std::fs::File| {
        use std::io::{Read, Seek};
        let mut s = String::new();
        f.seek(std::io::SeekFrom::Start(0)).expect("seek");
        let _ = f.read_to_string(&mut s);
        s
    };
    (status.code().unwrap_or(-1), read(out), read(err))
}

/// Make a FIFO (named pipe) at `at`, mode 0600.
pub fn mkfifo(at: &std::path::Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        at,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .expect("mkfifo");
}
