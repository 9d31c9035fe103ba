//! Special files and privileged modes: FIFOs and device nodes at decoy paths and inside the
//! root, setuid, setgid and sticky bits.

use super::member::{choose, distinct, one_in, AttackKind, Seq};
use super::target::aim;
use crate::jail::view_layout::VIEW_DECOYS;
use snapconf_tarbytes::Rng;

/// A FIFO most often, else a character device (1/3 `/dev/null`; 1/1 `/dev/mem` one time in
/// three) or a block device (7/0 `/dev/loop0`).
fn special_member(rng: &mut Rng, seq: &mut Seq, name: impl AsRef<[u8]>) {
    let kind = choose(
        rng,
        &[
            AttackKind::Fifo,
            AttackKind::Fifo,
            AttackKind::CharDevice,
            AttackKind::CharDevice,
            AttackKind::BlockDevice,
        ],
    );
    let m = seq.special(kind, name);
    if kind == AttackKind::CharDevice && one_in(rng, 3) {
        m.device(1, 1);
    }
    if one_in(rng, 4) {
        m.mode(choose(rng, &[0o666, 0o4755, 0o2666]));
    }
}

/// `special-outside`: 1–3 FIFOs or device nodes named by decoy paths (absolute or `..`): a
/// FIFO where a reader expects a file hangs it, a device node outside the root is an
/// escalation.
pub(super) fn special_outside(rng: &mut Rng, seq: &mut Seq) {
    let n = 1 + rng.below(3);
    for file in distinct(rng, &VIEW_DECOYS, n) {
        let name = aim(rng, 0, file);
        special_member(rng, seq, name);
    }
}

/// `special-inside`: 1–3 FIFOs or device nodes inside the root, over the prior's `a` and
/// `d/f` or at fresh names; one time in three a FIFO followed by a regular file of its
/// name, which an extractor that opens the existing name for writing blocks on.
pub(super) fn special_inside(rng: &mut Rng, seq: &mut Seq) {
    let names = ["a", "d/f", "fifo", "dev/null", "null", "w/blk"];
    let n = 1 + rng.below(3);
    for name in distinct(rng, &names, n) {
        special_member(rng, seq, name);
    }
    if one_in(rng, 3) {
        seq.special(AttackKind::Fifo, "pipe");
        seq.file("pipe");
    }
}

/// `privileged-modes`: 1–4 files with setuid/setgid/sticky modes, directories with
/// setgid/sticky (a file inside one, which inherits its group), and sometimes the root
/// itself (`.`) at 7777.
pub(super) fn privileged_modes(rng: &mut Rng, seq: &mut Seq) {
    const FILE_MODES: [u32; 6] = [0o4755, 0o2755, 0o6755, 0o7777, 0o4777, 0o1755];
    const DIR_MODES: [u32; 4] = [0o2775, 0o1777, 0o7777, 0o3777];
    if one_in(rng, 4) {
        seq.dir(choose(rng, &[".", "./"]))
            .mode(choose(rng, &DIR_MODES));
    }
    for i in 0..1 + rng.below(4) {
        if one_in(rng, 3) {
            seq.dir(format!("shared{i}/")).mode(choose(rng, &DIR_MODES));
            seq.file(format!("shared{i}/f"));
        } else {
            seq.file(format!("bin/tool{i}"))
                .mode(choose(rng, &FILE_MODES));
        }
    }
}
