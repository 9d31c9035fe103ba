//! Integration tests of the reference extractor (snapconf-extract).
//!
//! The one integration-test binary of this crate (`autotests = false`, `[[test]] name = "it"`
//! in Cargo.toml): one module per former test file. To add tests, add a module file
//! here and a `mod` line below; run one module with
//! `cargo test -p snapconf-extract --test it -- <module>::`.

mod common;

mod adversarial;
mod compressed;
mod crash;
mod end_marker_and_mounts;
mod faults;
mod fields;
mod link_targets;
mod mutations;
mod producers;
mod reasons;
mod recover;
mod roundtrip;
mod single_pass;
mod sparse;
mod sparse_holes;
mod streams;
