//! snapconf as an ordinary user (issue 15): run as root only to drop to uid 65534 with
//! `setpriv`, `snapconf run` on generated workspaces (which hold directories of mode `0000`
//! and `0555`) exits 0 with a report, `snapconf audit` reads a directory of that user's
//! holding such directories and gives every mode back, and `snapconf replay` reruns a
//! reproducer that user's run wrote.

use crate::support;

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The user the test drops to (`nobody` on Debian).
const UID: u32 = 65534;

/// Whether this test can drop to [`UID`]: it runs as root and `setpriv` runs; if not,
/// reports the skip.
fn can_drop() -> bool {
    if !rustix::process::geteuid().is_root() {
        support::skip::skip(
            "root (the test drops to uid 65534 with setpriv)",
            "run the tests as root",
        );
        return false;
    }
    let setpriv = Command::new("setpriv").arg("--version").output();
    if !setpriv.is_ok_and(|o| o.status.success()) {
        support::skip::skip("setpriv", "apt-get install util-linux");
        return false;
    }
    true
}

use support::producer_available as available;

/// A directory owned by [`UID`] holding a copy of the `snapconf` binary (the build output
/// may be out of that user's reach), removed with the test's temporary directory.
struct Sandbox {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().expect("tempdir");
        chmod(dir.path(), 0o755);
        let bin = dir.path().join("snapconf");
        std::fs::copy(support::snapconf_bin(), &bin).expect("copy the binary");
        chmod(&bin, 0o755);
        Sandbox { dir, bin }
    }

    /// A new directory under the sandbox owned by [`UID`].
    fn owned(&self, name: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::create_dir(&p).expect("mkdir");
        std::os::unix::fs::chown(&p, Some(UID), Some(UID)).expect("chown");
        p
    }

    /// `snapconf ARGS` as [`UID`] (no supplementary groups), in the sandbox.
    fn snapconf(&self, args: &[&str]) -> Output {
        let setpriv = [
            "setpriv".to_owned(),
            format!("--reuid={UID}"),
            format!("--regid={UID}"),
            "--clear-groups".to_owned(),
        ];
        support::Snapconf::wrapped(&setpriv, &self.bin)
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .expect("setpriv runs")
    }
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .expect("stat")
        .permissions()
        .mode()
        & 0o7777
}

