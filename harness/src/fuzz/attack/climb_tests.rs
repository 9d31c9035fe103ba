//! Tests of issue 29's classes: `link-dotdot` and `root-prefix` draw the published
//! lexical-versus-kernel shapes, each name-normalisation class draws its spellings in the
//! swap, repoint and hardlink shapes, and every draw host_safe lets run climbs at most one
//! level; the `traversal` check flags what a naive extractor does with them.

use super::class::AttackClass;
use super::draw::{build, Built};
use super::member::{AttackKind, AttackMember};
use super::view_model::{root, ViewModel};
use crate::archive::listing::archive_tar;
use crate::checks::traversal::traversals;
use crate::fuzz::host_safe;
use crate::model::links;
use snapconf_tarbytes::Rng;

/// Seeds per class.
const SEEDS: u64 = 300;

/// The new classes.
const NEW: [AttackClass; 8] = [
    AttackClass::LinkDotdot,
    AttackClass::RootPrefix,
    AttackClass::BackslashName,
    AttackClass::UnicodeName,
    AttackClass::CaseCollision,
    AttackClass::TrailingDotSpace,
    AttackClass::DriveRelative,
    AttackClass::OverlongComponent,
];

fn built(class: AttackClass, seed: u64) -> Built {
    build(class, &mut Rng::new(seed))
}

fn attack(b: &Built) -> Vec<&AttackMember> {
    b.members.iter().filter(|m| !m.benign).collect()
}

fn has(ms: &[&AttackMember], kind: AttackKind, name: &[u8], link: Option<&[u8]>) -> bool {
    ms.iter()
        .any(|m| m.kind == kind && m.name == name && link.is_none_or(|l| m.link == l))
}

/// `link-dotdot` draws tar-fs's `y -> .`, `x -> y/..` and a write `x/…`, the deeper
/// `<link>/<link>/..` and `x2 -> x/..` forms; in every draw some symlink's target stays
/// inside the root read as text and leaves it once followed.
#[test]
fn link_dotdot_draws_lexically_inside_targets() {
    let (mut published, mut doubled, mut higher) = (false, false, false);
    for seed in 0..SEEDS {
        let b = built(AttackClass::LinkDotdot, seed);
        let ms = attack(&b);
        published |= has(&ms, AttackKind::Symlink, b"y", Some(b"."))
            && has(&ms, AttackKind::Symlink, b"x", Some(b"y/.."))
            && ms.iter().any(|m| m.name.starts_with(b"x/"));
        doubled |= ms
            .iter()
            .any(|m| m.link.ends_with(b"/y/y/..") || m.link == b"y/y/..");
        higher |= has(&ms, AttackKind::Symlink, b"x2", None);
        let mut view = ViewModel::new();
        let r = root();
        let mut sneaky = false;
        for m in &b.members {
            let touches = view.apply(m);
            if m.kind != AttackKind::Symlink {
                continue;
            }
            let mut dir: Vec<&[u8]> = m.name.split(|&c| c == b'/').collect();
            dir.pop();
            let lexical = links::lexical(&dir, &m.link, links::AboveRoot::Leaves);
            let out = touches
                .iter()
                .any(|t| t.what == "aim" && !t.path.starts_with(&r));
            sneaky |= out && matches!(lexical, links::End::Inside(_));
        }
        assert!(
            sneaky,
            "seed {seed}: no link inside as text, out once followed: {}",
            b.description
        );
    }
    assert!(
        published && doubled && higher,
        "{published} {doubled} {higher}"
    );
}

/// `root-prefix` names the root's siblings `../root-x` and `../rootx` by a link and by a
/// member's own name.
#[test]
fn root_prefix_names_the_roots_siblings() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..SEEDS {
        let b = built(AttackClass::RootPrefix, seed);
        for m in attack(&b) {
            for v in [&m.name, &m.link] {
                for s in ["../root-x", "../rootx"] {
                    if v.starts_with(s.as_bytes()) {
                        seen.insert((m.kind == AttackKind::Symlink && v == &m.link, s));
                    }
                }
            }
        }
    }
    assert_eq!(seen.len(), 4, "{seen:?}");
}

