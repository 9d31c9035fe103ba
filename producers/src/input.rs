//! Reading a file the user handed to snapconf: typed and bounded.
//!
//! Every input file (`--profile`, `--backend`, `--baseline`, `--replay`, a `report.json`, the
//! files of a reproducer or of a report directory given to `report merge`, a corpus archive)
//! is read here, never with `std::fs::read`: the file is opened with `O_NONBLOCK` (so that
//! opening a FIFO does not wait for a writer) and `O_CLOEXEC`, the opened descriptor is
//! `fstat`ed, anything but a regular file (a FIFO, socket, device or directory) is refused
//! naming what it is, and at most a documented number of bytes is read (`/dev/zero` or a
//! `/proc` file whose size says 0 cannot make snapconf grow: the read stops one byte past
//! the limit).
//!
//! The `*_at` functions open a name beneath a directory descriptor without following a
//! symlink (`O_NOFOLLOW`), for files inside a directory given as input, whose links must
//! not lead the read out of it.

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Largest configuration or metadata file read (TOML or JSON: `--profile`, `--backend`,
/// `--baseline`, `report.json`, a reproducer's `finding.json` / `spec.json` /
/// `sequence.json`): 16 MiB, far above any file snapconf writes.
pub const CONFIG_LIMIT: u64 = 16 * MIB;

/// Largest archive read whole into memory (`fuzz --replay`, a fuzz corpus archive, a file of
/// a reproducer that `report merge` copies): 256 MiB. The fuzzer holds an archive in memory
/// and mutates copies of it, so a larger one is refused rather than read.
pub const ARCHIVE_LIMIT: u64 = 256 * MIB;

const MIB: u64 = 1024 * 1024;

/// An input file that was not read; every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened (or looked at): missing, no permission, …
    #[error("cannot open `{}`: {source}", path.display())]
    Open {
        /// The file, as the caller named it.
        path: PathBuf,
        /// The error of the `stat`, the open or the `fstat`.
        #[source]
        source: std::io::Error,
    },
    /// The file is not of the type wanted (`want`: a regular file, or a directory for a
    /// directory opened beneath an input); `kind` says what it is (`a named pipe (FIFO)`,
    /// `a symbolic link`, …).
    #[error("`{}` is {kind}, not {want}", path.display())]
    WrongType {
        /// The file, as the caller named it.
        path: PathBuf,
        /// What the file is, in words.
        kind: &'static str,
        /// What the reader wanted, in words.
        want: &'static str,
    },
    /// The file holds more than `limit` bytes (read, not only as its size says).
    #[error("`{}` is larger than the limit of {} for this input", path.display(), limit_text(*limit))]
    TooLarge {
        /// The file, as the caller named it.
        path: PathBuf,
        /// The limit, in bytes ([`CONFIG_LIMIT`], [`ARCHIVE_LIMIT`] or the caller's).
        limit: u64,
    },
    /// Reading the opened file failed.
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        /// The file, as the caller named it.
        path: PathBuf,
        /// The error of the read.
        #[source]
        source: std::io::Error,
    },
    /// The file is not UTF-8 text (for the text readers).
    #[error("`{}` is not UTF-8 text", path.display())]
    NotUtf8 {
        /// The file, as the caller named it.
        path: PathBuf,
    },
}

impl InputError {
    /// The file the error is about, as the caller named it.
    pub fn path(&self) -> &Path {
        match self {
            InputError::Open { path, .. }
            | InputError::WrongType { path, .. }
            | InputError::TooLarge { path, .. }
            | InputError::Read { path, .. }
            | InputError::NotUtf8 { path } => path,
        }
    }

