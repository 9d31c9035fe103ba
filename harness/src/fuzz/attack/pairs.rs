//! One name as two member types, in either order: every replace-or-follow decision an
//! extractor makes when a name comes back as something else.

use super::member::{choose, maybe_slash, one_in, AttackKind, Seq};
use super::target::{aim, aim_decoy, decoy, decoy_in_dir, dir_depth, join};
use snapconf_tarbytes::Rng;

/// The kinds a pair is drawn from.
const KINDS: [AttackKind; 7] = [
    AttackKind::File,
    AttackKind::Dir,
    AttackKind::Symlink,
    AttackKind::Hardlink,
    AttackKind::Fifo,
    AttackKind::CharDevice,
    AttackKind::BlockDevice,
];

/// The name both members share: the prior's `a` (file), `d` (directory) and `l` (link) so
/// that the pair meets the prior too, or fresh ones.
const NAMES: [&str; 6] = ["a", "d", "l", "n", "n", "w/n"];

/// The file a pair's hardlink points at when it stays inside.
const LINK_SOURCE: &str = "hl-src";

/// `type-pairs`: two members of different kinds named alike (all 42 ordered pairs), then,
/// half the time when the second is a directory or a symlink, a file under it. A symlink
/// aims at a decoy (so a file after it writes through, H10) or, when something goes under
/// the name, at a view directory; a hardlink points at an earlier file or at a decoy.
pub(super) fn type_pairs(rng: &mut Rng, seq: &mut Seq) {
    let i = rng.below(KINDS.len());
    let first = KINDS[i];
    let second = KINDS[(i + 1 + rng.below(KINDS.len() - 1)) % KINDS.len()];
    let name = choose(rng, &NAMES);
    let depth = dir_depth(name);
    // Not under a directory member named like the prior's `l`: that one resolves to the
    // decoy file, and nothing goes below a file.
    let under = (second == AttackKind::Symlink || (second == AttackKind::Dir && name != "l"))
        && one_in(rng, 2);
    let (dir, tail) = decoy_in_dir(rng);
    let mut have_source = false;
    for kind in [first, second] {
        match kind {
            AttackKind::File => {
                seq.file(name);
            }
            AttackKind::Dir => {
                seq.dir(maybe_slash(rng, name.as_bytes()));
            }
            AttackKind::Symlink => {
                let place = if under { dir } else { decoy(rng) };
                seq.symlink(name, aim(rng, depth, place));
            }
            AttackKind::Hardlink => {
                if one_in(rng, 3) {
                    seq.hardlink(name, aim_decoy(rng, 0));
                } else {
                    if !have_source {
                        seq.file(LINK_SOURCE);
                        have_source = true;
                    }
                    seq.hardlink(name, LINK_SOURCE);
                }
            }
            special => {
                seq.special(special, name);
            }
        }
    }
    if under {
        seq.file(join(name, &tail));
    }
}
