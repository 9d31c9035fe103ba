//! The fuzzer's disposable filesystem view: the jail itself, seen by the extractor as its
//! whole filesystem (`/`), through bubblewrap (`bwrap`, Debian's `bubblewrap` package).
//!
//! Why: a hostile archive's absolute names (`/etc/passwd`, `////x`), any number of `..`
//! and absolute link targets must be run to find the escapes real extractors have had
//! (CVE-2007-4559, CVE-2025-4517 and the like need exactly those), and none of them may
//! reach the host. Inside the view they land among decoys ([`super::view_layout`]), and
//! `containment` sees them as changes to the jail.
//!
//! What the tool sees, outermost first:
//! - `/` is the jail (read-write); the jail is also mounted at its own host path, so that
//!   the paths an adapter passes (archive, root, scratch) resolve unchanged;
//! - `/usr` read-only, and `/bin`, `/sbin`, `/lib*` as on the host (links into `/usr` on
//!   a merged-`/usr` system, read-only mounts otherwise);
//! - the host paths the extractor declares ([`snapconf_producers::Extractor::view_paths`]:
//!   an interpreter's prefix) and the `snapconf` binary for a child extractor, read-only;
//!   or, for a tool that asks for the whole host (a plugged-in backend), every host
//!   directory and file but the view's own, read-only ([`super::mirror`]);
//! - for a plugged-in backend, its scratch: a directory of the jail bound over itself,
//!   the tool's working directory and the backend's own space, which `containment` does
//!   not compare and the fuzzer empties after every execution ([`View::with_scratch`]);
//!   nothing outside the jail is ever writable;
//! - no host device node at all (a bound `/dev/null` is the host's own inode, whose mode,
//!   owner and times a tool running as root could change through a swapped link), and no
//!   procfs (as root a write to `/proc/sys/...` would reach the host's kernel settings):
//!   `/dev`, `/proc` and `/sys` are plain directories of the jail, or absent;
//! - the jail is mounted `nodev` (bwrap's `--bind`), so a device node an archive makes
//!   there cannot be opened: writing "through" a `1,1` or `7,0` member fails instead of
//!   reaching host memory or a disk;
//! - new PID, IPC, UTS and network namespaces (the PID namespace ends every process of
//!   the step when the tool ends), and a user namespace when not run as root; as root,
//!   every capability but those an extractor uses on its own files (`CAP_CHOWN`,
//!   `CAP_DAC_OVERRIDE`, `CAP_FOWNER`, `CAP_FSETID`, `CAP_MKNOD`) is
//!   dropped, so a tool cannot mount, unmount or change the host.
//!
//! Every mount point is made in the jail when the view is laid out, before the step's
//! first snapshot, so that mounting changes nothing `containment` compares.

use super::confined::Confined;
use super::view_layout::{VIEW_DECOYS, VIEW_DIRS, VIEW_ROOT};
use super::Jail;
use snapconf_producers::process::view::WHOLE_HOST;
use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The most decoy directory paths [`View::plant_decoys`] plants for one step (each with
/// its missing parents).
pub const MAX_PLANTED: usize = 32;
/// The most directories [`View::plant_decoys`] makes for one step, parents included.
pub const MAX_PLANTED_DIRS: usize = 256;
/// The name of a plugged-in backend's scratch directory in the jail, before its random
/// suffix ([`View::with_scratch`]).
pub const SCRATCH_PREFIX: &str = "scratch-backend-";
/// The program that builds the view.
pub const BWRAP_PROGRAM: &str = "bwrap";
/// How to install it.
pub const BWRAP_INSTALL_HINT: &str = "apt-get install bubblewrap";

/// Top-level host entries that are either links into `/usr` or directories to mount.
const SYSTEM_DIRS: [&str; 6] = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];
/// The size of a whole-host view's private `/dev` (a tmpfs), in bytes: room for what
/// programs write to `/dev/null` and the like, which are plain files there.
const DEV_TMPFS_BYTES: u64 = 16 << 20;
/// Capabilities a tool keeps in the view when run as root: those an extractor needs on the
/// files it writes (owners, modes, setuid bits, device and FIFO members).
/// `CAP_DAC_READ_SEARCH` is not among them: `CAP_DAC_OVERRIDE` already reads, writes and
/// searches whatever the tool made, and the other one also opens any inode of a mounted
/// filesystem by handle (`open_by_handle_at`), past every bind: the jail's tmpfs is shared
/// with the host's other `/dev/shm` files (hostile review).
const KEPT_CAPABILITIES: [&str; 5] = [
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_MKNOD",
];

