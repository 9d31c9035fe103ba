//! The journal beside the root: which phase a hydration reached, and the staging name.
//!
//! Format (text, one `key=value` per line): `snapconf-journal 1`, `phase=staged|swapped`,
//! `stage=<name>`. It is written to `<journal>.tmp` and renamed over the journal, so a reader
//! sees either the old or the new content, never a torn one.
//!
//! Phases and what [`crate::recover`] does:
//! - `staged` (written before the staging tree is built): the staging tree may be partial
//!   and the root is the prior tree, or the exchange happened and the staging name holds
//!   the *old* tree: either way, delete it;
//! - `swapped` (the exchange happened, the staging name holds the old tree: delete it) is
//!   read but no longer written: `hydrate` goes from the exchange straight to removing the
//!   old tree, so rewriting the journal in between recorded nothing `recover` needs.
//!
//! Both end in "delete whatever is under the staging name", and that is deliberate: the
//! `renameat2(RENAME_EXCHANGE)` is the single commit point, so a crash between the exchange
//! and the journal update (journal still says `staged`, name holds the old tree) is resolved
//! correctly too. The phase is kept for reporting and for auditors.

use std::io::{self, Read, Write};

use rustix::fs::{openat, renameat, unlinkat, AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::sibling::Sibling;

/// How far a hydration got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Staged,
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
    let fd = openat(
        sib.parent(),
        tmp.as_slice(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC,
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
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
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
