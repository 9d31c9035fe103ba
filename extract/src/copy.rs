//! Copying a payload from the archive file (or a staged file, for a hardlink copy) into a
//! new file.
//!
//! `copy_file_range(2)` moves the bytes inside the kernel (and shares extents where the
//! filesystem can); where it is refused (`EXDEV`, `ENOSYS`, `EINVAL`, `EOPNOTSUPP`) a plain
//! `pread`/`write` loop with one reused buffer takes over. Memory use is the buffer, whatever
//! the file size.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

use rustix::io::Errno;

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

fn short() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "archive file is shorter than validated (changed during hydration?)",
    )
}
