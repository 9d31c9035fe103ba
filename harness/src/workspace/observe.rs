//! Read what is on disk under a root into a [`Tree`], with `lstat` only: links are never
//! followed, FIFOs are never opened, and inode sharing is recorded.

use crate::model::bytes::{RawBytes, RelPath};
use crate::model::tree::{sha256_hex, Node, NodeKind, Tree};
use rustix::fs::{openat, readlinkat, statx, AtFlags, FileType, Mode, OFlags, StatxFlags, CWD};
use sha2::{Digest, Sha256};
use snapconf_extract::dirs::{fills_reads, names, open_dir};
use std::collections::{BTreeMap, HashMap};
use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Observe the tree under `root` (the root itself is not a node).
///
/// For each path: its kind, `mode & 0o7777` (0 for symlinks), for files the size in bytes
/// and the lower-case hex SHA-256 of the content, for symlinks the target bytes, for device
/// nodes the major/minor numbers. Paths are built from the raw name bytes, so non-UTF-8
/// names are fine. `shared_inodes` lists every (dev, ino) seen under two or more names
/// (directories never are), each group sorted and the groups sorted.
///
/// Root bypasses permission checks, so `0555` and `0000` directories and `0000` files are
/// read as they are. Without root, such a directory is temporarily made `u+rx` (a file
/// `u+r`) to read it, and its mode is restored right after; a failure to restore is
/// returned as an error. This changes the ctime of those nodes, never their recorded mode.
///
/// # Errors
/// The first failing `lstat`, `readdir`, `readlink`, `open` or `read`, with the path in
/// the message; `root` itself must be a directory (a symlink root is `InvalidInput`).
pub fn observe(root: &Path) -> io::Result<Tree> {
    observe_as(root, is_root())
}

/// True if snapconf runs as root, which reads every entry whatever its mode (asked once:
/// snapconf never changes its effective user).
pub(crate) fn is_root() -> bool {
    static IS_ROOT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *IS_ROOT.get_or_init(|| rustix::process::geteuid().is_root())
}

/// [`fills_reads`] of the filesystem of `dir`, asked once per (device, mount id) that
/// `statx` gave: every case observes roots in the same jail filesystem.
fn fills_on(dir: BorrowedFd<'_>, mount: (u32, u32, u64)) -> bool {
    type Seen = Vec<((u32, u32, u64), bool)>;
    static SEEN: std::sync::Mutex<Seen> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, fills)) = seen.iter().find(|(m, _)| *m == mount) {
        return *fills;
    }
    let fills = fills_reads(dir);
    seen.push((mount, fills));
    fills
}

/// [`observe`], with the "bypasses permission checks" decision made by the caller (tests
/// exercise the non-root chmod-and-restore path while running as root).
///
/// The walk goes by directory handle: each directory is opened `O_NOFOLLOW | O_DIRECTORY`
/// relative to its parent's handle, and each entry is examined with `statx`, `readlinkat`
/// or `openat` on its name in that handle, so no path is resolved from `/` again.
fn observe_as(root: &Path, is_root: bool) -> io::Result<Tree> {
    let x = statx(
        CWD,
        root,
        AtFlags::SYMLINK_NOFOLLOW,
        StatxFlags::BASIC_STATS | StatxFlags::MNT_ID,
    )
    .map_err(|e| at(root, e.into()))?;
    if FileType::from_raw_mode(u32::from(x.stx_mode)) != FileType::Directory {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is not a directory", root.display()),
        ));
    }
    let mut walk = Walk {
        tree: Tree::default(),
        inodes: BTreeMap::new(),
        is_root,
        root,
        fills: false,
        dev: rustix::fs::makedev(x.stx_dev_major, x.stx_dev_minor),
        digests: HashMap::new(),
    };
    let mode = u32::from(x.stx_mode) & 0o7777;
    with_access(CWD, root, mode, 0o500, is_root, root, || {
        let fd = open_dir(CWD, root).map_err(|e| at(root, e))?;
        let mount = (x.stx_dev_major, x.stx_dev_minor, x.stx_mnt_id);
        walk.fills = fills_on(fd.as_fd(), mount);
        walk.dir(fd.as_fd(), None)
    })?;
    let mut groups: Vec<Vec<RelPath>> = walk
        .inodes
        .into_values()
        .filter(|names| names.len() >= 2)
        .map(|mut names| {
            names.sort();
            names
        })
        .collect();
    groups.sort();
    walk.tree.shared_inodes = groups;
    Ok(walk.tree)
}

