//! The engine the drivers (`run`, `lifecycle`, `fuzz`) share as peers: the steps of one
//! case (capture, hydrate, observe, judge), the fault step, the `-j` worker pool with
//! ordered delivery, sharding, shrink budgets and list shrinking, the progress display,
//! the one reproducer writer ([`repro::ReproDir`]) and the report directory with its lock.

pub mod case;
pub mod events;
pub mod faults;
pub mod phases;
pub mod pool;
pub mod progress;
pub mod report_dir;
pub mod repro;
/// `--shard K/N`: the value type lives in the model, below the report that records it.
pub use crate::model::shard;
pub mod shrink;
