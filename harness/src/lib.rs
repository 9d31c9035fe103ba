//! snapconf-harness: the workspace model, generators, checks, runner and reports.

pub mod bytes;
pub mod gen;
pub mod profile;
pub mod spec;
pub mod tree;
