//! Generators: proptest strategies for workspaces (W1 with exclusions), prior workspaces (W0)
//! and cases, built from shrinkable plans that always resolve to a valid spec. (The one seeded
//! generator is `snapconf_tarbytes::Rng`.)

mod builder;
mod config;
mod coverage;
mod draw;
mod edge;
mod edit;
mod plan;
mod prior;
mod resolve;
mod sequence;
mod smaller;
mod strata;
mod strategy;
mod template;
#[cfg(test)]
mod tests;

pub use config::{GenConfig, GenConfigError, ENV_PREFIX};
pub use coverage::{case_shapes, entry_shapes, spec_shapes, PRIOR_SHAPES, SPEC_SHAPES};
pub use draw::{attempt_runner, case_runner, draw_case};
pub use edge::edge_specs;
pub use edit::{apply_edit, draw_edit, remove_paths, Edit};
pub use sequence::{draw_sequence, Restore, Sequence, Turn};
pub use smaller::{NoLarger, NoLargerTree};
pub use strata::{has_shapes, Strata, MAX_ATTEMPTS};
pub use strategy::{case_size, case_strategy, prior_strategy, spec_size, spec_strategy};
