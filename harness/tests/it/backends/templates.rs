//! Backends of command templates: round trips, pairing with the built-ins, malformed backend
//! files, a missing command, and a straggler process that must not be blamed on another pair.

use super::*;

/// A backend made of `tar` commands (the shipped `tar-commands.toml`) round-trips: its self
/// pair passes every case.
#[test]
fn a_backend_of_tar_commands_round_trips() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = run(
        tmp.path(),
        &shipped("tar-commands.toml"),
        &["--producers", "none", "--extractors", "none"],
        12,
        NO_SPECIALS,
    );
    assert_eq!(r.code, 0, "stderr: {}\nreport: {}", r.stderr, r.report);
    assert_eq!(
        pairs(&r.report),
        vec![("tar-commands".into(), "tar-commands".into(), 12)]
    );
    assert_eq!(
        r.report["profile"], "tar-commands",
        "the backend's profile is the run's"
    );
}

/// The backend is paired with itself and with the built-ins, both ways.
#[test]
fn a_backend_runs_against_the_built_ins_both_ways() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = run(
        tmp.path(),
        &shipped("tar-commands.toml"),
        &["--producers", "tar-rs", "--extractors", "reference"],
        2,
        NO_SPECIALS,
    );
    assert!(r.code == 0 || r.code == 1, "stderr: {}", r.stderr);
    let got: Vec<(String, String)> = pairs(&r.report)
        .into_iter()
        .map(|(p, e, _)| (p, e))
        .collect();
    for (p, e) in [
        ("tar-rs", "reference"),
        ("tar-rs", "tar-commands"),
        ("tar-commands", "reference"),
        ("tar-commands", "tar-commands"),
    ] {
        assert!(
            got.contains(&(p.into(), e.into())),
            "pair {p} x {e} in {got:?}"
        );
    }
}

/// A malformed description is a usage error (exit 2) naming the file and the key.
#[test]
fn malformed_backend_files_exit_2_naming_the_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cases = [
        ("bad-toml.toml", "name = [\n", "bad-toml.toml"),
        (
            "unknown-key.toml",
            "name = \"b\"\ncapture = [\"tar\"]\nhydrate = [\"tar\"]\nshell = true\n",
            "shell",
        ),
        (
            "no-hydrate.toml",
            "name = \"b\"\ncapture = [\"tar\"]\n",
            "`hydrate`",
        ),
        (
            "bad-profile.toml",
            "name = \"b\"\ncapture = [\"tar\"]\nhydrate = [\"tar\"]\n[profile]\nhardlinks = \"copy\"\n",
            "[profile]",
        ),
        (
            "taken-name.toml",
            "name = \"gnu-tar\"\ncapture = [\"tar\"]\nhydrate = [\"tar\"]\n",
            "`name`",
        ),
    ];
    for (file, text, names) in cases {
        let path = write(&tmp.path().join(file), text);
        let p = path.to_str().expect("utf-8");
        for args in [
            vec!["run", "--cases", "1", "--backend", p],
            vec!["list", "--backend", p],
        ] {
            let (code, _, err) = snapconf(&args, &[]);
            assert_eq!(code, 2, "{file}: {err}");
            assert!(err.contains(p), "{file}: names the file: {err}");
            assert!(err.contains(names), "{file}: names `{names}`: {err}");
        }
    }
    let (code, _, err) = snapconf(&["run", "--backend", "/nonexistent/b.toml"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/b.toml"), "{err}");
}

/// A command that does not exist is named, its role is skipped, the other pairs still run.
#[test]
fn a_missing_command_is_named_and_the_other_pairs_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let toml = format!(
        "name = \"half\"\ncapture = [\"snapconf-no-such-capture-tool\", \"{{root}}\"]\n\
         hydrate = [\"tar\", \"-xf\", \"{{archive}}\", \"-C\", \"{{root}}\"]\n{PROFILE}"
    );
    let b = write(&tmp.path().join("half.toml"), &toml);
    let r = run(
        tmp.path(),
        &b,
        &["--producers", "tar-rs", "--extractors", "reference"],
        2,
        NO_SPECIALS,
    );
    // The backend's producer was asked for (by its file) and cannot run: less than was
    // asked ran, which is exit 3 whatever the other pairs found.
    assert_eq!(r.code, 3, "stderr: {}", r.stderr);
    assert!(
        r.stderr
            .contains("`snapconf-no-such-capture-tool` was not found on PATH"),
        "{}",
        r.stderr
    );
    let got: Vec<(String, String)> = pairs(&r.report)
        .into_iter()
        .map(|(p, e, _)| (p, e))
        .collect();
    assert_eq!(
        got,
        vec![
            ("tar-rs".into(), "half".into()),
            ("tar-rs".into(), "reference".into())
        ]
    );
    let (_, out, _) = snapconf(&["list", "--backend", b.to_str().expect("utf-8")], &[]);
    assert!(
        out.contains("producer   half") && out.contains("snapconf-no-such-capture-tool"),
        "{out}"
    );
}

