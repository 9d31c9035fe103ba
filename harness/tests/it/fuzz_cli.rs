//! `snapconf fuzz` end to end with the in-process reference extractor (no external tool).

use crate::support;

/// Property: a short fuzz session of the reference extractor ends with exit 0 (it has no
/// containment, atomicity, hang or unsafe-accept findings) and writes `fuzz.json` and the
/// report every mode writes (`report.json` in mode `fuzz`, `summary.md`).
#[test]
fn fuzzing_the_reference_finds_nothing() {
    let out = tempfile::tempdir().expect("tempdir");
    let corpora = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora");
    let status = support::Snapconf::new()
        .args([
            "fuzz",
            "--extractor",
            "reference",
            "--time",
            "3",
            "--seed",
            "7",
        ])
        .arg("--corpora")
        .arg(&corpora)
        .arg("--report-dir")
        .arg(out.path())
        .output()
        .expect("run snapconf");
    assert_eq!(
        status.status.code(),
        Some(0),
        "reference fuzz session has no findings: {}",
        String::from_utf8_lossy(&status.stdout)
    );
    assert!(
        out.path().join("fuzz.json").is_file(),
        "fuzz.json is written"
    );
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("report.json")).expect("report.json"),
    )
    .expect("report.json parses");
    assert_eq!(report["mode"], "fuzz");
    assert_eq!(report["pairs"][0]["producer"], "fuzz");
    assert_eq!(report["pairs"][0]["extractor"], "reference");
    assert!(report["cases"].as_u64() > Some(0), "{report}");
    assert_eq!(report["findings"], serde_json::json!([]));
    let md = std::fs::read_to_string(out.path().join("summary.md")).expect("summary.md");
    assert!(md.starts_with("# snapconf fuzz of reference:"), "{md}");
    assert!(out.path().join("junit.xml").is_file() && out.path().join("index.html").is_file());
}

/// A baseline file that is not one stops a session with exit 2 naming the file, before
/// the session starts (no report directory is made).
#[test]
fn a_bad_fuzz_baseline_is_a_usage_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let bad = tmp.path().join("not-a-baseline.json");
    std::fs::write(&bad, "{\"schema\": 9}").expect("write");
    let report = tmp.path().join("report");
    let out = support::Snapconf::new()
        .args([
            "fuzz",
            "--extractor",
            "reference",
            "--time",
            "1",
            "--baseline",
        ])
        .arg(&bad)
        .arg("--report-dir")
        .arg(&report)
        .env_remove("SNAPCONF_BASELINE")
        .output()
        .expect("run snapconf");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not-a-baseline.json") && err.contains("schema 9"),
        "{err}"
    );
    assert!(!report.exists(), "nothing ran");
}

