//! The validate split pipeline (a validator in front of an extractor) and the replay of a
//! backend pair's reproducer, both on the hostile archive H11.

use super::*;

/// The hostile archive of docs/cases.md H11 (`SYM up -> ..`, then `REG up/exploit/foo/bar`):
/// extracting it naively writes `exploit/foo/bar` beside the root.
fn h11_archive(path: &Path) {
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_size(0);
    h.set_mode(0o777);
    b.append_link(&mut h, "up", "..").expect("symlink member");
    let data = b"pwned\n";
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Regular);
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    b.append_data(&mut h, "up/exploit/foo/bar", &data[..])
        .expect("file member");
    std::fs::write(path, b.into_inner().expect("archive")).expect("write the archive");
}

/// Split pipeline: a validator that accepts everything in front of an extractor lets H11
/// through, and the suite reports it (containment, or late-failure after the validator
/// accepted); a validator that refuses it (`snapconf check-archive`) stops it before
/// anything is written.
#[test]
fn a_validator_that_accepts_everything_lets_a_hostile_archive_through() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = tmp.path();
    let hostile = t.join("h11.tar");
    h11_archive(&hostile);
    let capture = format!(
        "capture = [\"cp\", \"{}\", \"{{archive}}\"]",
        hostile.display()
    );
    let trusting = "[\"python3\", \"-I\", \"-c\", \"import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter='fully_trusted')\", \"{archive}\", \"{root}\"]";
    let bin = support::snapconf_bin();
    let bin = bin.display();
    let variants = [
        // (name, validate, hydrate, the checks that may report it)
        (
            "accept-all-tar",
            "[\"true\"]".to_owned(),
            "[\"tar\", \"-xf\", \"{archive}\", \"-C\", \"{root}\"]".to_owned(),
            vec!["containment", "late-failure"],
        ),
        (
            "accept-all-python",
            "[\"true\"]".to_owned(),
            trusting.to_owned(),
            vec!["containment"],
        ),
        (
            "strict",
            format!("[\"{bin}\", \"check-archive\", \"{{archive}}\"]"),
            trusting.to_owned(),
            vec!["late-failure"],
        ),
    ];
    for (name, validate, hydrate, checks) in variants {
        let toml = format!(
            "name = \"{name}\"\n{capture}\nvalidate = {validate}\nhydrate = {hydrate}\n{PROFILE}"
        );
        let b = write(&t.join(format!("{name}.toml")), &toml);
        let r = run(
            t,
            &b,
            &["--producers", "none", "--extractors", "none"],
            1,
            &[],
        );
        assert_eq!(r.code, 1, "{name}: findings expected: {}", r.stderr);
        let fs = findings(&r.report);
        let own: Vec<_> = fs
            .iter()
            .filter(|(c, _, _, _)| checks.contains(&c.as_str()))
            .collect();
        assert!(!own.is_empty(), "{name}: one of {checks:?} in {fs:?}");
        let says =
            |check: &str, text: &str| fs.iter().any(|(c, _, _, m)| c == check && m.contains(text));
        match name {
            "accept-all-tar" => assert!(
                says(
                    "late-failure",
                    "the validate step accepted the archive, then"
                ) || fs.iter().any(|(c, _, _, _)| c == "containment"),
                "{name}: {fs:?}"
            ),
            "accept-all-python" => assert!(
                fs.iter().any(|(c, _, _, _)| c == "containment"),
                "{name}: {fs:?}"
            ),
            _ => {
                assert!(
                    says("late-failure", "validate step refused"),
                    "{name}: {fs:?}"
                );
                assert!(
                    !fs.iter().any(|(c, _, _, _)| c == "containment"),
                    "{name}: nothing escapes when the validator refuses: {fs:?}"
                );
                assert!(r.stderr.contains("0 accepted, "), "{}", r.stderr);
            }
        }
    }
}

/// A reproducer of a backend pair replays with `--backend` (exit 1 while it reproduces), and
/// without it the message says what is missing.
#[test]
fn a_backend_reproducer_replays_with_the_backend() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = tmp.path();
    let hostile = t.join("h11.tar");
    h11_archive(&hostile);
    let toml = format!(
        "name = \"escapes\"\ncapture = [\"cp\", \"{}\", \"{{archive}}\"]\n\
         hydrate = [\"python3\", \"-I\", \"-c\", \"import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter='fully_trusted')\", \"{{archive}}\", \"{{root}}\"]\n{PROFILE}",
        hostile.display()
    );
    let b = write(&t.join("escapes.toml"), &toml);
    let report = t.join("report");
    let (code, _, err) = snapconf(
        &[
            "run",
            "--backend",
            b.to_str().expect("utf-8"),
            "--producers",
            "none",
            "--extractors",
            "none",
            "--cases",
            "1",
            "--seed",
            "1",
            "--shrink-steps",
            "4",
            "--report-dir",
            report.to_str().expect("utf-8"),
        ],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    let case = report.join("cases/containment__escapes__escapes");
    let case = case.to_str().expect("utf-8");
    let (code, out, err) = snapconf(
        &["replay", case, "--backend", b.to_str().expect("utf-8")],
        &[],
    );
    assert_eq!(code, 1, "reproduces: {out}{err}");
    assert!(out.contains("reproduces: containment"), "{out}");
    let (code, _, err) = snapconf(&["replay", case], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("unknown producer `escapes`") && err.contains("--backend FILE"),
        "{err}"
    );
    // `repro.sh` names the backend itself: it reproduces with no `SNAPCONF_BACKEND` set.
    let script = std::fs::read_to_string(format!("{case}/repro.sh")).expect("repro.sh");
    assert!(script.contains("--backend"), "{script}");
    let repro = std::process::Command::new(format!("{case}/repro.sh"))
        .env("SNAPCONF", support::snapconf_bin())
        .env_remove("SNAPCONF_BACKEND")
        .output()
        .expect("repro.sh runs");
    assert_eq!(
        repro.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&repro.stderr)
    );
}
