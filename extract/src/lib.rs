//! snapconf-extract: the reference safe extractor for workspace snapshots (tar archives).
//!
//! [`hydrate`] (a stream) and [`hydrate_file`] (an open file) replace a workspace
//! directory with an archive's tree, or leave it exactly as it was; [`validate`] gives the
//! same verdict without writing; [`Policy`] says what is accepted and how it is restored;
//! [`recover`] cleans up after a killed hydration. Each has a runnable example in its
//! documentation.
//!
//! `examples/hydrate.rs` is a complete program: it hydrates the archive named on its
//! command line into a root with the default policy, prints the outcome and documents its
//! exit codes (`cargo run -p snapconf-extract --example hydrate -- ARCHIVE ROOT`).
//!
//! ```rust
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut tar = tar::Builder::new(Vec::new());
//! let mut header = tar::Header::new_ustar();
//! header.set_mode(0o644);
//! header.set_size(3);
//! tar.append_data(&mut header, "a.txt", &b"abc"[..])?;
//! let archive = tar.into_inner()?;
//!
//! let dir = tempfile::tempdir()?;
//! let root = dir.path().join("ws");
//! let policy = snapconf_extract::Policy::default();
//! let report = snapconf_extract::hydrate(archive.as_slice(), &root, &policy)?;
//! assert_eq!(report.members, 1);
//! assert_eq!(std::fs::read(root.join("a.txt"))?, b"abc");
//! # Ok(())
//! # }
//! ```
//!
//! Lints (`unsafe_code` forbidden, `missing_docs` denied) come from the workspace's
//! `[workspace.lints]` (root `Cargo.toml`).

pub mod beneath;
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