/// Each normalisation class draws the dir-to-symlink, link-repoint and hardlink shapes,
/// with two different spellings in some draws and one in others; `backslash-name` draws
/// node-tar 6.1.0's own archive (`a\b/`, `a\b -> ../out`, `a\b/pwned`).
#[test]
fn normalisation_classes_draw_every_shape() {
    for class in &NEW[2..] {
        let (mut dir, mut repoint, mut hard, mut two, mut one) = (0, 0, 0, 0, 0);
        let mut node_tar = false;
        for seed in 0..SEEDS {
            let b = built(*class, seed);
            let ms = attack(&b);
            let links: Vec<&&AttackMember> = ms
                .iter()
                .filter(|m| m.kind == AttackKind::Symlink)
                .collect();
            let Some(out) = links.last() else {
                panic!("`{class}` seed {seed}: no link: {}", b.description);
            };
            if ms.iter().any(|m| m.kind == AttackKind::Hardlink) {
                hard += 1;
            } else if links.len() == 2 {
                repoint += 1;
            } else {
                dir += 1;
            }
            let first = ms
                .iter()
                .find(|m| m.kind == AttackKind::Dir && m.name != b"in/")
                .map(|m| m.name.strip_suffix(b"/").unwrap_or(&m.name).to_vec())
                .or_else(|| (links.len() == 2).then(|| links[0].name.clone()));
            match first {
                Some(f) if f != out.name => two += 1,
                Some(_) => one += 1,
                None => {}
            }
            node_tar |= has(&ms, AttackKind::Dir, b"a\\b/", None)
                && has(&ms, AttackKind::Symlink, b"a\\b", Some(b"../out"))
                && has(&ms, AttackKind::File, b"a\\b/pwned", None);
        }
        assert!(
            dir > 0 && repoint > 0 && hard > 0 && two > 0 && one > 0,
            "`{class}`: dir {dir}, repoint {repoint}, hardlink {hard}, two spellings {two}, one {one}"
        );
        if *class == AttackClass::BackslashName {
            assert!(node_tar, "node-tar 6.1.0's backslash archive is drawn");
        }
    }
}

/// What host_safe lets run of the new classes climbs one level at most (a naive extractor
/// stays in the jail), and some of `link-dotdot` runs (the one-level published shape);
/// every escape is seen by the `traversal` check when an extractor writes nothing.
#[test]
fn new_classes_are_host_safe_only_one_level_up_and_traversals() {
    let mut dotdot_safe = 0;
    for class in NEW {
        let mut flagged = 0;
        for seed in 0..SEEDS {
            let b = built(class, seed);
            if host_safe(&b.bytes) {
                let mut view = ViewModel::new();
                let jail = &root()[..root().len() - 1];
                for m in &b.members {
                    for t in view.apply(m) {
                        assert!(
                            t.path.starts_with(jail),
                            "`{class}` seed {seed}: judged safe, reaches {:?}: {}",
                            t.path,
                            b.description
                        );
                    }
                }
                if class == AttackClass::LinkDotdot {
                    dotdot_safe += 1;
                }
            }
            // An extractor that made only the links and accepted: the final tree holds
            // them, nothing under them.
            let members = archive_tar(&b.bytes).1.expect("listed");
            if !traversals(None, &members, &Default::default()).is_empty() {
                flagged += 1;
            }
        }
        let least = if class == AttackClass::RootPrefix {
            SEEDS / 4
        } else {
            SEEDS / 2
        };
        assert!(flagged >= least, "`{class}`: {flagged} of {SEEDS} flagged");
    }
    assert!(dotdot_safe > 0, "some link-dotdot draws run without a view");
}
