//! Generators: proptest strategies for workspaces (W1 with exclusions), prior workspaces (W0)
//! and cases, built from shrinkable plans that always resolve to a valid spec.

mod builder;
mod config;
mod coverage;
mod edge;
mod plan;
mod prior;
mod resolve;
mod strategy;
mod template;
#[cfg(test)]
mod tests;

pub use config::{GenConfig, GenConfigError, ENV_PREFIX};
pub use coverage::{case_features, features, PRIOR_FEATURES, SPEC_FEATURES};
pub use edge::edge_specs;
pub use strategy::{case_strategy, prior_strategy, spec_strategy};
