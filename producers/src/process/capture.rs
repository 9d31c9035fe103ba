//! A tool's stdout or stderr, captured through a pipe with a cap on what is kept.
//!
//! A tool may print without end (a hostile archive makes an extractor print one warning per
//! member, a broken backend loops). Its output used to go to a file in the scratch dir, which
//! a tool printing 1 GB filled (on `/dev/shm`, in memory). Now each captured stream is a
//! pipe drained by a thread of its own into a [`Capture`] that keeps at most a *head* (the
//! first bytes) and a *tail* (the last bytes) and counts what it dropped in between; the
//! tool is never blocked for long and never sees `EPIPE`, and nothing is written to disk.
//!
//! Limits: [`STDERR_HEAD_BYTES`] + [`STDERR_TAIL_BYTES_KEPT`] (16 MiB in all) for stderr,
//! [`STDOUT_LISTING_BYTES`] (64 MiB, head only) for a stdout that is the tool's answer (a
//! listing), nothing (only counted) for a stdout nobody reads.
//!
//! Reading what a tool printed: the thread reads under the capture's lock, so once the
//! writers are gone (or the tool answered a request) [`Capture::settle`] waits until the
//! pipe is empty with the lock held, and everything written before is then kept or counted.
//! The thread ends at end of file (every writer gone) or, at the latest
//! `STOP_POLL` after the [`Capture`] is dropped (a straggler may hold the write end).

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fd::OwnedFd;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The first bytes of a tool's stderr kept, in bytes (8 MiB).
pub const STDERR_HEAD_BYTES: usize = 8 << 20;
/// The last bytes of a tool's stderr kept, in bytes (8 MiB).
pub const STDERR_TAIL_BYTES_KEPT: usize = 8 << 20;
/// The first bytes of a listing tool's stdout kept, in bytes (64 MiB); a listing that is
/// longer is refused (see [`crate::process::run::run_with_timeout_capturing_stdout`]).
pub const STDOUT_LISTING_BYTES: usize = 64 << 20;

/// How long the draining thread waits in `poll` before it checks whether the capture was
/// dropped.
const STOP_POLL: Duration = Duration::from_millis(100);
/// How long [`Capture::settle`] waits at most for the pipe to empty (a straggler that keeps
/// writing never lets it).
const SETTLE_LIMIT: Duration = Duration::from_secs(2);
/// Bytes read from the pipe at a time.
const CHUNK: usize = 64 << 10;

/// What a capture keeps: a head, a tail, and the count of bytes dropped between them.
#[derive(Debug, Default)]
struct Kept {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_max: usize,
    tail_max: usize,
    dropped: u64,
}

impl Kept {
    fn push(&mut self, mut data: &[u8]) {
        let room = self.head_max.saturating_sub(self.head.len());
        let n = room.min(data.len());
        self.head.extend_from_slice(&data[..n]);
        data = &data[n..];
        if data.is_empty() {
            return;
        }
        if data.len() >= self.tail_max {
            let skip = data.len() - self.tail_max;
            self.dropped += (self.tail.len() + skip) as u64;
            self.tail.clear();
            data = &data[skip..];
        } else {
            let over = (self.tail.len() + data.len()).saturating_sub(self.tail_max);
            self.tail.drain(..over);
            self.dropped += over as u64;
        }
        self.tail.extend(data);
    }
}

#[derive(Debug)]
struct Shared {
    kept: Mutex<Kept>,
    stop: AtomicBool,
}

/// One captured stream: the read end of a pipe and the thread draining it. See the module
/// docs.
#[derive(Debug)]
pub struct Capture {
    shared: Arc<Shared>,
    read: Arc<OwnedFd>,
}

impl Capture {
    /// A pipe whose write end (returned; give it to the child, e.g. with
    /// `Stdio::from(fd)`, and drop every other copy) is drained into a capture keeping the
    /// first `head_max` and the last `tail_max` bytes (either may be 0).
    ///
    /// # Errors
    /// The `pipe2(2)` failure (`EMFILE`), or a thread that could not be started.
    pub fn start(head_max: usize, tail_max: usize) -> std::io::Result<(Capture, OwnedFd)> {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let shared = Arc::new(Shared {
            kept: Mutex::new(Kept {
                head_max,
                tail_max,
                ..Kept::default()
            }),
            stop: AtomicBool::new(false),
        });
        let read = Arc::new(read);
        let (s, r) = (Arc::clone(&shared), Arc::clone(&read));
        std::thread::Builder::new()
            .name("snapconf-capture".into())
            .spawn(move || drain(&s, &r))?;
        Ok((Capture { shared, read }, write))
    }

