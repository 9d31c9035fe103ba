//! The validation pass: every member is read and checked, and the tree it describes is
//! planned, before anything is written.
//!
//! The plan is a trie of the final tree ([`Tree`]) and a list of actions in archive order
//! (directories, files, hardlinks, and symlinks, which the write pass creates last). Its size
//! grows with the number of members (one component each), never with payload bytes:
//! payloads stay in the archive file and are copied by offset ([`crate::hydrate_file`]), or
//! are handed to a [`Sink`] as they are read, which writes them into the staging tree
//! ([`crate::hydrate`]'s single pass).

use std::sync::Arc;

use crate::error::refuse;
use crate::input::Input;
use crate::name;
use crate::reader::{RawMember, Reader};
use crate::sparse::SparseMap;
use crate::tree::{NodeId, Tree, TreeFull, ROOT};
use crate::{
    Duplicates, EscapingSymlinks, HydrateError, HydrateReport, ListedMember, Listing, MemberKind,
    Modes, Policy, Reason,
};

mod links;
mod sink;

pub(crate) use sink::{NoSink, Payload, ReadPayload, Sink};

/// Mode of directories that the archive implies but does not list (`a/` for a member `a/b`).
pub(crate) const IMPLICIT_DIR_MODE: u32 = 0o755;

/// Where a regular file's bytes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Data {
    /// Offset in the archive file (in the tar stream, for a stream), in bytes.
    pub(crate) offset: u64,
    /// Length in bytes (of a sparse file, of its data regions together).
    pub(crate) size: u64,
    /// A sparse file's map: the `size` bytes are its regions one after the other.
    pub(crate) sparse: Option<Arc<SparseMap>>,
}

/// One thing the write pass does.
#[derive(Debug)]
pub(crate) enum Action {
    /// Create a directory (mode applied after its children).
    Dir {
        node: NodeId,
        mode: u32,
        mtime: Option<u64>,
    },
    /// Create a regular file from `data`.
    File {
        node: NodeId,
        data: Data,
        mode: u32,
        mtime: u64,
    },
    /// A hardlink: link to the file created by action `target` if it still exists (policy
    /// `Link`), otherwise write an independent copy of `data`.
    Hardlink {
        node: NodeId,
        target: usize,
        data: Data,
        mode: u32,
        mtime: u64,
        link: bool,
    },
    /// Create a symlink (deferred to the end of the write pass). `archived` is the target
    /// as the archive stored it when that differs from `target` (rebased), so that a second
    /// name of this link can be decided again from its own directory.
    Symlink {
        node: NodeId,
        target: Vec<u8>,
        archived: Option<Vec<u8>>,
    },
    /// Superseded by a later member of the same name (`Duplicates::LastWins`).
    Skip,
}

/// The checked tree, ready for the write pass.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// The names of the planned tree.
    pub(crate) tree: Tree,
    pub(crate) actions: Vec<Action>,
    /// Mode for the root itself, from a `.` directory member.
    pub(crate) root_mode: Option<u32>,
    /// Modification time for the root itself (seconds since the epoch), from a `.` member.
    pub(crate) root_mtime: Option<u64>,
    pub(crate) report: HydrateReport,
}

/// What the validator remembers about a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    /// A directory; `action` is its `Dir` action; `children` says whether anything is below it.
    Dir {
        action: usize,
        explicit: bool,
        children: bool,
    },
    /// A regular file created by `action` (a `File` or `Hardlink` one, which holds its
    /// data).
    File { action: usize, mode: u32 },
    /// A symlink (`action` is `None` if the policy dropped it).
    Symlink { action: Option<usize> },
    /// A dropped special file, or a hardlink to itself.
    Other,
}
pub(super) struct Validator<'p, 's, S> {
    policy: &'p Policy,
    sink: &'s mut S,
    /// The regular file of the member just checked, if it has a payload for the sink.
    payload: Option<Payload>,
    /// What each tree node currently is (`None`: named once, replaced, nothing now).
    nodes: Vec<Option<Node>>,
    plan: Plan,
    total_bytes: u64,
    /// Bytes of holes of the sparse files so far (see [`Validator::add_holes`]).
    hole_bytes: u64,
    listing: Option<Listing>,
    root_seen: bool,
}

/// Applies [`Modes`] to a member's permission bits.
pub(crate) fn filter_mode(mode: u32, modes: Modes) -> u32 {
    match modes {
        Modes::Exact => mode & 0o7777,
        // Python's `tarfile.data_filter` (PEP 706): no setuid/setgid/sticky, no group/other
        // write. Unlike Python we do not add owner read/write to regular files.
        Modes::DataFilter => mode & 0o777 & !0o022,
    }
}

