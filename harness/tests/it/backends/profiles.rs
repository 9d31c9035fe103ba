//! A backend is held to its `[profile]`: agno's, and the links a profile refuses (under
//! `snapconf fuzz`).

use super::*;

/// agno's `CheckpointArchive` (`producers/backends/agno.toml`) conforms to the profile it
/// states. Skips ([`support::skip`]) when `agno` is not installed (`.ci/run` installs it).
#[test]
fn the_agno_backend_conforms_to_its_profile() {
    let importable = Command::new("python3")
        .args(["-c", "import agno.sandbox.checkpoint"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !importable {
        support::skip::skip(
            "the Python package `agno` is not installed (`import agno.sandbox.checkpoint` fails)",
            "python3 -m pip install --no-deps agno==3.1.10",
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = run(tmp.path(), &shipped("agno.toml"), &[], 20, &[]);
    assert_eq!(r.code, 0, "stderr: {}\nreport: {}", r.stderr, r.report);
    assert_eq!(
        pairs(&r.report)
            .iter()
            .map(|(p, e, _)| (p.as_str(), e.as_str()))
            .collect::<Vec<_>>(),
        vec![("agno", "agno")],
        "pair-with-builtins = false keeps the built-ins out"
    );
}

/// `snapconf fuzz --backend FILE --extractor NAME` for `secs` seconds (seed 1, one worker),
/// report in `report`: the findings' checks and their case directories.
fn fuzz_backend(backend: &Path, name: &str, report: &Path, secs: u32) -> Vec<(String, PathBuf)> {
    let secs = secs.to_string();
    let (code, _, err) = snapconf(
        &[
            "fuzz",
            "--backend",
            backend.to_str().expect("utf-8 temp path"),
            "--extractor",
            name,
            "--time",
            &secs,
            "--seed",
            "1",
            "-j",
            "1",
            "--report-dir",
            report.to_str().expect("utf-8 temp path"),
        ],
        &[],
    );
    assert!(
        code == 0 || code == 1,
        "fuzz exits 0 or 1, not {code}: {err}"
    );
    let text = std::fs::read_to_string(report.join("fuzz.json")).expect("fuzz.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["check"].as_str().unwrap_or_default().to_owned(),
                report.join(f["case_dir"].as_str().unwrap_or_default()),
            )
        })
        .collect()
}

/// Property: a backend's `[profile]` is what its extractor promises (`escaping-link`): the
/// shipped `tar-commands` backend with a profile that refuses escaping links and drops
/// absolute ones is caught leaving one (GNU tar writes what the archive says), the same
/// backend with a profile that keeps them is not; and the finding's `repro.sh` names the
/// backend, so that it replays (exit 1) from any directory.
#[test]
fn a_backend_is_held_to_the_links_its_profile_refuses() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(shipped("tar-commands.toml")).expect("shipped file");
    let strict = text
        .replace("name = \"tar-commands\"", "name = \"strict-tar\"")
        .replace(
            "absolute-symlinks = \"keep\"",
            "absolute-symlinks = \"drop\"",
        )
        .replace(
            "escaping-symlinks = \"keep\"",
            "escaping-symlinks = \"refuse-at-capture\"",
        );
    assert_ne!(strict, text, "the profile keys were found");
    let strict = write(&tmp.path().join("strict.toml"), &strict);
    let found = fuzz_backend(&strict, "strict-tar", &tmp.path().join("strict"), 10);
    let Some((_, case)) = found.iter().find(|(c, _)| c == "escaping-link") else {
        panic!("escaping-link found for the strict profile: {found:?}");
    };
    let script = std::fs::read_to_string(case.join("repro.sh")).expect("repro.sh");
    assert!(script.contains(" --backend '"), "{script}");
    let replay = Command::new("sh")
        .arg(case.join("repro.sh"))
        .current_dir(tmp.path())
        .env("SNAPCONF", support::snapconf_bin())
        .env_remove("SNAPCONF_BACKEND")
        .output()
        .expect("sh runs");
    assert_eq!(
        replay.status.code(),
        Some(1),
        "reproduces: {}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let keep = fuzz_backend(
        &shipped("tar-commands.toml"),
        "tar-commands",
        &tmp.path().join("keep"),
        4,
    );
    assert!(
        keep.iter().all(|(c, _)| c != "escaping-link"),
        "no promise, no escaping-link: {keep:?}"
    );
}
