//! Hardlinks that reach outside: to decoys directly, through a symlink, to a symlink, and to
//! members that come later.
//!
//! A hardlink's target is read from the archive's root, not from the member's directory
//! (GNU tar, bsdtar and Python `tarfile` resolve it against the extraction directory), so
//! its `..` count is spelled from depth 0 whatever the depth of its own name.

use super::member::{choose, one_in, Seq, PAYLOAD};
use super::target::{aim, aim_decoy, decoy_beside, decoy_in_dir, dir_depth, join};
use snapconf_tarbytes::Rng;

/// `hardlink-outside`: `h` hardlinked to a decoy (absolute, `//`, or by `..`), carrying data
/// of its own (libarchive CVE-2016-5418: a hardlink member with a non-zero size wrote its
/// data into the target), followed by a regular file `h` (Python CVE-2025-4517's
/// `flaglink`: the file is written into the shared inode), both, or alone (a name inside
/// the root for an inode outside it). `h` may be the prior's `a` or `d/f`.
pub(super) fn outside(rng: &mut Rng, seq: &mut Seq) {
    let name = choose(rng, &["h", "h", "a", "x/h", "d/f"]);
    let target = aim_decoy(rng, 0);
    match rng.below(4) {
        0 => {
            seq.hardlink(name, &target).data(PAYLOAD);
        }
        1 => {
            seq.hardlink(name, &target);
            seq.file(name);
        }
        2 => {
            seq.hardlink(name, &target);
        }
        _ => {
            seq.hardlink(name, &target).data(PAYLOAD);
            seq.file(name);
        }
    }
}

/// `hardlink-through-link`: a hardlink whose target goes through a symlink: one the archive
/// made (`s -> /etc`, `h -> s/passwd`; tar-rs RUSTSEC-2018-0002 / CVE-2018-20990), a chain of
/// two, the prior's `l -> ../decoy`, or `s/../rest` after `s -> <view dir>`. Then, two
/// times in three, a file written to the hardlink's name.
pub(super) fn through_link(rng: &mut Rng, seq: &mut Seq) {
    let h = choose(rng, &["h", "x/h", "a"]);
    match rng.below(4) {
        0 => {
            let s = choose(rng, &["s", "w/s"]);
            let (dir, tail) = decoy_in_dir(rng);
            seq.symlink(s, aim(rng, dir_depth(s), dir));
            seq.hardlink(h, join(s, tail));
        }
        1 => {
            seq.hardlink(h, choose(rng, &["l", "./l", ".//l"]));
        }
        2 => {
            let (dir, tail) = decoy_in_dir(rng);
            seq.symlink("s", "t");
            seq.symlink("t", aim(rng, 0, dir));
            seq.hardlink(h, join("s", tail));
        }
        _ => {
            let (x, rest) = decoy_beside(rng);
            seq.symlink("s", aim(rng, 0, x));
            seq.hardlink(h, format!("s/../{rest}"));
        }
    }
    if !one_in(rng, 3) {
        seq.file(h);
    }
}

/// `hardlink-to-symlink`: `s -> <decoy>`, `h` hardlinked to `s` (sometimes `h2` to `h`), then
/// a file `h`. `link(2)` on a symlink makes a second symlink, but extractors that link with
/// `AT_SYMLINK_FOLLOW`, resolve the target themselves or fall back to copying it read or
/// write the decoy (Python CVE-2025-4330). Or `s -> <view dir>`, `h -> s`, then `h/rest`.
/// All names sit in the root, so a copied link reads its target from the same directory.
pub(super) fn to_symlink(rng: &mut Rng, seq: &mut Seq) {
    if one_in(rng, 3) {
        let (dir, tail) = decoy_in_dir(rng);
        seq.symlink("s", aim(rng, 0, dir));
        seq.hardlink("h", "s");
        seq.file(join("h", tail));
        return;
    }
    seq.symlink("s", aim_decoy(rng, 0));
    seq.hardlink("h", "s");
    let last = if one_in(rng, 2) {
        seq.hardlink("h2", "h");
        "h2"
    } else {
        "h"
    };
    if !one_in(rng, 4) {
        seq.file(last);
    }
}

/// `hardlink-forward`: a hardlink to a member that comes later: `h -> t`, then
/// `t -> <decoy>`, then a file `h`; or `t` first a file, then re-made as a link, then a
/// second hardlink to it written; or `h -> h` before any `h`. Extractors that defer
/// hardlinks (GNU tar's delayed links) or retry them at the end resolve them through what
/// came later.
pub(super) fn forward(rng: &mut Rng, seq: &mut Seq) {
    let target = aim_decoy(rng, 0);
    match rng.below(3) {
        0 => {
            seq.hardlink("h", "t");
            seq.symlink("t", &target);
            seq.file("h");
        }
        1 => {
            seq.hardlink("h", "t");
            seq.file("t");
            seq.symlink("t", &target);
            seq.hardlink("h2", "t");
            seq.file("h2");
        }
        _ => {
            seq.hardlink("h", "h");
            seq.symlink("h", &target);
            seq.file("h");
        }
    }
}