/// Issue 18 through the binary: a `python-tar` session's causes, written into a baseline
/// by `baseline update`, are known to a second session of the same seed: each of its
/// findings whose cause the baseline lists is marked known, and its exit code is 1
/// exactly when a finding is not (0 when every one is).
#[test]
fn python_tar_findings_in_a_fuzz_baseline_are_known() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let corpora = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora");
    let session = |dir: &std::path::Path, secs: &str, baseline: Option<&std::path::Path>| {
        let mut cmd = support::Snapconf::new();
        cmd.args([
            "fuzz",
            "--extractor",
            "python-tar",
            "--seed",
            "11",
            "-j",
            "1",
        ])
        .args(["--time", secs])
        .arg("--corpora")
        .arg(&corpora)
        .arg("--report-dir")
        .arg(dir)
        .env_remove("SNAPCONF_BASELINE");
        if let Some(b) = baseline {
            cmd.arg("--baseline").arg(b);
        }
        let out = cmd.output().expect("run snapconf");
        let report: serde_json::Value = std::fs::read_to_string(dir.join("report.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(serde_json::Value::Null);
        (
            out.status.code(),
            report,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let first = tmp.path().join("first");
    let (code, report, err) = session(&first, "8", None);
    if code == Some(3) {
        support::skip::skip(
            &format!("python-tar is not available: {err}"),
            "apt-get install python3 (3.12, or 3.11.4 and later)",
        );
        return;
    }
    assert_eq!(code, Some(1), "python-tar has findings: {err}");
    assert_eq!(report["mode"], "fuzz");
    let causes = report["causes"].as_array().expect("causes");
    assert!(!causes.is_empty(), "{report}");
    for c in causes {
        let dir = first.join(c["case_dir"].as_str().expect("case_dir"));
        assert!(dir.join("repro.sh").is_file(), "{c}");
        assert!(
            c["cause"].is_string(),
            "a fuzz cause carries its signature: {c}"
        );
    }
    let md = std::fs::read_to_string(first.join("summary.md")).expect("summary.md");
    assert!(md.starts_with("# snapconf fuzz of python-tar:"), "{md}");
    assert!(
        md.contains("## Causes, most severe first") && md.contains("/repro.sh"),
        "{md}"
    );

    let baseline = tmp.path().join("baseline.json");
    let out = support::Snapconf::new()
        .args(["baseline", "update", "--report"])
        .arg(&first)
        .arg("--out")
        .arg(&baseline)
        .output()
        .expect("run snapconf");
    assert_eq!(out.status.code(), Some(0));
    let known: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).expect("baseline"))
            .expect("baseline parses");
    let fingerprints: Vec<&str> = known["known"]
        .as_array()
        .expect("known")
        .iter()
        .filter_map(|k| k["fingerprint"].as_str())
        .collect();
    assert_eq!(fingerprints.len(), causes.len());

    let second = tmp.path().join("second");
    let (code, report, err) = session(&second, "4", Some(&baseline));
    let findings = report["findings"].as_array().expect("findings");
    for f in findings {
        let listed = fingerprints.contains(&f["fingerprint"].as_str().unwrap_or_default());
        assert_eq!(f["known"].as_bool(), Some(listed), "{f}");
    }
    let new = findings.iter().any(|f| f["known"] == false);
    assert_eq!(code, Some(if new { 1 } else { 0 }), "{err}");
}

/// Property: every available parser lists a GNU tar seed identically (exit 0); missing
/// tools are skipped, never a disagreement.
#[test]
fn all_parsers_agree_on_a_seed() {
    let corpora = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora");
    let out = support::Snapconf::new()
        .args(["check-archive", "--all-parsers"])
        .arg(corpora.join("seeds/gnu-gnu.tar"))
        .output()
        .expect("run snapconf");
    assert_eq!(
        out.status.code(),
        Some(0),
        "parsers agree on gnu-gnu.tar: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("reference") && text.contains("tar-crate"),
        "{text}"
    );
    for line in text.lines() {
        if let Some(parser) = line.strip_suffix("not installed here (skipped)") {
            let parser = parser.trim();
            let package = match parser {
                "gnu-tar" => "tar",
                "bsdtar" => "libarchive-tools",
                "python-tarfile" => "python3",
                other => other,
            };
            support::skip::skip(
                &format!("parser `{parser}` is not installed, so it was not compared"),
                &format!("apt-get install {package}"),
            );
        }
    }
}

/// A member-smuggling archive (an LNK member whose size field claims a 512-byte payload that
/// is itself a ustar header): the reference refuses it, other parsers list the smuggled
/// member. That split is a `parser-disagreement` (exit 1), not agreement.
#[test]
fn a_parser_that_stops_where_others_read_on_is_a_disagreement() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("smuggle.tar");
    let mut inner = tar::Header::new_ustar();
    inner.set_path("smuggled").expect("path");
    inner.set_size(0);
    inner.set_mode(0o644);
    inner.set_entry_type(tar::EntryType::Regular);
    inner.set_cksum();
    let mut b = tar::Builder::new(std::fs::File::create(&path).expect("create"));
    let mut h = tar::Header::new_ustar();
    h.set_size(3);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    b.append_data(&mut h, "a", &b"abc"[..]).expect("a");
    let mut l = tar::Header::new_ustar();
    l.set_size(512);
    l.set_mode(0o644);
    l.set_entry_type(tar::EntryType::Link);
    l.set_link_name("a").expect("link");
    b.append_data(&mut l, "b", &inner.as_bytes()[..])
        .expect("b");
    b.into_inner().expect("finish").flush().expect("flush");
    let out = support::Snapconf::new()
        .args(["check-archive", "--all-parsers"])
        .arg(&path)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("parser-disagreement"), "{text}");
}

