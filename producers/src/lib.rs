//! snapconf-producers: adapters that run real producers (capture) and extractors (hydrate).

mod adapter;

pub use adapter::{
    Availability, CaptureRequest, Extractor, HydrateRequest, Outcome, Producer, ToolError,
};
