//! Documented exit codes of the `snapconf` binary.

/// Every pair conforms, or every finding is of a cause the `--baseline` lists (`run`,
/// `audit`, `lifecycle`, `fuzz --extractor`, `report merge`); the finding no longer
/// reproduces (`replay`, `--replay`); hydrated / accepted (`hydrate`, `check-archive`).
pub const OK: i32 = 0;
/// Findings of a cause the baseline does not list (`run`, `audit`, `lifecycle`, `fuzz
/// --extractor`, `report merge`); the finding reproduces (`replay`, `--replay`); refused,
/// root untouched (`hydrate`, `check-archive`).
pub const FINDINGS: i32 = 1;
/// Bad usage or configuration: unknown adapter, missing directory, unreadable profile, a
/// bad `--shard`, a baseline file that cannot be read, an input file that is not a regular
/// file or is over its limit ([`snapconf_producers::input`]), a symlink or special file in
/// a report directory given to `report merge`; given before anything runs.
pub const USAGE: i32 = 2;
/// Nothing ran (no producer or extractor available, or every capture of every pair was
/// refused, so no case had an archive to judge) or an internal error of snapconf.
pub const NOTHING_RAN: i32 = 3;
