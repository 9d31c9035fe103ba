//! Plugged-in backends: a TOML description turned into one [`Producer`](crate::Producer) and
//! one [`Extractor`](crate::Extractor), run as command templates or as a persistent worker.

mod adapter;
mod description;
mod error;
mod protocol;
mod resolve;
mod run_step;
mod template;
mod verdicts;
mod worker;

pub use adapter::{Backend, BackendExtractor, BackendProducer};
pub use description::{BackendDescription, Mode, DESCRIPTION_KEYS};
pub use error::BackendError;
pub use protocol::{PathField, Request, Response};
pub use template::{shell_quote, CommandTemplate, Vars, PLACEHOLDERS};
pub use verdicts::{VerdictCounts, Verdicts};
pub use worker::Worker;
