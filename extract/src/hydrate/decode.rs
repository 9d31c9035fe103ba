//! [`hydrate`](super::hydrate) of a compressed regular file: a second thread decompresses
//! into a bounded queue of chunks ([`decode_chunks`]) that the single pass reads as a stream
//! ([`Chunks`]).

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use crate::compression::{self, Compression};
use crate::error::io_err;
use crate::sibling::Sibling;
use crate::{HydrateError, HydrateReport, Policy};

use super::commit::commit_staged;
use super::staged::stage_stream;
use super::STREAM_BUF;

/// Decompressed chunks in flight between the decoding thread and the validation pass.
const DECODE_QUEUE: usize = 8;

/// [`hydrate`](super::hydrate) of a compressed regular file: a second thread decompresses (from the file's
/// current position) while this one validates and writes the tree, so decompression runs
/// beside the parsing and the file writes, as `tar -xz` runs `gzip -d` beside itself. The verdict is
/// the one [`hydrate`] gives: the validation pass reads the same decompressed stream in the
/// same order, and a decoder error or limit reaches it at the position it occurred.
pub(super) fn hydrate_compressed_file(
    archive: &File,
    kind: Compression,
    root: &Path,
    policy: &Policy,
) -> Result<HydrateReport, HydrateError> {
    let sib = Sibling::open_unlocked(root)?;
    let staged = std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel(DECODE_QUEUE);
        let limits = policy.limits;
        std::thread::Builder::new()
            .name("snapconf-decode".into())
            .spawn_scoped(scope, move || decode_chunks(archive, kind, &limits, &tx))
            .map_err(|e| io_err("starting the decompression thread", e))?;
        // The receiver is dropped when the pass returns, early or not: the decoder's next
        // send fails and the thread ends (it never waits on anything but the file).
        stage_stream(&sib, root, Chunks::new(rx), policy)
    });
    commit_staged(&sib, staged, root)
}

/// Bytes of one decompressed chunk.
const CHUNK: usize = 256 * 1024;

/// The decoding thread: decompresses `archive` and sends it in chunks, then an error if
/// decoding failed; the end of the stream is the sender's drop.
fn decode_chunks(
    archive: &File,
    kind: Compression,
    limits: &crate::Limits,
    tx: &std::sync::mpsc::SyncSender<io::Result<Vec<u8>>>,
) {
    let mut decoded =
        compression::decoder(kind, BufReader::with_capacity(STREAM_BUF, archive), limits);
    loop {
        let mut buf = vec![0u8; CHUNK];
        let chunk = match decoded.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                buf.truncate(n);
                Ok(buf)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Err(e),
        };
        let failed = chunk.is_err();
        if tx.send(chunk).is_err() || failed {
            return;
        }
    }
}

/// The receiving end of [`decode_chunks`] as a byte stream.
struct Chunks {
    rx: std::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
}

impl Chunks {
    fn new(rx: std::sync::mpsc::Receiver<io::Result<Vec<u8>>>) -> Self {
        Chunks {
            rx,
            chunk: Vec::new(),
            at: 0,
        }
    }
}

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.chunk.len() {
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    self.chunk = chunk;
                    self.at = 0;
                }
                Ok(Err(e)) => return Err(e),
                // The decoder finished (or stopped after an error it sent).
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}
