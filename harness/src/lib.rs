//! snapconf-harness: the workspace model, generators, checks, the engine, drivers and
//! reports.
//!
//! The folders are layered, lowest first, and a module imports only modules below it
//! (never a peer of its own rank; `harness/tests/it/layering.rs` holds the table and checks
//! it): `error`, `exit` → `model` (spec, profile, trees and their diff, the fault
//! vocabulary) → `gen` (generators, sequences) and its peer `archive` (bytes, members,
//! parser listings) → `workspace` (materialise, observe) → `jail` → `checks` → `report`
//! → `engine` (the steps of one case, the fault step, the worker pool, sharding, shrinking,
//! progress, the one reproducer writer and the report directory) → the peer drivers
//! `run`, `lifecycle` and `fuzz`. The binary's `cmd/` sits on top of them all.

pub mod archive;
pub mod checks;
pub mod engine;
pub mod error;
pub mod exit;
pub mod fuzz;
pub mod gen;
pub mod jail;
pub mod lifecycle;
pub mod model;
pub mod report;
pub mod run;
pub mod workspace;
