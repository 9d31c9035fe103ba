//! Real directories: materialise a spec, observe a tree, diff two trees, describe a real
//! directory as a spec (`audit`).

pub mod describe;
pub mod diff;
pub mod materialise;
pub mod observe;