/// Property: a session's report directory is checked before it starts, as `run`'s is: an
/// earlier session's `fuzz.json` and `cases/` are replaced (no stale reproducer is left to
/// mistake for a new one), and a directory holding anything else is refused with exit 2,
/// untouched.
#[test]
fn a_session_never_writes_into_someone_elses_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let old = dir.path().join("old");
    std::fs::create_dir_all(old.join("cases/containment__fuzz__reference")).expect("mkdir");
    std::fs::write(old.join("fuzz.json"), "{}").expect("write");
    let foreign = dir.path().join("foreign");
    std::fs::create_dir_all(&foreign).expect("mkdir");
    std::fs::write(foreign.join("notes.txt"), "mine").expect("write");
    let fuzz = |report: &std::path::Path| {
        support::Snapconf::new()
            .args([
                "fuzz",
                "--extractor",
                "reference",
                "--time",
                "1",
                "--seed",
                "3",
                "-j",
                "1",
            ])
            .arg("--report-dir")
            .arg(report)
            .output()
            .expect("run snapconf")
    };
    let o = fuzz(&old);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        !old.join("cases/containment__fuzz__reference").exists(),
        "the earlier session's reproducer is gone"
    );
    let o = fuzz(&foreign);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("notes.txt"),
        "{o:?}"
    );
    let names: Vec<_> = std::fs::read_dir(&foreign)
        .expect("read")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["notes.txt"], "nothing written");
}

/// Property: an archive holding one member of every POSIX ustar type flag (`0`, V7 `\0`,
/// contiguous `7`, `1`, `2`, `3`, `4`, `5`, `6`) is listed alike by every parser of
/// `check-archive --all-parsers`: no parser's listing of a type is misread (GNU tar prints a
/// contiguous file as `C…`, which was once read as part of the name before it).
#[test]
fn every_type_flag_is_listed_alike_by_every_parser() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("types.tar");
    let mut t = snapconf_tarbytes::raw::RawTar::new();
    t.push(b'0', b"file", b"", b"abc", 0o644)
        .push(0, b"v7", b"", b"de", 0o644)
        .push(b'7', b"contiguous", b"", b"fgh", 0o644)
        .push(b'1', b"hard", b"file", b"", 0o644)
        .push(b'2', b"sym", b"file", b"", 0o777)
        .push(b'3', b"chr", b"", b"", 0o644)
        .push(b'4', b"blk", b"", b"", 0o644)
        .push(b'5', b"dir/", b"", b"", 0o755)
        .push(b'6', b"fifo", b"", b"", 0o644);
    std::fs::write(&path, t.finish()).expect("write");
    let out = support::Snapconf::new()
        .args(["check-archive", "--all-parsers"])
        .arg(&path)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines().filter(|l| l.contains("not installed here")) {
        support::skip::skip(line, "apt-get install tar busybox libarchive-tools python3");
    }
    assert_eq!(out.status.code(), Some(0), "no disagreement:\n{text}");
    let listed = text.lines().filter(|l| l.ends_with(" 9 member(s)")).count();
    let ran = text
        .lines()
        .filter(|l| !l.contains("not installed here") && !l.starts_with("validator"))
        .count();
    assert!(
        listed >= 2,
        "at least the reference and the tar crate ran:\n{text}"
    );
    assert_eq!(
        listed, ran,
        "every parser that ran lists 9 members:\n{text}"
    );
}

/// `check-archive --all-parsers` of `name` in `corpora/adversarial`: exit code and stdout.
fn all_parsers(name: &str) -> (Option<i32>, String) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpora/adversarial")
        .join(name);
    let out = support::Snapconf::new()
        .args(["check-archive", "--all-parsers"])
        .arg(&path)
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Property: the reference's verdict as a validator (a dangling hardlink refused, for one)
/// is reported on its own line and is no `parser-disagreement` (exit 0 when the parsers
/// agree), while a refusal to read the bytes (a payload cut short) where another parser
/// reads on still is one (exit 1), also when a member the validator refuses comes first.
#[test]
fn a_validator_refusal_is_not_a_parser_disagreement() {
    let (code, text) = all_parsers("h02-dangling-hardlink.tar");
    assert!(
        text.lines().any(|l| l.starts_with("validator")
            && l.contains("dangling-hardlink")
            && l.ends_with("(a verdict, not a parser disagreement)")),
        "{text}"
    );
    assert!(!text.contains("parser-disagreement:"), "{text}");
    assert_eq!(code, Some(0), "{text}");
    let (code, text) = all_parsers("h13-truncated-payload.tar");
    if !text
        .lines()
        .any(|l| l.starts_with("busybox ") && l.ends_with("member(s)"))
    {
        support::skip::skip("busybox reading on past the cut", "apt-get install busybox");
        return;
    }
    assert!(
        text.contains("parser-disagreement: reference stopped (refused member `f2`: truncated"),
        "{text}"
    );
    assert_eq!(code, Some(1), "{text}");
    // A dangling hardlink first, then a member without the end-of-archive marker: the
    // validator stops at the first, the parsers still disagree over the second.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("dangling-then-cut.tar");
    let mut t = snapconf_tarbytes::raw::RawTar::new();
    t.hardlink("h", "nothere").file("b", b"hi");
    let mut bytes = t.finish();
    bytes.truncate(bytes.len() - 1024);
    std::fs::write(&path, bytes).expect("write");
    let out = support::Snapconf::new()
        .args(["check-archive", "--all-parsers"])
        .arg(&path)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("parser-disagreement: reference stopped"),
        "{text}"
    );
    assert!(
        text.contains("validator       the reference refused member `h`"),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
}

