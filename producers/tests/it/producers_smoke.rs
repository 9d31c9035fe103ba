//! Every built-in producer captures a small tree with the expected members, honouring a file
//! and a directory exclusion; a FIFO in the root never hangs a producer.

use crate::common;

use common::*;
use snapconf_producers::{producers, Outcome};
use std::os::unix::fs::symlink;

/// A file, a dir with a file, a symlink, an excluded file and an excluded directory.
fn small_tree(jail: &Jail) {
    write(&jail.root, "a.txt", "alpha\n");
    write(&jail.root, "d/f", "eff\n");
    write(&jail.root, "skip.txt", "excluded file\n");
    write(&jail.root, "gone/x", "excluded dir\n");
    symlink("a.txt", jail.path(b"link")).expect("symlink");
}

#[test]
fn every_producer_captures_the_small_tree_without_the_exclusions() {
    for p in producers() {
        if !available(p.name(), p.availability()) {
            continue;
        }
        let jail = Jail::new();
        small_tree(&jail);
        let outcome = jail.capture(p.as_ref(), &[b"skip.txt".to_vec(), b"gone".to_vec()]);
        assert_eq!(outcome, Outcome::Success, "{}", p.name());
        let members = list(&jail.archive);
        let mut got = names(&members);
        got.sort();
        let want: Vec<Vec<u8>> = ["a.txt", "d", "d/f", "link"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(show(&got), show(&want), "{}: member names", p.name());
        let a = find(&members, b"a.txt").expect("a.txt");
        assert_eq!(
            (a.kind, a.data.as_slice()),
            (b'0', &b"alpha\n"[..]),
            "{}",
            p.name()
        );
        let l = find(&members, b"link").expect("link");
        assert_eq!(
            (l.kind, l.link.as_deref()),
            (b'2', Some(&b"a.txt"[..])),
            "{}",
            p.name()
        );
        assert_eq!(
            find(&members, b"d").map(|m| m.kind),
            Some(b'5'),
            "{}",
            p.name()
        );
    }
}

/// H4: a FIFO beside a file must not block capture (opening a FIFO for reading blocks until
/// a writer comes); the outcome is anything but `Hang`.
#[test]
fn a_fifo_in_the_root_does_not_hang_any_producer() {
    for p in producers() {
        if !available(p.name(), p.availability()) {
            continue;
        }
        let jail = Jail::new();
        write(&jail.root, "a", "x");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            jail.path(b"pipe"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .expect("mkfifo");
        let outcome = jail.capture(p.as_ref(), &[]);
        assert!(
            !matches!(outcome, Outcome::Hang { .. }),
            "{}: {outcome:?}",
            p.name()
        );
        if outcome == Outcome::Success {
            let members = list(&jail.archive);
            let pipe = find(&members, b"pipe").map(|m| m.kind);
            assert!(
                matches!(pipe, None | Some(b'6')),
                "{}: pipe kind {pipe:?}",
                p.name()
            );
        }
    }
}

/// A socket is left out (tar cannot store one) without turning capture into a refusal.
#[test]
fn a_socket_in_the_root_is_skipped() {
    for p in producers() {
        if !available(p.name(), p.availability()) {
            continue;
        }
        let jail = Jail::new();
        write(&jail.root, "a", "x");
        let _sock = std::os::unix::net::UnixListener::bind(jail.path(b"sock")).expect("bind");
        let outcome = jail.capture(p.as_ref(), &[]);
        assert_eq!(outcome, Outcome::Success, "{}", p.name());
        let got = names(&list(&jail.archive));
        assert_eq!(show(&got), vec!["a"], "{}", p.name());
    }
}

/// H5: a symlink to `.` must not send a producer round in circles; none follows links.
#[test]
fn a_self_link_does_not_hang_any_producer() {
    for p in producers() {
        if !available(p.name(), p.availability()) {
            continue;
        }
        let jail = Jail::new();
        symlink(".", jail.path(b"self")).expect("symlink");
        let outcome = jail.capture(p.as_ref(), &[]);
        assert_eq!(outcome, Outcome::Success, "{}", p.name());
        let members = list(&jail.archive);
        let link = find(&members, b"self").map(|m| (m.kind, m.link.clone()));
        assert_eq!(link, Some((b'2', Some(b".".to_vec()))), "{}", p.name());
    }
}
