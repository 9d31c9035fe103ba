//! snapconf-extract: the reference safe extractor for workspace snapshots (tar archives).

mod error;
mod hydrate;
mod policy;

pub use error::{HydrateError, Reason};
pub use hydrate::{hydrate, recover, validate, HydrateReport, Listing, ListedMember, MemberKind};
pub use policy::{
    AbsoluteSymlinks, Duplicates, EscapingSymlinks, Hardlinks, Limits, Modes, Policy, SpecialFiles,
};
