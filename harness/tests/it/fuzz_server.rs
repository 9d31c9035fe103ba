//! The fuzzer's persistent servers ([`snapconf_producers::process::server`]): the same
//! archives give the same verdicts through a worker's server as through one process per
//! archive; a server killed mid-session is started again and only its request is lost; an
//! extractor that replaces the root or removes its parent is a finding and the next
//! executions run as ever.

use crate::support;

use snapconf_harness::checks::Check;
use snapconf_harness::fuzz::{verdicts, DrawnVerdict, FuzzOptions, Verdicts};
use snapconf_harness::model::profile::Profile;
use snapconf_producers::adapters::python::python_command;
use snapconf_producers::process::run::run_limited;
use snapconf_producers::process::server::{Server, SERVE_PYTHON_PY};
use snapconf_producers::{Availability, Extractor, HydrateRequest, Outcome, ToolError};
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;
use support::skip::skip;

/// A Python script run as `python3 -I -S -c SCRIPT ARCHIVE ROOT`, one-shot or through the
/// Python server, as the built-in Python extractors are.
struct Scripted {
    name: &'static str,
    script: &'static str,
}

impl Scripted {
    fn args<'a>(req: &'a HydrateRequest<'_>) -> [&'a OsStr; 2] {
        [req.archive.as_os_str(), req.root.as_os_str()]
    }
}

impl Extractor for Scripted {
    fn name(&self) -> &str {
        self.name
    }

    fn availability(&self) -> Availability {
        snapconf_producers::adapters::python::python_availability()
    }

    fn hydrate(&self, req: &HydrateRequest<'_>) -> Result<Outcome, ToolError> {
        let mut cmd = python_command(self.script, &Self::args(req));
        run_limited(&mut cmd, req.scratch, req.timeout, req.limits)
    }

    fn view_paths(&self) -> Option<Vec<PathBuf>> {
        Some(snapconf_producers::adapters::python::view_paths())
    }

    fn server_command(&self) -> Option<Command> {
        Some(python_command(SERVE_PYTHON_PY, &[OsStr::new(self.script)]))
    }

    fn hydrate_served(
        &self,
        req: &HydrateRequest<'_>,
        server: &mut Server,
    ) -> Result<Outcome, ToolError> {
        let args = Self::args(req);
        server.request(&python_command(self.script, &args), &args, req.timeout)
    }
}

/// The seed archives of the checkout.
fn seeds() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpora/seeds");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("corpora/seeds")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "tar"))
        .map(|p| (p.display().to_string(), std::fs::read(&p).expect("seed")))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no seeds in {}", dir.display());
    out
}

/// Options of a session in a view over the seeds; `None` (after a skip) without a view
/// or a Python with filters.
fn options(seed: u64, server: bool) -> Option<FuzzOptions> {
    if !crate::support::view_or_skip("") {
        return None;
    }
    let base = snapconf_harness::jail::default_jail_base();
    let python = snapconf_producers::PythonFilterExtractor::DATA;
    if let Availability::Unavailable { install_hint, .. } = python.availability() {
        skip("python3 with tarfile filters", &install_hint);
        return None;
    }
    Some(FuzzOptions {
        bases: seeds(),
        runs: None,
        profile: Profile::default_profile(),
        time: Duration::from_secs(60),
        seed,
        timeout: Duration::from_secs(10),
        jail_base: base,
        report_dir: std::env::temp_dir(),
        shrink_runs: 0,
        bin: support::snapconf_bin(),
        checks: Check::ALL.to_vec(),
        view: true,
        jobs: 1,
        server,
        replay_args: String::new(),
        known: Default::default(),
        causes_per_check: snapconf_harness::fuzz::MAX_CAUSES_PER_CHECK,
        coverage: snapconf_harness::fuzz::CoverageMode::Off,
    })
}

/// `n` draws of `seed` through `ex` both ways: (server, one-shot).
fn both(ex: &dyn Extractor, seed: u64, n: usize) -> Option<(Verdicts, Verdicts)> {
    let served = verdicts(ex, &options(seed, true)?, n).expect("served");
    let one_shot = verdicts(ex, &options(seed, false)?, n).expect("one-shot");
    Some((served, one_shot))
}

