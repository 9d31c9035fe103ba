//! The host canary: the absolute paths the fuzzer's attacks aim at, read on the host before
//! and after a session, so that an archive that got past the filesystem view
//! ([`super::view`]) stops the session instead of going unseen.
//!
//! The attacks aim at the view's decoys by their absolute paths ([`VIEW_DECOYS`]:
//! `/etc/passwd`, `/root/.bashrc`, `/decoy`, `/out/target`, …) and at its decoy directories
//! ([`VIEW_DIRS`]). Inside a view those are the jail's; on the host they are the real ones
//! or nothing. The canary is only ever *read*: for a path that exists, its `lstat` (device,
//! inode, kind, mode, owner, size, mtime and ctime: any write, chmod, chown, rename over or
//! link changes the ctime, which no tool can set back); for a path that does not, that it
//! still does not. A directory among them is compared by existence and kind alone, and a
//! few host directories (`listed_dirs`: `/`, `/etc` and the directories in it, `/root`,
//! `/home` and the directories in it) by their mode, owner and the names they hold, so
//! that a new `/etc/cron.d/job` stops the session too. A host program that changes one of
//! these during a session stops it as well: the message says so.
//!
//! A run under test (`harness/tests/it/host_safety.rs`) goes further: the whole host is an
//! overlay in a private mount namespace there, and every write outside the jails is seen.

use super::view_layout::{VIEW_DECOYS, VIEW_DIRS};
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What is compared of one path; `None`: absent.
type Seen = Option<(u64, u64, u32, u32, u32, u64, i64, i64, i64, i64)>;

/// A host directory's mode, owner and group, and the names in it; `None`: absent or not
/// readable.
type Listing = Option<((u32, u32, u32), BTreeSet<OsString>)>;

/// Host directories whose entries (names, not contents) a canary lists: those an escape
/// past the view would most likely write into, the view's own directories on the host and
/// the directories right inside `/etc` (`/etc/cron.d`, `/etc/profile.d`, …: hostile
/// review). `/tmp` is left out, as its entries change all the time.
fn listed_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["/", "/etc", "/root", "/home", "/home/user", "/out"]
        .into_iter()
        .map(PathBuf::from)
        .collect();
    for parent in ["/etc", "/home"] {
        if let Ok(rd) = std::fs::read_dir(parent) {
            let mut inner: Vec<PathBuf> = rd
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect();
            inner.sort();
            dirs.extend(inner);
        }
    }
    dirs.sort();
    dirs.dedup();
    dirs
}

fn list(dir: &Path) -> Listing {
    let m = std::fs::symlink_metadata(dir).ok().filter(|m| m.is_dir())?;
    let names = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.file_name())
        .collect();
    Some(((m.mode(), m.uid(), m.gid()), names))
}

/// The host paths the attacks aim at, as read at one moment; see the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostCanary {
    seen: Vec<(PathBuf, Seen)>,
    listings: Vec<(PathBuf, Listing)>,
}

/// The paths a canary reads: the decoys and decoy directories but `/` and `/tmp` (whose
/// entries the host changes all the time; the decoy in `/tmp` is read on its own).
fn paths() -> impl Iterator<Item = &'static str> {
    VIEW_DECOYS
        .into_iter()
        .chain(VIEW_DIRS.into_iter().filter(|d| *d != "/" && *d != "/tmp"))
}

