//! Hardlinks at capture. The python-tarfile producers reproduce the behaviour backends ship
//! with: H1 (the second name of an inode is an LNK member) and H2 (excluding the first name
//! leaves an LNK member whose target is not in the archive). The other producers' hardlink
//! representation is pinned, and none of them writes a dangling LNK.

use crate::common;

use common::*;
use snapconf_producers::{Outcome, Producer, PythonTarfileProducer, TarfileFormat};
use std::fs;

fn h1_tree(jail: &Jail) {
    write(&jail.root, "cache/mod.py", "VALUE = 1\n");
    fs::create_dir(jail.path(b"venv")).expect("mkdir venv");
    fs::hard_link(jail.path(b"cache/mod.py"), jail.path(b"venv/mod.py")).expect("link");
}

fn formats() -> [PythonTarfileProducer; 2] {
    [
        PythonTarfileProducer::new(TarfileFormat::Pax),
        PythonTarfileProducer::new(TarfileFormat::Gnu),
    ]
}

/// H1: `venv/mod.py` (the second name, sorted order) is an LNK member to `./cache/mod.py`.
#[test]
fn h1_second_name_is_an_lnk_member() {
    for p in formats() {
        if !available(p.name(), p.availability()) {
            return;
        }
        let jail = Jail::new();
        h1_tree(&jail);
        assert_eq!(jail.capture(&p, &[]), Outcome::Success, "{}", p.name());
        let members = list(&jail.archive);
        let first = find(&members, b"cache/mod.py").expect("cache/mod.py");
        assert_eq!(
            (first.kind, first.data.as_slice()),
            (b'0', &b"VALUE = 1\n"[..])
        );
        let second = find(&members, b"venv/mod.py").expect("venv/mod.py");
        assert_eq!(second.kind, b'1', "{}: venv/mod.py should be LNK", p.name());
        assert_eq!(
            second.link.as_deref().map(normalise),
            Some(b"cache/mod.py".to_vec())
        );
    }
}

/// H2: with the file `cache/mod.py` excluded, `venv/mod.py` is still an LNK member, and its
/// target is absent from the archive (a dangling hardlink).
#[test]
fn h2_excluding_the_first_name_leaves_a_dangling_lnk() {
    for p in formats() {
        if !available(p.name(), p.availability()) {
            return;
        }
        let jail = Jail::new();
        h1_tree(&jail);
        let outcome = jail.capture(&p, &[b"cache/mod.py".to_vec()]);
        assert_eq!(outcome, Outcome::Success, "{}", p.name());
        let members = list(&jail.archive);
        assert!(
            find(&members, b"cache/mod.py").is_none(),
            "{}: exclusion leaked",
            p.name()
        );
        let second = find(&members, b"venv/mod.py").expect("venv/mod.py");
        assert_eq!(second.kind, b'1', "{}: venv/mod.py should be LNK", p.name());
        let target = second.link.as_deref().map(normalise).unwrap_or_default();
        assert_eq!(target, b"cache/mod.py");
        assert!(
            find(&members, &target).is_none(),
            "{}: LNK target should be absent",
            p.name()
        );
        assert!(
            second.data.is_empty(),
            "{}: LNK carries no payload",
            p.name()
        );
    }
}

/// Excluding the whole `cache` directory does not trigger H2: the directory is never
/// entered, so the inode is first seen at `venv/mod.py`, stored as REG.
#[test]
fn excluding_the_directory_does_not_trigger_h2() {
    let p = PythonTarfileProducer::new(TarfileFormat::Pax);
    if !available(p.name(), p.availability()) {
        return;
    }
    let jail = Jail::new();
    h1_tree(&jail);
    assert_eq!(jail.capture(&p, &[b"cache".to_vec()]), Outcome::Success);
    let members = list(&jail.archive);
    let second = find(&members, b"venv/mod.py").expect("venv/mod.py");
    assert_eq!(
        (second.kind, second.data.as_slice()),
        (b'0', &b"VALUE = 1\n"[..])
    );
}

/// H2 is specific to `tarfile`'s filter-after-`gettarinfo` order: every other producer
/// leaves no LNK member naming an absent path, and stores `venv/mod.py`'s content.
#[test]
fn other_producers_write_no_dangling_lnk_for_h2() {
    for p in snapconf_producers::producers() {
        if p.name().starts_with("python-tarfile") || !available(p.name(), p.availability()) {
            continue;
        }
        let jail = Jail::new();
        h1_tree(&jail);
        let outcome = jail.capture(p.as_ref(), &[b"cache/mod.py".to_vec()]);
        assert_eq!(outcome, Outcome::Success, "{}", p.name());
        let members = list(&jail.archive);
        for (i, m) in members.iter().enumerate() {
            if m.kind == b'1' {
                let target = m.link.as_deref().map(normalise).unwrap_or_default();
                let earlier = members[..i].iter().any(|e| e.name == target);
                assert!(
                    earlier,
                    "{}: LNK `{:?}` names an absent path",
                    p.name(),
                    m.name
                );
            }
        }
        let second = find(&members, b"venv/mod.py").expect("venv/mod.py");
        assert_eq!(
            (second.kind, second.data.as_slice()),
            (b'0', &b"VALUE = 1\n"[..]),
            "{}",
            p.name()
        );
    }
}

/// H1 across producers, pinned: which ones store the second name of an inode as an LNK
/// member (a strict extractor with `hardlinks = reject` then refuses their archives).
#[test]
fn hardlink_representation_per_producer() {
    for p in snapconf_producers::producers() {
        if !available(p.name(), p.availability()) {
            continue;
        }
        let writes_lnk = match p.name() {
            "tar-rs" | "gnu-tar" => false, // full REG members (gnu-tar: --hard-dereference)
            "python-tarfile" | "python-tarfile-gnu" | "busybox-tar" | "bsdtar" => true,
            other => panic!("new producer `{other}`: pin its hardlink representation here"),
        };
        let jail = Jail::new();
        h1_tree(&jail);
        assert_eq!(
            jail.capture(p.as_ref(), &[]),
            Outcome::Success,
            "{}",
            p.name()
        );
        let members = list(&jail.archive);
        let kinds: Vec<u8> = [&b"cache/mod.py"[..], b"venv/mod.py"]
            .iter()
            .map(|n| find(&members, n).map_or(b'?', |m| m.kind))
            .collect();
        let mut sorted = kinds.clone();
        sorted.sort();
        // busybox and bsdtar walk in readdir order, so either name may come first.
        let want = if writes_lnk {
            vec![b'0', b'1']
        } else {
            vec![b'0', b'0']
        };
        assert_eq!(
            sorted,
            want,
            "{}: kinds of cache/mod.py, venv/mod.py = {:?}",
            p.name(),
            kinds
        );
    }
}