/// Asserts two runs of the same draws agree archive by archive.
fn assert_same(what: &str, served: &[DrawnVerdict], one_shot: &[DrawnVerdict]) {
    assert_eq!(served.len(), one_shot.len(), "{what}: as many archives ran");
    for (i, (a, b)) in served.iter().zip(one_shot).enumerate() {
        assert_eq!(a.archive, b.archive, "{what}: draw {i} is the same archive");
        assert_eq!(
            (a.accepted, &a.checks),
            (b.accepted, &b.checks),
            "{what}: draw {i} (server, then one-shot)"
        );
    }
}

/// Python's `data` and `tar` filters and the reference (a `snapconf` child in the view)
/// give every archive of a seed's draws the same verdict and the same findings through
/// their server as with one process per archive; the draws themselves are the same (the
/// seed alone decides them), and the server path did run through a server.
#[test]
fn the_server_path_gives_the_one_shot_verdicts() {
    use snapconf_producers::PythonFilterExtractor;
    let reference = snapconf_harness::engine::faults::ChildReference::new(
        support::snapconf_bin(),
        &snapconf_harness::model::policy_map::reference_policy(&Profile::default_profile(), None),
    );
    let cases: [(&dyn Extractor, usize); 3] = [
        (&PythonFilterExtractor::DATA, 100),
        (&PythonFilterExtractor::TAR, 30),
        (&reference, 80),
    ];
    for (ex, n) in cases {
        let Some((s, o)) = both(ex, 7, n) else {
            return;
        };
        let (served, one_shot, starts) = (&s.drawn, &o.drawn, s.server_starts);
        assert_same(ex.name(), served, one_shot);
        assert!(starts >= 1, "{}: the server path used a server", ex.name());
        assert_eq!(
            o.server_starts,
            0,
            "{}: one-shot started no server",
            ex.name()
        );
        let findings = served.iter().filter(|v| !v.checks.is_empty()).count();
        let accepted = served.iter().filter(|v| v.accepted).count();
        eprintln!(
            "{}: {} archives, {accepted} accepted, {findings} with findings, {starts} server start(s), {} restore(s), {} view(s) laid out again",
            ex.name(),
            served.len(),
            s.view_restores,
            s.view_rebuilds
        );
        assert!(accepted > 0, "{}: some archive was accepted", ex.name());
    }
}

/// A tool that kills its server on every third archive (by its size in blocks): that
/// archive is a `hang`, the server is started again, and the archives after it are
/// extracted as ever.
#[test]
fn a_server_killed_mid_session_is_started_again() {
    const KILLER: &str = r#"import os, sys, tarfile
if os.path.getsize(sys.argv[1]) // 512 % 3 == 0:
    os.kill(os.getppid(), 9)
    raise SystemExit(0)
with tarfile.open(sys.argv[1]) as t:
    t.extractall(sys.argv[2], filter='data')
"#;
    let ex = Scripted {
        name: "python-killer",
        script: KILLER,
    };
    let Some(opts) = options(3, true) else {
        return;
    };
    let run = verdicts(&ex, &opts, 40).expect("runs");
    let (served, starts) = (&run.drawn, run.server_starts);
    let killed: Vec<usize> = served
        .iter()
        .enumerate()
        .filter(|(_, v)| (v.archive.len() / 512) % 3 == 0)
        .map(|(i, _)| i)
        .collect();
    assert!(!killed.is_empty(), "some archive kills its server");
    for (i, v) in served.iter().enumerate() {
        let hang = v.checks.contains(&Check::HANG);
        assert_eq!(
            hang,
            killed.contains(&i),
            "draw {i}: a hang exactly when killed"
        );
    }
    // One start, one more for each kill but a kill by the last archive, and one for each
    // view laid out again after a change outside the root (a `containment` finding).
    let last_killed = u64::from(killed.last() == Some(&(served.len() - 1)));
    let kills = killed.len() as u64;
    let relaid = run.view_rebuilds;
    assert!(
        (1 + kills - last_killed..=1 + kills + relaid).contains(&starts),
        "{starts} server starts for {kills} kills and {relaid} views laid out again"
    );
    let after = killed[0] + 1;
    assert!(
        served[after..].iter().any(|v| v.accepted),
        "archives after a kill are extracted"
    );
}

