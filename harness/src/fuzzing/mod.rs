//! `snapconf fuzz`: structural mutation of seed and adversarial archives, run through any
//! extractor in a jail, with findings shrunk and written as reproducers.

mod judge;
mod mutate;
mod records;
mod rng;
mod session;

pub use judge::{host_safe, judge, privileged_or_special, safety_policy, Judged, UNSAFE_REASONS};
pub use mutate::{mutate, Mutation};
pub use records::{Record, Records};
pub use rng::Rng;
pub use session::{fuzz, replay_finding, FuzzEvent, FuzzFinding, FuzzOptions, FuzzSummary};
