//! snapconf-harness: the workspace model, generators, checks, drivers and reports.
//!
//! The folders follow one case through the pipeline: `model` (spec, profile, expected
//! tree) → `gen` (generators) → `workspace` (materialise, observe, diff) inside a `jail` →
//! `archive` (members, headers, parsers) → `checks` → the drivers `run` (with shrink and
//! reproducers), `faults` and `fuzz` → `report`.

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
