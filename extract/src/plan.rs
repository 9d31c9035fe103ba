//! The validation pass: every member is read and checked, and the tree it describes is
//! planned, before anything is written.
//!
//! The plan is a list of actions in archive order (directories, files, hardlinks) plus the
//! symlinks, which the write pass creates last. Its size grows with the number of members
//! (one name each), never with payload bytes: payloads stay in the archive or spool file and
//! are copied by offset.

use std::collections::HashMap;

use crate::error::refuse;
use crate::input::Input;
use crate::name::{self, MemberPath};
use crate::reader::{RawMember, Reader};
use crate::resolve;
use crate::symlink_target::{self, Verdict};
use crate::{
    Duplicates, EscapingSymlinks, Hardlinks, HydrateError, HydrateReport, ListedMember, Listing,
    MemberKind, Modes, Policy, Reason, SpecialFiles,
};

/// Mode of directories that the archive implies but does not list (`a/` for a member `a/b`).
pub(crate) const IMPLICIT_DIR_MODE: u32 = 0o755;

/// Where a regular file's bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Data {
    /// Offset in the archive (or spool) file, in bytes.
    pub(crate) offset: u64,
    /// Length in bytes.
    pub(crate) size: u64,
}

/// One thing the write pass does.
#[derive(Debug)]
pub(crate) enum Action {
    /// Create a directory (mode applied after its children).
    Dir {
        path: MemberPath,
        mode: u32,
        mtime: Option<u64>,
    },
    /// Create a regular file from `data`.
    File {
        path: MemberPath,
        data: Data,
        mode: u32,
        mtime: u64,
    },
    /// A hardlink: link to the file created by action `target` if it still exists (policy
    /// `Link`), otherwise write an independent copy of `data`.
    Hardlink {
        path: MemberPath,
        target: usize,
        data: Data,
        mode: u32,
        mtime: u64,
        link: bool,
    },
    /// Create a symlink (deferred to the end of the write pass).
    Symlink { path: MemberPath, target: Vec<u8> },
    /// Superseded by a later member of the same name (`Duplicates::LastWins`).
    Skip,
}

/// The checked tree, ready for the write pass.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub(crate) actions: Vec<Action>,
    /// Mode for the root itself, from a `.` directory member.
    pub(crate) root_mode: Option<u32>,
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
    /// A regular file created by `action`, with its data.
    File {
        action: usize,
        data: Data,
        mode: u32,
    },
    /// A symlink (`action` is `None` if the policy dropped it).
    Symlink { action: Option<usize> },
    /// A dropped special file, or a hardlink to itself.
    Other,
}

struct Validator<'p> {
    policy: &'p Policy,
    nodes: HashMap<Vec<u8>, Node>,
    plan: Plan,
    total_bytes: u64,
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
    let mut reader = Reader::new(input, start, policy.limits);
    let mut v = Validator {
        policy,
        nodes: HashMap::new(),
        plan: Plan::default(),
        total_bytes: 0,
        listing: want_listing.then(Listing::default),
        root_seen: false,
    };
    while let Some(member) = reader.next_member()? {
        v.member(member)?;
    }
    if policy.escaping_symlinks == EscapingSymlinks::Reject {
        v.check_link_chains()?;
    }
    Ok((v.plan, v.listing))
}

