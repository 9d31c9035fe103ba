//! snapconf-producers: adapters that run real producers (capture) and extractors (hydrate).

mod adapter;
pub mod adapters;
pub mod backend;
pub mod clear;
pub mod coverage;
pub mod exclusion;
pub mod input;
pub mod process;
pub mod registry;

pub use adapter::{
    Availability, CaptureRequest, Extractor, HydrateRequest, LinkPromises, Outcome, Producer,
    ToolError,
};
pub use adapters::bsdtar::{BsdtarExtractor, BsdtarProducer};
pub use adapters::busybox_tar::{BusyboxTarExtractor, BusyboxTarProducer};
pub use adapters::gnu_tar::{GnuTarExtractor, GnuTarLnkProducer, GnuTarProducer, TarCompression};
pub use adapters::python_filter::{PythonFilterExtractor, TarfileFilter};
pub use adapters::python_tarfile::{PythonTarfileProducer, TarfileFormat};
pub use adapters::reference::ReferenceExtractor;
pub use adapters::tar_rs::{TarRsExtractor, TarRsProducer};
pub use backend::{Backend, BackendError, BackendExtractor, BackendProducer};
pub use process::limits::ToolLimits;
pub use registry::{
    all_extractors, all_producers, extractor, extractors, in_default_set, producer, producers,
    UnknownAdapter, OPT_IN,
};