/// Reads and checks every member of `input`; returns the plan, and the listing if asked.
pub(crate) fn build<I: Input>(
    input: &mut I,
    start: u64,
    policy: &Policy,
    want_listing: bool,
) -> Result<(Plan, Option<Listing>), HydrateError> {
    build_into(input, start, policy, want_listing, &mut NoSink)
}

/// [`build`], telling `sink` about each checked member as it goes (and giving it the
/// payloads of regular files).
pub(crate) fn build_into<I: Input, S: Sink>(
    input: &mut I,
    start: u64,
    policy: &Policy,
    want_listing: bool,
    sink: &mut S,
) -> Result<(Plan, Option<Listing>), HydrateError> {
    let mut reader = Reader::new(input, start, policy.limits);
    let mut v = Validator {
        policy,
        sink,
        payload: None,
        nodes: vec![None],
        plan: Plan::default(),
        total_bytes: 0,
        hole_bytes: 0,
        listing: want_listing.then(Listing::default),
        root_seen: false,
    };
    let mut members = 0u64;
    while let Some(member) = reader.next_member()? {
        members += 1;
        v.member(member)?;
        if let Some(p) = v.payload.take() {
            let mut read = |buf: &mut [u8]| reader.payload_chunk(buf);
            v.sink.file(&v.plan.tree, &p, &mut read)?;
        }
    }
    if members == 0 && !policy.allow_empty {
        return Err(refuse(
            Reason::EmptyArchive,
            b"",
            "the archive holds no member: a cut-off or zero-filled upload would empty the \
             root (allow an empty workspace with `--allow-empty`)",
        ));
    }
    if policy.escaping_symlinks == EscapingSymlinks::Reject {
        v.check_link_chains()?;
    }
    Ok((v.plan, v.listing))
}

fn collision(raw: &[u8]) -> HydrateError {
    refuse(
        Reason::LimitExceeded,
        raw,
        "the planned tree is full (or two names hashed alike)",
    )
}

impl<S: Sink> Validator<'_, '_, S> {
    fn member(&mut self, m: RawMember) -> Result<(), HydrateError> {
        let count = self.plan.report.members + 1;
        if count > self.policy.limits.members {
            return Err(refuse(
                Reason::LimitExceeded,
                &m.name,
                format!("more than {} members", self.policy.limits.members),
            ));
        }
        self.plan.report.members = count;
        if let Some(listing) = self.listing.as_mut() {
            listing.members.push(ListedMember {
                name: m.name.clone(),
                kind: m.kind,
                link_target: m.link.clone(),
                size: m.file_size(),
                mode: m.mode,
            });
        }
        if let MemberKind::Other(flag) = m.kind {
            return Err(refuse(
                Reason::Unsupported,
                &m.name,
                format!("unknown type flag {:?}", char::from(flag)),
            ));
        }
        let comps = name::normalize(&m.name, &self.policy.limits)
            .map_err(|(reason, detail)| refuse(reason, &m.name, detail))?;
        if let Some(alias) = &m.alias {
            self.check_alias(alias, &m.name)?;
        }
        let Some((last, dirs)) = comps.split_last() else {
            return self.root_member(&m);
        };
        if m.kind != MemberKind::Dir && m.name.ends_with(b"/") {
            return Err(refuse(
                Reason::Malformed,
                &m.name,
                "non-directory member name ends with `/`",
            ));
        }
        let parent = self.parent_dir(dirs, &m.name)?;
        let (node, created) = self
            .plan
            .tree
            .insert(parent, last)
            .map_err(|TreeFull| collision(&m.name))?;
        if created {
            self.nodes.push(None);
        }
        let depth = comps.len();
        match m.kind {
            MemberKind::Dir => self.dir(node, &m),
            MemberKind::File => self.file(node, &m),
            MemberKind::Hardlink => self.hardlink(node, depth, &m),
            MemberKind::Symlink => self.symlink(node, depth, &m),
            MemberKind::Fifo | MemberKind::CharDevice | MemberKind::BlockDevice => {
                self.special(node, &m)
            }
            MemberKind::Other(_) => Ok(()), // refused above
        }
    }

