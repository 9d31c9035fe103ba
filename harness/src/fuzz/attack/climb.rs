//! Lexical versus kernel: link targets that read inside the root as text and leave it once
//! followed (`<earlier link>/..`), and names built from the root's own basename
//! (`../root-x`) that pass a prefix check.

use super::member::{choose, one_in, Seq};
use super::target::{aim, components, join, ups};
use crate::jail::view_layout::{VIEW_DECOYS, VIEW_DIRS, VIEW_ROOT, VIEW_ROOT_DEPTH};
use snapconf_tarbytes::Rng;

/// The view path `levels` directories above the root (`/home/user/ws` for 1, `/` for
/// [`VIEW_ROOT_DEPTH`]).
fn above_root(levels: usize) -> String {
    let c = components(VIEW_ROOT);
    format!("/{}", c[..c.len().saturating_sub(levels)].join("/"))
}

/// A place below the view directory `at` (not `at` itself) and whether it is a decoy
/// file: a decoy (written over) or a view directory (a new entry made in it); the rest
/// below `at`.
fn below(rng: &mut Rng, at: &str) -> (String, bool) {
    let base = components(at);
    let mut options: Vec<(String, bool)> = Vec::new();
    for (place, file) in VIEW_DECOYS
        .iter()
        .map(|p| (p, true))
        .chain(VIEW_DIRS.iter().map(|p| (p, false)))
    {
        let c = components(place);
        // Not through the root: that is inside.
        let through_root = c.starts_with(&components(VIEW_ROOT));
        if c.len() > base.len() && c.starts_with(&base) && !through_root {
            options.push((c[base.len()..].join("/"), file));
        }
    }
    let at = rng.below(options.len());
    options.swap_remove(at)
}

/// A member through `via` (a name resolving to some view directory) onto `rest` below it:
/// a decoy overwritten, hardlinked to, or a new file or directory in a view directory.
fn write_through(rng: &mut Rng, seq: &mut Seq, via: &[u8], rest: &str, file: bool) {
    let at = join(via, rest);
    if file {
        if one_in(rng, 4) {
            seq.hardlink("h", &at);
            seq.file("h");
        } else {
            seq.file(&at);
        }
    } else if one_in(rng, 3) {
        seq.dir([join(&at, "snapconf-new"), b"/".to_vec()].concat());
    } else {
        seq.file(join(&at, "pwned"));
    }
}

/// `link-dotdot`: a link that stands for the root (`y -> .`, `y -> ./.`, `p/y -> ..`), then
/// links whose targets climb through it (`x -> y/..`, `x -> y/y/..`, `x -> ./y/./..`), each
/// a further `x2 -> x/..` one level higher, then a write through the last one onto a decoy
/// or a decoy directory beside that ancestor of the root (`x/out/pwned`, `x/decoy`). Read
/// as text each target stays inside (`y/..` is the root); followed it leaves: tar-fs up to
/// 3.0.8 (CVE-2025-48387) and every later tar-fs accept `y -> .` then `x -> y/..`, which
/// leaves `x` at the root's parent.
pub(super) fn link_dotdot(rng: &mut Rng, seq: &mut Seq) {
    let (anchor, target) = choose(
        rng,
        &[
            ("y", "."),
            ("y", "."),
            ("y", "./."),
            ("y", "p/.."),
            ("p/y", ".."),
            ("p/y", "../."),
        ],
    );
    if anchor.starts_with("p/") || target.starts_with("p/") {
        seq.dir("p/");
    }
    seq.symlink(anchor, target);
    // One level most often (the published shape, and one `..` in the whole archive).
    let levels = if one_in(rng, 2) {
        1
    } else {
        1 + rng.below(VIEW_ROOT_DEPTH)
    };
    let first = match rng.below(4) {
        0 => format!("{anchor}/{anchor}/.."),
        1 => format!("./{anchor}/./.."),
        _ => format!("{anchor}/.."),
    };
    let names = ["x", "x2", "x3", "x4"];
    seq.symlink(names[0], &first);
    for k in 1..levels {
        let hop = if one_in(rng, 3) {
            format!("./{}/./..", names[k - 1])
        } else {
            format!("{}/..", names[k - 1])
        };
        seq.symlink(names[k], hop);
    }
    let (rest, file) = below(rng, &above_root(levels));
    write_through(rng, seq, names[levels - 1].as_bytes(), &rest, file);
}

/// The root's own basename (`root`).
fn root_base() -> &'static str {
    VIEW_ROOT.rsplit('/').next().unwrap_or(VIEW_ROOT)
}

/// `root-prefix`: a sibling whose name starts with the root's own (`../root-x`,
/// `../rootx`, or `/home/user/ws/root-x`), reached by a link (`s -> ../root-x`, then
/// `s/pwned`) or by members' own names (`../root-x/` with mode 0777, then
/// `../root-x/pwned`). A containment check that
/// compares the resolved path's string prefix with the root's, without a separator, passes
/// both: tar-fs 3.1.0 (CVE-2025-59343), and the same bug in Python `tarfile`'s
/// `os.path.commonprefix` checks before the 2023 filters. The view holds empty decoy
/// directories there.
pub(super) fn root_prefix(rng: &mut Rng, seq: &mut Seq) {
    let sibling = format!("{}{}", root_base(), choose(rng, &["-x", "x"]));
    let place = format!("{}/{sibling}", above_root(1));
    match rng.below(3) {
        0 => {
            let s = choose(rng, &["s", "s", "w/s"]);
            let depth = super::target::dir_depth(s);
            let target = if one_in(rng, 3) {
                aim(rng, depth, &place)
            } else {
                join(ups(depth + 1), &sibling)
            };
            seq.symlink(s, target);
            write_through(rng, seq, s.as_bytes(), "", false);
        }
        1 => {
            seq.dir(format!("../{sibling}/")).mode(0o777);
            seq.file(format!("../{sibling}/pwned"));
        }
        _ => {
            seq.dir(format!("../{sibling}/")).mode(0o777);
            seq.dir(format!("../{sibling}/snapconf-new/"));
        }
    }
}
