//! `roundtrip_workspace`: an `Arbitrary` workspace → `tar-rs` capture → reference hydration
//! (empty root and over a prior) → every pipeline check, `roundtrip` included.

use super::failure::OracleFailure;
use crate::checks::Violation;
use crate::engine::case::{run_case, Env};
use crate::model::bytes::{RawBytes, RelPath};
use crate::model::policy_map::reference_policy;
use crate::model::profile::Profile;
use crate::model::spec::{Case, Entry, EntryKind, WorkspaceSpec};
use arbitrary::Arbitrary;
use snapconf_producers::{Extractor, ReferenceExtractor, TarRsProducer};
use std::path::Path;
use std::time::Duration;

/// Most entries used from a [`FuzzWorkspace`].
pub const MAX_ENTRIES: usize = 12;

/// What a fuzzed entry is.
#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
pub enum FuzzEntryKind {
    /// A directory with `mode` (`& 0o7777`, owner `rwx` kept so it can be filled).
    Dir {
        /// Permission bits (`& 0o7777`; owner `rwx` added so it can be filled).
        mode: u16,
    },
    /// A regular file.
    File {
        /// The file's bytes.
        content: Vec<u8>,
        /// Permission bits (`& 0o7777`).
        mode: u16,
    },
    /// A symlink to a target built from a small vocabulary (`..`, absolute, `{out}`, an
    /// earlier entry).
    Symlink {
        /// Picks the target: modulo one more than the vocabulary's length, an index into it,
        /// the extra choice being the first entry's path (`a` when there is none).
        target: u8,
    },
    /// A second name of earlier entry `i % count`.
    Hardlink {
        /// Index of an earlier regular file (modulo their count).
        earlier: u8,
    },
    /// A FIFO.
    Fifo,
}

/// One fuzzed entry: `name` picks a word or a long or non-UTF-8 name, placed under earlier
/// directory `parent % dirs` (0 = the root).
#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
pub struct FuzzEntry {
    /// Index into the directories so far (0: the root).
    pub parent: u8,
    /// Name selector.
    pub name: u8,
    /// The kind.
    pub kind: FuzzEntryKind,
}

/// A fuzzed workspace.
#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
pub struct FuzzWorkspace {
    /// Entries in creation order (at most `MAX_ENTRIES` (12) used).
    pub entries: Vec<FuzzEntry>,
}

const NAMES: [&[u8]; 8] = [
    b"a",
    b"b",
    b"cache",
    b"mod.py",
    b".venv",
    b"x y",
    b"\xff\xfe",
    b"nl\n",
];
const TARGETS: [&[u8]; 6] = [
    b"..",
    b"/usr/local/bin/python",
    b"{out}/target",
    b".",
    b"a",
    b"../../x",
];

impl FuzzWorkspace {
    /// The spec this describes, or `None` if it is not a valid workspace (a duplicate name,
    /// a hardlink to a directory): such inputs are skipped.
    pub fn to_spec(&self) -> Option<WorkspaceSpec> {
        let mut dirs: Vec<Option<RelPath>> = vec![None];
        let mut entries: Vec<Entry> = Vec::new();
        for e in self.entries.iter().take(MAX_ENTRIES) {
            let base: &[u8] = match e.name {
                200..=209 => b"",
                _ => NAMES[usize::from(e.name) % NAMES.len()],
            };
            let name: Vec<u8> = if base.is_empty() {
                vec![b'n'; 100 + usize::from(e.name - 200) * 17]
            } else {
                base.to_vec()
            };
            let parent = &dirs[usize::from(e.parent) % dirs.len()];
            let path = match parent {
                None => RelPath::new(name).ok()?,
                Some(p) => p.join(&name).ok()?,
            };
            let kind = match &e.kind {
                FuzzEntryKind::Dir { .. } => EntryKind::Dir,
                FuzzEntryKind::File { content, .. } => EntryKind::File {
                    content: RawBytes(content.iter().copied().take(256).collect()),
                },
                FuzzEntryKind::Symlink { target } => {
                    let t = match usize::from(*target) % (TARGETS.len() + 1) {
                        i if i < TARGETS.len() => TARGETS[i].to_vec(),
                        _ => entries
                            .first()
                            .map(|x| x.path.as_bytes().to_vec())
                            .unwrap_or_else(|| b"a".to_vec()),
                    };
                    EntryKind::Symlink {
                        target: RawBytes(t),
                    }
                }
                FuzzEntryKind::Hardlink { earlier } => {
                    let files: Vec<&Entry> = entries
                        .iter()
                        .filter(|x| matches!(x.kind, EntryKind::File { .. }))
                        .collect();
                    let t = files.get(usize::from(*earlier) % files.len().max(1))?;
                    EntryKind::Hardlink {
                        target: t.path.clone(),
                    }
                }
                FuzzEntryKind::Fifo => EntryKind::Fifo,
            };
            let mode = match &e.kind {
                FuzzEntryKind::Dir { mode } => Some(u32::from(*mode) & 0o7777 | 0o700),
                FuzzEntryKind::File { mode, .. } => Some(u32::from(*mode) & 0o7777),
                _ => None,
            };
            if matches!(kind, EntryKind::Dir) {
                dirs.push(Some(path.clone()));
            }
            entries.push(Entry { path, kind, mode });
        }
        let spec = WorkspaceSpec {
            entries,
            exclusions: Vec::new(),
        };
        spec.check().ok()?;
        Some(spec)
    }
}

/// The prior workspace of every roundtrip case: `a` ("old a") and `stale` ("x"), so
/// `roundtrip` also checks replace-not-merge (H14).
fn prior() -> WorkspaceSpec {
    let entries = [("a", "old a\n"), ("stale", "x\n")]
        .into_iter()
        .filter_map(|(p, c)| {
            Some(Entry {
                path: RelPath::new(p).ok()?,
                kind: EntryKind::File {
                    content: RawBytes::from(c),
                },
                mode: None,
            })
        })
        .collect();
    WorkspaceSpec {
        entries,
        exclusions: Vec::new(),
    }
}

/// Run `ws` through `tar-rs` + reference under the default profile, jails under `base`.
/// Returns `Ok(false)` when `ws` is not a valid workspace (skipped).
///
/// # Errors
/// The first pipeline finding as [`OracleFailure::Violated`], or
/// [`OracleFailure::Infra`].
pub fn check_roundtrip(ws: &FuzzWorkspace, base: Option<&Path>) -> Result<bool, OracleFailure> {
    let Some(spec) = ws.to_spec() else {
        return Ok(false);
    };
    let profile = Profile::default_profile();
    let reference = ReferenceExtractor::new(reference_policy(&profile, None));
    let env = Env {
        profile,
        timeout: Duration::from_secs(10),
        faults: Default::default(),
        jails: Default::default(),
        checks: crate::checks::Check::ALL.to_vec(),
        jail_base: base
            .map(Path::to_path_buf)
            .or_else(crate::jail::default_jail_base),
    };
    let case = Case {
        spec,
        prior: prior(),
    };
    let extractors: [&dyn Extractor; 1] = [&reference];
    let outcome = run_case(&case, &TarRsProducer, &extractors, &env, None)
        .map_err(|e| OracleFailure::Infra(e.to_string()))?;
    match outcome.findings.first() {
        Some(f) => Err(OracleFailure::Violated(Violation {
            check: f.check,
            message: format!("{}\n{}", f.message, f.observed.clone().unwrap_or_default()),
            expected: f.expected.clone(),
            observed: f.observed.clone(),
        })),
        None => Ok(true),
    }
}
