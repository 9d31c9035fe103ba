//! The main job: one case through one producer and its extractors, the matrix of cases,
//! shrinking, reproducers and sharding.

mod cells;
pub mod matrix;
pub mod repro;
mod shrink_job;
mod write;
