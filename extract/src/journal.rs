//! The journal beside the root: a hydration of this root began, and under which staging name.
//!
//! Format (text, one `key=value` per line): `snapconf-journal 1`, `phase=staged`,
//! `stage=<name>`. It is written to `<journal>.tmp` and renamed over the journal, so a reader
//! sees either the old or the new content, never a torn one.
//!
//! What a journal left behind (the hydration was killed) tells an auditor: the root holds a
//! complete tree, the prior one or, if the kill came after the exchange, the new one; the
//! staging name holds the other (or a partial staging tree), and [`crate::recover`] deletes
//! it. The journal does not say which of the two the root holds: the
//! `renameat2(RENAME_EXCHANGE)` is the single commit point, and recording "swapped" after it
//! would be a second write that recovery never needs (`phase=swapped`, which earlier
//! versions wrote, is still read and means the same).
//!
//! A non-regular file at the journal's name (a FIFO, say) is an error, never opened in a way
//! that could block.

use std::io::{self, Read, Write};

use rustix::fs::{openat, renameat, unlinkat, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::sibling::Sibling;

/// How far a hydration got, as its journal says (see the module doc: both phases are
/// recovered the same way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Staged,
    /// Written by earlier versions after the exchange; still read.
    Swapped,
}

/// A parsed journal. Its `stage=` line must be present, but recovery does not act on the
/// name it gives: every staging-shaped sibling is removed anyway (see [`crate::recover`]).
#[derive(Debug)]
pub(crate) struct Journal {
    pub(crate) phase: Phase,
}

/// Writes (atomically replaces) the journal.
pub(crate) fn write(sib: &Sibling, phase: Phase, stage: &[u8]) -> io::Result<()> {
    let tmp = sib.journal_tmp_name();
    // A stale temporary file (or anything else under its name, a FIFO included) goes first,
    // so the exclusive create below never opens an existing node.
    match unlinkat(sib.parent(), tmp.as_slice(), AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => {}
        Err(e) => return Err(e.into()),
    }
    let fd = openat(
        sib.parent(),
        tmp.as_slice(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    let mut f = std::fs::File::from(fd);
    let phase = match phase {
        Phase::Staged => "staged",
        Phase::Swapped => "swapped",
    };
    let mut text = format!("snapconf-journal 1\nphase={phase}\nstage=").into_bytes();
    text.extend_from_slice(stage);
    text.push(b'\n');
    f.write_all(&text)?;
    drop(f);
    renameat(
        sib.parent(),
        tmp.as_slice(),
        sib.parent(),
        sib.journal_name().as_slice(),
    )?;
    Ok(())
}

/// Reads the journal; `None` if there is none. A journal we cannot parse is an error (it is
/// left in place for a human), except that an unknown staging name is never acted on.
pub(crate) fn read(sib: &Sibling) -> io::Result<Option<Journal>> {
    let fd = match openat(
        sib.parent(),
        sib.journal_name().as_slice(),
        // `O_NONBLOCK`: a FIFO planted at the name must not block the open.
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    if !rustix::fs::fstat(&fd)
        .map(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
        .unwrap_or(false)
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the snapconf journal is not a regular file",
        ));
    }
    let mut text = Vec::new();
    std::fs::File::from(fd).take(4096).read_to_end(&mut text)?;
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "unreadable snapconf journal");
    let mut lines = text.split(|&b| b == b'\n');
    if lines.next() != Some(b"snapconf-journal 1") {
        return Err(bad());
    }
    let (mut phase, mut stage) = (None, false);
    for line in lines {
        if let Some(p) = line.strip_prefix(b"phase=") {
            phase = match p {
                b"staged" => Some(Phase::Staged),
                b"swapped" => Some(Phase::Swapped),
                _ => return Err(bad()),
            };
        } else if line.starts_with(b"stage=") {
            stage = true;
        }
    }
    match (phase, stage) {
        (Some(phase), true) => Ok(Some(Journal { phase })),
        _ => Err(bad()),
    }
}

/// Removes the journal alone (absent is fine): after [`write`] succeeded there is no
/// temporary file, since it was renamed over the journal.
pub(crate) fn remove_written(sib: &Sibling) -> io::Result<()> {
    match unlinkat(
        sib.parent(),
        sib.journal_name().as_slice(),
        AtFlags::empty(),
    ) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Removes the journal and its temporary file (absent is fine).
pub(crate) fn remove(sib: &Sibling) -> io::Result<()> {
    for name in [sib.journal_tmp_name(), sib.journal_name()] {
        match unlinkat(sib.parent(), name.as_slice(), AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
