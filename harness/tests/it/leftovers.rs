//! Nothing outlives a killed snapconf: after a `SIGKILL` of `run` (during the `enospc`
//! fault, as root), `fuzz` or `lifecycle`, no mount of it is left on the host and the next
//! start of any of them removes the jails the dead process left in the (private) jail base.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A private jail base for one test (never `/dev/shm` itself, where others' jails live),
/// plus a report directory beside it.
struct Base {
    tmp: tempfile::TempDir,
}

impl Base {
    fn new() -> Base {
        let on = snapconf_harness::jail::default_jail_base().unwrap_or_else(std::env::temp_dir);
        let tmp = tempfile::Builder::new()
            .prefix("leftovers-test-")
            .tempdir_in(on)
            .expect("tempdir");
        std::fs::create_dir(tmp.path().join("jails")).expect("jails");
        Base { tmp }
    }

    fn jails(&self) -> PathBuf {
        self.tmp.path().join("jails")
    }

    /// A fresh report directory path (not created).
    fn report(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// `snapconf <args> --report-dir <report> --jail-dir <jails>`, output discarded.
    fn command(&self, args: &[&str], report: &str) -> support::Snapconf {
        let mut c = support::Snapconf::new();
        c.args(args)
            .arg("--report-dir")
            .arg(self.report(report))
            .arg("--jail-dir")
            .arg(self.jails())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    }

    /// Names in the jail base.
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.jails())
            .expect("read jails")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// Names in the jail base that name `pid` (`snapconf-<kind>-<pid>-*`).
    fn of_pid(&self, pid: u32) -> Vec<String> {
        let infix = format!("-{pid}-");
        self.names()
            .into_iter()
            .filter(|n| n.starts_with("snapconf-") && n.contains(&infix))
            .collect()
    }
}

/// A child that is killed and reaped when dropped, so a failing test leaves no process.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits (at most a minute) until `ready` holds, polling; panics naming `what` if not.
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "timed out waiting until {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn sigkill(child: &mut Running) {
    let pid = rustix::process::Pid::from_child(&child.0);
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).expect("SIGKILL");
    support::wait_within(&mut child.0, Duration::from_secs(30), "die after SIGKILL");
}

/// Processes whose command line names `needle` (tools a killed run started in its jails).
fn processes_naming(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) {
                found.push(cmd);
            }
        }
    }
    found
}

/// Lines of this process's mountinfo that are an `enospc` tmpfs under `dir`.
fn enospc_mounts_under(mountinfo: &str, dir: &Path) -> Vec<String> {
    let d = dir.to_string_lossy();
    mountinfo
        .lines()
        .filter(|l| l.contains("snapconf-enospc") && l.contains(d.as_ref()))
        .map(str::to_owned)
        .collect()
}

/// A short `run` to its end: the "next start" that sweeps.
fn short_run(base: &Base, report: &str) {
    let status = base
        .command(
            &[
                "run",
                "--cases",
                "1",
                "--seed",
                "1",
                "--producers",
                "tar-rs",
                "--extractors",
                "reference",
            ],
            report,
        )
        .status()
        .expect("run");
    assert_eq!(status.code(), Some(0), "the short run conforms");
}