    /// Whether the file does not exist (for an optional file, whose absence is no error).
    pub fn is_not_found(&self) -> bool {
        matches!(self, InputError::Open { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// `limit` bytes in words: `16 MiB (16777216 bytes)`, or `N bytes` when not whole MiB.
fn limit_text(limit: u64) -> String {
    if limit >= MIB && limit.is_multiple_of(MIB) {
        format!("{} MiB ({limit} bytes)", limit / MIB)
    } else {
        format!("{limit} bytes")
    }
}

/// What a file of type `t` is, in words, for messages.
pub fn kind_of(t: FileType) -> &'static str {
    match t {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a named pipe (FIFO)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "of an unknown type",
    }
}

/// Refuse `t` unless it is `want`.
fn must_be(t: FileType, want: FileType, path: &Path) -> Result<(), InputError> {
    if t == want {
        return Ok(());
    }
    Err(InputError::WrongType {
        path: path.to_path_buf(),
        kind: kind_of(t),
        want: kind_of(want),
    })
}

fn open_err(path: &Path) -> impl FnOnce(rustix::io::Errno) -> InputError + '_ {
    move |e| InputError::Open {
        path: path.to_path_buf(),
        source: e.into(),
    }
}

/// Open the regular file at `path` (a symlink given by the user is followed) for reading.
///
/// The path is looked at first, so that a device is never opened (opening one can have
/// effects); the descriptor opened (`O_NONBLOCK | O_CLOEXEC`) is checked again, so a file
/// swapped in between is refused too.
///
/// # Errors
/// [`InputError::Open`] when it cannot be opened, [`InputError::WrongType`] naming what
/// it is when it is not a regular file.
pub fn open_file(path: &Path) -> Result<std::fs::File, InputError> {
    let st = rustix::fs::stat(path).map_err(open_err(path))?;
    must_be(
        FileType::from_raw_mode(st.st_mode),
        FileType::RegularFile,
        path,
    )?;
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(open_err(path))?;
    checked(fd, FileType::RegularFile, path)
}

/// Open the directory at `path` (a symlink given by the user is followed) for `*_at`
/// calls beneath it.
///
/// # Errors
/// [`InputError::Open`]; [`InputError::WrongType`] naming what it is when it is not a
/// directory.
pub fn open_dir(path: &Path) -> Result<OwnedFd, InputError> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match rustix::fs::stat(path) {
        // Not a directory: say what it is.
        Ok(st) if e == rustix::io::Errno::NOTDIR => InputError::WrongType {
            path: path.to_path_buf(),
            kind: kind_of(FileType::from_raw_mode(st.st_mode)),
            want: kind_of(FileType::Directory),
        },
        _ => open_err(path)(e),
    })?;
    checked(fd, FileType::Directory, path).map(OwnedFd::from)
}

/// Open the regular file `name` beneath directory `dir` without following a symlink (also
/// not a symlink in `name`'s last component: `name` should be one component); `shown` is
/// how messages name it.
///
/// # Errors
/// As [`open_file`]; a symlink is [`InputError::WrongType`] (`a symbolic link`).
pub fn open_file_at(
    dir: impl AsFd,
    name: &Path,
    shown: &Path,
) -> Result<std::fs::File, InputError> {
    open_at(dir, name, shown, FileType::RegularFile, OFlags::RDONLY)
}

/// Open the directory `name` beneath `dir` without following a symlink, for more `*_at`
/// calls; `shown` is how messages name it.
///
/// # Errors
/// [`InputError::Open`]; [`InputError::WrongType`] naming what it is when it is not a
/// directory (a symlink to one included).
pub fn open_dir_at(dir: impl AsFd, name: &Path, shown: &Path) -> Result<OwnedFd, InputError> {
    open_at(
        dir,
        name,
        shown,
        FileType::Directory,
        OFlags::RDONLY | OFlags::DIRECTORY,
    )
    .map(OwnedFd::from)
}