struct Walk<'a> {
    tree: Tree,
    inodes: BTreeMap<(u64, u64), Vec<RelPath>>,
    is_root: bool,
    root: &'a Path,
    /// The tree's filesystem [`fills_reads`]: a short directory read ends a listing, and a
    /// regular file's size is that of its content.
    fills: bool,
    /// The root's device number ([`Walk::fills`] is about that filesystem).
    dev: u64,
    /// Digests of the regular files read so far, by device and inode: a second name of an
    /// inode is not read again (nothing changes the tree during a walk).
    digests: HashMap<(u64, u64), String>,
}

impl Walk<'_> {
    /// The path of `rel` for messages.
    fn shown(&self, rel: Option<&RelPath>) -> std::path::PathBuf {
        match rel {
            Some(r) => self.root.join(std::ffi::OsStr::from_bytes(r.as_bytes())),
            None => self.root.to_path_buf(),
        }
    }

    /// Record the children of the directory open at `dir` (`rel` is `None` for the root).
    fn dir(&mut self, dir: BorrowedFd<'_>, rel: Option<&RelPath>) -> io::Result<()> {
        let mut children = names(dir, self.fills).map_err(|e| at(&self.shown(rel), e))?;
        children.sort();
        for name in children {
            let child_rel = match rel {
                Some(r) => r.join(name.to_bytes()),
                None => RelPath::new(name.to_bytes().to_vec()),
            }
            .map_err(|why| io::Error::new(io::ErrorKind::InvalidData, why))?;
            self.node(dir, &name, child_rel)?;
        }
        Ok(())
    }

    fn node(&mut self, dir: BorrowedFd<'_>, name: &CStr, rel: RelPath) -> io::Result<()> {
        let x = statx(
            dir,
            name,
            AtFlags::SYMLINK_NOFOLLOW,
            StatxFlags::BASIC_STATS,
        )
        .map_err(|e| at(&self.shown(Some(&rel)), e.into()))?;
        let ft = FileType::from_raw_mode(u32::from(x.stx_mode));
        let mode = u32::from(x.stx_mode) & 0o7777;
        let shown = || self.shown(Some(&rel));
        let kind = match ft {
            FileType::Directory => {
                let is_root = self.is_root;
                let path = shown();
                with_access(dir, name, mode, 0o500, is_root, &path, || {
                    let fd = open_dir(dir, name).map_err(|e| at(&path, e))?;
                    self.dir(fd.as_fd(), Some(&rel))
                })?;
                NodeKind::Dir
            }
            FileType::Symlink => {
                let target =
                    readlinkat(dir, name, Vec::new()).map_err(|e| at(&shown(), e.into()))?;
                NodeKind::Symlink {
                    target: RawBytes(target.into_bytes()),
                }
            }
            FileType::RegularFile => {
                let id = (
                    rustix::fs::makedev(x.stx_dev_major, x.stx_dev_minor),
                    x.stx_ino,
                );
                let sha256 = match self.digests.get(&id) {
                    Some(sha) => sha.clone(),
                    // On the root's own local filesystem the size is the content's: an
                    // empty file has nothing to read.
                    None if x.stx_size == 0 && self.fills && id.0 == self.dev => sha256_hex(b""),
                    None => {
                        let path = shown();
                        let fills = self.fills;
                        let sha = with_access(dir, name, mode, 0o400, self.is_root, &path, || {
                            hash_file(dir, name, fills).map_err(|e| at(&path, e))
                        })?;
                        self.digests.insert(id, sha.clone());
                        sha
                    }
                };
                NodeKind::File {
                    size: x.stx_size,
                    sha256,
                }
            }
            FileType::Fifo => NodeKind::Fifo,
            FileType::Socket => NodeKind::Socket,
            FileType::CharacterDevice => NodeKind::CharDevice {
                major: x.stx_rdev_major,
                minor: x.stx_rdev_minor,
            },
            FileType::BlockDevice => NodeKind::BlockDevice {
                major: x.stx_rdev_major,
                minor: x.stx_rdev_minor,
            },
            FileType::Unknown => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("`{}` has an unknown file type", shown().display()),
                ))
            }
        };
        if ft != FileType::Directory {
            let dev = rustix::fs::makedev(x.stx_dev_major, x.stx_dev_minor);
            self.inodes
                .entry((dev, x.stx_ino))
                .or_default()
                .push(rel.clone());
        }
        let mode = if ft == FileType::Symlink { 0 } else { mode };
        self.tree.nodes.insert(rel, Node { kind, mode });
        Ok(())
    }
}