/// Property: as root, a `run` killed while the `enospc` fault's tmpfs is mounted leaves no
/// mount on the host (snapconf runs in a private mount namespace), and the next start
/// removes the dead process's jails from the base, leaving it empty.
#[test]
fn a_run_killed_during_enospc_leaves_no_mount_and_the_next_start_sweeps() {
    if !rustix::process::geteuid().is_root() {
        support::skip::skip(
            "root (the enospc fault mounts a tmpfs)",
            "run the tests as root",
        );
        return;
    }
    let base = Base::new();
    let mut child = Running(
        base.command(
            &[
                "run",
                "--cases",
                "400",
                "--seed",
                "7",
                "--faults",
                "enospc",
                "--producers",
                "tar-rs",
                "--extractors",
                "reference",
            ],
            "killed",
        )
        .spawn()
        .expect("spawn"),
    );
    let pid = child.0.id();
    let jails = base.jails().canonicalize().expect("canonical");
    let theirs = format!("/proc/{pid}/mountinfo");
    wait_until("the enospc tmpfs is mounted in the run", || {
        let text = std::fs::read_to_string(&theirs).unwrap_or_default();
        !enospc_mounts_under(&text, &jails).is_empty()
    });
    sigkill(&mut child);
    wait_until("no process names the jail base", || {
        processes_naming(&jails.to_string_lossy()).is_empty()
    });
    let ours = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let left = enospc_mounts_under(&ours, &jails);
    assert!(left.is_empty(), "mounts outlived the run: {left:?}");
    assert!(
        !base.of_pid(pid).is_empty(),
        "the killed run left its jails (else this test tests nothing): {:?}",
        base.names()
    );
    short_run(&base, "next");
    assert_eq!(base.names(), Vec::<String>::new(), "the base is swept");
}

/// Property: a `run`, a `fuzz --extractor reference` and a `lifecycle` killed with SIGKILL
/// each leave their jails; the next start (of another of the three, in turn) removes every
/// `snapconf-*` entry of the dead pid, and, ending cleanly, leaves the base empty.
#[test]
fn the_next_start_removes_what_a_killed_run_fuzz_or_lifecycle_left() {
    let base = Base::new();
    let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora");
    let corpora = corpora.to_str().expect("utf-8 path");
    let common = ["--producers", "tar-rs", "--extractors", "reference"];
    let run_args: Vec<&str> = [&["run", "--cases", "100000", "--seed", "3"][..], &common].concat();
    let lifecycle_args: Vec<&str> = [
        &["lifecycle", "--sequences", "100000", "--seed", "3"][..],
        &common,
    ]
    .concat();
    let fuzz_args = [
        "fuzz",
        "--extractor",
        "reference",
        "--time",
        "30",
        "--seed",
        "3",
        "--corpora",
        corpora,
    ];
    let short_fuzz = [
        "fuzz",
        "--extractor",
        "reference",
        "--time",
        "1",
        "--seed",
        "4",
        "--corpora",
        corpora,
    ];
    let short_lifecycle: Vec<&str> = [
        &[
            "lifecycle",
            "--sequences",
            "1",
            "--turns",
            "2",
            "--seed",
            "4",
        ][..],
        &common,
    ]
    .concat();
    let short_run: Vec<&str> = [&["run", "--cases", "1", "--seed", "4"][..], &common].concat();
    // (what is killed, what starts next)
    let plan: [(&[&str], &[&str]); 3] = [
        (&run_args, &short_fuzz),
        (&fuzz_args, &short_lifecycle),
        (&lifecycle_args, &short_run),
    ];
    for (i, (killed, next)) in plan.into_iter().enumerate() {
        let mut child = Running(
            base.command(killed, &format!("killed-{i}"))
                .spawn()
                .expect("spawn"),
        );
        let pid = child.0.id();
        wait_until(&format!("`{}` made a jail", killed[0]), || {
            !base.of_pid(pid).is_empty()
        });
        sigkill(&mut child);
        let jails = base.jails().canonicalize().expect("canonical");
        wait_until("no process names the jail base", || {
            processes_naming(&jails.to_string_lossy()).is_empty()
        });
        let left = base.of_pid(pid);
        assert!(!left.is_empty(), "`{}` left nothing to sweep", killed[0]);
        let status = base
            .command(next, &format!("next-{i}"))
            .status()
            .expect("next start");
        assert!(
            matches!(status.code(), Some(0 | 1)),
            "`{}` ran: {status:?}",
            next[0]
        );
        assert_eq!(
            base.of_pid(pid),
            Vec::<String>::new(),
            "`{}` removed what the killed `{}` left ({left:?})",
            next[0],
            killed[0]
        );
        assert_eq!(base.names(), Vec::<String>::new(), "the base is empty");
    }
}
