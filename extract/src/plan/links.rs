//! The validation of links and special files: hardlinks (to earlier members only), symlinks
//! (judged by [`crate::symlink_target`], then through each other), FIFOs and devices.

use super::{Action, Node, Payload, Sink, Validator};
use crate::error::refuse;
use crate::name;
use crate::reader::RawMember;
use crate::resolve;
use crate::symlink_target::{self, Verdict};
use crate::tree::NodeId;
use crate::{Hardlinks, HydrateError, Reason, SpecialFiles};

impl<S: Sink> Validator<'_, '_, S> {
    /// Resolves every planned relative symlink through the other planned symlinks (see
    /// [`crate::resolve`]); refuses `symlink-escape` if one leaves the root that way.
    pub(super) fn check_link_chains(&self) -> Result<(), HydrateError> {
        let link_of = |id: NodeId| -> Option<&[u8]> {
            match self.nodes.get(id as usize) {
                Some(Some(Node::Symlink { action: Some(i) })) => match &self.plan.actions[*i] {
                    Action::Symlink { target, .. } => Some(target.as_slice()),
                    _ => None,
                },
                _ => None,
            }
        };
        let mut budget = resolve::BUDGET;
        for action in &self.plan.actions {
            let Action::Symlink { node, target, .. } = action else {
                continue;
            };
            if target.first() == Some(&b'/') {
                continue;
            }
            let dir = self.plan.tree.parent(*node);
            let name = || self.plan.tree.path(*node);
            match resolve::escapes(&self.plan.tree, dir, target, &link_of, &mut budget) {
                Ok(false) => {}
                Ok(true) => {
                    return Err(refuse(
                        Reason::SymlinkEscape,
                        &name(),
                        "symlink target leaves the root through another symlink of the archive",
                    ))
                }
                Err(resolve::OverBudget) => {
                    return Err(refuse(
                        Reason::LimitExceeded,
                        &name(),
                        "too much work resolving symlink chains",
                    ))
                }
            }
        }
        Ok(())
    }

    /// Hardlinks (type `1`). The target must name an earlier member of this archive, never
    /// a path on disk: resolving link targets against the filesystem is how extractors were
    /// made to link to (and then overwrite) files outside the root (CVE-2025-4517's
    /// hardlink variant; GNU tar's "hard link to outside" class).
    pub(super) fn hardlink(
        &mut self,
        node: NodeId,
        depth: usize,
        m: &RawMember,
    ) -> Result<(), HydrateError> {
        if self.policy.hardlinks == Hardlinks::Reject {
            return Err(refuse(
                Reason::HardlinkNotAllowed,
                &m.name,
                "hardlink members are refused by policy",
            ));
        }
        let raw_target = m.link.as_deref().unwrap_or_default();
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
        let comps = name::normalize(raw_target, &self.policy.limits)
            .map_err(|(_, d)| dangling(&format!("is not a member name: {d}")))?;
        let target = self.lookup(&comps);
        // H12 (`REG x`, `LNK x -> x`, which GNU tar writes when a file is given twice): the
        // link adds no name and no data; it is accepted as a no-op and `x` keeps its data.
        if target == Some(node) {
            return match self.nodes[node as usize] {
                Some(Node::File { .. }) => {
                    self.plan.report.dropped.push(m.name.clone());
                    Ok(())
                }
                _ => Err(dangling("is not an earlier regular member")),
            };
        }
        match target.and_then(|t| self.nodes[t as usize].map(|n| (t, n))) {
            Some((t, Node::File { action, mode })) => {
                let data = match &self.plan.actions[action] {
                    Action::File { data, .. } | Action::Hardlink { data, .. } => data.clone(),
                    _ => return Err(dangling("is not an earlier regular member")),
                };
                self.add_bytes(data.size, &m.name)?;
                self.add_holes(data.sparse.as_deref(), &m.name)?;
                self.replace(node, &m.name, false)?;
                let copy = Payload {
                    node,
                    mode,
                    mtime: m.mtime,
                    sparse: data.sparse.clone(),
                };
                self.sink.copy(&self.plan.tree, &copy, t);
                let new = self.plan.actions.len();
                let link = Action::Hardlink {
                    node,
                    target: action,
                    data,
                    mode,
                    mtime: m.mtime,
                    link: self.policy.hardlinks == Hardlinks::Link,
                };
                self.set(node, Node::File { action: new, mode }, Some(link));
                Ok(())
            }
            // H8: a second name of a symlink comes back as a symlink with the same archived
            // target, decided again for the second name's own directory: a rebased target
            // is relative to the link's directory, so each name gets its own text, and a
            // relative target that stays inside from one directory may leave from another.
            Some((
                _,
                Node::Symlink {
                    action: Some(action),
                },
            )) => {
                let Action::Symlink {
                    target, archived, ..
                } = &self.plan.actions[action]
                else {
                    return Err(dangling("is not an earlier regular member"));
                };
                let archived = archived.clone().unwrap_or_else(|| target.clone());
                self.symlink_named(node, depth, &archived, m)
            }
            Some((_, Node::Dir { .. })) => Err(dangling("is a directory")),
            Some(_) => Err(dangling("was dropped or is not a regular file")),
            None => Err(dangling("is not an earlier member of the archive")),
        }
    }

    pub(super) fn symlink(
        &mut self,
        node: NodeId,
        depth: usize,
        m: &RawMember,
    ) -> Result<(), HydrateError> {
        let target = m.link.as_deref().unwrap_or_default();
        self.symlink_named(node, depth, target, m)
    }

    /// A symlink at `node` (`depth` components below the root) with the archived target
    /// `archived`, for member `m` (a symlink member, or a hardlink to one).
    fn symlink_named(
        &mut self,
        node: NodeId,
        depth: usize,
        archived: &[u8],
        m: &RawMember,
    ) -> Result<(), HydrateError> {
        match symlink_target::decide(depth.saturating_sub(1), archived, self.policy) {
            Verdict::Refuse(reason, detail) => Err(refuse(reason, &m.name, detail)),
            Verdict::Drop => {
                self.replace(node, &m.name, false)?;
                self.set(node, Node::Symlink { action: None }, None);
                self.plan.report.dropped.push(m.name.clone());
                Ok(())
            }
            Verdict::Keep(target) => {
                self.replace(node, &m.name, false)?;
                let action = self.plan.actions.len();
                let archived = (target != archived).then(|| archived.to_vec());
                let link = Action::Symlink {
                    node,
                    target,
                    archived,
                };
                self.set(
                    node,
                    Node::Symlink {
                        action: Some(action),
                    },
                    Some(link),
                );
                Ok(())
            }
        }
    }

    /// FIFOs and devices: never created (a device node in a workspace is a privilege
    /// escalation; a FIFO hangs readers). `Drop` leaves them out, `Reject` refuses.
    pub(super) fn special(&mut self, node: NodeId, m: &RawMember) -> Result<(), HydrateError> {
        if self.policy.special_files == SpecialFiles::Reject {
            return Err(refuse(
                Reason::SpecialFile,
                &m.name,
                format!("{:?} member refused by policy", m.kind),
            ));
        }
        self.replace(node, &m.name, false)?;
        self.set(node, Node::Other, None);
        self.plan.report.dropped.push(m.name.clone());
        Ok(())
    }
}