    /// `.` or `./`: the root itself. A directory member sets the root's mode (after the
    /// filter); anything else would replace the root and is refused.
    fn root_member(&mut self, m: &RawMember) -> Result<(), HydrateError> {
        if m.kind != MemberKind::Dir {
            return Err(refuse(
                Reason::Malformed,
                &m.name,
                "member names the root but is not a directory",
            ));
        }
        if self.root_seen && self.policy.duplicates == Duplicates::Reject {
            return Err(refuse(
                Reason::Duplicate,
                &m.name,
                "the root is listed twice",
            ));
        }
        self.root_seen = true;
        self.plan.root_mode = Some(filter_mode(m.mode, self.policy.modes));
        self.plan.root_mtime = Some(m.mtime);
        Ok(())
    }

    /// Walks (creating implicit directories) down `dirs`; every one must be a directory. A
    /// member below a symlink member is the classic escape (H9, H11; CVE-2025-4517's class
    /// of "write through a link the archive just made"); below a file it is nonsense. Both
    /// are refused whatever the policy, and never resolved against the disk.
    fn parent_dir(&mut self, dirs: &[&[u8]], raw: &[u8]) -> Result<NodeId, HydrateError> {
        let mut cur = ROOT;
        for comp in dirs {
            let (id, created) = self
                .plan
                .tree
                .insert(cur, comp)
                .map_err(|TreeFull| collision(raw))?;
            if created {
                self.nodes.push(None);
            }
            let shown = || String::from_utf8_lossy(&self.plan.tree.path(id)).into_owned();
            match &mut self.nodes[id as usize] {
                Some(Node::Dir { children, .. }) => *children = true,
                Some(Node::Symlink { .. }) => {
                    return Err(refuse(
                        Reason::ThroughSymlink,
                        raw,
                        format!("`{}` is a symlink member", shown()),
                    ))
                }
                Some(_) => {
                    return Err(refuse(
                        Reason::NotADirectory,
                        raw,
                        format!("`{}` is not a directory member", shown()),
                    ))
                }
                slot @ None => {
                    *slot = Some(Node::Dir {
                        action: self.plan.actions.len(),
                        explicit: false,
                        children: true,
                    });
                    self.plan.actions.push(Action::Dir {
                        node: id,
                        mode: IMPLICIT_DIR_MODE,
                        mtime: None,
                    });
                    self.sink.dir(&self.plan.tree, id);
                }
            }
            cur = id;
        }
        Ok(cur)
    }

    /// The name a sparse member's `GNU.sparse.name` displaced ([`RawMember::alias`]): the
    /// name every reader without PAX sparse support restores the member under. It must pass
    /// the member name checks, and neither it nor a directory above it may be a symlink
    /// member (those readers would write through it). Nothing is planned for it.
    fn check_alias(&self, alias: &[u8], raw: &[u8]) -> Result<(), HydrateError> {
        let comps = name::normalize(alias, &self.policy.limits).map_err(|(reason, detail)| {
            refuse(
                reason,
                raw,
                format!(
                    "the name `GNU.sparse.name` replaces (`{}`, which readers without PAX \
                     sparse support restore): {detail}",
                    String::from_utf8_lossy(alias)
                ),
            )
        })?;
        let mut cur = ROOT;
        for comp in comps {
            let Some(id) = self.plan.tree.child(cur, comp).ok().flatten() else {
                return Ok(());
            };
            if let Some(Some(Node::Symlink { .. })) = self.nodes.get(id as usize) {
                return Err(refuse(
                    Reason::ThroughSymlink,
                    raw,
                    format!(
                        "the name `GNU.sparse.name` replaces (`{}`, which readers without \
                         PAX sparse support restore) goes through the symlink member `{}`",
                        String::from_utf8_lossy(alias),
                        String::from_utf8_lossy(&self.plan.tree.path(id))
                    ),
                ));
            }
            cur = id;
        }
        Ok(())
    }

    /// The node of an earlier member named by `comps`, without creating anything.
    fn lookup(&self, comps: &[&[u8]]) -> Option<NodeId> {
        let mut cur = ROOT;
        for comp in comps {
            cur = self.plan.tree.child(cur, comp).ok().flatten()?;
        }
        Some(cur)
    }

