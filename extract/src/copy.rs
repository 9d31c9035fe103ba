//! Copying a payload from the archive file (or a staged file, for a hardlink copy) into a
//! new file.
//!
//! `copy_file_range(2)` moves the bytes inside the kernel (and shares extents where the
//! filesystem can); where it is refused (`EXDEV`, `ENOSYS`, `EINVAL`, `EOPNOTSUPP`) a plain
//! `pread`/`write` loop with one reused buffer takes over. Memory use is the buffer, whatever
//! the file size.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;

use rustix::io::Errno;

use crate::plan::ReadPayload;
use crate::sparse::SparseMap;
use crate::HydrateError;

/// Size of the fallback copy buffer, in bytes.
const BUF: usize = 1 << 20;

/// Copies payloads, remembering whether `copy_file_range` works for this pair of filesystems.
pub(crate) struct Copier {
    use_cfr: bool,
    buf: Vec<u8>,
}

impl Copier {
    pub(crate) fn new() -> Self {
        Copier {
            use_cfr: true,
            buf: Vec::new(),
        }
    }

    /// Copies `len` bytes of `src` starting at `offset` to the current position of `dst`.
    pub(crate) fn copy(
        &mut self,
        src: &File,
        offset: u64,
        len: u64,
        dst: &mut File,
    ) -> io::Result<()> {
        let mut off = offset;
        let end = offset + len;
        if self.use_cfr {
            while off < end {
                let chunk = usize::try_from((end - off).min(1 << 30)).unwrap_or(1 << 30);
                match rustix::fs::copy_file_range(src, Some(&mut off), &*dst, None, chunk) {
                    Ok(0) => return Err(short()),
                    Ok(_) => {}
                    Err(Errno::INTR) => {}
                    Err(Errno::XDEV | Errno::NOSYS | Errno::INVAL | Errno::OPNOTSUPP)
                        if off == offset =>
                    {
                        self.use_cfr = false;
                        break;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            if off == end {
                return Ok(());
            }
        }
        if self.buf.is_empty() {
            self.buf = vec![0; BUF];
        }
        while off < end {
            let want = usize::try_from((end - off).min(BUF as u64)).unwrap_or(BUF);
            let n = match src.read_at(&mut self.buf[..want], off) {
                Ok(0) => return Err(short()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            dst.write_all(&self.buf[..n])?;
            off += n as u64;
        }
        Ok(())
    }
}

/// Where a sparse file's regions are in the file they are copied from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Regions {
    /// One after the other from this offset (a member's data in the archive file).
    Packed(u64),
    /// At their own offsets (a sparse file already restored: a hardlink's copy).
    InPlace,
}

impl Copier {
    /// Copies a sparse file's data regions from `src` into the new empty file `dst`, each
    /// at its offset, and gives `dst` the file's size: what lies between the regions is
    /// never written, so it stays a hole where the filesystem keeps holes (and reads as
    /// zeros everywhere).
    pub(crate) fn copy_sparse(
        &mut self,
        src: &File,
        from: Regions,
        map: &SparseMap,
        dst: &mut File,
    ) -> io::Result<()> {
        let mut packed = match from {
            Regions::Packed(offset) => Some(offset),
            Regions::InPlace => None,
        };
        for r in map.regions.iter().filter(|r| r.len > 0) {
            dst.seek(SeekFrom::Start(r.offset))?;
            match packed.as_mut() {
                Some(off) => {
                    self.copy(src, *off, r.len, dst)?;
                    *off += r.len;
                }
                None => self.copy(src, r.offset, r.len, dst)?,
            }
        }
        dst.set_len(map.real_size)
    }
}

/// Writes a payload given by `read` (through `buf`) into the new empty file `dst`: as it
/// comes, or for a sparse map each region at its offset, then the file's size (see
/// [`Copier::copy_sparse`]). The outer error is a refusal `read` returned, the inner one a
/// fault of the write.
pub(crate) fn write_payload(
    read: &mut ReadPayload<'_>,
    buf: &mut [u8],
    sparse: Option<&SparseMap>,
    dst: &mut File,
) -> Result<io::Result<()>, HydrateError> {
    let Some(map) = sparse else {
        return pump(read, buf, None, dst);
    };
    for r in map.regions.iter().filter(|r| r.len > 0) {
        if let Err(e) = dst.seek(SeekFrom::Start(r.offset)) {
            return Ok(Err(e));
        }
        if let Err(e) = pump(read, buf, Some(r.len), dst)? {
            return Ok(Err(e));
        }
    }
    Ok(dst.set_len(map.real_size))
}

/// Copies `len` bytes (all, if `None`) from `read` to `dst`'s position; errors as
/// [`write_payload`].
fn pump(
    read: &mut ReadPayload<'_>,
    buf: &mut [u8],
    len: Option<u64>,
    dst: &mut File,
) -> Result<io::Result<()>, HydrateError> {
    let mut left = len.unwrap_or(u64::MAX);
    while left > 0 {
        let want = usize::try_from(left).map_or(buf.len(), |l| l.min(buf.len()));
        let n = read(&mut buf[..want])?;
        if n == 0 {
            return Ok(match len {
                None => Ok(()),
                Some(_) => Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "a sparse member's data ends before its map does",
                )),
            });
        }
        if let Err(e) = dst.write_all(&buf[..n]) {
            return Ok(Err(e));
        }
        left -= n as u64;
    }
    Ok(Ok(()))
}

fn short() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "archive file is shorter than validated (changed during hydration?)",
    )
}
