//! Compressed archives and limits on the command line, and a plain GNU tar of a workspace
//! with a hardlink under the defaults.

use super::*;

/// A 1 KiB gzip that inflates to 900 KiB is refused as `decompression-limit` by `hydrate`
/// and `check-archive` under `--max-decompressed-bytes 524288`, the root untouched, and
/// hydrated without the flag; an unknown compression is named.
#[test]
fn decompression_limits_and_unknown_compressions_on_the_command_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut raw = snapconf_tarbytes::raw::RawTar::new();
    raw.file("zeros", &vec![0u8; 900 << 10]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&raw.finish()).expect("gzip");
    let gz = gz.finish().expect("gzip");
    assert!(gz.len() <= 1024, "{}", gz.len());
    let ar = dir.path().join("bomb.tar.gz");
    std::fs::write(&ar, &gz).expect("write");
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(root.join("work"), "precious").expect("prior");
    let limit = ["--max-decompressed-bytes".as_ref(), "524288".as_ref()];
    let (code, _, err) = snapconf(
        &[
            &["hydrate".as_ref(), ar.as_os_str(), root.as_os_str()][..],
            &limit[..],
        ]
        .concat(),
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("refused (decompression-limit)"), "{err}");
    assert_eq!(names_in(&root), ["work"]);
    let (code, out, _) =
        snapconf(&[&["check-archive".as_ref(), ar.as_os_str()][..], &limit[..]].concat());
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["reason"], "decompression-limit", "{v}");
    let (code, _, err) = snapconf(&["hydrate".as_ref(), ar.as_os_str(), root.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::metadata(root.join("zeros")).expect("zeros").len(),
        900 << 10
    );

    let bz = dir.path().join("a.tar.bz2");
    std::fs::write(&bz, b"BZh91AY&SY\x01\x02\x03\x04 and more bytes").expect("write");
    let (code, _, err) = snapconf(&["hydrate".as_ref(), bz.as_os_str(), root.as_os_str()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("refused (unsupported)") && err.contains("bzip2"),
        "{err}"
    );
}

/// Issue 14: the defaults are the default profile's. A plain `tar -cf ws.tar -C ws .` of a
/// workspace with a hardlink and an executable (GNU tar writes an LNK member for the second
/// name) is accepted by `check-archive` and hydrated by `hydrate` with no flag: both names
/// with the content, the owner's execute bit kept.
#[test]
fn a_plain_gnu_tar_of_a_workspace_with_a_hardlink_hydrates_with_the_defaults() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("src");
    std::fs::create_dir(&ws).expect("src");
    std::fs::write(ws.join("a"), "shared").expect("a");
    std::fs::hard_link(ws.join("a"), ws.join("b")).expect("link");
    std::fs::write(ws.join("run"), "#!/bin/sh\n").expect("run");
    std::fs::set_permissions(ws.join("run"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    let ar = dir.path().join("ws.tar");
    let tar = Command::new("tar")
        .arg("-cf")
        .arg(&ar)
        .arg("-C")
        .arg(&ws)
        .arg(".")
        .status();
    if !tar.is_ok_and(|s| s.success()) {
        return support::skip::skip("GNU tar", "apt-get install tar");
    }
    let (code, out, err) = snapconf(&["check-archive".as_ref(), ar.as_os_str()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("\"hardlink\""),
        "GNU tar wrote an LNK member: {out}"
    );
    let root = dir.path().join("ws");
    let (code, _, err) = snapconf(&["hydrate".as_ref(), ar.as_os_str(), root.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    for name in ["a", "b"] {
        assert_eq!(
            std::fs::read_to_string(root.join(name)).expect(name),
            "shared"
        );
    }
    let mode = std::fs::metadata(root.join("run"))
        .expect("run")
        .permissions()
        .mode();
    assert_eq!(mode & 0o100, 0o100, "the owner's execute bit: {mode:o}");
}

/// `check-archive --all-parsers` of a gzip-compressed archive compares the parsers on the
/// tar inside it: the `tar` crate (which does not decompress) no longer "stops" where the
/// reference reads the members, so there is no disagreement (exit 0).
#[test]
fn all_parsers_compare_the_tar_inside_a_compressed_archive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = dir.path().join("plain.tar");
    archive_with_hardlink(&plain);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&std::fs::read(&plain).expect("read"))
        .expect("gzip");
    let ar = dir.path().join("a.tar.gz");
    std::fs::write(&ar, gz.finish().expect("gzip")).expect("write");
    let (code, out, err) = snapconf(&[
        "check-archive".as_ref(),
        "--all-parsers".as_ref(),
        ar.as_os_str(),
    ]);
    assert!(out.contains("gzip-compressed"), "{out}");
    assert!(out.contains("tar-crate       2 member(s)"), "{out}");
    assert_eq!(code, 0, "{out}{err}");
}

/// Under `RLIMIT_FSIZE` (here 500 kB), a stream whose payload passes the limit before a
/// member the policy refuses (`/x`) is refused for that member, exactly as `check-archive`
/// says, with nothing left beside the root: the write fails with `EFBIG` instead of
/// `SIGXFSZ` killing the process midway (exit 153, the staging directory left), and the
/// refusal wins over the fault.
#[test]
fn a_file_size_limit_does_not_kill_a_hydration() {
    let mut t = snapconf_tarbytes::raw::RawTar::new();
    t.file("a", &[b'a'; 10_000])
        .file("b", &vec![b'b'; 1_500_000])
        .file("/x", b"x");
    let tar = t.finish();
    let dir = tempfile::tempdir().expect("tempdir");
    let parent = dir.path().join("par");
    std::fs::create_dir(&parent).expect("mkdir");
    let mut child = support::Snapconf::wrapped(
        &["prlimit", "--fsize=500000", "--"],
        &support::snapconf_bin(),
    )
    .args(["hydrate", "-"])
    .arg(parent.join("ws"))
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("prlimit runs");
    let mut stdin = child.stdin.take().expect("stdin");
    // The refusal may come before the whole stream is read.
    let _ = stdin.write_all(&tar);
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "refused, not killed: {err}");
    assert!(err.contains("absolute-path"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&parent)
        .expect("read")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "nothing left beside the root: {left:?}");
}
