//! The built-in adapters, one file per tool: each runs a real producer (capture) and/or
//! extractor (hydrate) behind the [`crate::Producer`] and [`crate::Extractor`] contract.

pub mod bsdtar;
pub mod busybox_tar;
pub mod gnu_tar;
pub mod python;
pub mod python_filter;
pub mod python_tarfile;
pub mod reference;
pub mod tar_cli;
pub mod tar_rs;
