//! `snapconf hydrate` and `snapconf check-archive` verdicts: a refusal's reason with the root
//! untouched, the JSON verdict, usage errors, escaped member names and empty archives.

use super::*;

#[test]
fn refused_hydration_prints_the_reason_and_leaves_the_root() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ar = dir.path().join("snap.tar");
    archive_with_hardlink(&ar);
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(root.join("stale"), "old").expect("prior");
    let (code, _, err) = snapconf(&[
        "hydrate".as_ref(),
        ar.as_os_str(),
        root.as_os_str(),
        "--hardlinks".as_ref(),
        "reject".as_ref(),
    ]);
    assert_eq!(code, 1, "refused: {err}");
    assert!(
        err.contains("hardlink-not-allowed"),
        "the reason code is printed: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("stale")).expect("prior kept"),
        "old"
    );
    assert!(!root.join("a").exists(), "nothing of the archive landed");

    // H14: with hardlinks copied (the default, as the default profile's `hardlinks =
    // "copy"` says), the prior is replaced, not merged.
    let (code, _, err) = snapconf(&["hydrate".as_ref(), ar.as_os_str(), root.as_os_str()]);
    assert_eq!(code, 0, "hydrated: {err}");
    assert_eq!(std::fs::read_to_string(root.join("a")).expect("a"), "new");
    assert_eq!(std::fs::read_to_string(root.join("b")).expect("b"), "new");
    assert!(!root.join("stale").exists(), "stale files are gone");
}

#[test]
fn check_archive_prints_a_json_verdict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ar = dir.path().join("snap.tar");
    archive_with_hardlink(&ar);
    let (code, out, err) = snapconf(&[
        "check-archive".as_ref(),
        ar.as_os_str(),
        "--hardlinks".as_ref(),
        "reject".as_ref(),
    ]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(v["verdict"], "refuse");
    assert_eq!(v["reason"], "hardlink-not-allowed");
    assert_eq!(v["member"], "b");
    assert_eq!(
        v["members"].as_array().map(|m| m.len()),
        Some(2),
        "the listing comes with a refusal: {v}"
    );

    let (code, out, err) = snapconf(&[
        "check-archive".as_ref(),
        ar.as_os_str(),
        "--hardlinks".as_ref(),
        "link".as_ref(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(v["verdict"], "accept");
    let names: Vec<&str> = v["members"]
        .as_array()
        .expect("members")
        .iter()
        .filter_map(|m| m["name"].as_str())
        .collect();
    assert_eq!(names, ["a", "b"]);
}

#[test]
fn missing_archive_is_a_usage_error() {
    let (code, _, err) = snapconf(&[
        "hydrate".as_ref(),
        "/nonexistent/a.tar".as_ref(),
        "/tmp".as_ref(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/a.tar"), "{err}");
    let (code, _, err) = snapconf(&["check-archive".as_ref(), "/nonexistent/a.tar".as_ref()]);
    assert_eq!(code, 2, "{err}");
}

/// A member name holding terminal escape sequences is printed escaped, never raw.
#[test]
fn member_names_are_printed_escaped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ar = dir.path().join("esc.tar");
    let mut b = tar::Builder::new(std::fs::File::create(&ar).expect("create"));
    let mut h = tar::Header::new_gnu();
    h.set_size(1);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Fifo);
    h.set_size(0);
    b.append_data(&mut h, "x\x1b]0;PWNED\x07", &b""[..])
        .expect("append");
    b.into_inner().expect("finish").flush().expect("flush");
    let root = dir.path().join("ws");
    let (code, _, err) = snapconf(&[
        "hydrate".as_ref(),
        ar.as_os_str(),
        root.as_os_str(),
        "--special-files".as_ref(),
        "reject".as_ref(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        !err.contains('\x1b'),
        "no raw escape reaches the terminal: {err:?}"
    );
    assert!(err.contains("\\x1b"), "{err}");
}

/// An archive of zero blocks only (a cut-off or zero-filled upload) does not empty the
/// workspace: `hydrate` refuses it (`empty-archive`, exit 1, the root untouched, no member
/// named), `check-archive` agrees, and `--allow-empty` accepts it when an empty workspace
/// is meant. Read from stdin too.
#[test]
fn an_archive_without_members_leaves_the_workspace_unless_allowed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ar = dir.path().join("zeros.tar");
    std::fs::write(&ar, vec![0u8; 512 * 20]).expect("zeros");
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(root.join("work"), "precious").expect("prior");
    let (code, _, err) = snapconf(&["hydrate".as_ref(), ar.as_os_str(), root.as_os_str()]);
    assert_eq!(code, 1, "refused: {err}");
    assert!(err.contains("empty-archive"), "{err}");
    assert!(!err.contains("member ``"), "no empty member name: {err}");
    assert_eq!(
        std::fs::read_to_string(root.join("work")).expect("kept"),
        "precious"
    );
    let (code, out, _) = snapconf(&["check-archive".as_ref(), ar.as_os_str()]);
    assert_eq!(code, 1, "check-archive agrees: {out}");
    let stdin = std::fs::File::open(&ar).expect("open");
    let out = support::Snapconf::new()
        .args(["hydrate".as_ref(), "-".as_ref(), root.as_os_str()])
        .stdin(stdin)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1), "stdin is refused too");
    assert!(root.join("work").exists());
    let (code, _, err) = snapconf(&[
        "hydrate".as_ref(),
        "--allow-empty".as_ref(),
        ar.as_os_str(),
        root.as_os_str(),
    ]);
    assert_eq!(code, 0, "allowed: {err}");
    assert!(!root.join("work").exists(), "an intended empty workspace");
}