    /// A capture of stderr with the documented limits ([`STDERR_HEAD_BYTES`],
    /// [`STDERR_TAIL_BYTES_KEPT`]).
    ///
    /// # Errors
    /// As [`Capture::start`].
    pub fn stderr() -> std::io::Result<(Capture, OwnedFd)> {
        Capture::start(STDERR_HEAD_BYTES, STDERR_TAIL_BYTES_KEPT)
    }

    fn lock(&self) -> MutexGuard<'_, Kept> {
        // The draining thread never panics while it holds the lock; if it did, what was
        // kept is still a valid head and tail.
        self.shared.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits (at most 2 s) until everything written to the pipe so far has been kept or
    /// counted, and returns with the lock held. Call it after the writer ended or answered.
    fn settled(&self) -> MutexGuard<'_, Kept> {
        let until = Instant::now() + SETTLE_LIMIT;
        loop {
            let kept = self.lock();
            match rustix::io::ioctl_fionread(&*self.read) {
                Ok(0) | Err(_) => return kept,
                Ok(_) if Instant::now() >= until => return kept,
                Ok(_) => {}
            }
            drop(kept);
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Waits until what was written so far is kept or counted (at most 2 s).
    pub fn settle(&self) {
        drop(self.settled());
    }

    /// The bytes kept (head, then tail) and how many were dropped between them, once
    /// settled.
    pub fn bytes(&self) -> (Vec<u8>, u64) {
        let kept = self.settled();
        let mut out = kept.head.clone();
        out.extend(kept.tail.iter());
        (out, kept.dropped)
    }

    /// The last `max` bytes kept, lossily decoded, followed by ` [N bytes dropped]` when
    /// bytes were dropped; once settled. For refusal evidence.
    pub fn tail_text(&self, max: usize) -> String {
        let (bytes, dropped) = self.bytes();
        let start = bytes.len().saturating_sub(max);
        let mut text = String::from_utf8_lossy(&bytes[start..])
            .trim_end()
            .to_owned();
        if dropped > 0 {
            text.push_str(&format!(" [{dropped} bytes dropped]"));
        }
        text
    }

    /// Forgets what was kept and dropped so far (after settling), for the next request to a
    /// persistent process.
    pub fn clear(&self) {
        let mut kept = self.settled();
        kept.head.clear();
        kept.tail.clear();
        kept.dropped = 0;
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
    }
}

/// The draining thread: reads under the lock whenever the pipe is readable, until end of
/// file or until the capture is dropped.
fn drain(shared: &Shared, read: &OwnedFd) {
    let mut buf = vec![0u8; CHUNK];
    let wait = Timespec::try_from(STOP_POLL).unwrap_or(Timespec {
        tv_sec: 0,
        tv_nsec: 100_000_000,
    });
    while !shared.stop.load(Ordering::Relaxed) {
        let mut fds = [PollFd::new(read, PollFlags::IN)];
        match poll(&mut fds, Some(&wait)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => continue,
            Ok(_) => {}
            Err(_) => return,
        }
        let mut kept = shared.kept.lock().unwrap_or_else(|p| p.into_inner());
        match rustix::io::read(read, &mut buf) {
            Ok(0) => return,
            Ok(n) => kept.push(&buf[..n]),
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// The head and the tail are kept, the middle counted; a small stream is kept whole.
    #[test]
    fn head_and_tail_are_kept_and_the_rest_counted() {
        let mut k = Kept {
            head_max: 3,
            tail_max: 4,
            ..Kept::default()
        };
        k.push(b"ab");
        k.push(b"cdefghij");
        k.push(b"k");
        assert_eq!(k.head, b"abc");
        assert_eq!(k.tail.iter().copied().collect::<Vec<u8>>(), b"hijk");
        assert_eq!(k.dropped, 4);
        let (c, w) = Capture::start(3, 4).expect("pipe");
        let mut w = std::fs::File::from(w);
        w.write_all(b"0123456789").expect("write");
        drop(w);
        assert_eq!(c.bytes(), (b"0126789".to_vec(), 3));
        assert_eq!(c.tail_text(2), "89 [3 bytes dropped]");
        c.clear();
        assert_eq!(c.bytes(), (Vec::new(), 0));
    }
}