/// Run `f` with at least the owner bits `need` set on the entry `name` of `dir` (whose mode
/// is `mode`) when not root, restoring the original mode afterwards (also when `f` fails).
/// `shown` is the path for messages.
pub(crate) fn with_access<T, P: rustix::path::Arg + Copy>(
    dir: impl AsFd + Copy,
    name: P,
    mode: u32,
    need: u32,
    is_root: bool,
    shown: &Path,
    f: impl FnOnce() -> io::Result<T>,
) -> io::Result<T> {
    if is_root || mode & need == need {
        return f();
    }
    // `chmodat` follows a symlink in the last component; the entry was just seen as a
    // directory or file by `statx` without following, and the walk owns the tree.
    let set = |m: u32| {
        rustix::fs::chmodat(dir, name, Mode::from_raw_mode(m), AtFlags::empty())
            .map_err(|e| at(shown, e.into()))
    };
    set(mode | need)?;
    let result = f();
    set(mode)?;
    result
}

/// SHA-256 of the regular file `name` in `dir`, lower-case hex. `O_NOFOLLOW | O_NONBLOCK`:
/// a symlink or FIFO swapped in after `statx` fails or reads empty instead of being
/// followed or blocking. With `short_read_ends` (the filesystem [`fills_reads`]: a local
/// one, where a regular file reads short only at its end) a read that fills less than the
/// buffer ends the file, saving the final read that returns nothing.
fn hash_file(dir: BorrowedFd<'_>, name: &CStr, short_read_ends: bool) -> io::Result<String> {
    let fd = open_regular(dir, name)?;
    let mut hasher = Sha256::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = match rustix::io::read(&fd, &mut buf) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        };
        hasher.update(&buf[..n]);
        if n == 0 || (short_read_ends && n < buf.len()) {
            break;
        }
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Open `name` under `dir` to read it, only if it is a regular file: never through a
/// symlink, without blocking on a FIFO, and checked on the descriptor opened (`fstat`), so a
/// tool still running that swaps the file for a FIFO or a device node between a `statx` and
/// this open gets an error here, not a hang or a read of that device.
///
/// # Errors
/// As `openat(2)`; `InvalidData` when what was opened is not a regular file.
pub(crate) fn open_regular(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<std::os::fd::OwnedFd> {
    let fd = openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let kind = FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode);
    if kind != FileType::RegularFile {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("no longer a regular file when opened to be read ({kind:?})"),
        ));
    }
    Ok(fd)
}

