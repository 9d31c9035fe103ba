//! Members hidden in the payload of a member that readers disagree has one.
//!
//! POSIX ustar stores no data for hardlinks, symlinks and directories, and tools read the
//! size field of such headers differently: bsdtar, Python `tarfile` and BusyBox take it as
//! 0 for types `1`, `2`, `3`, `5` and `6`, GNU tar for `1` and `5`, while the reference and
//! tar-rs skip `size` bytes after any header. Checked with GNU tar 1.34, bsdtar 3.6.2,
//! Python 3.11.7 and BusyBox 1.35: a file, then a directory member of size 512 whose payload
//! is a header for `../../../../etc/x`, lists three members in all four and two in the
//! reference (`snapconf check-archive --all-parsers` reports the disagreement).

use super::encode::payload_of;
use super::member::{choose, AttackKind, Seq};
use super::target::{aim, aim_decoy, decoy_in_dir, join};
use snapconf_tarbytes::Rng;

/// `size-smuggle`: a directory (most often), a hardlink to an earlier file, a symlink, a
/// FIFO or a character device whose payload is one or two complete members: a file at a
/// decoy, or `x -> <view dir>` and a file under it. A validator that skips the payload by
/// its size approves an archive whose extractor reads the hidden members.
pub(super) fn size_smuggle(rng: &mut Rng, seq: &mut Seq) {
    let mut hidden = Seq::default();
    if rng.below(3) < 2 {
        hidden.file(aim_decoy(rng, 0));
    } else {
        let (dir, tail) = decoy_in_dir(rng);
        hidden.symlink("x", aim(rng, 0, dir));
        hidden.file(join("x", tail));
    }
    let payload = payload_of(&hidden.members, rng);
    let kind = choose(
        rng,
        &[
            AttackKind::Dir,
            AttackKind::Dir,
            AttackKind::Dir,
            AttackKind::Hardlink,
            AttackKind::Hardlink,
            AttackKind::Symlink,
            AttackKind::Fifo,
            AttackKind::CharDevice,
        ],
    );
    let m = match kind {
        AttackKind::Dir => seq.dir(choose(rng, &["dd/", "dd"])),
        AttackKind::Hardlink => {
            seq.file("target");
            seq.hardlink("h", "target")
        }
        AttackKind::Symlink => seq.symlink("s", "target"),
        special => seq.special(special, "ff"),
    };
    m.data(&payload);
    m.hidden = hidden.members;
}
