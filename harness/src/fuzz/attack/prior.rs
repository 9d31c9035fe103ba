//! Attacks through the prior workspace's own names: `l -> ../decoy` (a link the prior
//! planted, pointing at the root's parent's decoy) and `d/` with `d/f`.
//!
//! An extractor that merges into the prior instead of replacing it meets these names on
//! disk. This is the two-step shape of GNU tar CVE-2025-45582 (a first archive plants
//! `x -> ../..`, a second writes `x/file`), with the prior as the first step.

use super::member::{choose, one_in, Seq};
use super::target::{aim, decoy_in_dir, join};
use snapconf_tarbytes::Rng;

/// `prior-names`: a file written to `l` (an extractor that opens the existing name for
/// writing, as Python `tarfile` does, follows the link to the decoy), sometimes setuid; a
/// hardlink to `l` and a file written to it; the prior's non-empty `d/` replaced by a link
/// to a view directory and `d/f` (or a decoy's name) written through it; a directory member
/// `l` with mode 0777 (a delayed `chmod` follows the link).
pub(super) fn prior_names(rng: &mut Rng, seq: &mut Seq) {
    match rng.below(5) {
        0 | 1 => {
            let mode = if one_in(rng, 4) { 0o4755 } else { 0o644 };
            seq.file(choose(rng, &["l", "l", "./l"])).mode(mode);
        }
        2 => {
            seq.hardlink("h", "l");
            seq.file("h");
        }
        3 => {
            let (dir, tail) = decoy_in_dir(rng);
            seq.symlink("d", aim(rng, 0, dir));
            let rest = if one_in(rng, 2) {
                "f".to_string()
            } else {
                tail
            };
            seq.file(join("d", rest));
        }
        _ => {
            seq.dir("l").mode(0o777);
        }
    }
}
