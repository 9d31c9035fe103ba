//! Byte sources the parser reads from: a stream ([`crate::validate`]) or a regular file read
//! by offset (the archive itself, or the spool copy of a stream).
//!
//! The parser only needs "read the next bytes" and "skip n bytes"; both report a short count at
//! end of input so that truncation is detected by the parser, never papered over by a seek
//! past EOF (a seekable reader happily seeks beyond the end, which is how a truncated last
//! member could otherwise look complete).

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;

/// Size of the buffer used to skip payloads of a stream, in bytes.
const SKIP_BUF: usize = 256 * 1024;

/// A sequential byte source with cheap skipping.
pub(crate) trait Input {
    /// Reads up to `buf.len()` bytes; 0 means end of input.
    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize>;
    /// Skips up to `n` bytes; returns how many were skipped (fewer means end of input).
    fn skip(&mut self, n: u64) -> io::Result<u64>;

    /// Fills `buf` as far as the input allows; returns how many bytes were read.
    fn read_full(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.read_some(&mut buf[done..]) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }
}

/// A non-seekable stream: skipping reads and discards through one reused buffer.
pub(crate) struct StreamInput<R> {
    inner: R,
    buf: Vec<u8>,
}

impl<R: Read> StreamInput<R> {
    /// Reads `inner` sequentially.
    pub(crate) fn new(inner: R) -> Self {
        StreamInput {
            inner,
            buf: Vec::new(),
        }
    }
}

impl<R: Read> Input for StreamInput<R> {
    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf)
    }

    fn skip(&mut self, n: u64) -> io::Result<u64> {
        if self.buf.is_empty() {
            self.buf = vec![0; SKIP_BUF];
        }
        let mut buf = std::mem::take(&mut self.buf);
        let mut left = n;
        let result = loop {
            if left == 0 {
                break Ok(n);
            }
            let want = usize::try_from(left.min(SKIP_BUF as u64)).unwrap_or(SKIP_BUF);
            match self.read_some(&mut buf[..want]) {
                Ok(0) => break Ok(n - left),
                Ok(got) => left -= got as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        self.buf = buf;
        result
    }
}

/// A regular file read with `pread` from a starting offset; skipping is arithmetic, clamped
/// to the file's length so that a skip past EOF is reported as short.
pub(crate) struct FileInput<'a> {
    file: &'a File,
    pos: u64,
    len: u64,
}

impl<'a> FileInput<'a> {
    /// Reads `file` from byte offset `pos`; `len` is the file's length in bytes.
    pub(crate) fn new(file: &'a File, pos: u64, len: u64) -> Self {
        FileInput { file, pos, len }
    }
}

impl Input for FileInput<'_> {
    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }

    fn skip(&mut self, n: u64) -> io::Result<u64> {
        let got = n.min(self.len.saturating_sub(self.pos));
        self.pos += got;
        Ok(got)
    }
}