fn read(p: &Path) -> Seen {
    let m = std::fs::symlink_metadata(p).ok()?;
    if m.is_dir() {
        // Existence and kind only (see the module docs).
        return Some((0, 0, m.mode() & 0o170000, 0, 0, 0, 0, 0, 0, 0));
    }
    Some((
        m.dev(),
        m.ino(),
        m.mode(),
        m.uid(),
        m.gid(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    ))
}

impl HostCanary {
    /// Read the canary paths now.
    pub fn take() -> HostCanary {
        HostCanary {
            seen: paths()
                .map(|p| (PathBuf::from(p), read(Path::new(p))))
                .collect(),
            listings: listed_dirs()
                .into_iter()
                .map(|d| {
                    let l = list(&d);
                    (d, l)
                })
                .collect(),
        }
    }

    /// What changed since `self` was taken, one line per path (`/etc/passwd` changed,
    /// `/decoy` appeared, `/root/.bashrc` disappeared); empty when nothing did.
    pub fn changes(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .seen
            .iter()
            .filter_map(|(p, before)| {
                let now = read(p);
                let what = match (before, &now) {
                    (a, b) if a == b => return None,
                    (None, Some(_)) => "appeared",
                    (Some(_), None) => "disappeared",
                    _ => "changed",
                };
                Some(format!("`{}` {what}", p.display()))
            })
            .collect();
        for (dir, before) in &self.listings {
            let now = list(dir);
            match (before, &now) {
                (Some((meta, names)), Some((now_meta, now_names))) => {
                    if meta != now_meta {
                        out.push(format!("`{}` changed (mode or owner)", dir.display()));
                    }
                    for n in now_names.difference(names) {
                        out.push(format!("`{}` appeared", dir.join(n).display()));
                    }
                    for n in names.difference(now_names) {
                        out.push(format!("`{}` disappeared", dir.join(n).display()));
                    }
                }
                (None, Some(_)) => out.push(format!("`{}` appeared", dir.display())),
                (Some(_), None) => out.push(format!("`{}` disappeared", dir.display())),
                (None, None) => {}
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// `Err` with a message naming every change since `self` was taken, for a session to
    /// stop on: something reached the host past the view (a defect of snapconf's, to be
    /// reported), or a program of the host changed one of these paths meanwhile.
    ///
    /// # Errors
    /// The message, when anything changed.
    pub fn check(&self) -> Result<(), String> {
        let changes = self.changes();
        if changes.is_empty() {
            return Ok(());
        }
        Err(format!(
            "the host changed outside the jail during the session ({}): an archive may have \
             reached the host past the filesystem view; the session is stopped (if no other \
             program changed these paths, this is a defect of snapconf's: please report it \
             with the session's seed)",
            changes.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A canary compares equal to itself and reads every decoy path of the view.
    #[test]
    fn a_canary_reads_every_attack_path_and_sees_no_change_when_none_happened() {
        let c = HostCanary::take();
        assert!(c.seen.iter().any(|(p, _)| p == Path::new("/etc/passwd")));
        assert!(c.seen.iter().any(|(p, _)| p == Path::new("/decoy")));
        assert!(c.changes().is_empty(), "{:?}", c.changes());
        assert!(c.check().is_ok());
    }

    /// A change to a file is seen through its ctime, and an entry appearing where there
    /// was none is seen (a temporary file stands in for a host path).
    #[test]
    fn a_write_and_a_new_entry_are_seen() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("passwd");
        std::fs::write(&f, "root:x:0:0\n").expect("write");
        let absent = dir.path().join("decoy");
        let sub = dir.path().join("cron.d");
        std::fs::create_dir(&sub).expect("mkdir");
        let c = HostCanary {
            seen: vec![(f.clone(), read(&f)), (absent.clone(), read(&absent))],
            listings: vec![(sub.clone(), list(&sub))],
        };
        assert!(c.check().is_ok());
        std::thread::sleep(std::time::Duration::from_millis(10));
        std::fs::write(&f, "root:x:0:0\n").expect("same bytes again");
        std::fs::write(&absent, "x").expect("new");
        std::fs::write(sub.join("job"), "x").expect("new in a listed directory");
        let changes = c.changes();
        assert_eq!(changes.len(), 3, "{changes:?}");
        assert!(changes
            .iter()
            .any(|c| c.contains("passwd") && c.ends_with("changed")));
        assert!(changes
            .iter()
            .any(|c| c.contains("decoy") && c.ends_with("appeared")));
        assert!(changes
            .iter()
            .any(|c| c.contains("cron.d/job") && c.ends_with("appeared")));
        assert!(c.check().expect_err("stops").contains("passwd"));
    }
}
