//! Integration tests of snapconf-harness: the `snapconf` binary and the library's pipeline.
//!
//! The one integration-test binary of this crate (`autotests = false`, `[[test]] name = "it"`
//! in Cargo.toml): one module per former test file. To add tests, add a module file
//! here and a `mod` line below; run one module with
//! `cargo test -p snapconf-harness --test it -- <module>::`.

mod support;

mod action_yml;
mod all_parsers;
mod backends;
mod canaries;
mod cause_identity;
mod cli_hydrate;
mod cli_output;
mod cli_usage;
mod corpus;
mod coverage_feedback;
mod exit_codes;
mod faults;
mod full_jail;
mod fuzz_causes;
mod fuzz_cli;
mod fuzz_server;
mod fuzz_traversal;
mod fuzz_view;
mod handed_cases;
mod host_safety;
mod hostile_archives;
mod html_browser;
mod hydrate_exit;
mod layering;
mod leftovers;
mod lifecycle;
mod main_job;
mod node_tar;
mod ordinary_user;
mod python_discovery;
mod reference_roundtrip;
mod report_cli;
mod report_formats;
mod repro_hydrate;
mod sandbox_tar;
mod toy_check;