/// A tool that leaves a process behind which writes into the jail later (a `setsid` daemon
/// outside the tool's process group, so the group kill at the end of its step misses it;
/// it waits until a later step has begun, another extractor's in the same case or the
/// next case's, or until its own root is gone, then writes beside the roots) is never
/// blamed on another pair: snapconf, the child subreaper, kills it right after the step
/// and reports a `hang` finding against the tool; and a jail a child process saw is not
/// handed to the next case.
#[test]
fn a_straggler_process_is_never_blamed_on_another_pair() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = tmp.path();
    let script = write(
        &t.join("straggler.sh"),
        "tar -xf \"$2\" -C \"$1\" || exit 1\n\
         (setsid sh -c '\n\
           jail=${1%/*}; me=${1##*/h-}; n=0\n\
           while [ -e \"$1\" ] && [ $n -lt 1000 ]; do\n\
             for d in \"$jail\"/h-*; do [ \"${d##*/h-}\" -gt \"$me\" ] 2>/dev/null && n=1000; done\n\
             sleep 0.01; n=$((n+1))\n\
           done\n\
           for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do\n\
             echo leak > \"$jail/out/leak-$$\" 2>/dev/null; sleep 0.02\n\
           done' sh \"$1\" </dev/null >/dev/null 2>&1 &)\n",
    );
    let straggler = write(
        &t.join("straggler.toml"),
        &format!(
            "name = \"straggler\"\n\
             capture = [\"tar\", \"-cf\", \"{{archive}}\", \"-C\", \"{{root}}\", \".\"]\n\
             hydrate = [\"sh\", \"{}\", \"{{root}}\", \"{{archive}}\"]\n{PROFILE}",
            script.display()
        ),
    );
    let benign = write(
        &t.join("benign.toml"),
        &format!(
            "name = \"benign\"\n\
             capture = [\"tar\", \"-cf\", \"{{archive}}\", \"-C\", \"{{root}}\", \".\"]\n\
             hydrate = [\"tar\", \"-xf\", \"{{archive}}\", \"-C\", \"{{root}}\"]\n{PROFILE}"
        ),
    );
    let r = run(
        t,
        &straggler,
        &[
            "--backend",
            benign.to_str().expect("utf-8 temp path"),
            "--producers",
            "tar-rs",
            "--extractors",
            "reference",
        ],
        12,
        NO_SPECIALS,
    );
    assert!(r.code == 0 || r.code == 1, "stderr: {}", r.stderr);
    let reference_passed: u64 = pairs(&r.report)
        .iter()
        .filter(|(_, e, _)| e == "reference")
        .map(|(_, _, n)| n)
        .sum();
    assert!(reference_passed > 0, "report: {}", r.report);
    let found = findings(&r.report);
    for (check, producer, extractor, message) in &found {
        assert!(
            check != "containment" || extractor == "straggler",
            "{check} blamed on {producer} x {extractor}: {message}"
        );
    }
    assert!(
        found
            .iter()
            .any(|(check, _, extractor, message)| check == "hang"
                && extractor == "straggler"
                // One or two: `setsid` may still be forking when the step ends.
                && message.contains(" process(es) running after it ended (killed): ")),
        "the straggler is named: {found:?}"
    );
    // Nothing of the daemons is left running.
    assert_eq!(processes_mentioning(t), Vec::<String>::new());
}
