//! Documented exit codes of the `snapconf` binary.

/// Every pair conforms (`run`, `audit`); the finding no longer reproduces (`replay`);
/// hydrated / accepted (`hydrate`, `check-archive`).
pub const OK: i32 = 0;
/// Findings (`run`, `audit`); the finding reproduces (`replay`); refused, root untouched
/// (`hydrate`, `check-archive`).
pub const FINDINGS: i32 = 1;
/// Bad usage or configuration: unknown adapter, missing directory, unreadable profile.
pub const USAGE: i32 = 2;
/// Nothing ran (no producer or extractor available) or an internal error of snapconf.
pub const NOTHING_RAN: i32 = 3;