/// A laid-out view in one jail.
#[derive(Clone, Debug)]
pub struct View {
    jail: PathBuf,
    prefix: Vec<OsString>,
    mounts: Vec<PathBuf>,
    scratch: Option<PathBuf>,
}

/// Whether bwrap can build a view here, tried in a jail under `base` (see
/// [`Jail::new`]); `Err` says why not (not installed, no user namespaces for an ordinary
/// user, a seccomp profile).
pub fn probe(base: Option<&Path>) -> Result<(), String> {
    let jail = Jail::new(base).map_err(|e| format!("cannot make a probe jail: {e}"))?;
    let view = View::prepare(&jail, &[], &[]).map_err(|e| format!("cannot lay out a view: {e}"))?;
    let (first, rest) = view
        .prefix()
        .split_first()
        .ok_or_else(|| "empty view prefix".to_string())?;
    let mut cmd = Command::new(first);
    cmd.args(rest).arg("true").stdin(Stdio::null());
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "`{BWRAP_PROGRAM}` cannot build a view here ({}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!(
            "cannot start `{BWRAP_PROGRAM}` ({e}); install: {BWRAP_INSTALL_HINT}"
        )),
    }
}

fn namespace_flags() -> Vec<&'static str> {
    let mut f = vec![
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-net",
        "--die-with-parent",
    ];
    if rustix::process::geteuid().is_root() {
        f.push("--cap-drop");
        f.push("ALL");
        for cap in KEPT_CAPABILITIES {
            f.push("--cap-add");
            f.push(cap);
        }
    } else {
        f.push("--unshare-user");
    }
    f
}