fn at(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("`{}`: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::spec::{Entry, EntryKind, Placeholders, WorkspaceSpec};
    use crate::workspace::materialise::{materialise, remove_tree};

    /// Whatever a running tool may have put at a file's name by the time it is opened to be
    /// read (a FIFO, with no writer; a directory; a link to a file; a character device when
    /// this process may make one) is refused at once, neither waited on nor read.
    #[test]
    fn only_a_regular_file_is_opened_to_be_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        std::fs::write(d.join("file"), b"x").expect("write");
        rustix::fs::mknodat(
            CWD,
            d.join("fifo"),
            FileType::Fifo,
            Mode::RUSR | Mode::WUSR,
            0,
        )
        .expect("mkfifo");
        std::fs::create_dir(d.join("dir")).expect("mkdir");
        std::os::unix::fs::symlink("file", d.join("link")).expect("symlink");
        let mut refused = vec!["fifo", "dir", "link"];
        // /dev/zero's numbers: read, it never ends.
        let zero = rustix::fs::makedev(1, 5);
        if rustix::fs::mknodat(
            CWD,
            d.join("zero"),
            FileType::CharacterDevice,
            Mode::RUSR,
            zero,
        )
        .is_ok()
        {
            refused.push("zero");
        }
        let top = open_dir(CWD, d).expect("open");
        let c = |n: &str| std::ffi::CString::new(n).expect("name");
        assert!(open_regular(top.as_fd(), &c("file")).is_ok());
        for name in refused {
            assert!(
                open_regular(top.as_fd(), &c(name)).is_err(),
                "`{name}` is not opened to be read"
            );
        }
    }

    fn p(b: impl Into<Vec<u8>>) -> RelPath {
        RelPath::new(b).expect("valid test path")
    }
    fn e(path: &str, kind: EntryKind, mode: Option<u32>) -> Entry {
        Entry {
            path: p(path),
            kind,
            mode,
        }
    }

    #[test]
    fn sha256_is_lower_case_hex() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    /// Three names of one inode in different directories form one sorted group; a symlink
    /// to a directory outside the root is recorded as a link and never entered.
    #[test]
    fn groups_inodes_and_never_follows_links() {
        let jail = tempfile::tempdir().expect("tempdir");
        let out = jail.path().join("out");
        std::fs::create_dir(&out).expect("mkdir out");
        std::fs::write(out.join("decoy"), "outside").expect("write decoy");
        let root = jail.path().join("root");
        std::fs::create_dir(&root).expect("mkdir root");
        std::fs::write(root.join("z"), "same").expect("write");
        std::fs::create_dir(root.join("d")).expect("mkdir");
        std::fs::hard_link(root.join("z"), root.join("d/a")).expect("link");
        std::fs::hard_link(root.join("z"), root.join("m")).expect("link");
        std::fs::write(root.join("y"), "other").expect("write");
        std::fs::hard_link(root.join("y"), root.join("x")).expect("link");
        std::os::unix::fs::symlink(&out, root.join("escape")).expect("symlink");
        let tree = observe(&root).expect("observe");
        assert_eq!(
            tree.shared_inodes,
            [vec![p("d/a"), p("m"), p("z")], vec![p("x"), p("y")]]
        );
        assert!(tree.nodes.keys().all(|k| !k.escaped().contains("decoy")));
        assert_eq!(
            tree.nodes[&p("escape")],
            Node {
                kind: NodeKind::Symlink {
                    target: RawBytes(out.as_os_str().as_bytes().to_vec())
                },
                mode: 0
            }
        );
        assert_eq!(
            observe(&root.join("escape"))
                .expect_err("symlink root")
                .kind(),
            io::ErrorKind::InvalidInput
        );
        assert_eq!(
            observe(&root.join("z")).expect_err("file root").kind(),
            io::ErrorKind::InvalidInput
        );
    }

    /// Non-UTF-8 names come back as the same bytes.
    #[test]
    fn raw_name_bytes_are_kept() {
        let jail = tempfile::tempdir().expect("tempdir");
        let name = std::ffi::OsStr::from_bytes(b"\xff\xfe\n");
        std::fs::write(jail.path().join(name), "x").expect("write");
        let tree = observe(jail.path()).expect("observe");
        let keys: Vec<&RelPath> = tree.nodes.keys().collect();
        assert_eq!(keys, [&p(b"\xff\xfe\n".to_vec())]);
    }

    /// The non-root path: unreadable directories and files are opened up to read them and
    /// their modes are restored; the observed modes are the original ones.
    #[test]
    fn non_root_walk_restores_modes() {
        let jail = tempfile::tempdir().expect("tempdir");
        let root = jail.path().join("root");
        let spec = WorkspaceSpec {
            entries: vec![
                e("locked", EntryKind::Dir, Some(0o000)),
                e("locked/ro", EntryKind::Dir, Some(0o555)),
                e(
                    "locked/ro/f",
                    EntryKind::File {
                        content: "x".into(),
                    },
                    Some(0o000),
                ),
            ],
            exclusions: vec![],
        };
        materialise(&spec, &root, &Placeholders::default()).expect("materialise");
        let first = observe(&root).expect("observe (as the real user)");
        let forced = observe_as(&root, false).expect("observe with the non-root path");
        assert_eq!(first, forced);
        let modes: Vec<u32> = ["locked", "locked/ro", "locked/ro/f"]
            .iter()
            .map(|n| forced.nodes[&p(*n)].mode)
            .collect();
        assert_eq!(modes, [0, 0o555, 0]);
        // Had a mode not been restored, this observation would record the opened-up mode.
        assert_eq!(
            observe(&root).expect("observe again"),
            forced,
            "modes restored"
        );
        remove_tree(&root).expect("cleanup");
    }

    /// Digests are right at every size around the read buffer, with the short-read end on
    /// (tmpfs, ext4) and off.
    #[test]
    fn digests_span_read_boundaries() {
        let t = tempfile::tempdir().expect("tempdir");
        let dir = open_dir(CWD, t.path()).expect("open");
        for size in [0usize, 1, 4095, 8191, 8192, 8193, 16384, 100_000] {
            let content: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
            let name = format!("f{size}");
            std::fs::write(t.path().join(&name), &content).expect("write");
            let c = std::ffi::CString::new(name).expect("name");
            for short in [false, true] {
                assert_eq!(
                    hash_file(dir.as_fd(), &c, short).expect("hash"),
                    sha256_hex(&content),
                    "{size} bytes, short reads end: {short}"
                );
            }
        }
    }
}
