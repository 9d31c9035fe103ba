//! The tar-rs producer's member kinds: hardlinks as full REG members, FIFOs and character
//! devices as special members with device numbers, directories with their modes.

use crate::common;

use common::*;
use rustix::fs::{mknodat, FileType, Mode, CWD};
use snapconf_producers::{Outcome, Producer, TarRsProducer};
use std::fs;
use std::os::unix::fs::PermissionsExt;

#[test]
fn hardlinks_are_full_regular_members_and_specials_keep_their_kind() {
    let p = TarRsProducer;
    let jail = Jail::new();
    write(&jail.root, "cache/mod.py", "VALUE = 1\n");
    fs::create_dir(jail.path(b"venv")).expect("mkdir");
    fs::hard_link(jail.path(b"cache/mod.py"), jail.path(b"venv/mod.py")).expect("link");
    mknodat(
        CWD,
        jail.path(b"pipe"),
        FileType::Fifo,
        Mode::from_raw_mode(0o640),
        0,
    )
    .expect("fifo");
    // /dev/null's numbers (1, 3); creating a device node needs CAP_MKNOD.
    let dev = rustix::fs::makedev(1, 3);
    let have_chr = mknodat(
        CWD,
        jail.path(b"null"),
        FileType::CharacterDevice,
        Mode::from_raw_mode(0o666),
        dev,
    )
    .is_ok();
    fs::create_dir(jail.path(b"ro")).expect("mkdir");
    write(&jail.root, "ro/foo", "x");
    fs::set_permissions(jail.path(b"ro"), fs::Permissions::from_mode(0o555)).expect("chmod");

    assert_eq!(jail.capture(&p, &[]), Outcome::Success);
    let ar = fs::read(&jail.archive).expect("read archive");
    let members = list(&jail.archive);
    for name in [&b"cache/mod.py"[..], b"venv/mod.py"] {
        let m = find(&members, name).expect("member");
        assert_eq!(
            (m.kind, m.data.as_slice()),
            (b'0', &b"VALUE = 1\n"[..]),
            "{name:?}"
        );
    }
    assert_eq!(find(&members, b"pipe").map(|m| m.kind), Some(b'6'));
    if have_chr {
        assert_eq!(find(&members, b"null").map(|m| m.kind), Some(b'3'));
        let mut archive = tar::Archive::new(ar.as_slice());
        let mut found = false;
        for entry in archive.entries().expect("entries") {
            let entry = entry.expect("entry");
            if entry.path_bytes().as_ref() == b"null" {
                let h = entry.header();
                assert_eq!(
                    (
                        h.device_major().ok().flatten(),
                        h.device_minor().ok().flatten()
                    ),
                    (Some(1), Some(3))
                );
                found = true;
            }
        }
        assert!(found);
    } else {
        skip::skip(
            "mknod of a character device (needs CAP_MKNOD); the CHR member is not checked",
            "run the tests as root",
        );
    }
    let mut archive = tar::Archive::new(ar.as_slice());
    for entry in archive.entries().expect("entries") {
        let entry = entry.expect("entry");
        if entry.path_bytes().as_ref() == b"ro/" {
            assert_eq!(entry.header().mode().ok(), Some(0o555));
        }
    }
    assert_eq!(p.name(), "tar-rs");
}
