//! The jail: where every root, archive and decoy of a case lives, its snapshots, the
//! canaries, the pool that reuses a jail, the small fuzzing jail, and cleanup on a signal.

pub mod canary;
pub mod cleanup;
pub mod fuzz_jail;
pub mod host_canary;
mod layout;
mod memo;
pub mod mirror;
mod pool;
pub mod restore;
mod snapshot;
pub mod view;
pub mod view_layout;
mod walk;

pub use layout::{Jail, DECOYS};
pub use pool::{default_jail_base, JailPool};
pub use snapshot::{Snapshot, StatKey};
