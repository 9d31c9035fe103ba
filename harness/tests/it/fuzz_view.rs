//! The fuzzer's filesystem view: archives that reach past any jail on the host (absolute
//! names, `////x`, twenty `..`) run, land among the view's decoys, and are `containment`
//! findings; the host is never written. An extractor with no protection at all (Python's
//! `extractall` with the `fully_trusted` filter) is caught from the benign seed archives
//! alone within seconds, by the attack generator.

use crate::support;

use snapconf_harness::checks::Check;
use snapconf_harness::fuzz::{fuzz, replay_finding, FuzzOptions};
use snapconf_harness::model::profile::Profile;
use snapconf_producers::process::run::run_limited;
use snapconf_producers::{Availability, Extractor, HydrateRequest, Outcome, ToolError};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::skip::skip;

/// `python3` running `tarfile.open(ARCHIVE).extractall(ROOT)` with no protection: the
/// `fully_trusted` filter where the interpreter has filters, no filter where it has none.
struct Unprotected;

const SCRIPT: &str = "import sys, tarfile\n\
t = tarfile.open(sys.argv[1])\n\
kw = {'filter': 'fully_trusted'} if hasattr(tarfile, 'fully_trusted_filter') else {}\n\
t.extractall(sys.argv[2], **kw)\n";

impl Extractor for Unprotected {
    fn name(&self) -> &str {
        "python-unprotected"
    }

    fn availability(&self) -> Availability {
        snapconf_producers::adapters::python::python_availability()
    }

    fn hydrate(&self, req: &HydrateRequest<'_>) -> Result<Outcome, ToolError> {
        let mut cmd = Command::new(snapconf_producers::adapters::python::interpreter());
        cmd.args(["-I", "-S", "-c", SCRIPT])
            .arg(req.archive)
            .arg(req.root);
        run_limited(&mut cmd, req.scratch, req.timeout, req.limits)
    }

    fn view_paths(&self) -> Option<Vec<PathBuf>> {
        Some(snapconf_producers::adapters::python::view_paths())
    }
}

/// The options of a session over `bases`, in a view; `None` (after a skip) when the view
/// or Python is missing here.
fn options(bases: Vec<(String, Vec<u8>)>, report: &Path, time: u64) -> Option<FuzzOptions> {
    if !crate::support::view_or_skip("") {
        return None;
    }
    let base = snapconf_harness::jail::default_jail_base();
    if let Availability::Unavailable { install_hint, .. } = Unprotected.availability() {
        skip("python3 with tarfile", &install_hint);
        return None;
    }
    Some(FuzzOptions {
        bases,
        runs: None,
        profile: Profile::default_profile(),
        time: Duration::from_secs(time),
        seed: 1,
        timeout: Duration::from_secs(10),
        jail_base: base,
        report_dir: report.to_path_buf(),
        shrink_runs: 40,
        bin: "snapconf".into(),
        checks: Check::ALL.to_vec(),
        view: true,
        jobs: 1,
        replay_args: String::new(),
        server: true,
        known: Default::default(),
        causes_per_check: snapconf_harness::fuzz::MAX_CAUSES_PER_CHECK,
        coverage: snapconf_harness::fuzz::CoverageMode::Off,
    })
}

fn sha(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

#[test]
fn escapes_run_in_the_view_and_never_reach_the_host() {
    let report = tempfile::tempdir().expect("report dir");
    let Some(opts) = options(Vec::new(), report.path(), 1) else {
        return;
    };
    let marker = format!("snapconf-view-escape-{}", std::process::id());
    let deep = format!("{}tmp/{marker}", "../".repeat(20));
    let abs = format!("////tmp/{marker}-abs");
    let archive = support::raw_archive(&[
        support::RawMember {
            flag: b'0',
            name: deep.as_bytes(),
            link: b"",
            data: b"escaped\n",
        },
        support::RawMember {
            flag: b'0',
            name: abs.as_bytes(),
            link: b"",
            data: b"escaped\n",
        },
        support::RawMember {
            flag: b'0',
            name: b"/etc/passwd",
            link: b"",
            data: b"root::0:0::/:/bin/sh\n",
        },
    ]);
    let dir = tempfile::tempdir().expect("case dir");
    std::fs::write(dir.path().join("archive.tar"), &archive).expect("archive");
    let passwd = sha(Path::new("/etc/passwd"));
    let hits = replay_finding(dir.path(), &Unprotected, &opts).expect("replays, not refused");
    let containment: Vec<&String> = hits
        .iter()
        .filter(|(c, _)| *c == Check::CONTAINMENT)
        .map(|(_, m)| m)
        .collect();
    assert!(!containment.is_empty(), "{hits:?}");
    assert!(
        !Path::new("/tmp").join(&marker).exists(),
        "the host's /tmp was written"
    );
    assert!(
        !Path::new("/tmp").join(format!("{marker}-abs")).exists(),
        "the host's /tmp was written"
    );
    assert_eq!(
        sha(Path::new("/etc/passwd")),
        passwd,
        "the host's /etc/passwd changed"
    );
    // The archive file itself replays as its reproducer directory does.
    let by_file = replay_finding(&dir.path().join("archive.tar"), &Unprotected, &opts)
        .expect("replays the file");
    let checks = |h: &[(Check, String)]| h.iter().map(|(c, _)| *c).collect::<Vec<_>>();
    assert_eq!(checks(&by_file), checks(&hits), "{by_file:?}");
}

#[test]
fn seeds_alone_find_an_escape_in_an_unprotected_extractor() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/seeds");
    let mut bases = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&seeds)
        .expect("corpora/seeds")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "tar"))
        .collect();
    paths.sort();
    for p in paths {
        bases.push((p.display().to_string(), std::fs::read(&p).expect("seed")));
    }
    assert!(!bases.is_empty());
    let report = tempfile::tempdir().expect("report dir");
    let Some(opts) = options(bases, report.path(), 10) else {
        return;
    };
    let summary = fuzz(&Unprotected, &opts, &mut |_| {}).expect("fuzz");
    let escape = summary
        .findings
        .iter()
        .find(|f| f.check == Check::CONTAINMENT)
        .unwrap_or_else(|| {
            let found: Vec<String> = summary
                .findings
                .iter()
                .map(|f| format!("{} ({})", f.check, f.base))
                .collect();
            panic!(
                "no containment in {} executions; found: {found:?}",
                summary.executions
            )
        });
    assert_eq!(
        summary.skipped_unsafe_for_host, 0,
        "nothing is skipped in a view"
    );
    assert!(escape.records <= 8, "shrunk: {escape:?}");
    assert!(
        report
            .path()
            .join(&escape.case_dir)
            .join("repro.sh")
            .exists(),
        "{escape:?}"
    );
}

