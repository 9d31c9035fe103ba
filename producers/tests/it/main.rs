//! Integration tests of the producer and extractor adapters (snapconf-producers).
//!
//! The one integration-test binary of this crate (`autotests = false`, `[[test]] name = "it"`
//! in Cargo.toml): one module per former test file. To add tests, add a module file
//! here and a `mod` line below; run one module with
//! `cargo test -p snapconf-producers --test it -- <module>::`.

mod common;

mod backends;
mod extractors_smoke;
mod hardlinks;
mod matrix;
mod names_and_exclusions;
mod producers_smoke;
mod python_worker;
mod tar_rs_kinds;
mod timeout;
