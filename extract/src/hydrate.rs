//! PLACEHOLDER: the helper implementing issue 3 replaces this file.
use crate::{HydrateError, Policy, Reason};
use std::io::Read;
use std::path::Path;

/// The kind of a listed member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemberKind { File, Dir, Symlink, Hardlink, Fifo, CharDevice, BlockDevice, Other(u8) }

/// One member as the reference parser reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedMember { pub name: Vec<u8>, pub kind: MemberKind, pub link_target: Option<Vec<u8>>, pub size: u64, pub mode: u32 }

/// Members of an accepted archive, in archive order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing { pub members: Vec<ListedMember> }

/// What a successful hydration did.
#[derive(Clone, Debug, Default)]
pub struct HydrateReport { pub members: u64, pub bytes: u64, pub dropped: Vec<Vec<u8>> }

pub fn validate(_archive: impl Read, _policy: &Policy) -> Result<Listing, HydrateError> {
    Err(HydrateError::Refused { reason: Reason::Unsupported, member: vec![], detail: "not yet".into() })
}
pub fn hydrate(_archive: impl Read, _root: &Path, _policy: &Policy) -> Result<HydrateReport, HydrateError> {
    Err(HydrateError::Refused { reason: Reason::Unsupported, member: vec![], detail: "not yet".into() })
}
pub fn recover(_root: &Path) -> Result<(), HydrateError> { Ok(()) }
