//! The host, read-only, inside a filesystem view ([`super::view`]): what a tool gets that
//! asked for [`WHOLE_HOST`] (a plugged-in backend, whose interpreter, libraries and scripts
//! may live anywhere).
//!
//! The view's `/` is still the jail, and the directories the view owns for its root and
//! decoys ([`owned_dirs`]: `/`, `/etc`, `/root`, `/home/user`, `/out`, the root's
//! ancestors, …) are still directories of the jail, so that a write aimed at them lands
//! among the decoys and `containment` sees it. Every *other* host entry of such a
//! directory is shown at its own path: a directory or file through a read-only bind
//! (`bwrap --ro-bind`, which also mounts it `nodev` and `nosuid`, submounts included), a
//! symbolic link as a copy of the link. So `/usr`, `/opt`, `/var`, `/root/.pyenv` or
//! `/etc/alternatives` read as on the host and cannot be written (`EROFS`), while
//! `/etc/passwd`, `/root/.bashrc` and `/decoy` are the jail's decoys.
//!
//! Never shown: `/proc`, `/sys` and `/dev` (kernel interfaces and device nodes), `/run`
//! (the host's sockets: a tool may not talk to the host's services), `/tmp` (the host's
//! temporary files are not the tool's business; the view's `/tmp` is a decoy directory),
//! a host entry that is neither a directory, a regular file nor a symbolic link (a FIFO or
//! socket that a write would reach a host process through), and what the caller cannot
//! `lstat`.
//!
//! Cost: one bind per mirrored entry, about 0.3 ms each when the view starts (about 150
//! on a Debian host, most of them in `/etc`); a persistent server pays it once.

use super::view_layout::{VIEW_DECOYS, VIEW_DIRS, VIEW_ROOT};
use snapconf_producers::process::view::WHOLE_HOST;
use std::collections::BTreeSet;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Entries of the host's `/` that are never mirrored (see the module docs).
const NEVER_MIRRORED: [&str; 5] = ["proc", "sys", "dev", "run", "tmp"];

/// Whether `extra` (an extractor's view paths) asks for the whole host.
pub fn wants_whole_host(extra: &[PathBuf]) -> bool {
    extra.iter().any(|p| p.as_os_str() == WHOLE_HOST)
}

/// The directories (absolute view paths) that belong to the view, not the host: the
/// decoy directories, the root and every ancestor of both. Their host entries are
/// mirrored one by one; the root's are not (it is the workspace), nor `/tmp`'s.
pub fn owned_dirs() -> BTreeSet<PathBuf> {
    let mut owned = BTreeSet::new();
    let root = Path::new("/").join(VIEW_ROOT);
    let decoy_parents = VIEW_DECOYS
        .iter()
        .filter_map(|d| Path::new(d).parent().map(Path::to_path_buf));
    let dirs = VIEW_DIRS.iter().map(PathBuf::from).chain(decoy_parents);
    for d in dirs.chain([root]) {
        for a in d.ancestors() {
            owned.insert(a.to_path_buf());
        }
    }
    owned
}

/// One host entry to show in the view.
#[derive(Debug, PartialEq, Eq)]
pub enum Mirrored {
    /// A directory or regular file, bound read-only at its own path; the mount point (an
    /// empty directory or file of the same kind) is made in the jail.
    Bind {
        /// The host path (also the path in the view).
        path: PathBuf,
        /// True for a directory.
        dir: bool,
    },
    /// A symbolic link, copied into the jail with the same target.
    Link {
        /// The host path (also the path in the view).
        path: PathBuf,
        /// Its target, as read.
        target: PathBuf,
    },
}

/// The host entries a whole-host view shows, in a fixed order (by path), read once per
/// process: every one-shot execution lays a view out, and the host's top-level entries do
/// not change under a session. See the module docs for what is left out. A directory the
/// caller cannot list (an ordinary user's `/root`) contributes nothing.
pub fn entries() -> &'static [Mirrored] {
    static ENTRIES: std::sync::OnceLock<Vec<Mirrored>> = std::sync::OnceLock::new();
    ENTRIES.get_or_init(read_entries)
}

