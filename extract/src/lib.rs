//! snapconf-extract: the reference safe extractor for workspace snapshots (tar archives).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod beneath;
pub mod compression;
mod copy;
pub mod dirs;
mod error;
mod hydrate;
mod input;
mod list;
mod listing;
mod name;
mod pax;
mod plan;
mod policy;
mod reader;
mod recover;
pub mod remove;
mod resolve;
mod sibling;
mod sparse;
mod stage;
mod symlink_target;
mod tree;

pub use error::{HydrateError, Reason};
pub use hydrate::{hydrate, hydrate_file, validate};
pub use list::{list, list_tar};
pub use listing::{HydrateReport, ListedMember, Listing, MemberKind};
pub use name::{name_components, normalise_name};
pub use policy::{
    AbsoluteSymlinks, Duplicates, EscapingSymlinks, Hardlinks, Limits, Modes, Policy, SpecialFiles,
};
pub use recover::{recover, Recovery};
