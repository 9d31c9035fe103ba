//! snapconf-harness: the workspace model, generators, checks, runner and reports.

pub mod bytes;
pub mod diff;
pub mod expected;
pub mod materialise;
pub mod observe;
pub mod profile;
pub mod spec;
pub mod tree;