    /// Handles an existing node of the same name; returns `true` if a new action should be
    /// pushed (the old one, if any, is marked `Skip`), `false` if the existing directory is
    /// reused.
    fn replace(
        &mut self,
        node: NodeId,
        raw: &[u8],
        new_is_dir: bool,
    ) -> Result<bool, HydrateError> {
        let Some(old) = self.nodes[node as usize] else {
            return Ok(true);
        };
        let implicit_dir = matches!(
            old,
            Node::Dir {
                explicit: false,
                ..
            }
        );
        if implicit_dir && new_is_dir {
            return Ok(false);
        }
        if self.policy.duplicates == Duplicates::Reject || implicit_dir {
            return Err(refuse(
                Reason::Duplicate,
                raw,
                "a member of this name came earlier",
            ));
        }
        match old {
            Node::Dir { .. } if new_is_dir => return Ok(false),
            Node::Dir { children: true, .. } => {
                return Err(refuse(
                    Reason::Duplicate,
                    raw,
                    "would replace a directory that has members below it",
                ))
            }
            Node::Dir { action, .. } => {
                self.plan.actions[action] = Action::Skip;
                self.sink.remove(&self.plan.tree, node, true);
            }
            Node::File { action, .. } => {
                self.plan.actions[action] = Action::Skip;
                self.sink.remove(&self.plan.tree, node, false);
            }
            Node::Symlink {
                action: Some(action),
            } => self.plan.actions[action] = Action::Skip,
            Node::Symlink { action: None } | Node::Other => {}
        }
        // Hardlinks point at earlier files by action index; a superseded target makes the
        // write pass fall back to a copy, so nothing else needs updating.
        self.nodes[node as usize] = None;
        Ok(true)
    }

    /// Records `state` for `node` and appends `action` (its index is what `state` refers to).
    fn set(&mut self, node: NodeId, state: Node, action: Option<Action>) {
        self.nodes[node as usize] = Some(state);
        if let Some(a) = action {
            self.plan.actions.push(a);
        }
    }

    fn dir(&mut self, node: NodeId, m: &RawMember) -> Result<(), HydrateError> {
        let mode = filter_mode(m.mode, self.policy.modes);
        if !self.replace(node, &m.name, true)? {
            if let Some(Node::Dir {
                action, explicit, ..
            }) = &mut self.nodes[node as usize]
            {
                *explicit = true;
                if let Action::Dir {
                    mode: old, mtime, ..
                } = &mut self.plan.actions[*action]
                {
                    *old = mode;
                    *mtime = Some(m.mtime);
                }
            }
            return Ok(());
        }
        let action = self.plan.actions.len();
        let state = Node::Dir {
            action,
            explicit: true,
            children: false,
        };
        self.set(
            node,
            state,
            Some(Action::Dir {
                node,
                mode,
                mtime: Some(m.mtime),
            }),
        );
        self.sink.dir(&self.plan.tree, node);
        Ok(())
    }

    fn file(&mut self, node: NodeId, m: &RawMember) -> Result<(), HydrateError> {
        self.add_bytes(m.size, &m.name)?;
        self.add_holes(m.sparse.as_deref(), &m.name)?;
        self.replace(node, &m.name, false)?;
        let mode = filter_mode(m.mode, self.policy.modes);
        let data = Data {
            offset: m.data_offset,
            size: m.size,
            sparse: m.sparse.clone(),
        };
        let action = self.plan.actions.len();
        let file = Action::File {
            node,
            data,
            mode,
            mtime: m.mtime,
        };
        self.set(node, Node::File { action, mode }, Some(file));
        self.payload = Some(Payload {
            node,
            mode,
            mtime: m.mtime,
            sparse: m.sparse.clone(),
        });
        Ok(())
    }

    /// Counts the holes of a sparse file (its size less its data) toward
    /// [`crate::Limits::sparse_size`] for the whole archive: the limit bounds one file, and
    /// without a total a small archive of many sparse members would restore any number of
    /// files of that size (terabytes of apparent size from a few kilobytes, all written as
    /// zeros on a filesystem without holes; a hostile review).
    pub(super) fn add_holes(
        &mut self,
        sparse: Option<&SparseMap>,
        raw: &[u8],
    ) -> Result<(), HydrateError> {
        let Some(map) = sparse else {
            return Ok(());
        };
        let data: u64 = map.regions.iter().map(|r| r.len).sum();
        self.hole_bytes = self
            .hole_bytes
            .saturating_add(map.real_size.saturating_sub(data));
        if self.hole_bytes > self.policy.limits.sparse_size {
            return Err(refuse(
                Reason::LimitExceeded,
                raw,
                format!(
                    "more than {} bytes of holes in the archive's sparse files",
                    self.policy.limits.sparse_size
                ),
            ));
        }
        Ok(())
    }

    fn add_bytes(&mut self, size: u64, raw: &[u8]) -> Result<(), HydrateError> {
        self.total_bytes = self.total_bytes.saturating_add(size);
        self.plan.report.bytes = self.total_bytes;
        if self.total_bytes > self.policy.limits.total_bytes {
            return Err(refuse(
                Reason::LimitExceeded,
                raw,
                format!("more than {} payload bytes", self.policy.limits.total_bytes),
            ));
        }
        Ok(())
    }
}
