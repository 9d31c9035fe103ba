//! An archive on standard input: an endless stream is refused and leaves nothing, and
//! `hydrate` and `check-archive` of the same stream agree.

use super::*;

/// `snapconf ARGS` with stdin from `input`; waits at most 10 s (the stream is endless: a
/// command that read it to its end would never return), then the exit code and stderr.
fn with_endless_stdin(args: &[&std::ffi::OsStr], input: &str) -> (i32, String, String) {
    let mut child = support::Snapconf::new()
        .args(args)
        .stdin(std::fs::File::open(input).expect("open the device"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("snapconf runs");
    let status = support::wait_within(
        &mut child,
        std::time::Duration::from_secs(10),
        &format!("stop reading {input}"),
    );
    let out = child.wait_with_output().expect("output");
    let _ = status;
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 14, defect 1: `hydrate -` of an endless stream (`/dev/zero`, `/dev/urandom`) used
/// to copy it to a spool file beside the root until the disk was full. It is refused with a
/// typed reason (exit 1), the root and its parent exactly as they were (no spool or staging
/// file left), and `check-archive -` gives the same verdict.
#[test]
fn endless_stdin_is_refused_and_leaves_nothing() {
    for (input, reason) in [("/dev/zero", Some("empty-archive")), ("/dev/urandom", None)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).expect("root");
        std::fs::write(root.join("work"), "precious").expect("prior");
        let before = names_in(dir.path());
        let (code, _, err) =
            with_endless_stdin(&["hydrate".as_ref(), "-".as_ref(), root.as_os_str()], input);
        assert_eq!(code, 1, "{input}: refused: {err}");
        let printed = err
            .split_once("refused (")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(code, _)| code.to_owned())
            .unwrap_or_else(|| panic!("{input}: a reason code is printed: {err}"));
        if let Some(reason) = reason {
            assert_eq!(printed, reason, "{input}: {err}");
        }
        assert_eq!(
            names_in(dir.path()),
            before,
            "{input}: nothing beside the root"
        );
        assert_eq!(names_in(&root), ["work"], "{input}");
        assert_eq!(
            std::fs::read_to_string(root.join("work")).expect("kept"),
            "precious"
        );
        // check-archive of /dev/zero gives the same reason; of /dev/urandom (other bytes on
        // every read) a refusal too.
        let (code, out, err) = with_endless_stdin(&["check-archive".as_ref(), "-".as_ref()], input);
        assert_eq!(code, 1, "{input}: {out}{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON verdict");
        assert_eq!(v["verdict"], "refuse", "{input}: {v}");
        if reason.is_some() {
            assert_eq!(v["reason"], printed.as_str(), "{input}: {v}");
        }
    }
}

/// `hydrate -` and `check-archive -` of the same bytes agree, for bytes that are refused
/// (random, zeros, a cut archive) and bytes that are accepted, plain and gzip-compressed.
#[test]
fn hydrate_and_check_archive_of_stdin_agree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = dir.path().join("plain.tar");
    archive_with_hardlink(&plain);
    let plain_bytes = std::fs::read(&plain).expect("read");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&plain_bytes).expect("gzip");
    let gz = gz.finish().expect("gzip");
    let mut rng = snapconf_tarbytes::Rng::new(0x2545_f491_4f6c_dd1d);
    let random: Vec<u8> = (0..64 * 1024).map(|_| rng.next_u64() as u8).collect();
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("random", random),
        ("zeros", vec![0; 64 * 1024]),
        ("cut", plain_bytes[..700].to_vec()),
        ("plain", plain_bytes.clone()),
        ("gzip", gz.clone()),
        ("cut gzip", gz[..gz.len() / 2].to_vec()),
    ];
    for (what, bytes) in inputs {
        let file = dir.path().join("input");
        std::fs::write(&file, &bytes).expect("write");
        let root = dir.path().join("ws");
        let _ = std::fs::remove_dir_all(&root);
        let run = |args: &[&std::ffi::OsStr]| {
            support::Snapconf::new()
                .args(args)
                .args(["--hardlinks", "copy"])
                .stdin(std::fs::File::open(&file).expect("open"))
                .output()
                .expect("runs")
        };
        let h = run(&["hydrate".as_ref(), "-".as_ref(), root.as_os_str()]);
        let c = run(&["check-archive".as_ref(), "-".as_ref()]);
        assert_eq!(h.status.code(), c.status.code(), "{what}: {h:?} / {c:?}");
        let v: serde_json::Value = serde_json::from_slice(&c.stdout).expect("JSON");
        let herr = String::from_utf8_lossy(&h.stderr);
        match v["reason"].as_str() {
            Some(reason) => assert!(
                herr.contains(&format!("refused ({reason})")),
                "{what}: {herr} / {v}"
            ),
            None => assert!(herr.contains("hydrated"), "{what}: {herr}"),
        }
    }
}
