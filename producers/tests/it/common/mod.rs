//! Helpers shared by the adapter tests: small workspaces, archive listings, skips.
#![allow(dead_code)]

/// The suite's one skip helper, [`skip::skip`] (`test-support/skip.rs`, shared by the three
/// test crates): prints `SKIPPED <test>: ...`, or fails with `SNAPCONF_REQUIRE_TOOLS=1`.
#[path = "../../../../test-support/skip.rs"]
pub mod skip;

use snapconf_producers::{Availability, CaptureRequest, HydrateRequest, Outcome, Producer};
use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tempfile::TempDir;

/// The timeout the tests give every tool.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// One listed member: normalised name (no `./`, no trailing `/`), type flag byte, link target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub name: Vec<u8>,
    pub kind: u8,
    pub link: Option<Vec<u8>>,
    pub data: Vec<u8>,
}

/// A jail: a temp dir holding `root/`, `scratch/` and the archive path.
pub struct Jail {
    pub dir: TempDir,
    pub root: PathBuf,
    pub scratch: PathBuf,
    pub archive: PathBuf,
}

impl Jail {
    pub fn new() -> Jail {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        let scratch = dir.path().join("scratch");
        fs::create_dir(&root).expect("mkdir root");
        fs::create_dir(&scratch).expect("mkdir scratch");
        let archive = dir.path().join("archive.tar");
        Jail {
            dir,
            root,
            scratch,
            archive,
        }
    }

    pub fn path(&self, rel: &[u8]) -> PathBuf {
        self.root.join(OsStr::from_bytes(rel))
    }

    pub fn capture(&self, p: &dyn Producer, exclusions: &[Vec<u8>]) -> Outcome {
        let req = CaptureRequest {
            root: &self.root,
            exclusions,
            archive: &self.archive,
            scratch: &self.scratch,
            timeout: TIMEOUT,
        };
        p.capture(&req).expect("capture infrastructure")
    }

    pub fn hydrate_req(&self) -> HydrateRequest<'_> {
        HydrateRequest {
            archive: &self.archive,
            root: &self.root,
            scratch: &self.scratch,
            timeout: TIMEOUT,
            limits: None,
        }
    }
}

/// Whether an adapter can run; if not, reports the skip with [`skip::skip`] (a failure
/// with `SNAPCONF_REQUIRE_TOOLS=1`).
pub fn available(name: &str, a: Availability) -> bool {
    match a {
        Availability::Available { .. } => true,
        Availability::Unavailable {
            reason,
            install_hint,
        } => {
            skip::skip(&format!("`{name}` is unavailable: {reason}"), &install_hint);
            false
        }
    }
}

/// A member name in normal form, so names of all producers compare equal: the suite's one
/// normaliser, [`snapconf_extract::normalise_name`] (`./a//b/` is `a/b`; the root is empty).
pub fn normalise(name: &[u8]) -> Vec<u8> {
    snapconf_extract::normalise_name(name)
}

/// All members of `archive` (PAX and GNU extension records folded in by the `tar` crate).
pub fn list(archive: &Path) -> Vec<Member> {
    let file = fs::File::open(archive).expect("open archive");
    let mut ar = tar::Archive::new(file);
    let mut out = Vec::new();
    for entry in ar.entries().expect("entries") {
        let mut entry = entry.expect("entry");
        let name = normalise(&entry.path_bytes());
        let kind = entry.header().entry_type().as_byte();
        let link = entry.link_name_bytes().map(|l| l.into_owned());
        let mut data = Vec::new();
        entry.read_to_end(&mut data).expect("read member");
        out.push(Member {
            name,
            kind,
            link,
            data,
        });
    }
    out
}

/// Member names, excluding the root (`.`).
pub fn names(members: &[Member]) -> Vec<Vec<u8>> {
    members
        .iter()
        .map(|m| m.name.clone())
        .filter(|n| n.as_slice() != b"." && !n.is_empty())
        .collect()
}

pub fn find<'a>(members: &'a [Member], name: &[u8]) -> Option<&'a Member> {
    members.iter().find(|m| m.name == name)
}

pub fn write(root: &Path, rel: &str, data: &str) {
    let p = root.join(rel);
    if let Some(parent) = p.parent() {
        fs::create_dir_all(parent).expect("mkdir -p");
    }
    fs::write(p, data).expect("write");
}

pub fn show(names: &[Vec<u8>]) -> Vec<String> {
    names
        .iter()
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect()
}
