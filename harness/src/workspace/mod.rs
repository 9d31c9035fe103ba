//! Real directories: materialise a spec (or bring a live tree to one in place), observe a tree, diff two trees, describe a real
//! directory as a spec (`audit`).

pub mod describe;
pub mod in_place;
pub mod materialise;
pub mod observe;
