//! Byte sources the parser reads from: a stream ([`crate::validate`], [`crate::hydrate`]),
//! or a regular file read by offset (an uncompressed archive file, [`crate::hydrate_file`]).
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

    /// Reads and drops up to `max` bytes after the end of the archive, stopping early at the
    /// end of input: a writer piping the archive in does not see `EPIPE` for the rest of its
    /// last record, and the trailer of a compressed stream (gzip's CRC-32 and length, xz's
    /// and zstd's checksums) is checked. Nothing of it is kept.
    fn discard(&mut self, max: u64) -> io::Result<()> {
        self.skip(max).map(|_| ())
    }

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
        // The buffer grows to the largest skip so far, up to `SKIP_BUF`: skipping the small
        // payloads of a small archive does not zero a quarter of a megabyte.
        let need = usize::try_from(n.min(SKIP_BUF as u64)).unwrap_or(SKIP_BUF);
        if self.buf.len() < need {
            self.buf.resize(need, 0);
        }
        let mut buf = std::mem::take(&mut self.buf);
        let result = skip_through(&mut buf, n, |b| self.read_some(b));
        self.buf = buf;
        result
    }
}

/// Reads up to `n` bytes with `read` through `buf` (non-empty unless `n` is 0); returns how
/// many were read (fewer at the end of input).
fn skip_through(
    buf: &mut [u8],
    n: u64,
    mut read: impl FnMut(&mut [u8]) -> io::Result<usize>,
) -> io::Result<u64> {
    let mut left = n;
    while left > 0 {
        let want = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
        match read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(got) => left -= got as u64,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n - left)
}

/// The largest file a [`FileInput`] reads whole on its first read, in bytes: the headers of
/// a small archive then cost one `pread` in all, not one per member.
const WINDOW: usize = 64 * 1024;

/// A regular file read with `pread` from a starting offset; skipping is arithmetic, clamped
/// to the file's length so that a skip past EOF is reported as short.
///
/// A file of at most [`WINDOW`] bytes is read whole into a window at the first read and
/// served from there. A larger file is read as asked, each read one `pread`: reading ahead
/// there would copy payload bytes the parser only skips.
pub(crate) struct FileInput<'a> {
    file: &'a File,
    pos: u64,
    len: u64,
    window: Vec<u8>,
    /// File offset of `window[0]`.
    window_at: u64,
    /// Bytes of `window` that hold file content.
    filled: usize,
}

impl<'a> FileInput<'a> {
    /// Reads `file` from byte offset `pos`; `len` is the file's length in bytes.
    pub(crate) fn new(file: &'a File, pos: u64, len: u64) -> Self {
        FileInput {
            file,
            pos,
            len,
            window: Vec::new(),
            window_at: 0,
            filled: 0,
        }
    }

    /// Where `pos` falls in the window, if it does.
    fn in_window(&self) -> Option<usize> {
        let off = usize::try_from(self.pos.checked_sub(self.window_at)?).ok()?;
        (off < self.filled).then_some(off)
    }
}

impl Input for FileInput<'_> {
    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let off = match self.in_window() {
            Some(off) => off,
            None if buf.len() >= WINDOW || self.len > WINDOW as u64 => {
                let n = self.file.read_at(buf, self.pos)?;
                self.pos += n as u64;
                return Ok(n);
            }
            None => {
                if self.window.is_empty() {
                    // No bigger than what is left of the file (a small archive is read
                    // whole), but never empty.
                    let left = usize::try_from(self.len.saturating_sub(self.pos)).unwrap_or(WINDOW);
                    self.window = vec![0; left.clamp(buf.len(), WINDOW)];
                }
                self.filled = 0;
                self.window_at = self.pos;
                self.filled = self.file.read_at(&mut self.window, self.pos)?;
                if self.filled == 0 {
                    return Ok(0);
                }
                0
            }
        };
        let n = buf.len().min(self.filled - off);
        buf[..n].copy_from_slice(&self.window[off..off + n]);
        self.pos += n as u64;
        Ok(n)
    }

    fn skip(&mut self, n: u64) -> io::Result<u64> {
        let got = n.min(self.len.saturating_sub(self.pos));
        self.pos += got;
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Skips of a stream of every size up to past the skip buffer land on the right byte,
    /// and a skip past the end reports how far it got.
    #[test]
    fn stream_skips_land_on_the_right_byte() {
        let content: Vec<u8> = (0..SKIP_BUF * 2 + 300)
            .map(|i| (i * 13 % 251) as u8)
            .collect();
        for skip in [1usize, 511, 4096, SKIP_BUF - 1, SKIP_BUF, SKIP_BUF + 7] {
            let mut input = StreamInput::new(content.as_slice());
            let mut at = 0usize;
            let mut byte = [0u8; 1];
            while at + skip < content.len() {
                assert_eq!(input.skip(skip as u64).expect("skip"), skip as u64);
                at += skip;
                assert_eq!(input.read_full(&mut byte).expect("read"), 1);
                assert_eq!(byte[0], content[at], "skip {skip} to {at}");
                at += 1;
            }
            let left = (content.len() - at) as u64;
            assert_eq!(input.skip(left + 10).expect("skip"), left, "skip {skip}");
        }
    }

    /// Reads of a small file (through the window) and of a large one (straight) give the
    /// file's bytes at every offset, for reads of every size around the window's, after
    /// skips short and long, and report the end of the file as 0.
    #[test]
    fn windowed_reads_match_the_file() {
        for len in [WINDOW / 3 + 5, WINDOW, 3 * WINDOW + 777] {
            let mut file = tempfile::tempfile().expect("tempfile");
            let content: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            file.write_all(&content).expect("write");
            let len = len as u64;
            for size in [1, 511, 512, 4096, WINDOW - 1, WINDOW, WINDOW + 1] {
                for skip in [0u64, 100, 512, 5000, WINDOW as u64 + 3] {
                    let mut input = FileInput::new(&file, 5, len);
                    let mut pos = 5u64;
                    let mut buf = vec![0u8; size];
                    loop {
                        let n = input.read_full(&mut buf).expect("read");
                        let want = &content[pos as usize..(pos as usize + size).min(content.len())];
                        assert_eq!(
                            &buf[..n],
                            want,
                            "len {len} size {size} skip {skip} at {pos}"
                        );
                        pos += n as u64;
                        if n < size {
                            break;
                        }
                        pos += input.skip(skip).expect("skip");
                    }
                    assert_eq!(pos, len, "len {len} size {size} skip {skip}");
                    assert_eq!(input.read_some(&mut buf).expect("eof"), 0);
                }
            }
        }
    }
}
