//! What a jail's snapshots keep from one walk to the next ([`Memo`]), and the coarse clock
//! that says when keeping it is sound.

use rustix::time::{ClockId, Timespec};
use std::collections::HashMap;
use std::ffi::CString;
use std::io;
use std::os::fd::BorrowedFd;
use std::sync::Arc;

/// What one jail's snapshots remember from the last: the decoys' digests, symlink targets
/// and the names of directories, each kept with the `statx` identity (inode, size, mtime,
/// ctime) the entry had then, and used only while the entry still has it.
///
/// That is sound only for an entry that had *settled*: its ctime was older than the coarse
/// clock (`CLOCK_REALTIME_COARSE`, the kernel's timestamp source, `current_time()` in
/// `fs/inode.c`) read before the walk began. Every change to a file, and every name added,
/// removed or renamed in a directory, stamps a ctime of at least the coarse clock at that
/// moment, so a later change gives a settled entry a ctime it never had. An entry changed
/// within the clock tick of its last change may keep its ctime: on tmpfs an `rmdir` gives
/// the parent the removed directory's new ctime, which in the same tick can equal the
/// parent's own (seen on Linux 6.18). So unsettled entries are read in full every time.
/// (Since Linux 6.13, multigrain timestamps also give a fine-grained ctime to the first
/// change after a `statx`; the rule above does not rely on that.)
///
/// Kept only on tmpfs and ramfs (nanosecond timestamps; a filesystem that stores seconds
/// would give a same-second change the same ctime), dropped whole if the clock is ever seen
/// to go back, and emptied of everything outside the fixed decoys by
/// [`Jail::reset`](super::Jail::reset). The test `kept_listings_never_hide_a_change` (in
/// `walk.rs`) makes every kind of change at every point of a tick after snapshots that used
/// what was kept.
///
/// Not covered, as by any `statx` snapshot: a write through a shared memory mapping made
/// before the last snapshot stamps no new time, so a kept digest misses it (a fresh read
/// would not). It needs a process that keeps the mapping across a step, which the straggler
/// reaper does not let a tool do.
#[derive(Default)]
pub(super) struct Memo {
    /// Contents of the decoys already hashed, by jail-relative path.
    pub(super) digests: HashMap<Vec<u8>, (Identity, String)>,
    /// Targets of symlinks already read, by jail-relative path.
    pub(super) targets: HashMap<Vec<u8>, (Identity, Vec<u8>)>,
    /// Names in directories already listed, by jail-relative path.
    pub(super) listings: HashMap<Vec<u8>, (Identity, Arc<[CString]>)>,
    /// The coarse clock at the start of the last walk.
    pub(super) clock: Option<Timespec>,
    /// Directories a walk made `u+rx` for a moment (not root, a `0000` or `0300`
    /// directory; see [`Widened`]), by jail-relative path. Kept however the clock goes.
    pub(super) widened: HashMap<Vec<u8>, Widened>,
}

/// What a walk's own `chmod` and restore did to a directory's ctime: the inode, the ctime
/// the walk left it with, and the ctime it had before the walk first widened it. A later
/// walk that finds the directory with that inode and the ctime it left records the earlier
/// ctime instead, so two snapshots see no change the walks made themselves. Any other
/// change stamps a new ctime and is seen (one made within the clock tick of the restore,
/// that leaves mode and owner as they were, is not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Widened {
    pub(super) ino: u64,
    pub(super) left: (i64, u32),
    pub(super) real: (i64, u32),
}

pub(super) type Identity = (u64, u64, (i64, u32), (i64, u32));

/// True if the filesystem of `dir` is tmpfs or ramfs, which stamp times in nanoseconds
/// (`statfs(2)` magic numbers); false if `fstatfs` fails.
pub(super) fn nanosecond_times(dir: BorrowedFd<'_>) -> bool {
    const TMPFS: u64 = 0x0102_1994;
    const RAMFS: u64 = 0x8584_58f6;
    // `f_type` is signed on some targets; the magic numbers fit in 32 bits.
    rustix::fs::fstatfs(dir)
        .is_ok_and(|st| matches!((st.f_type as u64) & 0xffff_ffff, TMPFS | RAMFS))
}

/// The coarse realtime clock, as the kernel stamps file times.
pub(super) fn coarse_now() -> Timespec {
    rustix::time::clock_gettime(ClockId::RealtimeCoarse)
}

/// The value `memo` keeps for `key` if it was kept at identity `id`, else `read()`'s, which
/// is kept if `settled` (see [`Memo`]).
pub(super) fn kept_or<T: Clone>(
    memo: &mut HashMap<Vec<u8>, (Identity, T)>,
    key: &[u8],
    id: Identity,
    settled: bool,
    read: impl FnOnce() -> io::Result<T>,
) -> io::Result<T> {
    if let Some((was, value)) = memo.get(key) {
        if *was == id {
            return Ok(value.clone());
        }
    }
    let value = read()?;
    if settled {
        memo.insert(key.to_vec(), (id, value.clone()));
    }
    Ok(value)
}