/// An extractor that replaces the root with a file, or removes the root's parent: each
/// archive is a finding, through the server as with one process per archive, and every
/// draw runs (the session is not ended by what the extractor did).
#[test]
fn replacing_the_root_or_removing_its_parent_is_a_finding_and_the_session_goes_on() {
    const RETYPE: &str = r#"import os, shutil, sys
root = sys.argv[2]
if os.path.getsize(sys.argv[1]) // 512 % 2:
    shutil.rmtree(root)
    open(root, 'w').write('not a directory')
else:
    shutil.rmtree(os.path.dirname(root))
"#;
    let ex = Scripted {
        name: "python-retype",
        script: RETYPE,
    };
    let Some((s, o)) = both(&ex, 11, 12) else {
        return;
    };
    let (served, one_shot) = (&s.drawn, &o.drawn);
    assert_same("retype", served, one_shot);
    assert!(
        s.view_restores >= 1,
        "removing the root's parent is restored, not only laid out again"
    );
    assert!(served.len() >= 10, "every draw ran: {}", served.len());
    for (i, v) in served.iter().enumerate() {
        assert!(!v.checks.is_empty(), "draw {i} is a finding");
        if (v.archive.len() / 512) % 2 == 0 {
            assert!(
                v.checks.contains(&Check::CONTAINMENT),
                "draw {i}: removing the parent is containment: {:?}",
                v.checks
            );
        }
    }
}

/// Processes whose command line mentions `needle` (a jail directory: every `bwrap` and
/// server of a session names its jail).
fn processes_naming(needle: &std::path::Path) -> Vec<String> {
    let needle = needle.as_os_str().as_encoded_bytes();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        if cmdline.windows(needle.len()).any(|w| w == needle) {
            found.push(String::from_utf8_lossy(&cmdline).replace('\0', " "));
        }
    }
    found
}

/// A signal ends a session whose workers run servers (`-j 2`): exit 130, and no jail, no
/// `bwrap` and no server left behind.
#[test]
fn a_signal_ends_a_served_session_leaving_nothing_behind() {
    use std::process::Stdio;
    if options(1, true).is_none() {
        return;
    }
    for ex in ["python-data", "reference"] {
        let tmp = tempfile::tempdir().expect("scratch");
        let (jail, report) = (tmp.path().join("jail"), tmp.path().join("report"));
        std::fs::create_dir(&jail).expect("jail dir");
        let corpora = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpora");
        let mut child = support::Snapconf::new()
            .args(["fuzz", "--extractor", ex, "--time", "120", "--seed", "1"])
            .args(["-j", "2"])
            .arg("--corpora")
            .arg(&corpora)
            .arg("--jail-dir")
            .arg(&jail)
            .arg("--report-dir")
            .arg(&report)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn snapconf fuzz");
        std::thread::sleep(Duration::from_millis(2500));
        assert!(
            !processes_naming(&jail).is_empty(),
            "{ex}: the session runs servers in its jails"
        );
        let pid = rustix::process::Pid::from_child(&child);
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
        let status =
            support::wait_within(&mut child, Duration::from_secs(60), "stop after SIGTERM");
        assert_eq!(status.code(), Some(130), "{ex}: exit 130 after SIGTERM");
        let left: Vec<_> = std::fs::read_dir(&jail)
            .expect("jail dir")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "{ex}: jails left behind: {left:?}");
        let running = processes_naming(&jail);
        assert!(
            running.is_empty(),
            "{ex}: processes left behind: {running:?}"
        );
    }
}

/// A tool that hangs on every third archive (by its size in blocks): the session keeps one
/// `hang`, found at the full timeout and shrunk to an archive that still hangs, and the
/// later hangs end at the shortened timeout instead of costing a whole `--timeout` each.
#[test]
fn later_hangs_end_at_the_cut_not_the_timeout() {
    const HANGER: &str = r#"import os, sys, tarfile, time
if os.path.getsize(sys.argv[1]) // 512 % 3 == 0:
    time.sleep(600)
with tarfile.open(sys.argv[1]) as t:
    t.extractall(sys.argv[2], filter='data')
"#;
    let ex = Scripted {
        name: "python-hanger",
        script: HANGER,
    };
    let Some(mut opts) = options(4, true) else {
        return;
    };
    let report = tempfile::tempdir().expect("report dir");
    opts.report_dir = report.path().to_path_buf();
    // A fixed number of executions, the time only a guard: the same draws (a third of
    // them hangs) however loaded the machine is.
    opts.runs = Some(18);
    opts.time = Duration::from_secs(600);
    opts.timeout = Duration::from_secs(8);
    opts.shrink_runs = 6;
    opts.checks = vec![Check::HANG];
    let summary = snapconf_harness::fuzz::fuzz(&ex, &opts, &mut |_| {}).expect("session");
    eprintln!(
        "{} executions, {} cut short",
        summary.executions, summary.hangs_cut_short
    );
    let hangs: Vec<_> = summary
        .findings
        .iter()
        .filter(|f| f.check == Check::HANG)
        .collect();
    assert_eq!(hangs.len(), 1, "one hang kept: {:?}", summary.findings);
    let archive = std::fs::read(report.path().join(&hangs[0].case_dir).join("archive.tar"))
        .expect("the hang's archive");
    assert_eq!(
        archive.len() / 512 % 3,
        0,
        "the hang's archive is one that hangs"
    );
    // Of the 18 draws a third hang: one is the session's `hang`, told at the full 8 s;
    // every later one ends at the cut and is counted, not told.
    let told = summary.hits.get("hang").copied().unwrap_or(0);
    assert!(
        summary.hangs_cut_short >= 3 && told <= 2,
        "{} hangs ended at the cut and {told} at the full timeout in {} executions",
        summary.hangs_cut_short,
        summary.executions
    );
    assert_eq!(summary.executions, 18, "the session ends at --runs");
}

