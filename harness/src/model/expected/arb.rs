//! A small spec strategy for the expected-tree property tests (the real generators live in
//! `gen/`): few names so that paths collide, nest and get excluded often, every entry kind,
//! odd names and modes, link targets that loop, dangle, escape and use placeholders.

use crate::model::bytes::{RawBytes, RelPath};
use crate::model::profile::{
    AbsoluteRule, EscapingRule, HardlinkRule, ModeRule, Profile, SpecialRule,
};
use crate::model::spec::{Entry, EntryKind, WorkspaceSpec};
use proptest::prelude::*;

const NAMES: [&[u8]; 6] = [b"a", b"b", b".c", b"\xff\xfe", b"n\nl", &[b'L'; 100]];
const TARGETS: [&str; 10] = [
    ".",
    "..",
    "a",
    "b/a",
    "../a",
    "../../x",
    "/usr/bin/python",
    "{root}/a",
    "{root}",
    "{out}/d",
];
const MODES: [Option<u32>; 8] = [
    None,
    None,
    Some(0o755),
    Some(0o555),
    Some(0o000),
    Some(0o4755),
    Some(0o1777),
    Some(0o600),
];

fn path(comps: &[usize]) -> Option<RelPath> {
    let parts: Vec<&[u8]> = comps.iter().map(|&i| NAMES[i % NAMES.len()]).collect();
    RelPath::new(parts.join(&b'/')).ok()
}

/// Specs that pass `check()`: raw entries are added one by one, and an entry that would
/// make the spec invalid is left out.
pub(crate) fn spec() -> impl Strategy<Value = WorkspaceSpec> {
    let entry = (
        prop::collection::vec(0usize..NAMES.len(), 1..=3),
        0u8..9,
        0usize..MODES.len(),
        any::<usize>(),
        prop::collection::vec(any::<u8>(), 0..8),
    );
    (
        prop::collection::vec(entry, 0..12),
        prop::collection::vec(prop::collection::vec(0usize..NAMES.len(), 1..=2), 0..3),
    )
        .prop_map(|(raw, exclusions)| {
            let mut spec = WorkspaceSpec::default();
            for (comps, kind, mode, pick, content) in raw {
                let Some(path) = path(&comps) else { continue };
                let links: Vec<RelPath> = spec
                    .entries
                    .iter()
                    .filter(|e| {
                        matches!(e.kind, EntryKind::File { .. } | EntryKind::Symlink { .. })
                    })
                    .map(|e| e.path.clone())
                    .collect();
                let kind = match kind {
                    0 | 1 => EntryKind::Dir,
                    2 | 3 => EntryKind::File {
                        content: RawBytes(content),
                    },
                    4 if !links.is_empty() => EntryKind::Hardlink {
                        target: links[pick % links.len()].clone(),
                    },
                    4 | 5 => EntryKind::Symlink {
                        target: TARGETS[pick % TARGETS.len()].into(),
                    },
                    6 => EntryKind::Fifo,
                    7 => EntryKind::Socket,
                    _ => EntryKind::CharDevice { major: 1, minor: 3 },
                };
                // A listed parent after its child passes `check()` but cannot be
                // materialised in order; leave such entries out.
                let is_late_parent = spec.entries.iter().any(|e| e.path.starts_with(&path));
                spec.entries.push(Entry {
                    path,
                    kind,
                    mode: MODES[mode],
                });
                if is_late_parent || spec.check().is_err() {
                    spec.entries.pop();
                }
            }
            spec.exclusions = exclusions.iter().filter_map(|c| path(c)).collect();
            spec
        })
}

/// Every combination of profile values.
pub(crate) fn profile() -> impl Strategy<Value = Profile> {
    use crate::model::profile::MtimeRule;
    (
        prop::sample::select(vec![
            HardlinkRule::Copy,
            HardlinkRule::Preserve,
            HardlinkRule::RefuseAtCapture,
            HardlinkRule::RefuseExcludedAlias,
        ]),
        prop::sample::select(vec![SpecialRule::Drop, SpecialRule::RefuseAtCapture]),
        prop::sample::select(vec![
            AbsoluteRule::Keep,
            AbsoluteRule::RebaseInsideRoot,
            AbsoluteRule::Drop,
            AbsoluteRule::RefuseAtCapture,
        ]),
        prop::sample::select(vec![EscapingRule::Keep, EscapingRule::RefuseAtCapture]),
        prop::sample::select(vec![
            ModeRule::Exact,
            ModeRule::ExecBit,
            ModeRule::DataFilter,
            ModeRule::Ignore,
        ]),
    )
        .prop_map(
            |(hardlinks, special_files, absolute_symlinks, escaping_symlinks, modes)| Profile {
                name: "arb".into(),
                hardlinks,
                special_files,
                absolute_symlinks,
                escaping_symlinks,
                modes,
                mtimes: MtimeRule::Ignore,
            },
        )
}
