//! Swaps: a name that members use as a directory becomes a symlink between them, is spelled
//! differently by each, is re-pointed after use, or has its metadata applied after the
//! swap.

use super::member::{choose, maybe_slash, one_in, Seq};
use super::target::{aim, aim_dir, decoy, decoy_in_dir, dir_depth, join, ups, view_dir};
use crate::jail::view_layout::VIEW_ROOT_DEPTH;
use snapconf_tarbytes::Rng;

/// Where a swapped directory sits: the prior's `d` most often (a directory on disk already,
/// with `d/f` in it), else fresh names, some nested so that the `..` count has to include
/// the member's own depth.
const SWAP_NAMES: [(&str, &str); 6] = [
    ("", "d"),
    ("", "d"),
    ("", "d"),
    ("", "sub"),
    ("w", "d"),
    ("w/v", "cache"),
];

/// `dir-to-symlink`: `d/` (with a child), then `d -> <target>`, then a member under `d`.
///
/// Extractors that remember which directories they made (node-tar's directory cache,
/// CVE-2021-32803) or that create parents before checking them (tar-rs `unpack_in`,
/// CVE-2021-38511) go through the link the archive just swapped in. Targets: a view
/// directory (absolute, `//`, exact, fewest or extra `..`), the root itself (`.`; then
/// `d/l` writes through the prior's `l -> ../decoy`), `..` (the root's parent), and a deep
/// `../../../..` to `/`.
pub(super) fn dir_to_symlink(rng: &mut Rng, seq: &mut Seq) {
    let (parent, base) = choose(rng, &SWAP_NAMES);
    let name = join(parent, base);
    let depth = dir_depth(&name);
    if !parent.is_empty() && one_in(rng, 2) {
        seq.dir(format!("{parent}/"));
    }
    // The prior already holds `d/`: sometimes the archive leaves making it to the prior.
    if !(name == b"d" && one_in(rng, 3)) {
        seq.dir(maybe_slash(rng, &name));
        if one_in(rng, 2) {
            seq.file(join(&name, "keep"));
        }
    }
    match rng.below(8) {
        0..=3 => {
            let (dir, tail) = decoy_in_dir(rng);
            seq.symlink(&name, aim(rng, depth, dir));
            write_under(rng, seq, &name, &tail);
        }
        4 => {
            // The root itself, then the prior's own link below it.
            let target = if depth == 0 { ".".into() } else { ups(depth) };
            seq.symlink(&name, target);
            seq.file(join(&name, "l"));
        }
        5 => {
            seq.symlink(&name, ups(depth + 1));
            write_under(rng, seq, &name, "decoy");
        }
        6 => {
            let tail = decoy(rng).trim_start_matches('/');
            seq.symlink(&name, ups(depth + VIEW_ROOT_DEPTH + rng.below(5)));
            write_under(rng, seq, &name, tail);
        }
        _ => {
            // New entries outside, made through the link (tar-rs CVE-2021-38511).
            seq.symlink(&name, aim_dir(rng, depth));
            let fresh = join(&name, "snapconf-new");
            seq.dir([fresh.as_slice(), b"/"].concat());
            seq.file(join(&fresh, "x"));
        }
    }
}

/// The member that goes through a swapped link: a file mostly, sometimes a hardlink to the
/// prior's `a` placed there.
fn write_under(rng: &mut Rng, seq: &mut Seq, link: &[u8], rest: &str) {
    if one_in(rng, 6) {
        seq.hardlink(join(link, rest), "a");
    } else {
        seq.file(join(link, rest));
    }
}

/// `spelling-collision`: the swapped directory spelled differently by each member, so that a
/// check keyed on raw names (a set of seen names, a directory cache) misses that they are
/// one path (node-tar CVE-2021-37701 and CVE-2021-37712 were this class with backslash
/// separators and Unicode normalisation; here the spellings are ones POSIX itself makes one
/// path: `./d`, `d//`, `d/.`).
pub(super) fn spelling_collision(rng: &mut Rng, seq: &mut Seq) {
    let base = choose(rng, &["d", "sub", "cfg"]);
    let (dir, tail) = decoy_in_dir(rng);
    if !one_in(rng, 3) {
        let spelled = [
            format!("{base}/"),
            format!("./{base}/"),
            format!("{base}//"),
            format!("{base}/./"),
            format!(".//{base}"),
        ];
        seq.dir(choose(rng, &spelled.each_ref()));
    }
    let link = [
        format!("./{base}"),
        format!(".//{base}"),
        format!("{base}/."),
        format!("{base}/"),
    ];
    seq.symlink(choose(rng, &link.each_ref()), aim(rng, 0, dir));
    let write = [
        format!("{base}//{tail}"),
        format!("./{base}/{tail}"),
        format!("{base}/./{tail}"),
        format!(".//{base}///{tail}"),
    ];
    seq.file(choose(rng, &write.each_ref()));
}

/// `link-repoint`: a symlink judged (or used) once, then re-pointed under the same name,
/// then used again: `s -> in`, `s/ok`, `s -> /etc`, `s/passwd`. Also two outside targets in
/// a row, and a re-point by a hardlink to another symlink. `l` re-points the prior's own
/// link.
pub(super) fn link_repoint(rng: &mut Rng, seq: &mut Seq) {
    let s = choose(rng, &["s", "s", "l", "w/s"]);
    let depth = dir_depth(s);
    let (dir, tail) = decoy_in_dir(rng);
    let inside = join(ups(depth), "in");
    match rng.below(3) {
        0 => {
            seq.dir("in/");
            seq.symlink(s, &inside);
            seq.file(join(s, "ok"));
            seq.symlink(s, aim(rng, depth, dir));
        }
        1 => {
            let first = if one_in(rng, 2) {
                b".".to_vec()
            } else {
                aim_dir(rng, depth)
            };
            seq.symlink(s, first);
            seq.symlink(s, aim(rng, depth, dir));
        }
        _ => {
            // A second link beside `s` (same directory, so its target reads the same from
            // there), and `s` re-made as a hardlink to it.
            let t = join(s.rsplit_once('/').map_or("", |(p, _)| p), "t");
            seq.dir("in/");
            seq.symlink(s, &inside);
            seq.symlink(&t, aim(rng, depth, dir));
            seq.hardlink(s, &t);
        }
    }
    seq.file(join(s, tail));
}

/// `late-dir-metadata`: a directory member with an open mode, then its name swapped for a
/// link (to a view directory or a decoy file), sometimes the directory member again after
/// the swap. Extractors that apply directory modes and times at the end (GNU tar's delayed
/// `set_stat`, libarchive's fix-up list, CVE-2021-31566) `chmod` through the link. Also a
/// directory member that *is* a view directory (`..`, `/tmp/`) with that mode.
pub(super) fn late_dir_metadata(rng: &mut Rng, seq: &mut Seq) {
    let mode = choose(rng, &[0o777, 0o2777, 0o1777, 0o7777, 0o4777]);
    if one_in(rng, 4) {
        let mut name = aim_dir(rng, 0);
        name.push(b'/');
        seq.dir(name).mode(mode);
        return;
    }
    let name = choose(rng, &["d", "d", "cfg", "w/d"]);
    let depth = dir_depth(name);
    seq.dir(format!("{name}/")).mode(mode);
    if one_in(rng, 2) {
        seq.file(format!("{name}/x"));
    }
    let place = if one_in(rng, 2) {
        view_dir(rng)
    } else {
        decoy(rng)
    };
    seq.symlink(name, aim(rng, depth, place));
    if one_in(rng, 2) {
        seq.dir(format!("{name}/")).mode(mode);
    }
}