/// A gzip'd archive, named or on stdin, is listed by every parser as its tar (the same
/// listing lines as the plain file); one that inflates past `--max-compression-ratio` is
/// listed as it is, with the reason, not inflated into memory.
#[test]
fn all_parsers_read_compressed_archives_and_stdin() {
    use std::io::Write;
    let seed =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/seeds/gnu-gnu.tar");
    let plain = std::fs::read(&seed).expect("seed");
    let listing = |args: &[&std::ffi::OsStr], stdin: Option<&[u8]>| {
        let mut child = support::Snapconf::new()
            .args(["check-archive", "--all-parsers"])
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("run snapconf");
        let mut input = child.stdin.take().expect("stdin");
        input
            .write_all(stdin.unwrap_or_default())
            .expect("write stdin");
        drop(input);
        let out = child.wait_with_output().expect("wait");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let lines = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains("member(s)") && !l.starts_with("validator"))
            .map(str::to_owned)
            .collect()
    };
    let (code, want) = listing(&[seed.as_os_str()], None);
    assert_eq!(code, Some(0), "{want}");
    let dir = tempfile::tempdir().expect("tempdir");
    let gz = dir.path().join("seed.tar.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&plain).expect("gzip");
    let gzipped = enc.finish().expect("gzip");
    std::fs::write(&gz, &gzipped).expect("write");
    for (what, (code, text)) in [
        ("file", listing(&[gz.as_os_str()], None)),
        ("stdin", listing(&["-".as_ref()], Some(&gzipped))),
    ] {
        assert_eq!(code, Some(0), "{what}: {text}");
        assert!(
            text.contains("gzip-compressed: every parser lists the decompressed tar"),
            "{what}: {text}"
        );
        assert_eq!(
            lines(&text),
            lines(&want),
            "{what}: the plain file's listing"
        );
    }
    // 8 MiB of zeros in about 8 KiB: past a ratio of 100.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let mut tar = plain.clone();
    tar.resize(tar.len() + (8 << 20), 0);
    enc.write_all(&tar).expect("gzip");
    std::fs::write(&gz, enc.finish().expect("gzip")).expect("write");
    let (_, text) = listing(
        &[
            gz.as_os_str(),
            "--max-compression-ratio".as_ref(),
            "100".as_ref(),
        ],
        None,
    );
    assert!(
        text.contains("gzip-compressed, cannot be decompressed"),
        "{text}"
    );
}

/// `--replay` of a FIFO or of `/dev/zero`, and `--baseline` of a FIFO, are refused at once
/// with exit 2 naming the file and what it is: `/dev/zero` was read until memory ran out,
/// a FIFO forever.
#[test]
fn a_fifo_or_a_device_as_a_fuzz_input_is_refused_at_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let fifo = tmp.path().join("finding.tar");
    support::mkfifo(&fifo);
    let report = tmp.path().join("report");
    let zero = std::path::Path::new("/dev/zero");
    for (flag, file, kind) in [
        ("--replay", fifo.as_path(), "a named pipe (FIFO)"),
        ("--replay", zero, "a character device"),
        ("--baseline", fifo.as_path(), "a named pipe (FIFO)"),
    ] {
        let args = [
            "fuzz".as_ref(),
            "--extractor".as_ref(),
            "reference".as_ref(),
            "--time".as_ref(),
            "1".as_ref(),
            "--report-dir".as_ref(),
            report.as_os_str(),
            flag.as_ref(),
            file.as_os_str(),
        ];
        let (code, _, err) = support::snapconf_within(
            &args,
            std::time::Duration::from_secs(20),
            &format!("refuse {flag} {}", file.display()),
        );
        assert_eq!(code, 2, "{flag} {}: stderr: {err}", file.display());
        assert!(
            err.contains(&format!(
                "`{}` is {kind}, not a regular file",
                file.display()
            )),
            "{flag}: {err}"
        );
        assert!(!report.exists(), "{flag}: nothing ran");
    }
}