/// The report of a run that wrote `report.json` into `dir`, failing with its output if not.
fn report(dir: &Path, out: &Output) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).unwrap_or_else(|e| {
        panic!(
            "no report.json ({e}); exit {:?}; stderr:\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(&text).expect("report.json parses")
}

/// The "done when": as uid 65534, 100 cases through `tar-rs` and `gnu-tar` ×
/// `reference` exit 0 with a report of every case.
#[test]
fn run_as_an_ordinary_user_conforms() {
    if !can_drop() || !available("gnu-tar") {
        return;
    }
    let sandbox = Sandbox::new();
    let rd = sandbox.owned("report");
    let args = [
        "run",
        "--cases",
        "100",
        "--seed",
        "1",
        "--producers",
        "tar-rs,gnu-tar",
        "--extractors",
        "reference",
        "--report-dir",
    ];
    let mut args: Vec<&str> = args.to_vec();
    let rd_arg = rd.to_str().expect("utf-8 temp path");
    args.push(rd_arg);
    let out = sandbox.snapconf(&args);
    let report = report(&rd, &out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr:\n{}\nreport: {report:#}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pairs = report["pairs"].as_array().expect("pairs");
    assert_eq!(pairs.len(), 2, "{report:#}");
    for pair in pairs {
        assert_eq!(pair["cases"], 100, "{pair:#}");
        let passed = pair["passed"].as_u64().expect("passed");
        // Captures of a workspace with a `0000` directory are refused (a producer run as
        // this user cannot read it) and counted; the rest pass.
        assert!(passed >= 50, "{pair:#}");
    }
    // The tools ran in a private mount namespace (an unprivileged user namespace of this
    // user's) exactly where this user may make one; otherwise the report says they did not.
    let userns = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "unshare",
            "--user",
            "--map-current-user",
            "--mount",
            "true",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    // `notes` is left out of report.json when empty.
    let said = report["notes"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .any(|n| {
            n.as_str()
                .is_some_and(|n| n.contains("without a private mount namespace"))
        });
    assert_eq!(said, !userns, "notes: {:#}", report["notes"]);
}

/// `audit` as uid 65534 of a directory of theirs holding `0000` and `0555` directories and
/// a `0000` file: it runs, both producers refuse to capture what that user cannot read (so
/// no pair ran a case: exit 3, and the verdict says why), and every mode is given back.
#[test]
fn audit_as_an_ordinary_user_gives_modes_back() {
    if !can_drop() || !available("gnu-tar") {
        return;
    }
    let sandbox = Sandbox::new();
    let ws = sandbox.owned("ws");
    std::fs::create_dir_all(ws.join("locked/inner")).expect("mkdir");
    std::fs::write(ws.join("locked/inner/f"), "x").expect("write");
    std::fs::create_dir(ws.join("ro")).expect("mkdir");
    std::fs::write(ws.join("ro/secret"), "s").expect("write");
    for p in [
        "locked",
        "locked/inner",
        "locked/inner/f",
        "ro",
        "ro/secret",
    ] {
        std::os::unix::fs::chown(ws.join(p), Some(UID), Some(UID)).expect("chown");
    }
    chmod(&ws.join("ro/secret"), 0o000);
    chmod(&ws.join("ro"), 0o555);
    chmod(&ws.join("locked"), 0o000);
    let rd = sandbox.owned("report");
    let out = sandbox.snapconf(&[
        "audit",
        ws.to_str().expect("utf-8 temp path"),
        "--producers",
        "tar-rs,gnu-tar",
        "--extractors",
        "reference",
        "--report-dir",
        rd.to_str().expect("utf-8 temp path"),
    ]);
    let report = report(&rd, &out);
    assert_eq!(
        out.status.code(),
        Some(3),
        "stderr:\n{}\nreport: {report:#}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("no pair ran a case"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let refused: Vec<&str> = report["capture_refusals"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(|r| r["producer"].as_str())
        .collect();
    assert!(
        refused.contains(&"gnu-tar") && refused.contains(&"tar-rs"),
        "both producers' refusals are counted: {report:#}"
    );
    // Which producer refused what, and why (issue 27): each producer's own words name the
    // path and the errno, and the audit names the entries the user cannot read.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for producer in ["gnu-tar", "tar-rs"] {
        let said = format!("every capture by `{producer}` (1) was refused; the first: ");
        let line = stderr
            .lines()
            .find(|l| l.contains(&said))
            .unwrap_or_else(|| panic!("{producer}'s refusal is named on stderr:\n{stderr}"));
        assert!(
            line.contains("locked") && line.contains("Permission denied"),
            "the path and the errno: {line}"
        );
        assert!(
            notes.iter().any(|n| n.contains(&said)),
            "and in the report's notes: {notes:?}"
        );
    }
    assert!(
        stderr.contains(&format!("as uid {UID}, the producers run as you and cannot read `locked` (mode 000), `ro/secret` (mode 000) (EACCES")),
        "the unreadable entries are named: {stderr}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("(5 entries)"),
        "every entry was read: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        [
            mode(&ws.join("locked")),
            mode(&ws.join("ro")),
            mode(&ws.join("ro/secret"))
        ],
        [0o000, 0o555, 0o000]
    );
}

/// A reproducer written by a run as uid 65534 replays as that user: exit 1 while the
/// finding reproduces. `bsdtar` stores hardlinks, which the default policy refuses.
#[test]
fn replay_as_an_ordinary_user_reproduces() {
    if !can_drop() || !available("bsdtar") {
        return;
    }
    let sandbox = Sandbox::new();
    let rd = sandbox.owned("report");
    let out = sandbox.snapconf(&[
        "run",
        "--cases",
        "30",
        "--seed",
        "1",
        "--producers",
        "bsdtar",
        "--extractors",
        "reference",
        "--shrink-total",
        "30",
        "--report-dir",
        rd.to_str().expect("utf-8 temp path"),
    ]);
    let report = report(&rd, &out);
    assert_eq!(out.status.code(), Some(1), "findings: {report:#}");
    let finding = report["findings"]
        .as_array()
        .and_then(|fs| fs.iter().find(|f| f["check"] == "late-failure"))
        .unwrap_or_else(|| panic!("no late-failure in {report:#}"));
    let case_dir = rd.join(finding["case_dir"].as_str().expect("case_dir"));
    let replay = sandbox.snapconf(&["replay", case_dir.to_str().expect("utf-8 temp path")]);
    assert_eq!(
        replay.status.code(),
        Some(1),
        "replay reproduces: {}{}",
        String::from_utf8_lossy(&replay.stdout),
        String::from_utf8_lossy(&replay.stderr)
    );
}

/// As uid 65534, a gzip'd archive (the single pass) of a file without owner read (`0200`)
/// and a hardlink to it, under `--hardlinks link`: hydrated as `check-archive` accepts it,
/// both names one inode of mode `0200`. The pass used to open each name to set its mode,
/// which fails for the second name once the shared inode lost its read bit (root never
/// sees it).
#[test]
fn an_unreadable_hardlinked_file_hydrates_as_an_ordinary_user() {
    use std::io::Write;
    use std::os::unix::fs::MetadataExt;
    if !can_drop() {
        return;
    }
    let sandbox = Sandbox::new();
    let work = sandbox.owned("work");
    let mut t = snapconf_tarbytes::raw::RawTar::new();
    t.file_mode("a", b"x", 0o200).hardlink("b", "a");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&t.finish()).expect("gzip");
    let archive = work.join("a.tar.gz");
    std::fs::write(&archive, gz.finish().expect("gzip")).expect("write");
    let root = work.join("root");
    let (archive, root_s) = (
        archive.to_str().expect("utf-8"),
        root.to_str().expect("utf-8"),
    );
    let check = sandbox.snapconf(&["check-archive", "--hardlinks", "link", archive]);
    assert_eq!(check.status.code(), Some(0), "{check:?}");
    let out = sandbox.snapconf(&["hydrate", "--hardlinks", "link", archive, root_s]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (a, b) = (
        std::fs::symlink_metadata(root.join("a")).expect("a"),
        std::fs::symlink_metadata(root.join("b")).expect("b"),
    );
    assert_eq!(a.ino(), b.ino(), "one inode");
    assert_eq!(a.mode() & 0o7777, 0o200);
}
