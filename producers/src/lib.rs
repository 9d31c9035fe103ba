//! snapconf-producers: adapters that run real producers (capture) and extractors (hydrate).

mod adapter;
pub mod backend;
pub mod bsdtar;
pub mod busybox_tar;
pub mod clear;
pub mod exclusion;
pub mod gnu_tar;
pub mod limits;
pub mod process;
pub mod python;
pub mod python_data;
pub mod python_tar;
pub mod python_tarfile;
pub mod reference;
pub mod registry;
pub mod stragglers;
pub mod tar_rs;

pub use adapter::{
    Availability, CaptureRequest, Extractor, HydrateRequest, Outcome, Producer, ToolError,
};
pub use backend::{Backend, BackendError, BackendExtractor, BackendProducer};
pub use bsdtar::{BsdtarExtractor, BsdtarProducer};
pub use busybox_tar::{BusyboxTarExtractor, BusyboxTarProducer};
pub use gnu_tar::{GnuTarExtractor, GnuTarProducer};
pub use limits::Limits;
pub use python_data::PythonDataExtractor;
pub use python_tar::PythonTarExtractor;
pub use python_tarfile::{PythonTarfileProducer, TarfileFormat};
pub use reference::ReferenceExtractor;
pub use registry::{extractor, extractors, producer, producers, UnknownAdapter};
pub use tar_rs::{TarRsExtractor, TarRsProducer};