fn open_at(
    dir: impl AsFd,
    name: &Path,
    shown: &Path,
    want: FileType,
    flags: OFlags,
) -> Result<std::fs::File, InputError> {
    let st = rustix::fs::statat(dir.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW)
        .map_err(open_err(shown))?;
    must_be(FileType::from_raw_mode(st.st_mode), want, shown)?;
    let fd = rustix::fs::openat(
        dir,
        name,
        flags | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(open_err(shown))?;
    checked(fd, want, shown)
}

/// `fd` as a file, once `fstat` says it is a `want`.
fn checked(fd: OwnedFd, want: FileType, path: &Path) -> Result<std::fs::File, InputError> {
    let st = rustix::fs::fstat(&fd).map_err(open_err(path))?;
    must_be(FileType::from_raw_mode(st.st_mode), want, path)?;
    Ok(std::fs::File::from(fd))
}

/// Read all of an opened `file`, at most `limit` bytes; `path` names it in messages.
///
/// # Errors
/// [`InputError::TooLarge`] when it holds more than `limit` bytes (by its size, or by what
/// was read: one byte past the limit is the most read); [`InputError::Read`].
pub fn read_limited(file: std::fs::File, path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let too_large = || InputError::TooLarge {
        path: path.to_path_buf(),
        limit,
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size > limit {
        return Err(too_large());
    }
    // The size is a hint (0 for a `/proc` file); the read itself is what is bounded.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The bytes of the regular file at `path`, at most `limit` of them ([`open_file`], then
/// [`read_limited`]).
///
/// # Errors
/// [`InputError`] naming `path`.
pub fn read_file(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    read_limited(open_file(path)?, path, limit)
}

/// The text of the regular file at `path`, at most `limit` bytes of UTF-8.
///
/// # Errors
/// [`InputError`] naming `path`; [`InputError::NotUtf8`].
pub fn read_text(path: &Path, limit: u64) -> Result<String, InputError> {
    text(read_file(path, limit)?, path)
}

/// The bytes of the regular file `name` beneath `dir`, not following a symlink
/// ([`open_file_at`]), at most `limit` of them; `shown` names it in messages.
///
/// # Errors
/// [`InputError`] naming `shown`.
pub fn read_file_at(
    dir: impl AsFd,
    name: &Path,
    shown: &Path,
    limit: u64,
) -> Result<Vec<u8>, InputError> {
    read_limited(open_file_at(dir, name, shown)?, shown, limit)
}

/// The text of the regular file `name` beneath `dir`, as [`read_file_at`].
///
/// # Errors
/// [`InputError`] naming `shown`; [`InputError::NotUtf8`].
pub fn read_text_at(
    dir: impl AsFd,
    name: &Path,
    shown: &Path,
    limit: u64,
) -> Result<String, InputError> {
    text(read_file_at(dir, name, shown, limit)?, shown)
}

fn text(bytes: Vec<u8>, path: &Path) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|_| InputError::NotUtf8 {
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn fifo(at: &Path) {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            at,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
    }

    /// A FIFO with no writer is refused at once, naming it and what it is (a blocking open
    /// would wait for a writer forever).
    #[test]
    fn a_fifo_is_refused_at_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("p.toml");
        fifo(&p);
        let began = Instant::now();
        let err = read_text(&p, CONFIG_LIMIT).expect_err("a fifo");
        assert!(began.elapsed() < Duration::from_secs(5));
        assert!(matches!(err, InputError::WrongType { .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.contains("p.toml`") && msg.contains("FIFO"), "{msg}");
        // Beneath a directory, too.
        let d = std::fs::File::open(dir.path()).expect("dir");
        let err = read_file_at(&d, Path::new("p.toml"), &p, CONFIG_LIMIT).expect_err("fifo");
        assert!(err.to_string().contains("FIFO"), "{err}");
    }

    /// A directory and a character device are refused, named for what they are.
    #[test]
    fn a_directory_and_a_device_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = read_file(dir.path(), CONFIG_LIMIT).expect_err("a directory");
        assert!(err.to_string().contains("is a directory"), "{err}");
        let err = read_file(Path::new("/dev/zero"), ARCHIVE_LIMIT).expect_err("a device");
        assert!(
            err.to_string()
                .contains("`/dev/zero` is a character device"),
            "{err}"
        );
    }

    /// A file over the limit is refused naming the limit; one at the limit is read; a file
    /// whose size says 0 but that reads on is cut one byte past the limit.
    #[test]
    fn the_limit_is_on_what_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("big");
        std::fs::write(&p, vec![b'x'; 11]).expect("write");
        assert_eq!(read_file(&p, 11).expect("at the limit").len(), 11);
        let err = read_file(&p, 10).expect_err("over");
        assert!(
            matches!(err, InputError::TooLarge { limit: 10, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("limit of 10 bytes"), "{err}");
        let err = read_file(&p, 0).expect_err("over");
        assert!(err.to_string().contains("big`"), "{err}");
        assert!(limit_text(CONFIG_LIMIT).starts_with("16 MiB"));
        // `/proc/self/status` has size 0 and holds more than 8 bytes.
        let f = open_file(Path::new("/proc/self/status")).expect("proc file");
        let err = read_limited(f, Path::new("/proc/self/status"), 8).expect_err("cut");
        assert!(matches!(err, InputError::TooLarge { .. }), "{err}");
    }

    /// Beneath a directory, a symlink is not followed, to a file or to a directory; a
    /// symlink the user names directly is.
    #[test]
    fn a_symlink_beneath_a_directory_is_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("secret")).expect("mkdir");
        std::fs::write(dir.path().join("secret/id_rsa"), "key").expect("write");
        std::os::unix::fs::symlink("secret", dir.path().join("case")).expect("symlink");
        std::os::unix::fs::symlink("secret/id_rsa", dir.path().join("f")).expect("symlink");
        let d = std::fs::File::open(dir.path()).expect("dir");
        let err = open_dir_at(&d, Path::new("case"), Path::new("in/case")).expect_err("link");
        assert_eq!(
            err.to_string(),
            "`in/case` is a symbolic link, not a directory"
        );
        let err = read_file_at(&d, Path::new("f"), Path::new("in/f"), 10).expect_err("link");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        let sub = open_dir_at(&d, Path::new("secret"), Path::new("s")).expect("a directory");
        assert_eq!(
            read_text_at(&sub, Path::new("id_rsa"), Path::new("s/id_rsa"), 10).expect("read"),
            "key"
        );
        assert_eq!(read_text(&dir.path().join("f"), 10).expect("given"), "key");
        let err = read_file(&dir.path().join("missing"), 10).expect_err("missing");
        assert!(err.is_not_found(), "{err}");
    }
}
