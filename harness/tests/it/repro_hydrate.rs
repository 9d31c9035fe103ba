//! The matrix's `reference` is the strict reference policy of the profile (hardlinks
//! refused under `hardlinks = "copy"`), not `snapconf hydrate`'s defaults (which copy
//! them): `snapconf list` names it by the flags, and a `late-failure … × reference`
//! reproducer's `repro.sh` prints and runs the `snapconf hydrate` flags that reach the
//! matrix's verdict.

use crate::support::{self, Snapconf};
use std::path::Path;

/// `gnu-tar-lnk` writes a second name as a LNK member, which the matrix's reference
/// refuses: its `repro.sh` shows `snapconf hydrate --hardlinks reject …` refusing the
/// archive (exit 1), and `hydrate` with those flags does the same, while `hydrate` with its
/// defaults accepts it.
#[test]
fn a_late_failure_through_reference_reproduces_with_hydrate() {
    if !support::producer_available("gnu-tar-lnk") {
        return;
    }
    let (_, list, _) = Snapconf::new().arg("list").run();
    let line = list
        .lines()
        .find(|l| l.contains(" reference "))
        .unwrap_or_default();
    assert!(
        line.contains("strict: hydrate --hardlinks reject --allow-empty"),
        "the matrix's reference is named by its flags: {line}"
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let report = tmp.path().join("report");
    let (code, _, err) = Snapconf::new()
        .args([
            "run",
            "--cases",
            "30",
            "--seed",
            "1",
            "--shrink-total",
            "30",
        ])
        .args(["--producers", "gnu-tar-lnk", "--extractors", "reference"])
        .arg("--report-dir")
        .arg(&report)
        .run();
    assert_eq!(code, 1, "a finding: {err}");
    let case = report.join("cases/late-failure__gnu-tar-lnk__reference");
    assert!(
        case.join("repro.sh").is_file(),
        "no late-failure reproducer: {err}"
    );
    let out = std::process::Command::new("sh")
        .arg(case.join("repro.sh"))
        .env("SNAPCONF", support::snapconf_bin())
        .output()
        .expect("sh runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "reproduces: {stdout}");
    let printed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("+ snapconf hydrate "))
        .unwrap_or_else(|| panic!("the hydrate command is printed: {stdout}"));
    assert!(
        stdout.contains("snapconf hydrate exited 1 (0 accepted, 1 refused)"),
        "and run, refusing: {stdout}"
    );
    // The printed flags, run by hand, reach the same verdict; hydrate's defaults do not.
    let flags: Vec<&str> = printed
        .split(' ')
        .take_while(|w| w.starts_with("--") || !w.contains('/'))
        .collect();
    assert!(
        flags.contains(&"--hardlinks") && flags.contains(&"reject"),
        "{printed}"
    );
    let archive = case.join("archive.tar");
    let hydrate = |flags: &[&str], root: &Path| {
        Snapconf::new()
            .arg("hydrate")
            .args(flags)
            .arg(&archive)
            .arg(root)
            .run()
    };
    let (strict, _, why) = hydrate(&flags, &tmp.path().join("strict"));
    assert_eq!(strict, 1, "refused with the printed flags: {why}");
    assert!(why.contains("hardlink-not-allowed"), "{why}");
    let (plain, _, why) = hydrate(&[], &tmp.path().join("plain"));
    assert_eq!(plain, 0, "accepted with hydrate's defaults: {why}");
}
