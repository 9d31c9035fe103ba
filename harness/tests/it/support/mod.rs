//! Test support: hostile archives the `tar` crate will not write, from plain member lists
//! (through the harness's raw writer), and the built-in extractors that can run here.
#![allow(dead_code)]

/// The suite's one skip helper, [`skip::skip`] (`test-support/skip.rs`, shared by the three
/// test crates): prints `SKIPPED <test>: ...`, or fails with `SNAPCONF_REQUIRE_TOOLS=1`.
#[path = "../../../../test-support/skip.rs"]
pub mod skip;

mod cmd;
pub use cmd::{snapconf_bin, Snapconf};

/// Whether a filesystem view (bubblewrap) can be made over the default jail base here;
/// when not, the test is skipped ([`skip::skip`], `context` naming it) and this is `false`.
pub fn view_or_skip(context: &str) -> bool {
    let base = snapconf_harness::jail::default_jail_base();
    match snapconf_harness::jail::view::probe(base.as_deref()) {
        Ok(_) => true,
        Err(why) => {
            skip::skip(
                &format!("{context}no filesystem view: {why}"),
                "apt-get install bubblewrap",
            );
            false
        }
    }
}

/// `snapconf ARGS` ([`Snapconf`]) with `envs` set: its exit code (-1 for a signal), stdout
/// and stderr.
pub fn snapconf<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    envs: &[(&str, &str)],
) -> (i32, String, String) {
    Snapconf::new().args(args).envs(envs.iter().copied()).run()
}

/// The environment of a run whose cases are all plain draws (`SNAPCONF_GEN_STRATIFY=0`):
/// for tests of the CLI, reports, faults and shrinking that want a few rich cases with
/// findings, not the stratified opening cases stripped to one shape each.
pub const PLAIN_DRAWS: (&str, &str) = ("SNAPCONF_GEN_STRATIFY", "0");

/// `snapconf ARGS --report-dir REPORT` ([`Snapconf`]): its output and the `report.json` it
/// wrote (panics naming the exit code and stderr when there is none).
pub fn run_with_report(
    args: &[&str],
    report: &std::path::Path,
) -> (std::process::Output, serde_json::Value) {
    run_with_report_env(args, report, &[])
}

/// [`run_with_report`] with `envs` set.
pub fn run_with_report_env(
    args: &[&str],
    report: &std::path::Path,
    envs: &[(&str, &str)],
) -> (std::process::Output, serde_json::Value) {
    let out = Snapconf::new()
        .args(args)
        .arg("--report-dir")
        .arg(report)
        .envs(envs.iter().copied())
        .output()
        .expect("snapconf runs");
    let text = std::fs::read_to_string(report.join("report.json")).unwrap_or_else(|e| {
        panic!(
            "no report.json ({e}); exit {:?}; stderr:\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (
        out,
        serde_json::from_str(&text).expect("report.json parses"),
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

use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::model::profile::Profile;
use snapconf_producers::{Availability, Extractor};
use snapconf_tarbytes::raw::RawTar;

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
/// output goes to files ([`Snapconf::timeout`]), so that a hung process cannot block on a
/// full pipe.
pub fn snapconf_within<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    limit: std::time::Duration,
    what: &str,
) -> (i32, String, String) {
    let mut cmd = Snapconf::new();
    cmd.args(args).timeout(limit);
    match cmd.output() {
        Ok(out) => (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ),
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
            panic!("{} did not {what} within {limit:?}", cmd.describe())
        }
        Err(e) => panic!("the snapconf binary runs: {e}"),
    }
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
