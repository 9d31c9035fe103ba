//! snapconf-harness: the workspace model, generators, checks, runner and reports.

pub mod audit;
pub mod bytes;
pub mod canary;
pub mod check;
pub mod cleanup;
pub mod diff;
pub mod error;
pub mod exit;
pub mod expected;
pub mod faults;
pub mod gen;
pub mod jail;
pub mod listing;
pub mod materialise;
pub mod observe;
pub mod pipeline;
pub mod policy_map;
pub mod profile;
pub mod report;
pub mod repro;
pub mod runner;
pub mod shrink;
pub mod spec;
pub mod tree;
