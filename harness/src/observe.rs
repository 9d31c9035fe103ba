//! Read what is on disk under a root into a [`Tree`], with `lstat` only: links are never
//! followed, FIFOs are never opened, and inode sharing is recorded.

use crate::bytes::{RawBytes, RelPath};
use crate::tree::{Node, NodeKind, Tree};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::Metadata;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
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
    observe_as(root, rustix::process::geteuid().is_root())
}

/// [`observe`], with the "bypasses permission checks" decision made by the caller (tests
/// exercise the non-root chmod-and-restore path while running as root).
fn observe_as(root: &Path, is_root: bool) -> io::Result<Tree> {
    let meta = std::fs::symlink_metadata(root).map_err(|e| at(root, e))?;
    if !meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is not a directory", root.display()),
        ));
    }
    let mut walk = Walk {
        tree: Tree::default(),
        inodes: BTreeMap::new(),
        is_root,
    };
    walk.dir(root, None, &meta)?;
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

struct Walk {
    tree: Tree,
    inodes: BTreeMap<(u64, u64), Vec<RelPath>>,
    is_root: bool,
}

impl Walk {
    /// Record the children of the directory at `path` (`rel` is `None` for the root).
    fn dir(&mut self, path: &Path, rel: Option<&RelPath>, meta: &Metadata) -> io::Result<()> {
        with_access(path, meta, 0o500, self.is_root, || {
            let mut children = Vec::new();
            for item in std::fs::read_dir(path).map_err(|e| at(path, e))? {
                let item = item.map_err(|e| at(path, e))?;
                children.push(item.file_name());
            }
            children.sort();
            for name in children {
                let name = name.as_bytes();
                let child_rel = match rel {
                    Some(r) => r.join(name),
                    None => RelPath::new(name.to_vec()),
                }
                .map_err(|why| io::Error::new(io::ErrorKind::InvalidData, why))?;
                let child = path.join(std::ffi::OsStr::from_bytes(name));
                self.node(&child, child_rel)?;
            }
            Ok(())
        })
    }

    fn node(&mut self, path: &Path, rel: RelPath) -> io::Result<()> {
        let meta = std::fs::symlink_metadata(path).map_err(|e| at(path, e))?;
        let ft = meta.file_type();
        let mode = meta.mode() & 0o7777;
        let kind = if ft.is_dir() {
            self.dir(path, Some(&rel), &meta)?;
            NodeKind::Dir
        } else if ft.is_symlink() {
            let target = std::fs::read_link(path).map_err(|e| at(path, e))?;
            NodeKind::Symlink {
                target: RawBytes(target.as_os_str().as_bytes().to_vec()),
            }
        } else if ft.is_file() {
            let sha256 = with_access(path, &meta, 0o400, self.is_root, || hash_file(path))?;
            NodeKind::File {
                size: meta.len(),
                sha256,
            }
        } else if ft.is_fifo() {
            NodeKind::Fifo
        } else if ft.is_socket() {
            NodeKind::Socket
        } else if ft.is_char_device() {
            NodeKind::CharDevice {
                major: rustix::fs::major(meta.rdev()),
                minor: rustix::fs::minor(meta.rdev()),
            }
        } else if ft.is_block_device() {
            NodeKind::BlockDevice {
                major: rustix::fs::major(meta.rdev()),
                minor: rustix::fs::minor(meta.rdev()),
            }
        } else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("`{}` has an unknown file type", path.display()),
            ));
        };
        if !ft.is_dir() {
            self.inodes
                .entry((meta.dev(), meta.ino()))
                .or_default()
                .push(rel.clone());
        }
        let mode = if ft.is_symlink() { 0 } else { mode };
        self.tree.nodes.insert(rel, Node { kind, mode });
        Ok(())
    }
}

/// Run `f` with at least the owner bits `need` set on `path` when not root, restoring the
/// original mode afterwards (also when `f` fails).
fn with_access<T>(
    path: &Path,
    meta: &Metadata,
    need: u32,
    is_root: bool,
    f: impl FnOnce() -> io::Result<T>,
) -> io::Result<T> {
    let mode = meta.mode() & 0o7777;
    if is_root || mode & need == need {
        return f();
    }
    let set = |m: u32| {
        rustix::fs::chmod(path, rustix::fs::Mode::from_raw_mode(m)).map_err(|e| at(path, e.into()))
    };
    set(mode | need)?;
    let result = f();
    set(mode)?;
    result
}

/// SHA-256 of a regular file, lower-case hex. `O_NOFOLLOW | O_NONBLOCK`: a symlink or FIFO
/// swapped in after `lstat` fails or reads empty instead of being followed or blocking.
fn hash_file(path: &Path) -> io::Result<String> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| at(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf).map_err(|e| at(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// SHA-256 of `bytes`, lower-case hex (the form [`NodeKind::File`] holds).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn at(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("`{}`: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::materialise::{materialise, remove_tree};
    use crate::spec::{Entry, EntryKind, Placeholders, WorkspaceSpec};

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
}
