//! Running an external tool: a timeout and its own process group, fault limits and a
//! private mount namespace, the filesystem view a fuzzed extractor runs in, and the
//! stragglers it leaves behind.

pub mod capture;
pub mod limits;
pub mod reaper;
pub mod run;
pub mod server;
pub mod stragglers;
pub mod view;
