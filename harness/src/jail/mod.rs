//! The jail: where every root, archive and decoy of a case lives, its snapshots, the
//! canaries, the pool that reuses a jail, the small fuzzing jail, and cleanup on a signal.

pub mod canary;
pub mod cleanup;
pub mod fuzz_jail;
mod layout;

pub use layout::*;