impl Validator<'_> {
    /// Resolves every planned relative symlink through the other planned symlinks (see
    /// [`crate::resolve`]); refuses `symlink-escape` if one leaves the root that way.
    fn check_link_chains(&self) -> Result<(), HydrateError> {
        let link_of = |p: &[u8]| -> Option<&[u8]> {
            match self.nodes.get(p) {
                Some(Node::Symlink { action: Some(i) }) => match &self.plan.actions[*i] {
                    Action::Symlink { target, .. } => Some(target.as_slice()),
                    _ => None,
                },
                _ => None,
            }
        };
        for action in &self.plan.actions {
            let Action::Symlink { path, target } = action else {
                continue;
            };
            if target.first() == Some(&b'/') {
                continue;
            }
            let (dir, _) = path.split_last();
            let dir: Vec<&[u8]> = dir
                .split(|&b| b == b'/')
                .filter(|c| !c.is_empty())
                .collect();
            if resolve::escapes(&dir, target, &link_of) {
                return Err(refuse(
                    Reason::SymlinkEscape,
                    &path.0,
                    "symlink target leaves the root through another symlink of the archive",
                ));
            }
        }
        Ok(())
    }

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
                kind: m.kind.clone(),
                link_target: m.link.clone(),
                size: m.size,
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
        let path = name::normalize(&m.name, &self.policy.limits)
            .map_err(|(reason, detail)| refuse(reason, &m.name, detail))?;
        if m.kind != MemberKind::Dir && m.name.ends_with(b"/") && !path.is_root() {
            return Err(refuse(
                Reason::Malformed,
                &m.name,
                "non-directory member name ends with `/`",
            ));
        }
        if path.is_root() {
            return self.root_member(&m);
        }
        self.check_parents(&path, &m.name)?;
        match m.kind {
            MemberKind::Dir => self.dir(path, &m),
            MemberKind::File => self.file(path, &m),
            MemberKind::Hardlink => self.hardlink(path, &m),
            MemberKind::Symlink => self.symlink(path, &m),
            MemberKind::Fifo | MemberKind::CharDevice | MemberKind::BlockDevice => {
                self.special(path, &m)
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
        Ok(())
    }

    /// Every ancestor must be a directory (creating implicit ones). A member below a symlink
    /// member is the classic escape (H9, H11; CVE-2025-4517's class of "write through a link
    /// the archive just made"); below a file it is nonsense. Both are refused whatever the
    /// policy, and never resolved against the disk.
    fn check_parents(&mut self, path: &MemberPath, raw: &[u8]) -> Result<(), HydrateError> {
        for anc in path.ancestors() {
            match self.nodes.get_mut(anc) {
                Some(Node::Dir { children, .. }) => *children = true,
                Some(Node::Symlink { .. }) => {
                    return Err(refuse(
                        Reason::ThroughSymlink,
                        raw,
                        format!("`{}` is a symlink member", String::from_utf8_lossy(anc)),
                    ))
                }
                Some(_) => {
                    return Err(refuse(
                        Reason::NotADirectory,
                        raw,
                        format!(
                            "`{}` is not a directory member",
                            String::from_utf8_lossy(anc)
                        ),
                    ))
                }
                None => {
                    let action = self.plan.actions.len();
                    self.plan.actions.push(Action::Dir {
                        path: MemberPath(anc.to_vec()),
                        mode: IMPLICIT_DIR_MODE,
                        mtime: None,
                    });
                    self.nodes.insert(
                        anc.to_vec(),
                        Node::Dir {
                            action,
                            explicit: false,
                            children: true,
                        },
                    );
                }
            }
        }
        Ok(())
    }

    /// Handles an existing node of the same name; returns `true` if a new action should be
    /// pushed (the old one, if any, is marked `Skip`), `false` if the existing directory is
    /// reused.
    fn replace(
        &mut self,
        path: &MemberPath,
        raw: &[u8],
        new_is_dir: bool,
    ) -> Result<bool, HydrateError> {
        let Some(old) = self.nodes.get(&path.0).copied() else {
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
            Node::Dir { action, .. } | Node::File { action, .. } => {
                self.plan.actions[action] = Action::Skip
            }
            Node::Symlink {
                action: Some(action),
            } => self.plan.actions[action] = Action::Skip,
            Node::Symlink { action: None } | Node::Other => {}
        }
        // Hardlinks point at earlier files by action index; a superseded target makes the
        // write pass fall back to a copy, so nothing else needs updating.
        self.nodes.remove(&path.0);
        Ok(true)
    }

    fn dir(&mut self, path: MemberPath, m: &RawMember) -> Result<(), HydrateError> {
        let mode = filter_mode(m.mode, self.policy.modes);
        if !self.replace(&path, &m.name, true)? {
            if let Some(Node::Dir {
                action, explicit, ..
            }) = self.nodes.get_mut(&path.0)
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
        self.nodes.insert(
            path.0.clone(),
            Node::Dir {
                action,
                explicit: true,
                children: false,
            },
        );
        self.plan.actions.push(Action::Dir {
            path,
            mode,
            mtime: Some(m.mtime),
        });
        Ok(())
    }

    fn file(&mut self, path: MemberPath, m: &RawMember) -> Result<(), HydrateError> {
        self.add_bytes(m.size, &m.name)?;
        self.replace(&path, &m.name, false)?;
        let mode = filter_mode(m.mode, self.policy.modes);
        let data = Data {
            offset: m.data_offset,
            size: m.size,
        };
        let action = self.plan.actions.len();
        self.nodes
            .insert(path.0.clone(), Node::File { action, data, mode });
        self.plan.actions.push(Action::File {
            path,
            data,
            mode,
            mtime: m.mtime,
        });
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

    /// Hardlinks (type `1`). The target must name an earlier member of this archive, never
    /// a path on disk: resolving link targets against the filesystem is how extractors were
    /// made to link to (and then overwrite) files outside the root (CVE-2025-4517's
    /// hardlink variant; GNU tar's "hard link to outside" class).
    fn hardlink(&mut self, path: MemberPath, m: &RawMember) -> Result<(), HydrateError> {
        if self.policy.hardlinks == Hardlinks::Reject {
            return Err(refuse(
                Reason::HardlinkNotAllowed,
                &m.name,
                "hardlink members are refused by policy",
            ));
        }
        let raw_target = m.link.as_deref().unwrap_or_default();
        let target = name::normalize(raw_target, &self.policy.limits).map_err(|(_, d)| {
            refuse(
                Reason::DanglingHardlink,
                &m.name,
                format!("link target `{}`: {d}", String::from_utf8_lossy(raw_target)),
            )
        })?;
        let dangling = |what: &str| {
            refuse(
                Reason::DanglingHardlink,
                &m.name,
                format!(
                    "link target `{}` {what}",
                    String::from_utf8_lossy(raw_target)
                ),
            )
        };
        // H12 (`REG x`, `LNK x -> x`, which GNU tar writes when a file is given twice): the
        // link adds no name and no data; it is accepted as a no-op and `x` keeps its data.
        if target == path {
            return match self.nodes.get(&path.0) {
                Some(Node::File { .. }) => {
                    self.plan.report.dropped.push(m.name.clone());
                    Ok(())
                }
                _ => Err(dangling("is not an earlier regular member")),
            };
        }
        match self.nodes.get(&target.0).copied() {
            Some(Node::File { action, data, mode }) => {
                self.add_bytes(data.size, &m.name)?;
                self.replace(&path, &m.name, false)?;
                let new = self.plan.actions.len();
                self.nodes.insert(
                    path.0.clone(),
                    Node::File {
                        action: new,
                        data,
                        mode,
                    },
                );
                self.plan.actions.push(Action::Hardlink {
                    path,
                    target: action,
                    data,
                    mode,
                    mtime: m.mtime,
                    link: self.policy.hardlinks == Hardlinks::Link,
                });
                Ok(())
            }
            // H8: a second name of a symlink comes back as a symlink with the same target
            // (that target already passed the symlink policy).
            Some(Node::Symlink {
                action: Some(action),
            }) => {
                let Action::Symlink {
                    target: link_target,
                    ..
                } = &self.plan.actions[action]
                else {
                    return Err(dangling("is not an earlier regular member"));
                };
                let link_target = link_target.clone();
                self.replace(&path, &m.name, false)?;
                let new = self.plan.actions.len();
                self.nodes
                    .insert(path.0.clone(), Node::Symlink { action: Some(new) });
                self.plan.actions.push(Action::Symlink {
                    path,
                    target: link_target,
                });
                Ok(())
            }
            Some(Node::Dir { .. }) => Err(dangling("is a directory")),
            Some(_) => Err(dangling("was dropped or is not a regular file")),
            None => Err(dangling("is not an earlier member of the archive")),
        }
    }

    fn symlink(&mut self, path: MemberPath, m: &RawMember) -> Result<(), HydrateError> {
        let dir_depth = path.depth().saturating_sub(1);
        let target = m.link.as_deref().unwrap_or_default();
        match symlink_target::decide(dir_depth, target, self.policy) {
            Verdict::Refuse(reason, detail) => Err(refuse(reason, &m.name, detail)),
            Verdict::Drop => {
                self.replace(&path, &m.name, false)?;
                self.nodes.insert(path.0, Node::Symlink { action: None });
                self.plan.report.dropped.push(m.name.clone());
                Ok(())
            }
            Verdict::Keep(target) => {
                self.replace(&path, &m.name, false)?;
                let action = self.plan.actions.len();
                self.nodes.insert(
                    path.0.clone(),
                    Node::Symlink {
                        action: Some(action),
                    },
                );
                self.plan.actions.push(Action::Symlink { path, target });
                Ok(())
            }
        }
    }

    /// FIFOs and devices: never created (a device node in a workspace is a privilege
    /// escalation; a FIFO hangs readers). `Drop` leaves them out, `Reject` refuses.
    fn special(&mut self, path: MemberPath, m: &RawMember) -> Result<(), HydrateError> {
        if self.policy.special_files == SpecialFiles::Reject {
            return Err(refuse(
                Reason::SpecialFile,
                &m.name,
                format!("{:?} member refused by policy", m.kind),
            ));
        }
        self.replace(&path, &m.name, false)?;
        self.nodes.insert(path.0, Node::Other);
        self.plan.report.dropped.push(m.name.clone());
        Ok(())
    }
}