/// A tool that hangs on every archive holding a hard link (the `hardlink-*` attack classes
/// and some others draw them, and mutants of a seed that has one), against the same tool
/// that never hangs, over the same seed and `--runs`: every hang is charged to what drew
/// it (`hung_by`, which lowers that class's draw weight: `fuzz::causes`' unit tests show
/// the draws' share fall), and after each hang the worker's next execution runs on the
/// spare server it had made ahead, not on a server started then.
#[test]
fn hangs_are_charged_to_the_class_that_drew_them_and_a_spare_replaces_the_hung_server() {
    const HANG_ON_LINKS: &str = r#"import sys, tarfile, time
try:
    with tarfile.open(sys.argv[1]) as t:
        links = any(m.islnk() for m in t.getmembers())
except Exception:
    links = False
if links:
    time.sleep(600)
with tarfile.open(sys.argv[1]) as t:
    t.extractall(sys.argv[2], filter='data')
"#;
    const RUNS: u64 = 100;
    const QUIET: &str = r#"import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    t.extractall(sys.argv[2], filter='data')
"#;
    let session = |name: &'static str, script: &'static str| {
        let mut opts = options(6, true)?;
        let report = tempfile::tempdir().expect("report dir");
        opts.report_dir = report.path().to_path_buf();
        // A fixed number of executions, the time only a guard: the draws depend on the
        // seed and the hangs alone, however loaded the machine is.
        opts.runs = Some(RUNS);
        opts.time = Duration::from_secs(900);
        opts.timeout = Duration::from_secs(6);
        opts.shrink_runs = 4;
        opts.checks = vec![Check::HANG];
        let ex = Scripted { name, script };
        Some(snapconf_harness::fuzz::fuzz(&ex, &opts, &mut |_| {}).expect("session"))
    };
    let Some(hanging) = session("python-link-hanger", HANG_ON_LINKS) else {
        return;
    };
    let Some(quiet) = session("python-quiet", QUIET) else {
        return;
    };
    eprintln!(
        "hanging: drawn {:?}, hung {:?}, {} spares used, {} server starts; quiet: drawn {:?}",
        hanging.drawn_by,
        hanging.hung_by,
        hanging.spares_used,
        hanging.server_starts,
        quiet.drawn_by
    );
    assert_eq!(
        (hanging.executions, quiet.executions),
        (RUNS, RUNS),
        "--runs"
    );
    assert!(quiet.hung_by.is_empty(), "the quiet tool never hangs");
    let classes: Vec<&String> = hanging.hung_by.keys().filter(|k| *k != "mutant").collect();
    assert!(!classes.is_empty(), "some attack class drew a hang");
    for (c, hung) in &hanging.hung_by {
        assert!(hanging.drawn_by.get(c) >= Some(hung), "{c}");
    }
    // Each hang of the loop is charged once: the one told at the full timeout (and its
    // confirmation) and those cut short.
    let hangs: u64 = hanging.hung_by.values().sum();
    let told = hanging.hits.get("hang").copied().unwrap_or(0);
    assert_eq!(hangs, told + hanging.hangs_cut_short, "every hang charged");
    // Every hang killed the server; the next execution (if any) took the spare.
    assert!(hangs >= 3, "{hangs} hangs");
    assert!(
        hanging.spares_used + 1 >= hangs,
        "{} spares used after {hangs} hangs",
        hanging.spares_used
    );
    assert_eq!(quiet.spares_used, 0, "no server of the quiet tool died");
}
