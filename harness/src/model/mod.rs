//! The model: what a workspace is (spec), what a profile promises, and the expected tree.

pub mod backend_profile;
pub mod bytes;
pub mod diff;
pub mod expected;
pub mod fault;
pub mod links;
pub mod policy_map;
pub mod profile;
pub mod shard;
pub mod spec;
pub mod tree;