/// How many zombie processes have `parent` as their parent (`/proc/*/stat`).
fn zombie_children(parent: i32) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            // `pid (comm) state ppid ...`; comm may hold spaces, so read after its `)`.
            let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
                return false;
            };
            let mut f = rest.split_whitespace();
            f.next() == Some("Z") && f.next().and_then(|p| p.parse().ok()) == Some(parent)
        })
        .count()
}

/// A signal ends a fuzz session at the next execution: exit 130 and no jail, mount or
/// process left behind (a session killed mid-hydration used to leave its jail).
#[test]
fn a_signal_ends_a_fuzz_session_leaving_nothing_behind() {
    use std::process::Stdio;
    if Command::new("tar").arg("--version").output().is_err() {
        skip("GNU tar", "apt-get install tar");
        return;
    }
    let tmp = tempfile::tempdir().expect("scratch");
    let (jail, report) = (tmp.path().join("jail"), tmp.path().join("report"));
    std::fs::create_dir(&jail).expect("jail dir");
    let mut child = support::Snapconf::new()
        .args([
            "fuzz",
            "--extractor",
            "gnu-tar",
            "--time",
            "120",
            "--seed",
            "1",
        ])
        .arg("--jail-dir")
        .arg(&jail)
        .arg("--report-dir")
        .arg(&report)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn snapconf fuzz");
    std::thread::sleep(Duration::from_millis(2500));
    let pid = rustix::process::Pid::from_child(&child);
    // Every execution's processes are reaped as it ends: no zombie piles up under the
    // session (one per execution once exhausted the machine's process ids in minutes).
    let zombies = zombie_children(pid.as_raw_nonzero().get());
    assert!(
        zombies < 8,
        "{zombies} zombie children of the session after 2.5 s"
    );
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
    let status = support::wait_within(&mut child, Duration::from_secs(60), "stop after SIGTERM");
    assert_eq!(status.code(), Some(130), "exit 130 after SIGTERM");
    let left: Vec<_> = std::fs::read_dir(&jail)
        .expect("jail dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "jails left behind: {left:?}");
}

/// Metadata written through a swapped link (Python sets directory modes at the end of an
/// extraction, through whatever the name then is) is seen on the jail's own node too, and
/// the view binds no host file that such a write could reach (no host device node).
#[test]
fn a_mode_set_late_through_a_swapped_link_is_containment() {
    let report = tempfile::tempdir().expect("report dir");
    let Some(opts) = options(Vec::new(), report.path(), 1) else {
        return;
    };
    let view_prefix = {
        let jail = snapconf_harness::jail::Jail::new(opts.jail_base.as_deref()).expect("jail");
        let v = snapconf_harness::jail::view::View::prepare(&jail, &[], &[]).expect("view");
        v.prefix().to_vec()
    };
    assert!(
        !view_prefix
            .iter()
            .any(|a| a == "--dev-bind" || a == "--proc"),
        "no host device or procfs in the view: {view_prefix:?}"
    );
    // `d/`, `l -> d`, `l/` with mode 0711, `l -> /`: the late chmod of `l` lands on `/`.
    let mut t = snapconf_tarbytes::raw::RawTar::new();
    t.push(b'5', b"d/", b"", b"", 0o755);
    t.push(b'2', b"l", b"d", b"", 0o777);
    t.push(b'5', b"l/", b"", b"", 0o711);
    t.push(b'2', b"l", b"/", b"", 0o777);
    let dir = tempfile::tempdir().expect("case dir");
    std::fs::write(dir.path().join("archive.tar"), t.finish()).expect("archive");
    let py = snapconf_producers::PythonFilterExtractor::TAR;
    let hits = replay_finding(dir.path(), &py, &opts).expect("replays");
    assert!(
        hits.iter()
            .any(|(c, m)| *c == Check::CONTAINMENT && m.contains("the jail itself")),
        "{hits:?}"
    );
}

/// One line of `/proc/self/mountinfo`: the device (`major:minor`), the root of the mount
/// within its filesystem, the mount point, whether it is mounted read-write, and the
/// filesystem type. Paths keep the kernel's octal escapes (`\040`).
struct MountLine {
    dev: String,
    root: String,
    point: String,
    rw: bool,
    fstype: String,
}

fn mountinfo(text: &str) -> Vec<MountLine> {
    text.lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let f: Vec<&str> = left.split(' ').collect();
            let fstype = right.split(' ').next()?;
            Some(MountLine {
                dev: f.get(2)?.to_string(),
                root: f.get(3)?.to_string(),
                point: f.get(4)?.to_string(),
                rw: f.get(5)?.split(',').any(|o| o == "rw"),
                fstype: fstype.to_string(),
            })
        })
        .collect()
}