/// [`entries`], read now.
fn read_entries() -> Vec<Mirrored> {
    let owned = owned_dirs();
    let root = Path::new("/").join(VIEW_ROOT);
    let decoys: BTreeSet<PathBuf> = VIEW_DECOYS.iter().map(PathBuf::from).collect();
    let mut out = Vec::new();
    for dir in &owned {
        if *dir == root || dir.as_os_str() == "/tmp" {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut names: Vec<_> = rd.flatten().map(|e| e.file_name()).collect();
        names.sort();
        for name in names {
            let path = dir.join(&name);
            if owned.contains(&path)
                || decoys.contains(&path)
                || (dir.as_os_str() == "/"
                    && NEVER_MIRRORED
                        .iter()
                        .any(|n| name.as_bytes() == n.as_bytes()))
            {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let ft = meta.file_type();
            if ft.is_symlink() {
                if let Ok(target) = std::fs::read_link(&path) {
                    out.push(Mirrored::Link { path, target });
                }
            } else if ft.is_dir() || ft.is_file() {
                out.push(Mirrored::Bind {
                    path,
                    dir: ft.is_dir(),
                });
            }
        }
    }
    out
}

/// Make the jail side of `entries` under the jail `top` (mount points and link copies)
/// and return the host paths to bind read-only, in order.
///
/// # Errors
/// A mount point or link cannot be made.
pub fn lay_out(top: &Path, entries: &[Mirrored]) -> io::Result<Vec<PathBuf>> {
    let at = |p: &Path| top.join(p.strip_prefix("/").unwrap_or(p));
    let mut binds = Vec::new();
    for e in entries {
        match e {
            Mirrored::Link { path, target } => {
                let here = at(path);
                if std::fs::symlink_metadata(&here).is_err() {
                    std::os::unix::fs::symlink(target, &here)?;
                }
            }
            Mirrored::Bind { path, dir } => {
                let here = at(path);
                if std::fs::symlink_metadata(&here).is_err() {
                    if *dir {
                        std::fs::create_dir(&here)?;
                    } else {
                        std::fs::write(&here, b"")?;
                    }
                }
                binds.push(path.clone());
            }
        }
    }
    Ok(binds)
}

/// True if `p` lies in a mirrored (bound) host directory, so that binding it again is not
/// needed.
pub fn covered(p: &Path, binds: &[PathBuf]) -> bool {
    binds.iter().any(|b| p.starts_with(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The view owns its decoy directories and the root's ancestors; the host's `/usr` is
    /// mirrored, its `/proc`, `/dev`, `/tmp` and `/run` never are, and no decoy path or
    /// view-owned directory is ever shown from the host.
    #[test]
    fn the_mirror_shows_the_host_but_never_a_decoy_or_a_kernel_interface() {
        let owned = owned_dirs();
        for d in [
            "/",
            "/etc",
            "/root",
            "/home",
            "/home/user",
            "/home/user/ws",
            "/out",
        ] {
            assert!(owned.contains(Path::new(d)), "{d} belongs to the view");
        }
        let e = entries();
        let paths: Vec<&Path> = e
            .iter()
            .map(|m| match m {
                Mirrored::Bind { path, .. } | Mirrored::Link { path, .. } => path.as_path(),
            })
            .collect();
        assert!(paths.contains(&Path::new("/usr")), "{paths:?}");
        for never in [
            "/proc",
            "/sys",
            "/dev",
            "/run",
            "/tmp",
            "/etc/passwd",
            "/root/.bashrc",
        ] {
            assert!(
                !paths.contains(&Path::new(never)),
                "{never} is never mirrored"
            );
        }
        for p in &paths {
            assert!(!owned.contains(*p), "{} is the view's", p.display());
            assert!(
                !p.starts_with("/tmp") && !p.starts_with("/proc"),
                "{}",
                p.display()
            );
        }
    }
}
