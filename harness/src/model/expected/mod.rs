//! `expected(spec, profile)`: the tree a conforming capture + hydration yields, the
//! entries for which the profile allows a capture refusal, and the features a spec has.
//!
//! The runner compares `expected(..).tree` with `normalise(&observe(root)?, profile)`:
//! both sides go through [`normalise`], so only what the profile promises is compared.
//!
//! One concept a file: the [`Feature`] taxonomy (`feature`), the expected tree of a spec
//! (`expected_tree`), the mode rule (`normalise`), feature detection (`detect`), lexical
//! symlink-target reading (`lexical`, over [`crate::model::links`]) and the spec index,
//! which the link walker resolves symlinks on (`index`).

mod detect;
mod expected_tree;
mod feature;
mod index;
mod lexical;
mod normalise;

#[cfg(test)]
pub(crate) mod arb;
#[cfg(test)]
mod cases;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod properties;

pub use detect::features;
pub use expected_tree::{expected, Expected};
pub use feature::Feature;
pub use normalise::{compared_mode_bits, normalise};
