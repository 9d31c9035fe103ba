//! The main job: one case through one producer and its extractors, the matrix of cases,
//! shrinking, reproducers and sharding.

pub mod case;
mod cells;
pub mod pool;
pub mod repro;
pub mod runner;
pub mod shard;
pub mod shrink;
mod shrink_job;
mod write;
