//! Hydrate keeps the root's owner, group and mode, as root and as an ordinary user.

use super::*;

/// An archive whose `.` member says mode `0755` (what a capture of a plain directory
/// holds), with one file `new`.
fn archive_with_root_member(path: &std::path::Path) {
    let mut t = snapconf_tarbytes::raw::RawTar::new();
    t.push(b'5', b"./", b"", b"", 0o755);
    t.push(b'0', b"new", b"", b"new\n", 0o644);
    std::fs::write(path, t.finish()).expect("archive");
}

/// Owner, group and mode of `p`.
fn owner_and_mode(p: &std::path::Path) -> (u32, u32, u32) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(p).expect("stat");
    (m.uid(), m.gid(), m.mode() & 0o7777)
}

/// Property: run as root, `hydrate` of a user's ROOT (`1000:1000`, mode `2770`) leaves
/// ROOT `1000:1000` mode `2770`, whatever the archive's `.` member says; before, it became
/// root's, mode `0755`, and locked its owner out.
#[test]
fn hydrate_as_root_keeps_the_roots_owner_group_and_mode() {
    if !rustix::process::geteuid().is_root() {
        support::skip::skip("root (the test hydrates a uid-1000 root)", "run as root");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let ar = dir.path().join("a.tar");
    archive_with_root_member(&ar);
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(root.join("old"), "old").expect("prior");
    std::os::unix::fs::chown(&root, Some(1000), Some(1000)).expect("chown");
    std::fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o2770))
        .expect("chmod");
    let (code, _, err) = snapconf(&["hydrate".as_ref(), ar.as_os_str(), root.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(names_in(&root), ["new"], "hydrated");
    assert_eq!(owner_and_mode(&root), (1000, 1000, 0o2770));
}

/// Property: as an ordinary user (uid 65534 through `setpriv`, no supplementary groups),
/// `hydrate` keeps ROOT's mode (setgid included) and group over an archive whose `.`
/// member says `0755`.
#[test]
fn hydrate_as_an_ordinary_user_keeps_the_roots_mode() {
    use std::os::unix::fs::PermissionsExt;
    const UID: u32 = 65534;
    if !rustix::process::geteuid().is_root() {
        support::skip::skip("root (the test drops to uid 65534)", "run as root");
        return;
    }
    if !Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        support::skip::skip("setpriv", "apt-get install util-linux");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), PermissionsExt::from_mode(0o755)).expect("chmod");
    let bin = dir.path().join("snapconf");
    std::fs::copy(support::snapconf_bin(), &bin).expect("copy the binary");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).expect("work");
    std::os::unix::fs::chown(&work, Some(UID), Some(UID)).expect("chown");
    let ar = work.join("a.tar");
    archive_with_root_member(&ar);
    let root = work.join("ws");
    std::fs::create_dir(&root).expect("root");
    std::os::unix::fs::chown(&root, Some(UID), Some(UID)).expect("chown");
    std::fs::set_permissions(&root, PermissionsExt::from_mode(0o2750)).expect("chmod");
    let setpriv = [
        "setpriv".to_owned(),
        format!("--reuid={UID}"),
        format!("--regid={UID}"),
        "--clear-groups".to_owned(),
    ];
    let out = support::Snapconf::wrapped(&setpriv, &bin)
        .arg("hydrate")
        .arg(&ar)
        .arg(&root)
        .output()
        .expect("setpriv runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(names_in(&root), ["new"], "hydrated");
    assert_eq!(owner_and_mode(&root), (UID, UID, 0o2750));
}