/// Whether `p` is `dir` or below it, by whole components.
fn at_or_below(p: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    p == dir || dir.is_empty() || p.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// Where `path` (a host path) sits within its filesystem, from the host's mount table: the
/// device and the path from the filesystem's root, as a mountinfo `root` field reads.
fn fs_location(host: &[MountLine], path: &str) -> (String, String) {
    let m = host
        .iter()
        .filter(|m| at_or_below(path, &m.point))
        .max_by_key(|m| m.point.len())
        .expect("a mount holds every path");
    let rest = path[m.point.trim_end_matches('/').len()..].to_string();
    let root = format!("{}{rest}", m.root.trim_end_matches('/'));
    (m.dev.clone(), root)
}

/// Every mount of a fuzz view that the tool can write, for the view `view` of `jail`: each
/// must be the jail (or below it) or a tmpfs private to the view (a device the host has
/// no mount of). The mount table is read inside the view with a procfs mounted for the
/// test alone (the view itself has none).
fn writable_outside_the_jail(
    view: &snapconf_harness::jail::view::View,
    jail: &Path,
) -> Vec<String> {
    let host_text = std::fs::read_to_string("/proc/self/mountinfo").expect("host mountinfo");
    let host = mountinfo(&host_text);
    let jail_path = jail.to_str().expect("a UTF-8 jail path");
    let (jail_dev, jail_root) = fs_location(&host, jail_path);
    let mut prefix = view.prefix().to_vec();
    let dashes = prefix.pop().expect("the prefix ends with --");
    prefix.extend(["--proc".into(), "/proc".into(), dashes]);
    let (first, rest) = prefix.split_first().expect("bwrap");
    let out = Command::new(first)
        .args(rest)
        .args(["cat", "/proc/self/mountinfo"])
        .output()
        .expect("runs bwrap");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let inside = mountinfo(&String::from_utf8_lossy(&out.stdout));
    assert!(inside.len() > 2, "a mount table read in the view");
    inside
        .iter()
        .filter(|m| m.rw && !(m.point == "/proc" && m.fstype == "proc"))
        .filter(|m| {
            let in_jail = m.dev == jail_dev && at_or_below(&m.root, &jail_root);
            let private_tmpfs = m.fstype == "tmpfs" && !host.iter().any(|h| h.dev == m.dev);
            !(in_jail || private_tmpfs)
        })
        .map(|m| format!("{} (root {} on {} {})", m.point, m.root, m.fstype, m.dev))
        .collect()
}

/// No directory outside the jail is writable in a fuzz view, whatever the tool: a
/// built-in extractor's view, and a plugged-in backend's (the whole host read-only, and
/// the worker's scratch).
#[test]
fn every_writable_path_of_a_fuzz_view_is_the_jail_or_its_own_tmpfs() {
    use snapconf_harness::jail::view::View;
    use snapconf_producers::process::view::WHOLE_HOST;
    if !crate::support::view_or_skip("") {
        return;
    }
    let base = snapconf_harness::jail::default_jail_base();
    let kinds: [(&str, Vec<PathBuf>); 2] = [
        (
            "built-in",
            snapconf_producers::adapters::python::view_paths(),
        ),
        ("backend", vec![PathBuf::from(WHOLE_HOST)]),
    ];
    for (kind, paths) in kinds {
        let jail = snapconf_harness::jail::Jail::new(base.as_deref()).expect("jail");
        let archive = jail.archive();
        std::fs::write(&archive, b"").expect("archive");
        let view = View::for_fuzz(&jail, &paths, std::slice::from_ref(&archive)).expect("view");
        assert_eq!(view.scratch().is_some(), kind == "backend", "{kind}");
        let bad = writable_outside_the_jail(&view, jail.path());
        assert!(
            bad.is_empty(),
            "{kind}: writable outside the jail: {bad:#?}"
        );
    }
}