impl View {
    /// Lay the view out in `jail`: the root's directories and the decoys of
    /// [`super::view_layout`], and a mount point for everything the prefix mounts,
    /// including the read-only host paths `extra` (an interpreter's prefix, the `snapconf`
    /// binary). The paths `protected` (in the jail: the archive the tool reads) are mounted
    /// read-only over themselves, at both of their paths in the view.
    ///
    /// # Errors
    /// A directory, decoy or mount point cannot be made.
    pub fn prepare(jail: &Jail, extra: &[PathBuf], protected: &[PathBuf]) -> io::Result<View> {
        let top = jail.path().to_path_buf();
        let at = |abs: &str| top.join(abs.trim_start_matches('/'));
        for d in VIEW_DIRS {
            std::fs::create_dir_all(at(d))?;
        }
        std::fs::create_dir_all(top.join(VIEW_ROOT))?;
        for f in VIEW_DECOYS {
            let p = at(f);
            if std::fs::symlink_metadata(&p).is_err() {
                std::fs::write(&p, format!("decoy {f}\n"))?;
            }
        }
        let mut p: Vec<OsString> = vec![BWRAP_PROGRAM.into()];
        p.extend(namespace_flags().into_iter().map(OsString::from));
        let mut mounts = Vec::new();
        // `--tmpfs` takes no source: a private tmpfs of [`DEV_TMPFS_BYTES`] at `to`.
        let mut bind = |flag: &str, from: &Path, to: &Path| {
            if flag == "--tmpfs" {
                p.push("--size".into());
                p.push(DEV_TMPFS_BYTES.to_string().into());
                p.push(flag.into());
            } else {
                p.push(flag.into());
                p.push(from.into());
            }
            p.push(to.into());
            mounts.push(mount_point(&top, to));
        };
        bind("--bind", &top, Path::new("/"));
        let whole_host = super::mirror::wants_whole_host(extra);
        let mirrored = if whole_host {
            // The host, read-only, around the view's own directories (`super::mirror`).
            let binds = super::mirror::lay_out(&top, super::mirror::entries())?;
            for b in &binds {
                bind("--ro-bind", b, b);
            }
            binds
        } else {
            std::fs::create_dir_all(top.join("usr"))?;
            bind("--ro-bind", Path::new("/usr"), Path::new("/usr"));
            for d in SYSTEM_DIRS {
                let host = Path::new("/").join(d);
                let Ok(meta) = std::fs::symlink_metadata(&host) else {
                    continue;
                };
                let here = top.join(d);
                if meta.file_type().is_symlink() {
                    let target = std::fs::read_link(&host)?;
                    if std::fs::symlink_metadata(&here).is_err() {
                        std::os::unix::fs::symlink(&target, &here)?;
                    }
                } else if meta.is_dir() {
                    std::fs::create_dir_all(&here)?;
                    bind("--ro-bind", &host, &host);
                }
            }
            vec![PathBuf::from("/usr")]
        };
        std::fs::create_dir_all(top.join("dev"))?;
        if whole_host {
            // No device node at all, not even the host's `/dev/null` (a tool running as root
            // could change its mode through a bind): `/dev` is a small tmpfs of the view's
            // own, so `2>/dev/null` writes a file there that nobody compares or keeps.
            bind("--tmpfs", Path::new(""), Path::new("/dev"));
        }
        let mut extra: Vec<PathBuf> = extra
            .iter()
            .filter(|e| e.as_os_str() != WHOLE_HOST && !super::mirror::covered(e, &mirrored))
            .cloned()
            .collect();
        extra.sort();
        extra.dedup();
        for e in &extra {
            let here = mount_point(&top, e);
            if std::fs::symlink_metadata(&here).is_ok() {
                bind("--ro-bind", e, e);
                continue;
            }
            if e.is_dir() {
                std::fs::create_dir_all(&here)?;
            } else {
                if let Some(parent) = here.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&here, b"")?;
            }
            bind("--ro-bind", e, e);
        }
        // The jail at its own host path too, after the host's directories (it may lie in
        // one, `/var/tmp` say); the mount point is a directory of the jail.
        std::fs::create_dir_all(mount_point(&top, &top))?;
        bind("--bind", &top, &top);
        for p in protected {
            if let Ok(rel) = p.strip_prefix(&top) {
                bind("--ro-bind", p, p);
                bind("--ro-bind", p, &Path::new("/").join(rel));
            }
        }
        p.push("--chdir".into());
        p.push("/".into());
        p.push("--".into());
        mounts.sort();
        mounts.dedup();
        Ok(View {
            jail: top,
            prefix: p,
            mounts,
            scratch: None,
        })
    }

    /// The fuzzer's view of `jail` for a tool whose [`Extractor::view_paths`] are `extra`
    /// (see [`View::prepare`]; `protected`: the archive), with a scratch of the view's own
    /// ([`View::with_scratch`]) when the tool asks for the whole host (a plugged-in
    /// backend, whose steps and worker run in their scratch). The one constructor the
    /// fuzzer uses, so that every fuzz view is built the same way.
    ///
    /// [`Extractor::view_paths`]: snapconf_producers::Extractor::view_paths
    ///
    /// # Errors
    /// A directory, decoy, mount point or the scratch cannot be made.
    pub fn for_fuzz(jail: &Jail, extra: &[PathBuf], protected: &[PathBuf]) -> io::Result<View> {
        let view = View::prepare(jail, extra, protected)?;
        if super::mirror::wants_whole_host(extra) {
            view.with_scratch()
        } else {
            Ok(view)
        }
    }

    /// The same view with a scratch directory for a plugged-in backend: a new directory
    /// `scratch-backend-<random>` at the top of the jail, bound read-write over itself (at
    /// its host path, which the worker is told, and at its path from the view's `/`) and
    /// made the tool's working directory. It is on the root's filesystem (the worker
    /// protocol promises that: a backend may stage there and rename into the root), and
    /// being a mount point of the view, the tool cannot remove, rename or replace it.
    ///
    /// The scratch is the backend's own space: `containment` does not compare it (its
    /// path is [`View::scratch`]), and the fuzzer empties it after every execution. So no
    /// directory outside the jail is writable in any fuzz view: the jail, and a
    /// whole-host view's `/dev` tmpfs, are all a tool can write.
    ///
    /// # Errors
    /// The directory cannot be made.
    pub fn with_scratch(mut self) -> io::Result<View> {
        let scratch = tempfile::Builder::new()
            .prefix(SCRATCH_PREFIX)
            .tempdir_in(&self.jail)?
            .keep();
        let rel = Path::new("/").join(scratch.strip_prefix(&self.jail).unwrap_or(&scratch));
        // The prefix ends with `--chdir / --`.
        let tail = self.prefix.len().saturating_sub(3);
        let mut end = vec![
            OsString::from("--bind"),
            scratch.clone().into(),
            scratch.clone().into(),
            "--bind".into(),
            scratch.clone().into(),
            rel.into(),
            "--chdir".into(),
            scratch.clone().into(),
            "--".into(),
        ];
        self.prefix.truncate(tail);
        self.prefix.append(&mut end);
        self.mounts.push(scratch.clone());
        self.mounts.sort();
        self.mounts.dedup();
        self.scratch = Some(scratch);
        Ok(self)
    }

    /// Plant empty decoy directories at `dirs` (paths in the view without their leading
    /// `/`, so jail-relative; from [`crate::checks::traversal::decoy_dirs`]), with every
    /// missing component, before a step's first snapshot, so that a write through a link
    /// leaving the root lands on something `containment` and `traversal` see. Returns what
    /// was made (jail-relative, parents first); the caller puts the jail back as laid out
    /// after the step (a new jail per execution, or [`super::restore::Laid::restore`]).
    ///
    /// Every directory is made from a handle on the jail, one component at a time, never
    /// through a link, and anew ([`Confined::create_dir`]: a persistent worker may still
    /// run in the view and may have put a link in the way, which makes that path fail
    /// here, not write elsewhere). Best effort: a path that cannot be made is skipped (the
    /// check then keeps its rule for what has no directory outside), and so is a path at
    /// or under a mount point of the view (the host's read-only files, the scratch, the
    /// jail's own host path), where a planted directory would be hidden or held. At most
    /// [`MAX_PLANTED`] paths (the first in `dirs`, listing order) and
    /// [`MAX_PLANTED_DIRS`] directories in all are made per call: a hostile archive may
    /// aim thousands of links outside.
    ///
    /// # Errors
    /// The jail itself cannot be opened.
    pub fn plant_decoys(&self, dirs: &[Vec<u8>]) -> io::Result<Vec<Vec<u8>>> {
        let conf = Confined::open(&self.jail)?;
        let mounts: Vec<Vec<u8>> = self
            .mounts
            .iter()
            .filter_map(|m| m.strip_prefix(&self.jail).ok())
            .map(|m| m.as_os_str().as_bytes().to_vec())
            .filter(|m| !m.is_empty())
            .collect();
        let held = |p: &[u8]| {
            mounts
                .iter()
                .any(|m| p == m.as_slice() || (p.starts_with(m) && p.get(m.len()) == Some(&b'/')))
        };
        let mut made = Vec::new();
        for dir in dirs.iter().take(MAX_PLANTED) {
            let comps: Vec<&[u8]> = dir.split(|&b| b == b'/').collect();
            if comps.iter().any(|c| matches!(*c, b"" | b"." | b"..")) || held(dir) {
                continue;
            }
            for i in 1..=comps.len() {
                if made.len() >= MAX_PLANTED_DIRS {
                    return Ok(made);
                }
                let at = comps[..i].join(&b'/');
                match conf.create_dir(&at, 0o755) {
                    Ok(()) => made.push(at),
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    // A link or a file in the way, a name too long: not this path.
                    Err(_) => break,
                }
            }
        }
        Ok(made)
    }

    /// The backend's scratch (host path, in the jail) when [`View::with_scratch`] made
    /// one: the request's `scratch`, not compared by `containment`.
    pub fn scratch(&self) -> Option<&Path> {
        self.scratch.as_deref()
    }

    /// The hydration root (host path): `VIEW_ROOT` in the jail.
    pub fn root(&self) -> PathBuf {
        self.jail.join(VIEW_ROOT)
    }

    /// Where the view mounts something, as host paths in the jail (the jail itself first):
    /// entries a reset must never remove or replace, since a running view holds them.
    pub fn mount_points(&self) -> &[PathBuf] {
        &self.mounts
    }

    /// The command prefix that runs a tool in the view (for
    /// [`snapconf_producers::process::view::with_view`]), ending with `--`.
    pub fn prefix(&self) -> &[OsString] {
        &self.prefix
    }
}

