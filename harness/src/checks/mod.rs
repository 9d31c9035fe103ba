//! The checks: one file per property of the contract, their ids, and the registry every
//! driver iterates.

mod id;

pub use id::Check;
