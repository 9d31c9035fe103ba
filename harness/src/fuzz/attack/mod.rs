//! The attack generator: whole member sequences drawn from attack classes (symlink swaps,
//! link chains, hardlink escapes, hostile names, special files), beside the mutator.

mod chain;
mod class;
mod climb;
#[cfg(test)]
mod climb_tests;
mod draw;
mod encode;
mod fold;
mod hardlink;
#[cfg(test)]
mod host_safe_tests;
mod member;
mod names;
mod pairs;
mod prior;
mod smuggle;
mod special;
mod swap;
mod target;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod view_model;

pub use class::AttackClass;
pub use draw::{attack, attack_lowered, attack_of};