/// Where host path `host` is mounted inside the view rooted at the jail `top`.
fn mount_point(top: &Path, host: &Path) -> PathBuf {
    let rel = host.as_os_str().as_bytes();
    let rel = rel.strip_prefix(b"/").unwrap_or(rel);
    top.join(std::ffi::OsStr::from_bytes(rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_dir(jail: &Jail, rel: &str) -> bool {
        std::fs::symlink_metadata(jail.path().join(rel)).is_ok_and(|m| m.is_dir())
    }

    /// Planted decoy directories are made with their missing parents, never at or under a
    /// mount point of the view nor from a path with `..`, and never through a link in the
    /// way (a worker's, to a directory outside the jail): that path is skipped and nothing
    /// is written where the link leads.
    #[test]
    fn decoys_are_planted_inside_the_jail_and_never_through_a_link() {
        let jail = Jail::new(None).expect("jail");
        let view = View::prepare(&jail, &[], &[]).expect("view");
        let host = tempfile::tempdir().expect("tempdir");
        std::os::unix::fs::symlink(host.path(), jail.path().join("home/user/ws/evil"))
            .expect("symlink");
        let dirs: Vec<Vec<u8>> = [
            "home/user/ws/absent/deep",
            "usr/lib/x",
            "home/../x",
            "home/user/ws/evil/sub",
            "home/user/ws/evil",
            "out",
        ]
        .iter()
        .map(|d| d.as_bytes().to_vec())
        .collect();
        let made = view.plant_decoys(&dirs).expect("plant");
        assert_eq!(
            made,
            [
                b"home/user/ws/absent".to_vec(),
                b"home/user/ws/absent/deep".to_vec()
            ]
        );
        assert!(is_dir(&jail, "home/user/ws/absent/deep"));
        assert!(!is_dir(&jail, "usr/lib"), "under a mount point");
        assert_eq!(
            std::fs::read_dir(host.path()).expect("host dir").count(),
            0,
            "nothing through the link"
        );
        assert!(
            std::fs::symlink_metadata(jail.path().join("home/user/ws/evil"))
                .expect("link")
                .file_type()
                .is_symlink()
        );
    }

    /// A hostile archive may aim thousands of links outside: at most [`MAX_PLANTED`] paths
    /// are planted for one step.
    #[test]
    fn planting_is_bounded() {
        let jail = Jail::new(None).expect("jail");
        let view = View::prepare(&jail, &[], &[]).expect("view");
        let dirs: Vec<Vec<u8>> = (0..MAX_PLANTED + 10)
            .map(|i| format!("home/user/ws/p{i}").into_bytes())
            .collect();
        let made = view.plant_decoys(&dirs).expect("plant");
        assert_eq!(made.len(), MAX_PLANTED);
        assert!(!is_dir(&jail, &format!("home/user/ws/p{MAX_PLANTED}")));
    }
}
